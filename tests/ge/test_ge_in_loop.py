"""GE in the loop: the CANN-facing sources (ge_ops/cann/, unchanged) run against GE's own
open-source context code, one pytest item per harness case and tag.

For each tag of ge_ops/ge_in_loop/upstream_files.json, the upstream files listed there are
extracted from the hicann/ge and hicann/metadef snapshots (TF_GE_CUSTOM_GE_REPO,
TF_GE_CUSTOM_METADEF_REPO) with ``git archive`` and built with the stand-ins of
ge_ops/ge_in_loop/stand_ins/ (securec, logging, error reports, the platform component, a few
libgraph symbols, a recording ACL: each named as a stand-in, docs/ge-library.md "GE in the
loop" lists what each leaves unproven) into the harness's test program, which loads the GE
library as GE does and drives every CANN-facing entry point through metadef's context
builders. Without the snapshots every test here skips, naming the variables.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
HARNESS = SOURCE_ROOT / "ge_ops" / "ge_in_loop"
_TEST_RE = re.compile(r"^TEST\((\w+),\s*(\w+)\)", re.M)


def _tags():
    import json
    return sorted(json.loads((HARNESS / "upstream_files.json").read_text())["tags"])


def _case_names():
    names = []
    for path in sorted((HARNESS / "driver").glob("*.cc")):
        names += ["%s.%s" % m for m in _TEST_RE.findall(path.read_text())]
    return names


TAGS = _tags()
CASES = _case_names()
# The sanitized build covers one tag (the newest GE), to stay inside CI's time budget.
SANITIZED_TAG = "HEAD" if "HEAD" in TAGS else TAGS[-1]
SANITIZER_OPTIONS = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1",
                     "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
DOUBLE = SOURCE_ROOT / "tests" / "ge" / "doubles" / "kernel_compiler_double"


def harness_env(scratch, sanitize=False):
    """The harness's environment: no toolkit, no hivmc; Compile's builder is the TEST DOUBLE
    tests/ge/doubles/kernel_compiler_double (real builder entry point and cache protocol,
    made-up build step) with a cache of its own; the package the builder imports is the
    installed one."""
    import sys
    import tf_ge_custom
    scratch = pathlib.Path(scratch)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG", "ASAN_", "UBSAN_")) and k != "ASCEND_HOME_PATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env.update(TF_GE_CUSTOM_CACHE_DIR=str(scratch / "cache"), TF_GE_CUSTOM_PYTHON=str(DOUBLE),
               TF_GE_CUSTOM_DOUBLE_PYTHON=sys.executable, TF_GE_CUSTOM_DOUBLE_MODE="build",
               TF_GE_CUSTOM_DOUBLE_COUNT=str(scratch / "builds.txt"),
               TF_GE_IN_LOOP_PACKAGE=os.path.dirname(os.path.abspath(tf_ge_custom.__file__)),
               TMPDIR=str(scratch))
    if sanitize:
        env.update(SANITIZER_OPTIONS)
    return env


def _run(exe, env, extra=()):
    proc = subprocess.run([str(exe)] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=600)
    import json
    records = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["name"]] = record
    return records, proc


@pytest.fixture(scope="module")
def runs(ge_in_loop, tmp_path_factory):
    cache = {}

    def run(tag, sanitize=False):
        if (tag, sanitize) not in cache:
            build, exe = ge_in_loop(tag, sanitize)
            scratch = tmp_path_factory.mktemp("ge-in-loop")
            cache[(tag, sanitize)] = (build, exe) + _run(exe, harness_env(scratch, sanitize))
        return cache[(tag, sanitize)]

    return run


def test_without_the_snapshots_the_harness_skips_naming_the_variables(hicann_snapshots):
    snapshots = type(hicann_snapshots)(environ={})
    reason = snapshots.missing(["v9.2.0-beta.1"], ["v9.2.0-beta.1"])
    assert reason.startswith("needs the hicann snapshots: ")
    assert "TF_GE_CUSTOM_GE_REPO is unset" in reason and "TF_GE_CUSTOM_METADEF_REPO is unset" in reason
    bogus = type(hicann_snapshots)(environ={"TF_GE_CUSTOM_GE_REPO": "/nonexistent/ge",
                                            "TF_GE_CUSTOM_METADEF_REPO": "/nonexistent/md"})
    reason = bogus.missing(["HEAD"], ["HEAD"])
    assert reason.startswith("needs the hicann snapshots: ")
    assert "TF_GE_CUSTOM_GE_REPO=/nonexistent/ge is not a git directory" in reason


@pytest.mark.parametrize("tag", TAGS)
def test_every_listed_upstream_file_is_at_its_tag(hicann_snapshots, tag):
    import json
    entry = json.loads((HARNESS / "upstream_files.json").read_text())["tags"][tag]
    hicann_snapshots.require([entry["ge"]], [entry["metadef"]])
    for source in entry["runtime"] + entry["registry"]:
        repo, path = source.split(":", 1)
        assert hicann_snapshots.has_file(hicann_snapshots.repo(repo), entry[repo], path), (tag, source)


@pytest.mark.parametrize("tag", TAGS)
def test_every_case_in_the_driver_is_registered(runs, tag):
    _, exe, _, _ = runs(tag)
    listed = subprocess.run([str(exe), "--list"], stdout=subprocess.PIPE, universal_newlines=True,
                            check=True)
    assert sorted(listed.stdout.split()) == sorted(CASES)


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("case", CASES)
def test_ge_in_loop(runs, tag, case):
    _, _, records, proc = runs(tag)
    assert case in records, "the harness ended before %s:\n%s" % (case, proc.stderr[-4000:])
    assert records[case]["passed"], "\n".join(records[case]["failures"])


@pytest.mark.slow
def test_every_case_passes_under_asan_and_ubsan(runs):
    """ASan + UBSan over the adapter, the core and GE's context code (UBSan's vptr check off:
    GE's polymorphic classes need libgraph's typeinfo, ge_ops/ge_in_loop/CMakeLists.txt)."""
    _, _, records, proc = runs(SANITIZED_TAG, sanitize=True)
    failed = {name: r["failures"] for name, r in records.items() if not r["passed"]}
    assert proc.returncode == 0, (failed, proc.stderr[-6000:])
    assert sorted(records) == sorted(CASES)
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr
