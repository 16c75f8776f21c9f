"""`make bench BENCH_QUICK=1` runs every benchmark and writes a report and a plot that parse.

Quick mode is a brief run of each benchmark: its figures are not checked against goals here
(performance goals are met in benchmarks, not in tests), except what is deterministic: the
GE core's Execute path makes no heap allocation per call once its first call is made, and
the shapes of what each benchmark wrote. Each benchmark's section names the load average it
ran under (recorded by benchmarks/run_all.py, tried here with a double of one benchmark).
"""
import json
import os
import re
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = ("add_custom", "broadcast", "ge_execute", "import", "cli_startup")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "results"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONPATH")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    # -o install: the package under test is installed already (make test did it). BENCH_OUT
    # relative to the repository, as the default benchmarks/results is.
    proc = subprocess.run(["make", "-o", "install", "bench", "BENCH_QUICK=1",
                           "BENCH_OUT=" + os.path.relpath(str(out), ROOT),
                           "PY=" + sys.executable], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return out, proc.stdout


# make bench runs the same benchmarks for hours; the suite runs them briefly (BENCH_QUICK=1)
@pytest.mark.documents("make bench BENCH_QUICK=1", "make bench")
@pytest.mark.slow
def test_every_benchmark_ran_and_wrote_its_json_and_log(results):
    out, stdout = results
    for name in BENCHMARKS:
        assert "== %s " % name in stdout
        with open(str(out / "raw" / (name + ".json"))) as f:
            json.load(f)
        assert (out / "raw" / (name + ".log")).stat().st_size > 0


@pytest.mark.slow
def test_the_plot_is_a_png_of_two_panels(results):
    out, _ = results
    data = (out / "throughput.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 2 * height > 0  # two panels side by side
    import matplotlib.image

    assert matplotlib.image.imread(str(out / "throughput.png")).shape[:2] == (height, width)


@pytest.mark.slow
def test_the_report_has_a_table_per_benchmark_from_their_json(results):
    out, _ = results
    text = (out / "README.md").read_text()
    assert "`make bench BENCH_QUICK=1`" in text and "**Quick mode**" in text
    assert "![throughput](throughput.png)" in text
    for script in ("bench_add_custom.py", "bench_broadcast.py", "bench_ge_execute.py", "bench_import.py",
                   "bench_cli_startup.py"):
        assert "(`benchmarks/%s`)" % script in text
    assert "Did not run to the end" not in text
    with open(str(out / "raw" / "add_custom.json")) as f:
        sizes = [r["n"] for r in json.load(f)["results"]]
    assert sizes == [2 ** 10, 2 ** 11, 2 ** 12]  # --max-log2 12 in quick mode
    rows = re.findall(r"^\| 2\^(\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", text, re.M)
    assert [int(r[0]) for r in rows] == [10, 11, 12]
    assert all(float(v) > 0 for r in rows for v in r[1:])


@pytest.mark.slow
def test_the_ge_execute_path_allocates_nothing_per_call_after_the_first(results):
    out, _ = results
    with open(str(out / "raw" / "ge_execute.json")) as f:
        scenarios = {s["scenario"]: s for s in json.load(f)["scenarios"]}
    assert set(scenarios) == {"steady", "steady_broadcast", "steady_chunked", "steady_vector_cores_unknown",
                              "steady_core_counts_unknown", "adapter", "adapter_broadcast",
                              "adapter_fresh_lists", "reload_every_call"}
    assert all(s["checks"] for s in scenarios.values())
    for name in ("steady", "steady_broadcast", "steady_chunked", "steady_vector_cores_unknown",
                 "steady_core_counts_unknown", "adapter", "adapter_broadcast"):
        assert scenarios[name]["allocations_per_call"] == 0, scenarios[name]
        assert scenarios[name]["bytes_per_call"] == 0
        assert scenarios[name]["first_call_allocations"] > 0  # the caches are filled by the first call
        assert scenarios[name]["loads"] == 1
    assert (scenarios["steady"]["launches_per_call"], scenarios["steady_chunked"]["launches_per_call"]) == (1, 3)
    # the flat kernel's 64-byte argument struct; a row variant's 104 bytes with extents and strides
    assert (scenarios["steady"]["args_bytes"], scenarios["steady_broadcast"]["args_bytes"]) == (64, 104)
    assert scenarios["reload_every_call"]["loads"] > 1
    # 128 blocks of [64, 8192]: 2 x 24 AI cores where the vector-core count is 0, else the
    # manifest's 40 programs (tests/native/core/test_support.h, KernelSpec)
    assert (scenarios["steady_vector_cores_unknown"]["block_dim"],
            scenarios["steady_core_counts_unknown"]["block_dim"]) == (48, 40)
    # the control: lists and call built anew on every call do allocate (the counter counts)
    assert scenarios["adapter_fresh_lists"]["allocations_per_call"] > 0


# --- the load each benchmark ran under ----------------------------------------------------------

FAKE_IMPORT_BENCHMARK = r'''
import json, sys
with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
    json.dump({"runs": 3, "import_tensorflow": [2.0, 2.5, 3.0], "import_tensorflow_and_package": [2.1, 2.6, 3.1],
               "import_package_after_tensorflow": [0.04, 0.05, 0.06]}, f)
'''


def _run_all():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", os.path.join(ROOT, "benchmarks", "run_all.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_section_of_the_report_names_the_load_its_benchmark_ran_under(tmp_path):
    """A figure is only true under its conditions: run_all records the machine's 1-minute load
    average at each benchmark's start and end beside its output, and the report prints it
    under the benchmark's title; a raw folder of an earlier run without it reports none."""
    run_all = _run_all()
    raw = tmp_path / "raw"
    raw.mkdir()
    script = tmp_path / "bench_fake_import.py"  # a TEST DOUBLE of bench_import.py's output
    script.write_text(FAKE_IMPORT_BENCHMARK)
    doc, status, log = run_all.run_benchmark("import", str(script), [], str(raw))
    assert status == 0 and doc["runs"] == 3, open(log).read()
    with open("/proc/loadavg") as f:  # the kernel's own account, read right after
        now = float(f.read().split()[0])
    recorded = json.loads((raw / "import.load.json").read_text())
    start, end = recorded["load_average_1min"]["start"], recorded["load_average_1min"]["end"]
    assert recorded["cpus"] == os.cpu_count() and min(start, end) >= 0
    assert abs(end - now) < 2, (end, now)  # moments apart: the 1-minute average moves slowly
    assert run_all.read_load(str(raw), "import") == (start, end)
    text = open(run_all.write_report(str(tmp_path), {"import": (doc, status, log)}, quick=False)).read()
    assert ("## What `import tf_ge_custom` adds (`benchmarks/bench_import.py`)\n\n"
            "Load average (1 minute) %.2f at its start, %.2f at its end, on %d CPUs.\n" % (
                start, end, os.cpu_count())) in text, text
    (raw / "import.load.json").unlink()
    text = open(run_all.write_report(str(tmp_path), {"import": (doc, status, log)}, quick=False)).read()
    assert "## What `import tf_ge_custom` adds" in text and "Load average" not in text
