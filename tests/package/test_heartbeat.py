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
        time.sleep(0.35)
        beat.doing("freezing the model")
        time.sleep(0.25)
    seen = list(lines)
    time.sleep(0.3)
    assert lines == seen  # nothing once the wait is over
    assert 4 <= len(seen) <= 7, seen
    assert seen[0] == "still loading TensorFlow (0 s)"
    assert seen[-1].startswith("still freezing the model (")
    assert all(l.startswith(("still loading TensorFlow (", "still freezing the model (")) for l in seen)


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
