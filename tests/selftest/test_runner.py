"""The selftest's runner: child processes, results, timeouts, SKIP decisions, lines.

The stage functions here are small stand-ins (tests/selftest/doubles/selftest_functions.py)
that pass, skip, raise, return garbage, exit without a result or sleep; no TensorFlow is
imported by them, so each child takes a fraction of a second.
"""
import io
import os
import time

from tf_ge_custom.selftest import runner
from tf_ge_custom.selftest.host import Host
from tf_ge_custom.selftest.stages import Stage

F = "selftest_functions:"


def _child(tmp_path, selftest_paths, function, timeout=60, host=None):
    return runner.run_child("STAGE", F + function, str(tmp_path), timeout, host, None, selftest_paths["env"]())


def test_a_passing_stage_reports_its_figures_and_keeps_its_log(tmp_path, selftest_paths):
    status, detail, figures, seconds, log = _child(tmp_path, selftest_paths, "passes", host=Host(soc="Ascend910B3"))
    assert (status, detail) == ("PASS", "fine")
    assert figures == {"answer": 42, "workdir": str(tmp_path / "STAGE"), "soc": "Ascend910B3"}
    assert log == str(tmp_path / "STAGE.log") and "a line for the log" in open(log).read()
    assert 0 < seconds < 60


def test_a_stage_that_skips_raises_or_returns_garbage(tmp_path, selftest_paths):
    assert _child(tmp_path, selftest_paths, "skips")[:2] == ("SKIP", "a piece the stage needs")
    status, detail, figures, _, log = _child(tmp_path, selftest_paths, "raises")
    assert (status, detail) == ("FAIL", "RuntimeError: first line of the reason")
    assert figures["error"] == "first line of the reason\nsecond line"
    assert "Traceback" in open(log).read()
    assert _child(tmp_path, selftest_paths, "returns_nothing")[:2] == (
        "FAIL", "the stage returned None, not an outcome")


def test_a_child_that_exits_without_a_result_fails_with_its_last_lines(tmp_path, selftest_paths):
    status, detail, figures, _, _ = _child(tmp_path, selftest_paths, "exits_without_a_result")
    assert status == "FAIL"
    assert detail == "the stage's process exited with status 3 without a result; last lines: about to exit"
    assert figures == {"exit": 3}


def test_a_child_past_its_timeout_is_killed_and_fails(tmp_path, selftest_paths):
    started = time.time()
    status, detail, figures, seconds, _ = _child(tmp_path, selftest_paths, "sleeps", timeout=3)
    assert status == "FAIL" and figures == {"timed_out": True}
    assert detail.startswith("did not finish within 3 s: killed with its process group")
    assert detail.endswith("last lines: sleeping now")
    assert 3 <= seconds < 30 and time.time() - started < 30


def test_an_unknown_function_fails_naming_it(tmp_path, selftest_paths):
    status, detail, _, _, _ = runner.run_child("STAGE", "selftest_functions:no_such", str(tmp_path), 60, None, None,
                                               selftest_paths["env"]())
    assert status == "FAIL" and detail.startswith("AttributeError:") and "no_such" in detail


def test_stages_skip_without_a_child_when_the_host_lacks_a_need(tmp_path, selftest_paths):
    stages = (Stage("FIRST", "", F + "passes", ("npu", "soc")),
              Stage("SECOND", "", F + "passes", (), ("FIRST",)),
              Stage("THIRD", "", F + "passes"))
    out = io.StringIO()
    results = runner.run_stages(Host(), str(tmp_path), stages, env=selftest_paths["env"](), out=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("FIRST=SKIP (needs an Ascend NPU (no /dev/davinci<N>); the SoC name (pass --soc, "
                        "e.g. --soc Ascend910B1))")
    assert lines[1] == "SECOND=SKIP (needs FIRST to PASS first (FIRST SKIP))"
    assert lines[2] == "THIRD: started (up to 10 min)"  # a stage that runs says so first
    assert lines[3].startswith("THIRD=PASS (fine, ") and lines[3].endswith(" s)")
    assert [r.log for r in results] == [None, None, str(tmp_path / "THIRD.log")]
    assert not os.path.exists(tmp_path / "FIRST")  # no child, no folder
    assert runner.summary_line(results, 1.25, stages) == (
        "SELFTEST=PASS (1 PASS, 0 FAIL, 2 SKIP in 1.2 s; nothing ran on an NPU: THIRD passed without one, "
        "2 NPU stages skipped)")


def test_one_fail_makes_the_whole_run_fail(tmp_path, selftest_paths):
    stages = (Stage("GOOD", "", F + "passes"), Stage("BAD", "", F + "raises"))
    results = runner.run_stages(Host(), str(tmp_path), stages, env=selftest_paths["env"](), out=io.StringIO())
    assert runner.overall(results) == "FAIL" and runner.counts(results) == {"PASS": 1, "FAIL": 1, "SKIP": 0}
