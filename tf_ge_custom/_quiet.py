"""TensorFlow's start-up chatter kept out of a command's output, unless asked for.

TensorFlow logs from C++ (``I0000 ... port.cc:153] oneDNN custom operations are on``, the
CPU feature line), from Python (``WARNING:tensorflow:...``, through the ``tensorflow`` and
``absl`` loggers) and through Python warnings. ``TF_CPP_MIN_LOG_LEVEL`` silences the C++
lines logged after absl's logging starts, but not those logged before it (TensorFlow 2.16
and later print them whatever the variable says). :func:`quiet_tensorflow` therefore

- sets ``TF_CPP_MIN_LOG_LEVEL=2`` when the user has not set it (the user's value is kept);
- drops, from what this process and its children write to stderr, the absl-format lines
  below that level (``I`` = 0, ``W`` = 1, ``E`` = 2) and absl's "before InitializeLog" note,
  passing every other line through as it comes;
- sets the ``tensorflow`` and ``absl`` loggers to ERROR and ignores Python warnings, except
  this package's own (:class:`tf_ge_custom.errors.NpuPlacementWarning`).

Call it before TensorFlow is imported; :func:`restore` puts stderr back (cli.py does, on the
way out).
"""
import logging
import os
import re
import sys
import threading
import warnings

LEVEL_VAR = "TF_CPP_MIN_LOG_LEVEL"
DEFAULT_LEVEL = 2
# absl's log line: severity letter, MMDD, time, thread, file:line]
_ABSL_LINE = re.compile(rb"^([IWEF])\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [^ \]]+:\d+\] ")
_BEFORE_INIT = b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
# the continuation of TensorFlow's CPU feature line (logged at INFO, then a bare line)
_CPU_FEATURES = re.compile(rb"^To enable the following instructions: .* rebuild TensorFlow with the "
                           rb"appropriate compiler flags\.$")
_SEVERITY = {b"I": 0, b"W": 1, b"E": 2, b"F": 3}

_state = {"filter": None, "saved": None}


def _level(environ):
    try:
        return int(environ.get(LEVEL_VAR, ""))
    except ValueError:
        return DEFAULT_LEVEL


def dropped(line, level):
    """Whether the stderr ``line`` (bytes, without its newline) is chatter below ``level``."""
    if level <= 0:
        return False
    if line.rstrip() == _BEFORE_INIT or _CPU_FEATURES.match(line.rstrip()):
        return True
    m = _ABSL_LINE.match(line)
    return bool(m) and _SEVERITY[m.group(1)] < level


class _StderrFilter(object):
    """fd 2 becomes a pipe; a thread passes on what is not chatter to the real stderr."""

    def __init__(self, level):
        self.level = level
        self.saved = os.dup(2)
        read, write = os.pipe()
        sys.stderr.flush()
        os.dup2(write, 2)
        os.close(write)
        self.read = read
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self.read, 65536)
            except OSError:
                break
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            kept = b"".join(l + b"\n" for l in lines if not dropped(l, self.level))
            if kept:
                self._write(kept)
        if pending and not dropped(pending, self.level):
            self._write(pending)
        os.close(self.read)

    def _write(self, data):
        try:
            os.write(self.saved, data)
        except OSError:  # stderr itself is gone: nothing to tell
            pass

    def close(self):
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self.saved, 2)  # closes this process's write end of the pipe
        self.thread.join(timeout=2.0)  # a child still holding the pipe must not keep us
        os.close(self.saved)


def quiet_tensorflow(verbose=False, environ=None):
    """Keep TensorFlow's chatter out of this command's output (see the module docstring);
    ``verbose`` leaves everything as TensorFlow has it."""
    environ = os.environ if environ is None else environ
    if verbose or _state["saved"] is not None:
        return
    # what restore() puts back (main() may run more than once in one process: the tests)
    _state["saved"] = (environ, LEVEL_VAR in environ, list(warnings.filters),
                       {name: logging.getLogger(name).level for name in ("tensorflow", "absl")})
    environ.setdefault(LEVEL_VAR, str(DEFAULT_LEVEL))
    level = _level(environ)
    if level > 0:
        for name in ("tensorflow", "absl"):
            logging.getLogger(name).setLevel(logging.ERROR if level >= 2 else logging.WARNING)
        from .errors import NpuPlacementWarning

        warnings.simplefilter("ignore")
        warnings.simplefilter("default", NpuPlacementWarning)
        if _state["filter"] is None:
            try:
                _state["filter"] = _StderrFilter(level)
            except OSError:  # no fd 2 to filter
                pass


def restore():
    """stderr, the variable, the loggers and the warning filters as they were before
    :func:`quiet_tensorflow` (what was filtered is written out)."""
    active, _state["filter"] = _state["filter"], None
    if active is not None:
        active.close()
    saved, _state["saved"] = _state["saved"], None
    if saved is not None:
        environ, had_level, filters, levels = saved
        if not had_level:
            environ.pop(LEVEL_VAR, None)
        warnings.filters[:] = filters
        getattr(warnings, "_filters_mutated", lambda: None)()  # the C module caches by version
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
