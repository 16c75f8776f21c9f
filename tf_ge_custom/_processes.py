"""Running another program: the one runner every part of the package uses.

The build steps (compiler, linker, CMake, the TensorFlow query), the kernel toolchain
(bishengir-compile, ``--version`` queries), doctor's child processes, the export's tools
(``atc``, the AIR tool, the OM runner, the verification child) and selftest's stages all
start programs through :func:`run`, which

- takes an argument list, never a shell string;
- reads the output as it comes, captured (stdout with stderr merged, or the two apart) or
  handed line by line to a callback, with a callback for silence (a heartbeat);
- stops at a timeout;
- runs the program with no stdin, in its own process group and session (unless
  ``new_group=False``), through the keeper (:mod:`tf_ge_custom._keeper`, on Linux): a small
  process that stops the program and everything it started (SIGTERM, then SIGKILL) when it
  times out or the caller is interrupted (a signal, or an exception in a callback), finds
  what the program started in sessions of their own, and does the same when this process
  dies without a chance to clean up (``kill -9``): the kernel tells the keeper
  (``PR_SET_PDEATHSIG``), and the program itself dies with the keeper. Nothing it started
  keeps running after ``run`` returns; with ``end_group``, what the program left running is
  killed as soon as the program itself exits. Without the keeper (not Linux), the program's
  group is stopped the same way, and a Python child that calls
  :func:`tf_ge_custom._lifecycle.die_with_parent` ends when this process is killed outright
  (``TF_GE_CUSTOM_PARENT_PID`` tells it which process that is);
- reports a program that cannot start, times out or (with ``check``) fails as one
  :class:`~tf_ge_custom.errors.CommandError` that carries the argument list, the exit status
  and the last lines of the output.

Standard library only, Python 3.7 syntax: ``setup.py`` runs the build steps with it.
"""
import collections
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import NamedTuple, Tuple

from .errors import CommandError

TAIL_LINES = 40  # lines of output an error carries
PARENT_ENV = "TF_GE_CUSTOM_PARENT_PID"  # this process's pid, for children that end with it
TERMINATE_GRACE_SECONDS = 5.0  # between SIGTERM and SIGKILL, and after SIGKILL

NOT_STARTED, TIMED_OUT, FAILED = CommandError.REASONS


class Finished(NamedTuple):
    """A program that ran to its end (whatever its exit status)."""

    argv: Tuple[str, ...]
    returncode: int  # negative: killed by that signal
    output: str  # stdout, stderr merged in unless separate_stderr; with on_line: its tail only
    errors: str  # stderr when separate_stderr, else ""
    seconds: float

    def tail(self, lines=TAIL_LINES):
        """The last ``lines`` lines of the output (stderr's when it was kept apart and the
        program wrote there), as one string."""
        text = self.errors if self.errors.strip() else self.output
        return "\n".join(text.rstrip().splitlines()[-lines:])


def command_line(argv):
    """``argv`` as one line a POSIX shell would run as it is."""
    return " ".join(shlex.quote(a) for a in argv)


