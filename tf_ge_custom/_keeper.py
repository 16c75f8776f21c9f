"""The keeper: a small process between a command and each program it starts, so that nothing
the program started outlives the command, however the command ends (even ``kill -9``).

    python -I -S _keeper.py STATUS_FD GRACE END_GROUP PARENT_PID -- PROGRAM ARGS...

:func:`tf_ge_custom._processes.run` starts every program of a command through it on Linux.
The keeper

- asks the kernel for SIGTERM when the command's process dies (``PR_SET_PDEATHSIG``), and
  ends at once, starting nothing, when that process (PARENT_PID) is already gone;
- is a subreaper (``PR_SET_CHILD_SUBREAPER``): whatever the program starts, also in a session
  of its own (``setsid``, outside every process group the command knows), is re-parented to
  the keeper when its own parent ends, so the keeper still finds it;
- starts the program in a process group of its own, the program itself asked to die with the
  keeper (SIGKILL, set in the child before ``exec``), and writes on STATUS_FD
  ``started PID`` (or ``failed ERRNO`` when ``exec`` failed: the program does not exist, or
  may not be run), later ``exit RETURNCODE`` (negative: killed by that signal);
- on SIGTERM, SIGINT, SIGHUP or SIGQUIT (the command stopping it, or the command's death)
  ends the program's group and every descendant: SIGTERM, then SIGKILL to what is left after
  GRACE seconds (0: SIGKILL at once);
- when the program exits by itself, waits for what it left running (END_GROUP 0), or kills it
  (END_GROUP 1), and exits only when none of its descendants is left.

The program's standard streams are the keeper's: the command reads the program's output as
if it had started it itself. Standard library only, no package-relative import, Python 3.7
syntax: it runs with ``-I -S`` (no site-packages, no environment variables of Python's own),
starting in a few tens of milliseconds.
"""
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PARENT_ENV = "TF_GE_CUSTOM_PARENT_PID"  # _processes.PARENT_ENV: the program has the death signal
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")
                     if hasattr(signal, n))
# What Python's start-up sets to SIG_IGN and exec would pass on (subprocess restores them too).
RESTORED = tuple(getattr(signal, n) for n in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(signal, n))
POLL_SECONDS = 0.02


class _Stop(Exception):
    """A stop signal arrived."""


_state = {"stopping": False, "program": None, "returncode": None}


def _on_signal(signum, frame):
    if _state["stopping"]:
        return  # ending everything already
    _state["stopping"] = True
    raise _Stop()


def _prctl(option, value):
    """``prctl(option, value)``; False where it cannot be asked (no libc, not Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _returncode(status):
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return status


def _reap(block=False):
    """Reap children (re-parented orphans included); False once there are none left."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        if pid == _state["program"]:
            _state["returncode"] = _returncode(status)
        if block:
            return True


def _descendants(root):
    """The live processes below ``root`` (from /proc: each one's parent)."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] not in (b"Z", b"X"):
            parents[int(name)] = int(fields[1])
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        todo += children
    return found


def _end_all(grace):
    """End the program's group and every descendant: SIGTERM, SIGKILL after ``grace`` s."""
    _state["stopping"] = True
    deadline = time.monotonic() + grace
    asked = set()
    me = os.getpid()
    while True:
        _reap()
        left = _descendants(me)
        if not left:
            break
        killing = time.monotonic() >= deadline
        sig = signal.SIGKILL if killing else signal.SIGTERM
        program = _state["program"]
        if program is not None and _state["returncode"] is None:
            try:
                os.killpg(program, sig)  # the whole group at once, as a terminal would
            except OSError:
                pass
        for pid in left:
            if killing or pid not in asked:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
                asked.add(pid)
        time.sleep(POLL_SECONDS)
    while _reap():  # the last zombies
        time.sleep(POLL_SECONDS)


def _start(program, report):
    """Fork and exec ``program`` in a group of its own; its pid, or None (reported) when exec failed."""
    read_end, write_end = os.pipe()  # closed by exec (close-on-exec): empty means started
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            for sig in STOP_SIGNALS + RESTORED:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.setpgid(0, 0)
            keeper = os.getppid()
            if _prctl(PR_SET_PDEATHSIG, signal.SIGKILL) and os.getppid() != keeper:
                os._exit(128 + signal.SIGKILL)
            os.environ.pop(PARENT_ENV, None)
            os.execvp(program[0], program)
        except OSError as e:
            try:
                os.write(write_end, str(e.errno or 0).encode())
            except OSError:
                pass
        finally:
            os._exit(127)
    _state["program"] = pid
    try:
        os.setpgid(pid, pid)  # also here: a signal to the group works from this moment on
    except OSError:
        pass
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a stop signal waiting raises here
    os.close(write_end)
    data = b""
    while True:
        chunk = os.read(read_end, 64)
        if not chunk:
            break
        data += chunk
    os.close(read_end)
    if data:
        _reap(block=True)
        report("failed %s" % data.decode())
        return None
    report("started %d" % pid)
    return pid


def main(argv):
    status_fd, grace, end_group, parent = int(argv[1]), float(argv[2]), argv[3] == "1", int(argv[4])
    program = argv[6:]
    os.set_inheritable(status_fd, False)

    def report(line):
        try:
            os.write(status_fd, (line + "\n").encode())
        except OSError:  # the command is gone: nobody to tell
            pass

    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_signal)
    try:
        if _prctl(PR_SET_PDEATHSIG, signal.SIGTERM) and os.getppid() != parent:
            return 0  # the command ended before the request was made: start nothing
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        if _start(program, report) is None:
            return 0
        while _state["returncode"] is None and _reap(block=True):
            pass
        if end_group:
            _end_all(0)
        else:
            while _reap(block=True):
                pass
    except _Stop:
        _end_all(grace)
    report("exit %d" % (_state["returncode"] if _state["returncode"] is not None else -signal.SIGKILL))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
