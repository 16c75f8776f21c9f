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
- docs/performance.md names every benchmark under benchmarks/.
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
