"""tf_ge_custom/_heartbeat.py: a line after every silence of PERIOD seconds, none after the
wait, none while the caller's own lines keep coming; a broken output stops the heartbeat,
not the work. Oracle: the clock (time.sleep) and the lines collected."""
import threading
import time

import pytest

from tf_ge_custom import _heartbeat

pytestmark = pytest.mark.kind("plumbing")


def test_a_silence_gets_a_line_per_period_and_nothing_after_the_wait():
    lines = []
    with _heartbeat.Heartbeat(lines.append, "loading TensorFlow", period=0.1) as beat:
        time.sleep(0.75)
        beat.doing("freezing the model", restart=True)  # a new wait: its seconds from now
        time.sleep(0.3)
    seen = list(lines)
    time.sleep(0.3)
    assert lines == seen  # nothing once the wait is over
    loading = [l for l in seen if l.startswith("still loading TensorFlow (")]
    freezing = [l for l in seen if l.startswith("still freezing the model (")]
    assert loading + freezing == seen and 4 <= len(loading) <= 8 and 1 <= len(freezing) <= 4, seen
    assert loading[0] == "still loading TensorFlow (0 s)" and loading[-1] == "still loading TensorFlow (1 s)"
    assert set(freezing) == {"still freezing the model (0 s)"}, seen


def test_the_callers_own_lines_restart_the_silence():
    lines = []
    with _heartbeat.Heartbeat(lines.append, "compiling", period=0.2) as beat:
        for i in range(6):
            beat.say("compiled unit %d" % i)
            time.sleep(0.05)
    assert lines == ["compiled unit %d" % i for i in range(6)]


def test_an_output_that_fails_ends_the_heartbeat_quietly():
    calls = []

    def broken(line):
        calls.append(line)
        raise BrokenPipeError("the reader went away")

    with _heartbeat.Heartbeat(broken, "verifying", period=0.05):
        time.sleep(0.3)
    assert len(calls) == 1  # tried once, then stopped; the with block went on
    assert not [t for t in threading.enumerate() if t.name == "tf-ge-custom heartbeat"]


def test_build_kernels_fills_the_silences_between_its_progress_lines(tmp_path, capsys, monkeypatch):
    """A builder double (it waits 0.45 s, reports one (SoC, dtype), waits 0.45 s again, then
    returns an IR-only result) and a period of 0.1 s: the command's heartbeat lines fill both
    waits on stderr, the progress line restarts the silence, and --quiet has none."""
    from tf_ge_custom import cli
    from tf_ge_custom.kernels import builder

    def builder_double(socs, dtypes, out, ir_only=False, max_programs=None, force=False, progress=None):
        time.sleep(0.45)
        if progress:
            progress(builder.Progress(1, 1, "Ascend910B1", "float32", ("flat",), "TTIR, linalg, HIVM IR",
                                      None, 0.45))
        time.sleep(0.45)
        return builder.BuildResult({"Ascend910B1": str(tmp_path / "manifest.json")}, True, {})

    monkeypatch.setattr(builder, "build_kernels", builder_double)
    monkeypatch.setattr(_heartbeat, "PERIOD", 0.1)
    assert cli.main(["build-kernels", "--ir-only", "--soc", "Ascend910B1", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    progress = [i for i, l in enumerate(err) if l.startswith("[1/1] Ascend910B1")]
    assert len(progress) == 1, err
    before, after = err[:progress[0]], err[progress[0] + 1:]
    assert before and after, err
    assert all(l.startswith("still building kernels (") for l in before + after), err
    assert cli.main(["build-kernels", "--ir-only", "--quiet", "--soc", "Ascend910B1", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""
