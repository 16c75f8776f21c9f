"""`tf-ge-custom selftest` on this machine, run as a user runs it: no NPU, no CANN, no TF Adapter.

The CPU stages must PASS, every NPU stage must SKIP naming what this host lacks, the exit
status is 0, and the JSON report holds the versions and every stage. Bad arguments exit 2
before anything runs.
"""
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys

import pytest

from tf_ge_custom import _library, op_def
from tf_ge_custom._version import __version__
from tf_ge_custom.selftest import stages

COMMAND = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
LINE = re.compile(r"^([A-Z0-9_]+)=(PASS|FAIL|SKIP)(?: \((.*)\))?$")
CPU_STAGES = ("DOCTOR", "CPU_ADD", "CPU_OPS")
# the ops of the records beyond the two shipped ones (an op added as docs/adding-an-op.md says):
# CPU_OPS checks each of them too
ADDED_OPS = [op for op in op_def.OPS if op.type_name not in ("AddCustom", "LeakyReluCustom")]


def _no_ascend_stack():
    """This file's expectations hold on a host without any piece of the Ascend stack."""
    import glob

    present = [what for what, there in (
        ("npu_bridge", importlib.util.find_spec("npu_bridge") is not None),
        ("npu_device", importlib.util.find_spec("npu_device") is not None),
        ("/dev/davinci*", bool(glob.glob("/dev/davinci[0-9]*"))),
        ("ASCEND_HOME_PATH", bool(os.environ.get("ASCEND_HOME_PATH")))) if there]
    assert not present, "these tests expect a host without the Ascend stack; found %s" % ", ".join(present)


def _run(args, cwd, timeout=900):
    # a user's shell on this host: no ASCEND_* variable (this test process's own import of
    # tf_ge_custom set ASCEND_CUSTOM_OPP_PATH; the user never did)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run([COMMAND, "selftest"] + args, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    """One full run with --json and --keep; its process, lines, report and folder."""
    _no_ascend_stack()
    work = tmp_path_factory.mktemp("selftest-here")
    proc = _run(["--json", "selftest.json", "--keep", "selftest-logs"], work)  # the README's line
    lines = {}
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(1) in stages.NAMES:
            lines[m.group(1)] = (m.group(2), m.group(3) or "")
    report = json.loads((work / "selftest.json").read_text()) if (work / "selftest.json").exists() else None
    return proc, lines, report, work


def test_exit_status_is_0_and_each_stage_has_one_line_in_order(here):
    proc, lines, _, _ = here
    assert proc.returncode == 0, proc.stdout + proc.stderr
    named = [LINE.match(l).group(1) for l in proc.stdout.splitlines() if LINE.match(l)]
    assert named == list(stages.NAMES) + ["SELFTEST"]
    assert proc.stdout.splitlines()[0].startswith("tf-ge-custom %s selftest | TensorFlow " % __version__)