def signal_name(returncode):
    """``"SIGKILL"`` for the exit status of a program that SIGKILL ended (-9)."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return "signal %d" % -returncode


def exit_phrase(returncode):
    """``"exit status 3"`` or ``"killed by SIGKILL"``."""
    if returncode is not None and returncode < 0:
        return "killed by " + signal_name(returncode)
    return "exit status %s" % returncode


def _checked_argv(argv):
    if isinstance(argv, (str, bytes)) or not all(isinstance(a, (str, os.PathLike)) for a in argv):
        raise TypeError("a command is a list of arguments (str), got %r" % (argv,))
    argv = tuple(os.fspath(a) for a in argv)
    if not argv:
        raise ValueError("an empty command")
    return argv


def _read_lines(stream, key, events):
    try:
        for raw in iter(stream.readline, b""):
            events.put((key, raw.decode("utf-8", "replace").rstrip("\r\n")))
    except (OSError, ValueError):  # the pipe was closed under us after an interruption
        pass
    events.put((key, None))


def _signal(proc, sig, group):
    try:
        if group:
            os.killpg(proc.pid, sig)  # the program and anything it started
            return
    except OSError:  # no such group any more: the program alone
        pass
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
        except OSError:
            pass


def _group_left(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


def stop(proc, grace=TERMINATE_GRACE_SECONDS, group=True):
    """Stop ``proc`` and, with ``group``, everything in its process group (which it leads):
    SIGTERM, then SIGKILL to what is left once ``grace`` seconds have passed (0: at once,
    for a process that may be stuck where only SIGKILL reaches it)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        _signal(proc, sig, group)
        try:
            proc.wait(timeout=grace if sig == signal.SIGTERM else TERMINATE_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            continue
        if not (group and _group_left(proc.pid)):
            return
        if sig == signal.SIGTERM and grace:
            _wait_group(proc.pid, grace)  # the leader is gone: give the rest the same grace


def _wait_group(pgid, seconds):
    deadline = time.monotonic() + seconds
    while _group_left(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)


class _TimedOut(Exception):
    pass


def _wait_for_exit(proc, events):
    events.put(("exit", proc.wait()))


def run(argv, timeout=None, env=None, cwd=None, check=True, separate_stderr=False,
        on_line=None, heartbeat=None, on_silence=None, new_group=True, end_group=False,
        grace=TERMINATE_GRACE_SECONDS, clock=time.monotonic):
    """Run ``argv`` to its end and return a :class:`Finished`.

    ``timeout``: seconds before the program's group is stopped and :class:`CommandError`
    (reason ``"timed out"``) raised; None waits for ever. ``env``: the full environment
    (default: this process's). ``check``: a non-zero exit raises :class:`CommandError`
    (reason ``"failed"``). ``separate_stderr``: keep stderr apart in ``Finished.errors``.
    ``on_line(line)``: called with each line of (merged) stdout as it arrives, in this
    thread; then ``Finished.output`` keeps only the last lines. ``on_silence(seconds)``:
    called after each ``heartbeat`` seconds without output. An exception raised by a
    callback, or a KeyboardInterrupt while waiting, stops the program's group and goes on.
    A program that cannot be started raises :class:`CommandError` (reason ``"not started"``).
    ``new_group=False`` leaves the program in this process's group, so that a Ctrl-C at the
    terminal reaches it directly: for programs run from worker threads, which never see
    KeyboardInterrupt (the build's compilers); it is started directly, without the keeper.
    ``end_group``: once the program exits, kill what it left running (which would otherwise
    keep the output open, and run on; without it, ``run`` waits for them). ``grace``: seconds
    between SIGTERM and SIGKILL when the group is stopped.
    """
    argv = _checked_argv(argv)
    start = clock()
    proc = _start(argv, env, cwd, subprocess.PIPE, subprocess.PIPE if separate_stderr else subprocess.STDOUT,
                  new_group, end_group, grace)
    events = queue.Queue()
    streams = [("out", proc.stdout)] + ([("err", proc.stderr)] if separate_stderr else [])
    readers = [threading.Thread(target=_read_lines, args=(s, key, events), daemon=True)
               for key, s in streams]
    if end_group and new_group and not proc.kept:
        threading.Thread(target=_wait_for_exit, args=(proc, events), daemon=True).start()
    for reader in readers:
        reader.start()
    out = collections.deque(maxlen=TAIL_LINES) if on_line else []
    err = []
    deadline = None if timeout is None else start + timeout
    try:
        open_streams = len(streams)
        while open_streams:
            wait = heartbeat
            if deadline is not None:
                left = deadline - clock()
                if left <= 0:
                    raise _TimedOut()
                wait = left if wait is None else min(wait, left)
            try:
                key, line = events.get(timeout=wait)
            except queue.Empty:
                if deadline is not None and clock() >= deadline:
                    raise _TimedOut()
                if on_silence is not None:
                    on_silence(clock() - start)
                continue
            if key == "exit":  # end_group without the keeper: the program is gone, its group goes with it
                _signal(proc.popen, signal.SIGKILL, True)
            elif line is None:
                open_streams -= 1
            elif key == "err":
                err.append(line)
            else:
                out.append(line)
                if on_line is not None:
                    on_line(line)
        try:
            returncode = proc.wait(timeout=None if deadline is None else max(0.0, deadline - clock()))
        except subprocess.TimeoutExpired:
            raise _TimedOut()
    except _TimedOut:
        proc.stop(grace)
        tail = "\n".join((list(err) or list(out))[-TAIL_LINES:])
        raise CommandError("%s did not finish within %g s and was stopped%s" % (
            command_line(argv), timeout, _tail_block(tail)), argv, None, tail, TIMED_OUT)
    except BaseException:
        proc.stop(grace)
        raise
    finally:
        for reader in readers:
            reader.join(timeout=TERMINATE_GRACE_SECONDS)
        for _, s in streams:
            s.close()
    finished = Finished(argv, returncode, _text(out), _text(err), clock() - start)
    if check and returncode != 0:
        tail = finished.tail()
        raise CommandError("%s failed (%s)%s" % (command_line(argv), exit_phrase(returncode),
                                                 _tail_block(tail)),
                           argv, returncode, tail, FAILED)
    return finished


def run_attached(argv, env=None, cwd=None, grace=TERMINATE_GRACE_SECONDS):
    """Run ``argv`` with this process's stdout and stderr (a terminal sees its output as it
    comes, nothing is captured) in its own process group, stopped with it when this process
    is interrupted, and ending with it when this process is killed; returns the exit status. A
    program that cannot be started raises :class:`CommandError` (reason ``"not started"``)."""
    argv = _checked_argv(argv)
    proc = _start(argv, env, cwd, None, None, True, False, grace)
    try:
        return proc.wait()
    except BaseException:
        proc.stop(grace)
        raise


# --- starting a program: through the keeper, or directly ----------------------------------

_KEEPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_keeper.py")


def _keeper_python():
    """The interpreter that runs the keeper (:mod:`tf_ge_custom._keeper`), or None where there
    is none: not Linux (no death signal, no subreaper), or a ``sys.executable`` that is not a
    Python of ours to start (an embedding program's)."""
    exe = sys.executable
    if (not sys.platform.startswith("linux") or not exe or not os.path.isabs(exe)
            or not os.path.basename(exe).startswith("python") or not os.path.isfile(_KEEPER)):
        return None
    return exe


def _not_started(argv, error):
    return CommandError("cannot run %s: %s" % (command_line(argv), error), argv, reason=NOT_STARTED)


def _start(argv, env, cwd, stdout, stderr, new_group, end_group, grace):
    """The program ``argv`` started, as a :class:`_Started`: through the keeper in a group
    (and session) of its own when ``new_group`` (the keeper stops everything it started,
    also when this process is killed outright), else directly in this process's group."""
    env = dict(os.environ if env is None else env)
    python = _keeper_python() if new_group else None
    if new_group:  # a Python child of ours ends with this process (_lifecycle.die_with_parent)
        env[PARENT_ENV] = str(os.getpid())
    if python is None:
        try:
            return _Started(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                             env=env, cwd=cwd, start_new_session=new_group), None, new_group)
        except (OSError, ValueError) as e:
            raise _not_started(argv, e)
    status_read, status_write = os.pipe()
    keeper = [python, "-I", "-S", _KEEPER, str(status_write), repr(float(grace)), "1" if end_group else "0",
              str(os.getpid()), "--"] + list(argv)
    try:
        try:
            popen = subprocess.Popen(keeper, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env,
                                     cwd=cwd, start_new_session=True, pass_fds=(status_write,))
        finally:
            os.close(status_write)
    except (OSError, ValueError) as e:
        os.close(status_read)
        raise _not_started(argv, e)
    started = _Started(popen, status_read, True)
    try:
        first = started.status_line()
    except BaseException:
        started.stop(grace)
        raise
    if first.startswith("failed "):
        code = int(first.split()[1] or 0)
        started.wait()
        raise _not_started(argv, OSError(code, os.strerror(code), argv[0]))
    if not first.startswith("started "):  # the keeper ended before the program started
        started.wait()
        raise _not_started(argv, "its keeper process ended first (%s)" % exit_phrase(popen.returncode))
    return started


