"""tf_ge_custom._processes.run, the one runner for other programs: argument lists,
captured or streamed output, a timeout, the whole process group stopped, one named error
carrying the command and its output's tail.

The programs run are small Python scripts written here; the oracle is what they print, their
exit status and whether their processes still exist afterwards (/proc).
"""
import os
import signal
import sys
import time

import pytest

from tf_ge_custom import _processes
from tf_ge_custom.errors import CommandError, ExternalToolError, TfGeCustomError

PY = sys.executable


def script(text):
    return [PY, "-c", text]


def alive(pid, wait=5.0):
    """Whether ``pid`` still exists (and is not a zombie), allowing ``wait`` s to go away."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (IOError, OSError):
            return False
        if state == "Z" or time.monotonic() > deadline:
            return state != "Z"
        time.sleep(0.05)


# A program that starts a grandchild, prints both pids, then waits for ever.
HANGS = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print("pids", child.pid, flush=True)
import os; print("me", os.getpid(), flush=True)
time.sleep(600)
"""


def test_output_exit_status_and_the_argument_list_are_kept():
    done = _processes.run(script("import sys; print('out'); print('err', file=sys.stderr); "
                               "print('a b')"), check=False)
    assert done.returncode == 0 and done.output == "out\nerr\na b\n" and done.errors == ""
    assert done.argv[0] == PY and done.seconds >= 0


def test_stderr_can_be_kept_apart():
    done = _processes.run(script("import sys; print('out'); print('err', file=sys.stderr)"),
                        separate_stderr=True)
    assert done.output == "out\n" and done.errors == "err\n"


def test_a_failure_is_one_named_error_with_the_command_and_the_tail_of_its_output():
    program = script("import sys\nfor i in range(100): print('line', i)\nsys.exit(3)")
    with pytest.raises(CommandError) as info:
        _processes.run(program)
    e = info.value
    assert isinstance(e, TfGeCustomError) and isinstance(e, RuntimeError)
    assert e.reason == "failed" and e.returncode == 3 and e.argv == tuple(program)
    assert e.tail.splitlines() == ["line %d" % i for i in range(60, 100)]  # the last 40
    assert _processes.command_line(program) in str(e) and "exit status 3" in str(e)
    # without check, the same run is a result
    assert _processes.run(program, check=False).returncode == 3


