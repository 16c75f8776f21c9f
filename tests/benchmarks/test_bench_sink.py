"""benchmarks/bench_sink.py's judging and report, driven by a TEST DOUBLE of its device step
(``device_run``): the figures, the ratio, the verdicts and the exit status are checked
against numbers worked out by hand. The device step itself needs TF Adapter and an NPU and
has not run here; nothing below says anything about the sunk path's real speed."""
import importlib.util
import io
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_sink", str(ROOT / "benchmarks" / "bench_sink.py"))
bench_sink = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_sink)


def device_double(times, correct=True):
    """A DOUBLE of bench_sink.device_run: fixed per-iteration times per path, no device."""
    calls = []

    def run(path, x_shape, y_shape, warmup, iterations):
        calls.append((path, tuple(x_shape), tuple(y_shape), warmup, iterations))
        return [times[path]] * iterations, correct if not callable(correct) else correct(path)

    run.calls = calls
    return run


def test_bytes_count_both_inputs_and_the_broadcast_output():
    assert bench_sink.bytes_moved((4096, 4096), (4096, 4096)) == 3 * 4096 * 4096 * 4  # 201,326,592
    assert bench_sink.bytes_moved((4096, 4096), (4096,)) == (2 * 4096 * 4096 + 4096) * 4
    assert bench_sink.bytes_moved((64, 1), (1, 128)) == (64 + 128 + 64 * 128) * 4
    with pytest.raises(ValueError, match="do not broadcast"):
        bench_sink.bytes_moved((3,), (4,))


def test_a_good_run_reports_time_bandwidth_and_ratio():
    # eager 1.9 ms, sunk 150 us per iteration: 201,326,592 B / 150 us = 1342 GB/s, ratio 12.67
    device = device_double({"eager": 1.9e-3, "sunk": 150e-6})
    out = io.StringIO()
    assert bench_sink.main(["--iterations", "100"], device=device, out=out) == 0
    text = out.getvalue()
    assert device.calls[0] == ("eager", (4096, 4096), (4096, 4096), 5, 100)
    assert [c[0] for c in device.calls] == ["eager", "sunk"] * 2
    assert "| equal | sunk | 150.0 | 150.0 | 150.0 | 1342 | matches numpy |" in text
    assert "| equal | eager | 1900.0 | 1900.0 | 1900.0 | 106 | matches numpy |" in text
    assert "equal: eager / sunk = 12.67x; sunk at 103% of a D2D copy's ~1300 GB/s; good" in text
    assert "2 alternating buffer sets" in text


def test_slow_or_wrong_runs_are_called_what_they_are(tmp_path):
    slow = device_double({"eager": 100e-6, "sunk": 200e-6})
    out = io.StringIO()
    assert bench_sink.main(["--json", str(tmp_path / "r.json")], device=slow, out=out) == 0
    assert "the sunk path is slower than the eager one" in out.getvalue()
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdicts"]["equal"]["ratio"] == pytest.approx(0.5)
    assert data["results"]["broadcast"]["sunk"]["iterations"] == 100
    wrong = device_double({"eager": 1e-3, "sunk": 1e-4}, correct=lambda path: path == "eager")
    out = io.StringIO()
    assert bench_sink.main([], device=wrong, out=out) == 1
    assert "DIFFERS from numpy" in out.getvalue() and "WRONG RESULT" in out.getvalue()


def test_without_an_ascend_stack_the_command_says_so_in_one_line():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sink.py"), "--iterations", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.startswith("bench_sink: cannot run here: npu_bridge (TF Adapter for TF1) is not importable")
    assert "Traceback" not in proc.stderr
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sink.py"), "--iterations", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert bad.returncode == 2 and "--iterations >= 1" in bad.stderr
