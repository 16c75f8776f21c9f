"""How external tools are run: streamed with the elapsed time, logged beside the result, a
failure raising an error that carries the log's tail, Ctrl-C stopping the tool's whole
process group. `atc` here is tests/export/doubles/atc_double.py, a TEST DOUBLE: these tests
pin our process handling, not anything about the real atc."""
import io
import json
import os
import re
import time

import pytest

from tf_ge_custom.errors import ExternalToolError, MissingToolchainError
from tf_ge_custom.export.cann_tools.process import run_tool

STAMP = re.compile(r"^\[\s*\d+\.\ds\] atc: ")


class Interrupting(io.StringIO):
    """Output that raises KeyboardInterrupt when the tool prints ``trigger`` (a Ctrl-C then)."""

    def __init__(self, trigger):
        super().__init__()
        self.trigger = trigger

    def write(self, text):
        super().write(text)
        if self.trigger in text:
            raise KeyboardInterrupt
        return len(text)


def _run(doubles, tmp_path, mode, heartbeat=30.0, out=None):
    env = dict(os.environ, TF_GE_CUSTOM_TEST_MODE=mode, TF_GE_CUSTOM_TEST_RECORD=str(tmp_path / "record.json"),
               ASCEND_CUSTOM_OPP_PATH="/opp/root")
    out = out if out is not None else io.StringIO()
    log = str(tmp_path / "m.atc.log")
    cmd = [doubles["atc"], "--model=/m.pb", "--output=%s" % (tmp_path / "m"), "--soc_version=Ascend910B1"]
    return run_tool(cmd, log, "atc", env=env, out=out, heartbeat=heartbeat), out, log


def test_output_is_streamed_with_elapsed_time_and_logged(doubles, tmp_path):
    run, out, log = _run(doubles, tmp_path, "ok")
    lines = out.getvalue().splitlines()
    assert lines and all(STAMP.match(line) for line in lines)
    assert lines[0].endswith("ATC start working now, please wait for a moment.")
    assert lines[-1].endswith("ATC run success, welcome to the next use.")
    text = open(log).read()
    assert text.startswith("$ %s --model=/m.pb" % doubles["atc"])
    assert "# ASCEND_CUSTOM_OPP_PATH=/opp/root\n" in text
    assert "ATC run success" in text and re.search(r"# exit status 0 after \d+\.\ds\n$", text)
    assert run.returncode == 0 and run.log_path == log
    assert (tmp_path / "m.om").is_file()


def test_a_silent_tool_gets_still_running_lines(doubles, tmp_path):
    _, out, _ = _run(doubles, tmp_path, "silent", heartbeat=0.3)
    lines = out.getvalue().splitlines()
    assert any(line.endswith("atc: still running") for line in lines[1:])
    assert lines[-1].endswith("welcome to the next use.")


def test_failure_raises_with_the_tail_of_the_log(doubles, tmp_path):
    with pytest.raises(ExternalToolError) as info:
        _run(doubles, tmp_path, "fail")
    e = info.value
    assert e.returncode == 3 and e.log_path == str(tmp_path / "m.atc.log")
    assert "atc failed (exit status 3 after" in str(e) and e.log_path in str(e)
    assert "E19999: the double failed on purpose" in e.tail
    assert "log line 59" in e.tail and "log line 0\n" not in e.tail  # the tail, not the whole log
    assert len(e.tail.splitlines()) == 40
    assert "# exit status 3" in open(e.log_path).read()


def test_a_program_that_cannot_start_is_a_missing_toolchain(tmp_path):
    with pytest.raises(MissingToolchainError, match="cannot run atc"):
        run_tool([str(tmp_path / "no-such-atc")], str(tmp_path / "log"), "atc", out=io.StringIO())


def test_interruption_stops_the_tool_and_everything_it_started(doubles, tmp_path, alive):
    out = Interrupting("hanging until killed")
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _run(doubles, tmp_path, "hang", out=out)
    record = json.loads((tmp_path / "record.json").read_text())
    assert time.monotonic() - start < 60
    assert not alive(record["pid"]), "the atc double survived the interruption"
    assert not alive(record["grandchild"]), "a process the tool started survived"
    assert "# interrupted after" in open(str(tmp_path / "m.atc.log")).read()
