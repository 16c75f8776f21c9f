"""The README and docs/ cannot drift from the repository or from the code they describe.

- every relative link (``[text](path#anchor)``) and every named page (```docs/<page>.md```)
  points at a file that exists, and a link's anchor at a heading of that page (GitHub's rule
  for heading anchors);
- no page names itself as where the details are (a page that moved out of the README kept
  such lines): it says "below" instead;
- every page of docs/ is reachable from the README or from another page;
- the number of NPU option keys docs/npu.md states is the number the code accepts, and the
  TF1 count is also the number TF Adapter reads (tests/npu/adapter_options.json, generated
  from the adapter's sources);
- docs/performance.md names every benchmark under benchmarks/;
- every duration and decimal size in the prose carries its conditions: the benchmark that
  produced it, or the machine and load it was measured on, or an upstream citation, or the
  words of a setting (the rule is spelled out above its test, and tried on figures it must
  catch and must let through); the start-up and import figures the docs quote, and the
  README's rows of bench_make.py, are the committed benchmark output.
"""
import glob
import json
import os
import re

import pytest

from tf_ge_custom.npu import options

pytestmark = pytest.mark.kind("plumbing")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT)
                               for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
NAMED_PAGE = re.compile(r"`(docs/[\w.-]+\.md)`")


def _text(page):
    with open(os.path.join(ROOT, page)) as f:
        return f.read()


def _without_code_blocks(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _anchors(page):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    found = set()
    for heading in re.findall(r"^#+\s+(.*?)\s*$", _without_code_blocks(_text(page)), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = 1
        while slug in found:  # repeated headings get -1, -2, ...
            slug = "%s-%d" % (re.sub(r"-\d+$", "", slug), n)
            n += 1
        found.add(slug)
    return found


def _links(page):
    """(target page relative to the root or None for the page itself, anchor, as written)."""
    for target in LINK.findall(_without_code_blocks(_text(page))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        if not path:
            yield page, anchor, target
        else:
            yield os.path.normpath(os.path.join(os.path.dirname(page), path)), anchor, target


def test_every_page_is_checked():
    assert "docs/testing.md" in PAGES and "docs/npu.md" in PAGES


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_and_named_pages_resolve(page):
    broken = []
    for target, anchor, written in _links(page):
        if not os.path.exists(os.path.join(ROOT, target)):
            broken.append("%s (no such file)" % written)
        elif anchor and target.endswith(".md") and anchor not in _anchors(target):
            broken.append("%s (no heading #%s in %s)" % (written, anchor, target))
    for named in NAMED_PAGE.findall(_text(page)):
        if not os.path.isfile(os.path.join(ROOT, named)):
            broken.append("`%s` (no such page)" % named)
    assert not broken, "%s: %s" % (page, "; ".join(broken))


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("docs/")])
def test_no_page_names_itself_for_the_details(page):
    text = _text(page)
    name = os.path.basename(page)
    itself = ["`%s`" % page] + ["](%s)" % name, "](%s#" % name, "](../%s)" % page]
    found = [line.strip() for line in text.splitlines() if any(s in line for s in itself)]
    assert not found, "%s names itself (say 'below' and the section): %s" % (page, found)


def test_every_docs_page_is_linked_from_the_readme_or_another_page():
    linked = set()
    for page in PAGES:
        linked.update(t for t, _, _ in _links(page) if t != page)
        linked.update(n for n in NAMED_PAGE.findall(_text(page)) if n != page)
    orphans = [p for p in PAGES if p.startswith("docs/") and p not in linked]
    assert orphans == []


def _count(pattern, text):
    found = re.findall(pattern, text)
    assert found, "docs/npu.md no longer says %r" % pattern
    return [int(n) for n in found]


def test_the_option_counts_in_npu_md_are_the_codes():
    text = " ".join(_text("docs/npu.md").split())
    tf1 = [o.name for o in options.OPTIONS.values() if o.tf1]
    tf2_only = sorted(o.name for o in options.OPTIONS.values() if not o.tf1)
    assert _count(r"all (\d+) of them", text) == [len(tf1)]
    assert _count(r"All (\d+) keys that `tf_adapter/util/npu_attrs.cc` reads", text) == [len(tf1)]
    stated = re.search(r"and (\d+) that only `npu_device` has \(([^)]*)\)", text)
    assert stated, "docs/npu.md no longer names the npu_device-only options"
    assert int(stated.group(1)) == len(tf2_only)
    assert sorted(re.findall(r"`(\w+)`", stated.group(2))) == tf2_only
    assert _count(r"`tf_ge_custom.npu.OPTIONS` lists the (\d+)", text) == [len(options.OPTIONS)]


def test_the_tf1_option_count_is_what_tf_adapter_reads():
    with open(os.path.join(ROOT, "tests", "npu", "adapter_options.json")) as f:
        adapter = json.load(f)
    assert sorted(o.name for o in options.OPTIONS.values() if o.tf1) == sorted(adapter["tf1_keys"])


def test_performance_md_names_every_benchmark():
    text = _text("docs/performance.md")
    benchmarks = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "benchmarks", "bench_*.py")))
    assert benchmarks and [b for b in benchmarks if b not in text] == []