class _Started(object):
    """A program that runs: ``wait``, ``stop``, its ``stdout`` / ``stderr``; ``kept`` when the
    keeper started it (then ``popen`` is the keeper, and the program's exit status comes on the
    keeper's status pipe)."""

    def __init__(self, popen, status_fd, group):
        self.popen = popen
        self.kept = status_fd is not None
        self._status_fd = status_fd
        self._buffer = b""
        self._group = group
        self._returncode = None
        self.stdout, self.stderr = popen.stdout, popen.stderr

    def status_line(self):
        """The keeper's next line ("" at its end)."""
        while b"\n" not in self._buffer:
            chunk = os.read(self._status_fd, 4096)
            if not chunk:
                break
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("ascii", "replace")

    def _close_status(self):
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None

    def wait(self, timeout=None):
        """The program's exit status (negative: killed by that signal), once the keeper (and so
        everything the program started) is gone too."""
        returncode = self.popen.wait(timeout=timeout)
        if not self.kept:
            return returncode
        if self._status_fd is not None:
            line = self.status_line()
            while line and not line.startswith("exit "):
                line = self.status_line()
            self._close_status()
            self._returncode = int(line.split()[1]) if line.startswith("exit ") else returncode
        return self._returncode

    def stop(self, grace=TERMINATE_GRACE_SECONDS):
        """Stop the program and everything it started: SIGTERM, SIGKILL after ``grace`` s."""
        if not self.kept:
            stop(self.popen, grace, group=self._group)
            return
        if self.popen.poll() is None:
            try:
                os.kill(self.popen.pid, signal.SIGTERM)  # the keeper ends the rest
            except OSError:
                pass
            try:
                self.popen.wait(timeout=grace + 2 * TERMINATE_GRACE_SECONDS)
            except subprocess.TimeoutExpired:  # the keeper is stuck: the program dies with it
                self.popen.kill()
                self.popen.wait()
        try:
            self.wait()
        except (OSError, ValueError):
            self._close_status()


def _text(lines):
    return "".join(line + "\n" for line in lines)


def _tail_block(tail):
    return "\n--- last lines of its output ---\n%s" % tail if tail.strip() else ""