def test_a_program_killed_by_a_signal_says_which():
    with pytest.raises(CommandError, match="killed by SIGKILL"):
        _processes.run(script("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))


def test_a_program_that_cannot_start_is_a_command_error(tmp_path):
    with pytest.raises(CommandError) as info:
        _processes.run([str(tmp_path / "no-such-program"), "--version"])
    assert info.value.reason == "not started" and info.value.returncode is None
    assert "no-such-program" in str(info.value)


@pytest.mark.parametrize("bad", ["echo hi", b"echo", [], ["echo", None]])
def test_only_an_argument_list_is_a_command(bad):
    with pytest.raises((TypeError, ValueError)):
        _processes.run(bad)


def test_a_timeout_stops_the_program_and_everything_it_started():
    started = time.monotonic()
    with pytest.raises(CommandError) as info:
        _processes.run(script(HANGS), timeout=4)
    assert time.monotonic() - started < 4 + _processes.TERMINATE_GRACE_SECONDS + 5
    e = info.value
    assert e.reason == "timed out" and "did not finish within 4 s" in str(e)
    grandchild = int(e.tail.splitlines()[0].split()[1])
    me = int(e.tail.splitlines()[1].split()[1])
    assert not alive(me) and not alive(grandchild)


def test_lines_are_handed_over_as_they_come_and_silence_is_reported():
    seen = []
    done = _processes.run(script("import time\nprint('first', flush=True)\ntime.sleep(1.2)\n"
                               "print('second', flush=True)"),
                        on_line=lambda line: seen.append(("line", line, time.monotonic())),
                        heartbeat=0.3, on_silence=lambda s: seen.append(("silent", s, 0)))
    at = [i for i, (kind, _, _) in enumerate(seen) if kind == "line"]
    assert [seen[i][1] for i in at] == ["first", "second"]
    assert seen[at[1]][2] - seen[at[0]][2] > 1.0  # streamed, not handed over at the end
    # 1.2 s of silence between them, reported every 0.3 s
    assert [kind for kind, _, _ in seen[at[0] + 1:at[1]]].count("silent") >= 2
    assert done.output == "first\nsecond\n"


def test_an_exception_in_a_callback_stops_the_program_and_goes_on():
    pids = []

    def on_line(line):
        pids.append(int(line.split()[1]))  # "pids <grandchild>", then "me <program>"
        if len(pids) == 2:
            raise KeyboardInterrupt  # as Ctrl-C would arrive

    with pytest.raises(KeyboardInterrupt):
        _processes.run(script(HANGS), on_line=on_line)
    assert pids and not any(alive(pid) for pid in pids)


def test_the_environment_and_folder_are_the_callers(tmp_path):
    done = _processes.run(script("import os; print(os.getcwd()); print(os.environ.get('ONLY'))"),
                        env={"ONLY": "this", "PATH": os.environ["PATH"]}, cwd=str(tmp_path))
    assert done.output.splitlines() == [str(tmp_path), "this"]


def test_no_stdin_is_given():
    done = _processes.run(script("import sys; print(repr(sys.stdin.read()))"))
    assert done.output == "''\n"


def test_the_export_tool_error_is_a_command_error():
    e = ExternalToolError("atc failed", 3, "/x/m.atc.log", "tail", argv=["atc"])
    assert isinstance(e, CommandError) and e.argv == ("atc",) and e.log_path == "/x/m.atc.log"
    assert (e.returncode, e.tail, e.reason) == (3, "tail", "failed")


def test_exit_phrases():
    assert _processes.exit_phrase(0) == "exit status 0"
    assert _processes.exit_phrase(-signal.SIGTERM) == "killed by SIGTERM"
    assert _processes.signal_name(-200) == "signal 200"


def test_a_program_left_in_the_callers_group_is_still_stopped_on_timeout():
    # new_group=False: the build's compilers, which the terminal's Ctrl-C must reach itself
    program = script("import os, time; print('me', os.getpid(), os.getpgrp(), flush=True); "
                     "time.sleep(600)")
    with pytest.raises(CommandError) as info:
        _processes.run(program, timeout=3, new_group=False)
    _, pid, group = info.value.tail.split()
    assert int(group) == os.getpgrp() and not alive(int(pid))
    # by default it leads a group of its own
    done = _processes.run(script("import os; print(os.getpid() == os.getpgrp())"))
    assert done.output == "True\n"


# A program that starts a grandchild in a session of its own (outside every process group the
# runner knows), prints both pids, then waits for ever (or exits at once with "exit").
LEAVES_A_SESSION = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(600)"])
print("pids", child.pid, os.getpid(), flush=True)
if sys.argv[1:] != ["exit"]:
    time.sleep(600)
"""


def test_an_interruption_also_stops_what_the_program_started_in_a_session_of_its_own():
    pids = []

    def on_line(line):
        pids.extend(int(p) for p in line.split()[1:])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _processes.run(script(LEAVES_A_SESSION), on_line=on_line)
    assert len(pids) == 2 and not any(alive(pid) for pid in pids)


def test_end_group_kills_what_the_program_left_in_a_session_of_its_own():
    done = _processes.run(script(LEAVES_A_SESSION) + ["exit"], end_group=True, timeout=60)
    grandchild = int(done.output.split()[1])
    assert done.returncode == 0 and not alive(grandchild)


def test_the_programs_own_exit_status_is_reported_not_its_keepers():
    with pytest.raises(CommandError) as info:
        _processes.run(script("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"))
    assert info.value.returncode == -signal.SIGTERM and "killed by SIGTERM" in str(info.value)