TRACKER_CITATION = re.compile(r"\b[Ii]ssues? [0-9]+\b")  # an upstream one is "owner/repo#N" or "issue #N"


def test_no_file_cites_a_tracker_item_a_reader_cannot_open():
    """Comments and docs say what they protect or describe, not which tracker item asked for
    them: the tracker is not part of the repository."""
    import subprocess

    listed = subprocess.run(["git", "-C", ROOT, "ls-files"], stdout=subprocess.PIPE,
                            universal_newlines=True)
    if listed.returncode != 0:  # not a git checkout (an sdist): the tracked files are these
        names = [os.path.relpath(os.path.join(d, n), ROOT) for d, _, ns in os.walk(ROOT) for n in ns]
    else:
        names = listed.stdout.splitlines()
    found = []
    for name in names:
        if not name.endswith((".py", ".cc", ".h", ".md", ".txt", ".toml", ".cfg", ".in", ".sh")) \
                and name not in ("Makefile", ".ci/run"):
            continue
        try:
            with open(os.path.join(ROOT, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if TRACKER_CITATION.search(line) and "TRACKER_CITATION" not in line:
                        found.append("%s:%d: %s" % (name, number, line.strip()[:100]))
        except (IOError, OSError, UnicodeDecodeError):
            continue
    assert not found, "lines citing a tracker item:\n" + "\n".join(found)


# --- figures carry their conditions -------------------------------------------------------------
#
# A duration (ns to hours, also in words: "a tenth of a second"), a decimal size (kB to TB,
# and per second) or a speed-up (N×, not a product such as 3 × 2^30) in the prose of the
# README or docs/ is a claim about how long or how big something is, and such a claim is
# only true under conditions. Each one must
# be, in its paragraph (a table row: with its column's header and the paragraph before the
# table), one of:
#   - a benchmark's output, the benchmark named (`benchmarks/...`, `bench_*.py`, `make bench`);
#   - a measurement that names the machine and its load ("2-core", "2-CPU" or "machine", and
#     "load" or "idle");
#   - an upstream source's own figure, cited (`owner/repo#N`, or "states its own figure");
#   - a setting, not a measurement: the words just before it (its sentence, or its column's
#     header) say what sets it ("after", "every", "bounds", "timeout", "default", "limit",
#     "up to", "goal").
# Sizes in bytes and binary multiples (KiB, MiB, GiB) are the project's units for limits,
# layouts and formats, and percentages are ratios: neither is checked here. Code blocks are
# sample text, not claims (docs/selftest.md's sample is held to a run by
# tests/selftest/test_selftest_here.py).

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    r"(?<![\w.\-/^])(?:%s ?(?:ns|us|µs|ms|s|sec|seconds?|min|minutes?|h|hours?)"
    r"|%s ?(?:kB|KB|MB|GB|TB)(?:/s)?|%s ?×(?! ?[\d(]))(?![\w/])"
    r"|(?i:\b(?:(?:an?|one) (?:tenth|fraction|half) of an? (?:second|minute|hour)"
    r"|(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|several) (?:seconds?|minutes?|hours?)"
    r"|(?:an?|half an?) (?:minute|hour))\b)"
    r"|(?i:\bunder a second\b)" % (_NUMBER, _NUMBER, _NUMBER))
BENCHMARK_CITED = re.compile(r"benchmarks/|\bbench_\w+\.py\b|\bmake bench\b")
MACHINE = re.compile(r"\b\d+[- ](?:core|CPU)s?\b|\bmachines?\b")
LOAD = re.compile(r"\bload\b|\bidle\b")
UPSTREAM = re.compile(r"\b[\w.-]+/[\w.-]+#\d+\b|\bstates its own figure\b")
SETTING = re.compile(r"\b(?:after|every|bounds?|timeouts?|defaults?|limits?|up to|goals?)\b", re.I)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


def _prose_blocks(text):
    """[(first line number, block text, column headers or None)]: paragraphs and list items,
    and each table row as its own block whose context is its header and the paragraph before
    the table. Code blocks end a paragraph and are left out."""
    lines = text.splitlines()
    blocks, current, start, fenced = [], [], 0, False
    caption, header = "", None

    def close():
        if current:
            blocks.append((start, " ".join(current), None))
        del current[:]

    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            close()
            continue
        if fenced:
            continue
        if line.startswith("|"):
            if current:
                caption = " ".join(current)
                close()
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set("-: ") for c in cells):
                blocks.append((number, caption + " " + " ".join(header) + " " + line, (header, cells)))
            continue
        header = None
        if not line.strip() or line.startswith("#") or LIST_ITEM.match(line):
            if current:
                caption = " ".join(current)
            close()
            if line.startswith("#"):
                caption = ""  # a table's caption is in its own section
            if not line.strip() or line.startswith("#"):
                continue
        if not current:
            start = number
        current.append(line.strip())
    close()
    return blocks


