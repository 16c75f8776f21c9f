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
