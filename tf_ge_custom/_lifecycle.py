"""What every command shares about the process it runs in: signals, its output, its working
directory.

- **Signals.** :func:`install` makes SIGINT, SIGTERM, SIGHUP and SIGQUIT raise
  :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, once: the exception
  unwinds the command, so that every ``finally`` runs (staging and temporary folders are
  removed) and the process runner stops each program the command started, with everything
  it started (:mod:`tf_ge_custom._processes`). A second signal while that happens is noted,
  not raised, so the clean-up finishes. The command then exits with 128 + the signal's number
  (130, 143, 129, 131) and one line saying what was interrupted (:func:`doing` names it).
  When this process dies without a chance to clean up (SIGKILL), the programs it started
  die with it (the process runner's keeper), and what it left in an output folder is swept
  by the next command writing there (:mod:`tf_ge_custom._owned_folders`).
- **Output.** A closed stdout or stderr (``doctor >&-``) becomes /dev/null before the command
  runs (:func:`ensure_standard_streams`); a reader that goes away (``| head -1``) ends the
  command quietly, as it ends ``git`` or ``cat``: writes raise :class:`OutputClosed`, which
  unwinds like an interruption.
- **Working directory.** A relative path on the command line means "from the working
  directory"; when that folder was deleted (or moved) under the shell, ``os.getcwd()`` fails
  and Python's own messages say only "No such file or directory": :func:`absolute` names the
  cause instead.
"""
import contextlib
import errno
import os
import signal
import sys
import threading

from .errors import WorkingDirectoryError

# The signals that end a command, and its exit status for each (128 + the number, as shells do).
# SIGQUIT (Ctrl-\) too: by default it would end the process on the spot, leaving its staging.
SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")) if s)
PARENT_ENV = "TF_GE_CUSTOM_PARENT_PID"  # set by the process runner (_processes.PARENT_ENV)
_PR_SET_PDEATHSIG = 1


class Interrupted(KeyboardInterrupt):
    """A signal ended the command; ``signum`` is which. A ``KeyboardInterrupt``, so that
    ``except Exception`` lets it pass and whatever stops on Ctrl-C stops on it too."""

    def __init__(self, signum):
        super(Interrupted, self).__init__(signum)
        self.signum = signum

    @property
    def name(self):
        return signal.Signals(self.signum).name

    @property
    def exit_status(self):
        return 128 + self.signum


class OutputClosed(BaseException):
    """The reader of this command's output went away (``| head -1``): there is no one to tell,
    so the command ends quietly. Not an ``Exception``: no handler of the command's own takes
    it for an error of the file it was writing."""


_state = {"interrupted": None, "doing": [], "doing_then": [], "installed": None}


def _on_signal(signum, frame):
    if _state["interrupted"] is not None:  # the clean-up of the first one is under way
        return
    _state["interrupted"] = signum
    _state["doing_then"] = list(_state["doing"])  # unwinding empties the stack
    raise Interrupted(signum)


def install():
    """SIGINT, SIGTERM, SIGHUP and SIGQUIT raise :class:`Interrupted` from now on (main thread only:
    elsewhere Python cannot take signals, and nothing is changed)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state["interrupted"], _state["doing_then"] = None, []
    previous = {}
    for sig in SIGNALS:
        previous[sig] = signal.signal(sig, _on_signal)
    _state["installed"] = previous


def uninstall():
    """The handlers as they were before :func:`install` (the tests call main() in-process)."""
    previous, _state["installed"] = _state["installed"], None
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)


def interrupted_line(prog, error):
    """``tf-ge-custom export: interrupted by SIGTERM while verifying the frozen graph ...; ...``."""
    doing = (_state["doing_then"] or _state["doing"] or [""])[-1]
    return "%s: interrupted by %s%s; the programs it started were stopped and its temporary files removed\n" % (
        prog, error.name, " while " + doing if doing else "")


@contextlib.contextmanager
def doing(what):
    """Names what the command is doing, for the line an interruption prints."""
    _state["doing"].append(what)
    try:
        yield
    finally:
        _state["doing"].pop()


def die_with_parent():
    """In a Python child of a command: end (SIGKILL) when the parent process ends, whatever
    ends it, so that nothing runs on after a ``kill -9`` of the command (Linux's
    ``PR_SET_PDEATHSIG``; elsewhere nothing). The parent is the pid the process runner put in
    ``TF_GE_CUSTOM_PARENT_PID``; a child whose parent is already gone exits at once."""
    parent = os.environ.pop(PARENT_ENV, "")
    if not parent.isdigit() or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # it ended before the request was made
        os._exit(128 + signal.SIGKILL)


# --- output -----------------------------------------------------------------------------


def _closed(fd):
    try:
        os.fstat(fd)
        return False
    except OSError as e:
        return e.errno == errno.EBADF


def ensure_standard_streams():
    """A closed stdout or stderr (``>&-``) becomes /dev/null, before anything opens a file
    that would take its number (and receive what is printed, and what child processes write)."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if not _closed(fd):
            continue
        null = os.open(os.devnull, os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "w", closefd=False))


def _is_broken_pipe(error):
    return isinstance(error, BrokenPipeError) or getattr(error, "errno", None) in (errno.EPIPE, errno.EIO)


class _Output(object):
    """A text stream whose writes raise :class:`OutputClosed` once the reader went away, and
    that remembers any other write error (``write_error``: a full disk, ``>/dev/full``), also
    one that a caller swallowed (argparse ignores OSError while printing ``--help``)."""

    def __init__(self, stream):
        self._stream = stream
        self.write_error = None

    def write(self, text):
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as e:
            if isinstance(e, ValueError) or _is_broken_pipe(e):
                raise OutputClosed()
            self.write_error = e
            raise

    def flush(self):
        try:
            self._stream.flush()
        except (OSError, ValueError) as e:
            if isinstance(e, ValueError) or _is_broken_pipe(e):
                raise OutputClosed()
            self.write_error = e
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output():
    """sys.stdout and sys.stderr raise :class:`OutputClosed` when their reader is gone."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Output(sys.stdout), _Output(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def output_error():
    """The error that writing to stdout met (None when none): :class:`_Output` remembers it."""
    return getattr(sys.stdout, "write_error", None)


def discard_output():
    """After :class:`OutputClosed`: what is still buffered for stdout and stderr goes to
    /dev/null, so that the interpreter's last flush complains of nothing."""
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


# --- the working directory ----------------------------------------------------------------


def working_directory():
    """The working directory, or None when it no longer exists."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def vanished_directory_words():
    """``the working directory /x/y no longer exists (deleted or moved)`` (the path from the
    shell's $PWD, when it says)."""
    where = os.environ.get("PWD") or ""
    return "the working directory%s no longer exists (deleted or moved)" % (" " + where if where else "")


def absolute(path, what):
    """``path`` made absolute; :class:`WorkingDirectoryError` naming ``what`` (an option such
    as ``--out``) when it is relative and the working directory is gone."""
    path = os.path.expanduser(os.fspath(path))
    if os.path.isabs(path):
        return os.path.normpath(path)
    cwd = working_directory()
    if cwd is None:
        raise WorkingDirectoryError(
            "%s %s is a relative path, but %s" % (what, path, vanished_directory_words()),
            fix="cd to an existing folder, or give %s an absolute path" % what)
    return os.path.normpath(os.path.join(cwd, path))