def _words_before(block, match, table):
    """The words a figure follows in its sentence (its cell's, in a table, with the header)."""
    if table is not None:
        header, cells = table
        for name, cell in zip(header, cells):
            if match.group(0) in cell:
                return name + " " + cell[:cell.index(match.group(0))][-50:]
    before = re.split(r"[.;:!?]\s", block[:match.start()])[-1]
    return before[-50:]


def _unconditioned_figures(page):
    """[(line, figure, its paragraph)] of the figures on a page that carry no condition."""
    found = []
    for number, block, table in _prose_blocks(_text(page)):
        if BENCHMARK_CITED.search(block) or UPSTREAM.search(block) or (
                MACHINE.search(block) and LOAD.search(block)):
            continue
        for m in FIGURE.finditer(block if table is None else " ".join(table[1])):
            if not SETTING.search(_words_before(block, m, table)):
                found.append((number, m.group(0), block))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_time_and_size_in_the_docs_carries_its_conditions(page):
    found = ["%s:%d: %r in %r" % (page, number, figure, block[:160])
             for number, figure, block in _unconditioned_figures(page)]
    assert not found, ("figures without the benchmark, or the machine and load, they were measured "
                       "with (or say what sets them):\n" + "\n".join(found))


def test_the_figure_rule_catches_what_it_is_for(monkeypatch):
    """The rule against the figures it was written for, and what it lets through."""
    pages = {
        "stale.md": "Each example runs in under 10 s, and the CLI starts in a tenth of a second.\n",
        "sized.md": "| step | time |\n| --- | --- |\n| build | 58 s, 1.6 GB |\n",
        "measured.md": ("Measured on a 2-core machine at a load average of 3:\n\n"
                        "| step | time |\n| --- | --- |\n| build | 58 s, 1.6 GB |\n"),
        "bench.md": "The commands start in 0.11 to 0.14 s (`benchmarks/bench_cli_startup.py`).\n",
        "settings.md": ("A line after 30 s of silence; each stage under a timeout (5 to 60 minutes).\n\n"
                        "| stage | default timeout |\n| --- | --- |\n| `DOCTOR` | 10 min |\n"),
        "code.md": "Its output:\n\n```\nDOCTOR=PASS (7.3 s)\n```\n",
        "limits.md": "Files larger than 16 MiB are refused; a slot is 8 bytes; tiles 77 % full.\n",
        "sections.md": ("Measured on a 2-core machine at a load average of 3.\n\n## Another section\n\n"
                        "| step | time |\n| --- | --- |\n| build | 58 s |\n"),
    }
    monkeypatch.setitem(globals(), "_text", pages.get)
    assert [figure for _, figure, _ in _unconditioned_figures("stale.md")] == ["10 s", "a tenth of a second"]
    assert len(_unconditioned_figures("sized.md")) == 2
    assert len(_unconditioned_figures("sections.md")) == 1  # a caption does not cross a heading
    for page in ("measured.md", "bench.md", "settings.md", "code.md", "limits.md"):
        assert _unconditioned_figures(page) == [], page