def test_each_stage_that_runs_says_so_when_it_starts(here):
    proc, _, _, _ = here
    out = proc.stdout.splitlines()
    for name in CPU_STAGES:
        start = out.index("%s: started (up to %d min)" % (name, stages.get(name).timeout // 60))
        assert out[start + 1].startswith(name + "=PASS ("), out  # its verdict is the next line
    assert not [l for l in out if re.match(r"^[A-Z0-9_]+: started", l) and l.split(":")[0] not in CPU_STAGES]


def test_the_summary_says_nothing_ran_on_an_npu(here):
    proc, _, _, _ = here
    (summary,) = [l for l in proc.stdout.splitlines() if l.startswith("SELFTEST=")]
    skipped = len(stages.NAMES) - len(CPU_STAGES)
    assert re.match(r"^SELFTEST=PASS \(%d PASS, 0 FAIL, %d SKIP in [0-9.]+ s; CPU only: %d NPU stages skipped, "
                    r"nothing ran on an NPU\)$" % (len(CPU_STAGES), skipped, skipped), summary), summary


def test_the_doctor_stage_claims_nothing_about_the_shells_variable(here):
    """The shell has no ASCEND_* variable; the selftest process itself has ASCEND_CUSTOM_OPP_PATH
    (import tf_ge_custom set it), which its stages must not inherit as if the user had set it."""
    _, _, report, work = here
    doctor = next(s for s in report["stages"] if s["name"] == "DOCTOR")
    shown = {c["name"]: c for c in doctor["figures"]["checks"]}
    assert "shell environment (atc)" not in shown, shown  # folded: CPU mode, nothing to say
    assert shown["ASCEND_CUSTOM_OPP_PATH"]["detail"].endswith(
        "(set by tf_ge_custom at import, not by your shell)"), shown["ASCEND_CUSTOM_OPP_PATH"]
    log = (work / "selftest-logs" / "DOCTOR.log").read_text()
    assert "the shell's ASCEND_CUSTOM_OPP_PATH contains" not in log and "shell environment" not in log, log


def test_cpu_stages_pass(here):
    _, lines, report, _ = here
    for name in CPU_STAGES:
        assert lines[name][0] == "PASS", lines[name]
    cpu_add = next(s for s in report["stages"] if s["name"] == "CPU_ADD")
    # 4 dtypes x 5 shape pairs x (graph, eager, tf.function) on TensorFlow 2
    assert cpu_add["figures"]["comparisons"] == 4 * 5 * 3
    assert cpu_add["figures"]["modes"] == ["graph", "eager", "tf.function"]
    cpu_ops = next(s for s in report["stages"] if s["name"] == "CPU_OPS")
    # LeakyReluCustom: 3 dtypes x 3 shapes x 8 alphas (the default 0.2; 0, 1, -0.5, 2.5, -0.0,
    # NaN, infinity) x (graph, eager, tf.function); then any op added to the records, each with
    # its dtypes, the 3 shapes and the attribute cases the line states for it
    added = 0
    for op in ADDED_OPS:
        found = re.search(r"; %s: %d dtypes x 3 shapes x (\d+) attribute cases" % (op.type_name, len(op.dtypes)),
                          lines["CPU_OPS"][1])
        assert found, (op.type_name, lines["CPU_OPS"][1])
        added += len(op.dtypes) * 3 * int(found.group(1)) * 3
    assert cpu_ops["figures"]["comparisons"] == 3 * 3 * 8 * 3 + added
    assert lines["CPU_OPS"][1].startswith("LeakyReluCustom: 3 dtypes x 3 shapes x 8 attribute cases")
    assert (" in graph, eager, tf.function: equal to their TensorFlow equivalents bit for bit"
            in lines["CPU_OPS"][1])


# what each NPU stage must name on a host without the Ascend stack
MISSING_HERE = {
    "TF1_SESSION": ("npu_bridge", "Ascend NPU"),
    "TF2_DEVICE": ("npu_device", "Ascend NPU"),
    "KERNELS": ("--soc",),
    "NPU_ADD_STATIC": ("TF Adapter", "Ascend NPU", "GE library"),
    "NPU_ADD_DYNAMIC": ("TF Adapter", "Ascend NPU", "GE library"),
    "NPU_OPS_STATIC": ("TF Adapter", "Ascend NPU", "GE library"),
    "NPU_LARGE": ("TF Adapter", "Ascend NPU", "GE library"),
    "NPU_BROADCAST": ("TF Adapter", "Ascend NPU", "GE library"),
    "COMPILE_AT_BUILD": ("--soc", "CANN toolkit"),
    "SINK": ("npu_bridge", "Ascend NPU", "GE library"),
    "GE_LOAD_ONCE": ("TF Adapter", "Ascend NPU", "GE library"),
    "EXPORT_OM": ("--soc", "CANN toolkit", "atc", "GE library"),
    "RUN_OM": ("EXPORT_OM",),
}


def test_every_npu_stage_skips_naming_what_this_host_lacks(here):
    _, lines, _, _ = here
    assert set(MISSING_HERE) == set(stages.NAMES) - set(CPU_STAGES)
    for name, words in MISSING_HERE.items():
        status, detail = lines[name]
        assert status == "SKIP", (name, detail)
        for word in words:
            assert word in detail, (name, word, detail)
    # this build compiles kernels at graph build, so that is not among what the host lacks
    assert "build-kernels --cache" not in lines["COMPILE_AT_BUILD"][1]


def _check_types(document, spec, where="report"):
    """A small schema check: spec maps keys to a type, a tuple of types, or a nested spec."""
    assert isinstance(document, dict), where
    for key, kind in spec.items():
        assert key in document, "%s lacks %r" % (where, key)
        if isinstance(kind, dict):
            _check_types(document[key], kind, "%s.%s" % (where, key))
        else:
            assert isinstance(document[key], kind), "%s.%s is %r" % (where, key, document[key])


SCHEMA = {
    "format": str, "version": int, "command": str, "status": str, "counts": dict, "started": str,
    "seconds": (int, float), "work_folder": (str, type(None)), "stages": list,
    "versions": {"tf_ge_custom": str, "tensorflow": str, "tf_adapter": dict,
                 "cann": {"home": (str, type(None)), "version": (str, type(None))},
                 "soc": {"name": (str, type(None)), "source": (str, type(None))}, "build": dict},
    "host": {"modules": dict, "npu_devices": list, "cann": dict, "ge_library": dict, "soc": dict,
             "build_kernels_cache": bool, "platform": {"python": str, "machine": str}},
}
STAGE_SCHEMA = {"name": str, "status": str, "detail": str, "figures": dict, "seconds": (int, float),
                "timeout": int, "log": (str, type(None))}


def test_json_report_has_the_versions_and_every_stage(here):
    proc, lines, report, work = here
    _check_types(report, SCHEMA)
    assert (report["format"], report["version"]) == ("tf-ge-custom-selftest", 1)
    assert report["status"] == "PASS" and report["command"] == "tf-ge-custom selftest"
    assert [s["name"] for s in report["stages"]] == list(stages.NAMES)
    for s in report["stages"]:
        _check_types(s, STAGE_SCHEMA, "stage %s" % s.get("name"))
        status, text = lines[s["name"]]
        assert s["status"] == status and text.startswith(s["detail"]), (s, text)
        assert s["timeout"] == stages.get(s["name"]).timeout
    assert report["counts"] == {"PASS": len(CPU_STAGES), "FAIL": 0, "SKIP": len(stages.NAMES) - len(CPU_STAGES)}
    # versions against independent sources: this process's TensorFlow, the build record
    import tensorflow as tf

    assert report["versions"]["tensorflow"] == tf.__version__
    assert report["versions"]["tf_ge_custom"] == __version__
    assert report["versions"]["build"] == _library.build_info()
    assert report["versions"]["tf_adapter"] == {}
    assert report["versions"]["soc"] == {"name": None, "source": None}
    assert report["host"]["platform"]["python"] == platform.python_version()
    assert report["work_folder"] == str(work / "selftest-logs")


def test_kept_folder_holds_a_log_for_each_stage_that_ran(here):
    _, _, report, work = here
    for s in report["stages"]:
        if s["name"] in CPU_STAGES:
            assert s["log"] == str(work / "selftest-logs" / (s["name"] + ".log"))
            assert os.path.getsize(s["log"]) > 0
        else:
            assert s["log"] is None  # a SKIP from the host's facts starts no process
    doctor_log = (work / "selftest-logs" / "DOCTOR.log").read_text()
    assert "doctor" in doctor_log and "INFO" in doctor_log  # doctor's own lines, CPU mode


def test_without_keep_nothing_is_left_behind(tmp_path):
    before = set(os.listdir(tmp_path))
    proc = _run(["--only", "DOCTOR"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^DOCTOR=PASS \(", proc.stdout, re.M)
    assert set(os.listdir(tmp_path)) == before
    assert "SELFTEST=PASS (1 PASS, 0 FAIL, 0 SKIP" in proc.stdout


def test_a_soc_without_packaged_kernels_is_left_to_the_compile_at_graph_build(tmp_path):
    # This build has no npubins (no CANN here) and compiles kernels at graph build, so the
    # KERNELS stage hands the SoC to COMPILE_AT_BUILD (the FAIL without that feature:
    # tests/selftest/test_stages_with_doubles.py).
    recorded = (_library.build_info().get("kernels") or {}).get("socs") or {}
    assert "Ascend910B1" not in recorded, "this test expects a build without npubins (no CANN here)"
    proc = _run(["--soc", "Ascend910B1", "--only", "KERNELS", "--json", "r.json"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^KERNELS=SKIP \(no packaged npubins for Ascend910B1: kernels for it are compiled at "
                     r"graph build \(COMPILE_AT_BUILD checks that\)", proc.stdout, re.M), proc.stdout
    assert "SELFTEST=PASS (0 PASS, 0 FAIL, 1 SKIP" in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == "PASS" and report["versions"]["soc"] == {"name": "Ascend910B1", "source": "--soc"}
    assert report["host"]["build_kernels_cache"] is True
    assert report["work_folder"] is None and [(s["name"], s["log"]) for s in report["stages"]] == [("KERNELS", None)]


@pytest.mark.parametrize("args, message", [
    (["--only", "DOCTOR,BOGUS"], "unknown stage BOGUS"),
    (["--soc", "Ascend000"], "unsupported SoC 'Ascend000'"),
    (["--timeout", "0"], "--timeout 0"),
    (["--keep", "not-empty"], "not empty"),
    # a missing folder is made (as export makes --output's); a file where it goes is refused
    (["--json", "not-empty/file/report.json"], "is not a folder"),
])
def test_bad_arguments_exit_2_before_anything_runs(tmp_path, args, message):
    (tmp_path / "not-empty").mkdir()
    (tmp_path / "not-empty" / "file").write_text("x")
    proc = _run(args, tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""
    assert sorted(os.listdir(tmp_path)) == ["not-empty"]


def test_keep_takes_over_a_folder_an_earlier_selftest_wrote_and_nothing_else(tmp_path):
    from tf_ge_custom.errors import UsageError
    from tf_ge_custom.selftest import suite

    kept = tmp_path / "kept"
    folder, is_kept = suite.work_folder(str(kept))
    assert (folder, is_kept) == (str(kept), True) and (kept / suite.MARKER).is_file()
    with pytest.raises(UsageError, match="another selftest \\(process %d\\) is using it" % os.getpid()):
        suite.work_folder(str(kept))  # claimed: while that run lasts, no other takes the folder
    suite.release(folder)
    (kept / "DOCTOR").mkdir()
    (kept / "DOCTOR.log").write_text("an earlier run's log")
    (kept / "notes.txt").write_text("the user's own file")
    assert suite.work_folder(str(kept)) == (str(kept), True)  # taken again
    assert sorted(os.listdir(str(kept))) == sorted([suite.MARKER, suite.RUNNING, "notes.txt"])  # old run's files went
    # a claim whose process is gone (a killed run) is taken over
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()
    (kept / suite.RUNNING).write_text(dead + "\n")
    assert suite.work_folder(str(kept)) == (str(kept), True)
    assert (kept / suite.RUNNING).read_text() == "%d\n" % os.getpid()
    suite.release(folder)
    assert not (kept / suite.RUNNING).exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="no earlier selftest wrote it"):
        suite.work_folder(str(other))
    assert os.listdir(str(other)) == ["notes.txt"]


def test_list_names_every_stage_with_its_needs(tmp_path):
    proc = _run(["--list"], tmp_path, timeout=60)
    assert proc.returncode == 0
    for stage in stages.STAGES:
        assert re.search(r"^%s  " % stage.name, proc.stdout, re.M)
    assert "needs: nothing (CPU)" in proc.stdout
    assert "EXPORT_OM PASS" in proc.stdout


def test_the_command_line_lists_selftest(tmp_path):
    proc = subprocess.run([COMMAND, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
    assert re.search(r"^\s+selftest\s+run every stage", proc.stdout, re.M)


FAKE_TENSORFLOW = '''\
import os, traceback
with open(os.environ["FAKE_TF_MARK"], "a") as f:
    f.write("".join(traceback.format_stack()) + "\\n=====\\n")
raise ImportError("tensorflow test double: the import was recorded")
'''


def test_only_the_stages_import_tensorflow_and_a_broken_one_fails_them_cleanly(tmp_path):
    # a TEST DOUBLE of tensorflow first on PYTHONPATH: it records who imports it, then fails
    (tmp_path / "fake" / "tensorflow").mkdir(parents=True)
    (tmp_path / "fake" / "tensorflow" / "__init__.py").write_text(FAKE_TENSORFLOW)
    mark = tmp_path / "imports.txt"
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "fake"), FAKE_TF_MARK=str(mark))
    proc = subprocess.run([COMMAND, "selftest", "--only", "CPU_ADD", "--json", "r.json"], cwd=str(tmp_path),
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CPU_ADD=FAIL (ImportError: tensorflow test double: the import was recorded" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    imports = mark.read_text().split("\n=====\n")[:-1]
    assert len(imports) == 2  # the versions probe and CPU_ADD, each in its child
    assert all("tf_ge_custom/selftest/child.py" in stack for stack in imports)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["versions"]["tensorflow"].startswith("not importable (ImportError: tensorflow test double")


# --- docs/selftest.md against the code and a real run ------------------------------------------

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "selftest.md")


def _doc_tables():
    """The stage names of each table of docs/selftest.md whose first column is ``stage``, in
    order, as [(header, [(names of the row, the row's cells)])]."""
    tables, current = [], None
    for line in open(DOC).read().splitlines():
        if line.startswith("| stage |"):
            current = []
            tables.append((line, current))
        elif current is not None and line.startswith("|") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            current.append(([n.strip(" `") for n in cells[0].split(",")], cells))
        elif not line.startswith("|"):
            current = None
    return tables


def test_the_docs_list_every_stage_in_order_with_its_timeout():
    tables = _doc_tables()
    assert len(tables) == 2, [h for h, _ in tables]
    for header, rows in tables:
        names = [n for row_names, _ in rows for n in row_names]
        assert names == list(stages.NAMES), (header, names)
    (_, detail_rows), = [t for t in tables if "default timeout" in t[0]]
    for (name,), cells in detail_rows:
        assert cells[-1] == "%d min" % (stages.get(name).timeout // 60), (name, cells[-1])


def _shape(line):
    """A line with its numbers (times, versions, counts) made alike."""
    return re.sub(r"\d+(\.\d+)*", "N", line)


def test_the_docs_sample_output_is_what_a_run_prints_whole(here):
    """Every line, in order, none left out: only the figures (times, counts, versions) and the
    folder it ran in (/home/user in the sample) may differ."""
    proc, _, _, work = here
    text = open(DOC).read()
    start = text.index("```\ntf-ge-custom %s selftest |" % __version__) + 4
    sample = text[start:text.index("```", start)].splitlines()
    printed = [_shape(l.replace(str(work), "/home/user")) for l in proc.stdout.splitlines()]
    # the sample is the shipped ops': an op added to the records adds its part to CPU_OPS's line
    for op in ADDED_OPS:
        printed = [l.replace("; %s: N dtypes x N shapes x N attribute cases" % op.type_name, "") for l in printed]
    assert [_shape(l) for l in sample] == printed, "\n".join(proc.stdout.splitlines())
    assert sample[-2:] == ["logs and files: /home/user/selftest-logs",
                           "When reporting a problem, send selftest.json and the *.log files in "
                           "/home/user/selftest-logs (docs/selftest.md)."]
