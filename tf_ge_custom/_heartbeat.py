"""A line on every silence: what a long wait is still doing, every few seconds.

Loading TensorFlow, freezing a model, a verification in a fresh process, a compile: each can
be silent for a quarter of a minute or more on a loaded machine, which reads as a hang.
:class:`Heartbeat` is a context manager around such a wait that writes ``still <what> (N s)``
whenever ``PERIOD`` seconds passed without a line, from a daemon thread, and nothing once the
wait is over. Lines the caller writes itself during the wait go through :meth:`Heartbeat.say`
(or are announced with :meth:`Heartbeat.heard`), so that a heartbeat comes only after a
silence. A stream that fails (a reader gone away) stops the heartbeat, never the work.

Standard library only: ``setup.py``'s build steps use it too.
"""
import threading
import time

PERIOD = 5.0  # seconds of silence before a heartbeat line


class Heartbeat(object):
    """``with Heartbeat(write, "loading TensorFlow"):`` writes ``still loading TensorFlow
    (5 s)`` through ``write`` (a function taking one line, no newline) after each ``period``
    seconds of silence. :meth:`doing` changes what the next line says."""

    def __init__(self, write, what, period=None):
        self._write = write
        self._what = what
        self._period = PERIOD if period is None else period
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._started = self._last = time.monotonic()

    def doing(self, what, restart=False):
        """From now on the heartbeat says ``still <what>``; ``restart``: its seconds count from
        now (a new wait), not from the start of the ``with``."""
        if restart:
            self._started = self._last = time.monotonic()
        self._what = what

    def heard(self):
        """A line was written by someone else: the silence starts again."""
        self._last = time.monotonic()

    def say(self, line):
        """Write ``line`` now (serialised with the heartbeat's own lines)."""
        with self._lock:
            self._write(line)
            self._last = time.monotonic()

    def _beat(self):
        while not self._stop.wait(max(0.05, self._last + self._period - time.monotonic())):
            now = time.monotonic()
            if now - self._last < self._period:
                continue
            try:
                with self._lock:
                    if self._stop.is_set():
                        return
                    self._write("still %s (%.0f s)" % (self._what, now - self._started))
                    self._last = now
            except Exception:  # the output is gone (closed pipe...): the work goes on, silent
                return

    def __enter__(self):
        self._started = self._last = time.monotonic()
        if self._period > 0:
            self._thread = threading.Thread(target=self._beat, name="tf-ge-custom heartbeat")
            self._thread.daemon = True
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            with self._lock:  # a line being written is finished before the caller goes on
                pass
            self._thread.join(1.0)
        return False


def stream_writer(stream):
    """A ``write`` for :class:`Heartbeat`: one line to ``stream``, flushed."""
    def write(line):
        stream.write(line + "\n")
        stream.flush()
    return write