def _committed_run(name):
    with open(os.path.join(ROOT, "benchmarks", "results", "raw", name + ".json")) as f:
        return json.load(f)


def _median(values):
    import statistics

    return statistics.median(values)


def test_the_start_up_and_import_figures_are_the_committed_benchmark_runs():
    """The figures docs/npu.md and docs/performance.md quote from bench_cli_startup.py and
    bench_import.py are those benchmarks' committed output (benchmarks/results/raw/), computed
    here from the raw times: a new run changes them, and the docs with them."""
    startup = {c["command"]: _median(c["seconds"]) for c in _committed_run("cli_startup")["commands"]}
    # the commands docs/npu.md says never import TensorFlow
    quick = [s for c, s in startup.items() if c.split()[1] in ("--help", "--version", "build-kernels", "list-kernels")]
    assert len(quick) >= 4, sorted(startup)
    span = "%.2f to %.2f s" % (min(quick), max(quick))
    npu = " ".join(_text("docs/npu.md").split())
    assert "(`benchmarks/bench_cli_startup.py`: %s median in the committed run, against %.1f s for " \
           "`import tensorflow`" % (span, startup["import tensorflow (reference)"]) in npu
    performance = " ".join(_text("docs/performance.md").split())
    assert "the commands that need no op start in %s." % span in performance
    imports = _committed_run("import")
    tensorflow, ours = _median(imports["import_tensorflow"]), _median(imports["import_package_after_tensorflow"])
    assert "`import tf_ge_custom` adds %.0f ms (%.1f %%) to TensorFlow's import" % (
        ours * 1e3, 100 * ours / tensorflow) in performance


def _duration(seconds):
    minutes, seconds = divmod(int(round(seconds)), 60)
    return "%d min %d s" % (minutes, seconds) if minutes else "%d s" % seconds


def test_the_rows_of_bench_make_are_its_committed_output():
    """docs/performance.md's rows that name bench_make.py say what benchmarks/results/raw/make.json holds:
    each make demo's time, its steps (consecutive lines of one step summed), the load at its
    start and end, and the disk."""
    targets = _committed_run("make")["targets"]
    rows = [line for line in _text("docs/performance.md").splitlines() if line.startswith("|") and "`bench_make.py`" in line]
    assert len(rows) == len(targets) == 2, rows
    for row, target in zip(rows, targets):
        cells = [c.strip() for c in row.strip("|").split("|")]
        steps = []
        for step in target["steps"]:
            kind = step["step"].split(":")[0]
            if steps and steps[-1][0] == kind:
                steps[-1][1] += step["seconds"]
            else:
                steps.append([kind, step["seconds"]])
        shown = [s for s in steps if round(s[1]) > 0] if len(steps) > 1 else []
        time = _duration(target["seconds"]) + (
            " (%s)" % ", ".join("%s %.0f s" % (k, v) for k, v in shown) if len(shown) > 1 else "")
        load = target["load_average_1min"]
        assert cells[1] == time and cells[2] == "%s to %s" % (load["start"], load["end"]), (cells, target)
        disk = target["disk_bytes"]
        if cells[3] != "nothing":
            assert cells[3] == "`.venv` %.1f GB, `build/` %.0f MB" % (disk[".venv"] / 1e9, disk["build"] / 1e6)
        else:
            assert disk == targets[0]["disk_bytes"]  # a second run adds nothing
