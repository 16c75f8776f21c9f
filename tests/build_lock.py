"""One CMake build of a folder at a time, across the suite's parts.

``make test`` runs the suite as parts, two pytest processes side by side
(tests/run_suite.py), and several parts build into the same folders (build/ge-tests/,
build/ge-sanitize/, build/ge-in-loop/<key>/). CMake does not guard a build folder against a
second build running in it, so each build helper holds :func:`held` on the folder while it
configures and builds: the second process waits, then finds everything built and CMake does
nothing. The lock is ``flock`` on ``<folder>.lock`` beside the folder, released when the
holder's process ends, however it ends.
"""
import contextlib
import fcntl
import os


@contextlib.contextmanager
def held(folder):
    """Hold the lock of build folder ``folder`` (created with its parents if needed)."""
    folder = os.path.abspath(str(folder))
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    fd = os.open(folder + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
