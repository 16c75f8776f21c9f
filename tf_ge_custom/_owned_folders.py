"""Temporary folders a live command owns, and the sweep that removes those of a dead one.

A command that is interrupted removes its staging and temporary folders on the way out
(``finally``). One killed outright (``kill -9``, the machine's out-of-memory killer, a power
cut) cannot: its folder stays. So each such folder is *claimed*: it holds a file
(:data:`OWNER_FILE`) on which the command keeps an exclusive ``flock`` for as long as it
runs. The kernel drops the lock when the process ends, however it ends, so the next command
that makes a folder of the same kind in the same place (:func:`make`) first removes every
folder of that kind whose lock it can take (:func:`sweep`), and says so in one line.

A name proves nothing (anyone can make a folder called ``.tf-ge-custom-staging-x`` holding an
empty ``.tf-ge-custom-owner``), so the owner file names the device and inode of the folder
and of itself, as this module made them: a folder is swept only when both still are those
(a copy, a folder of the user's with a forged owner file, has others). A folder whose owner
still runs (another export writing beside this one) is never touched; nor is anything that
is not a folder of this user's made by this module; a folder without an owner file (an older
release's, or the instant between making a folder and claiming it) is left.

Standard library only, Python 3.7 syntax.
"""
import errno
import os
import shutil
import stat
import tempfile

try:
    import fcntl
except ImportError:  # not POSIX: folders are not claimed, and only old unclaimed ones are swept
    fcntl = None

OWNER_FILE = ".tf-ge-custom-owner"


class OwnedFolder(object):
    """A folder this process made and claims; ``close()`` (or the ``with`` block's end)
    removes it and drops the claim."""

    def __init__(self, path, lock_fd):
        self.path = path
        self._lock_fd = lock_fd

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _lock(fd):
    """Whether the exclusive lock on ``fd`` was taken (False: another process holds it)."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


def note_removed(path):
    """The line a sweep prints for each folder it removed (on stderr)."""
    import sys

    sys.stderr.write("note: removed %s, left behind by a tf-ge-custom command that was killed before "
                     "it could clean up\n" % path)
    sys.stderr.flush()


def make(parent, prefix, say=note_removed):
    """A new folder ``parent/prefix<random>`` claimed by this process, after sweeping the
    folders of that kind that dead processes left there (each named to ``say``, by default
    :func:`note_removed`). Raises OSError when ``parent`` cannot hold it."""
    sweep(parent, prefix, say)
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    fd = None
    try:
        # locked under another name, then renamed: a sweeper never sees it unlocked
        claim = os.path.join(path, OWNER_FILE + ".new")
        fd = os.open(claim, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: nobody else can hold it
        folder, own = os.lstat(path), os.fstat(fd)
        os.write(fd, ("%d\nfolder %d %d\nfile %d %d\n" % (os.getpid(), folder.st_dev, folder.st_ino,
                                                        own.st_dev, own.st_ino)).encode())
        os.rename(claim, os.path.join(path, OWNER_FILE))  # keeps the inode written in it
    except BaseException:
        if fd is not None:
            os.close(fd)
        shutil.rmtree(path, ignore_errors=True)
        raise
    return OwnedFolder(path, fd)


def _claimed(path, fd):
    """Whether the owner file open on ``fd`` is the one this module wrote in the folder
    ``path``: the device and inode it names are the folder's and its own."""
    try:
        text = os.pread(fd, 200, 0).decode("ascii", "replace").split("\n")
        folder, own = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (len(text) >= 3 and stat.S_ISREG(own.st_mode)
            and text[1] == "folder %d %d" % (folder.st_dev, folder.st_ino)
            and text[2] == "file %d %d" % (own.st_dev, own.st_ino))


def is_claimed(path):
    """Whether ``path`` is a folder this module made and claimed (its owner file names the
    folder's and its own inode), whether or not its owner still runs."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return False
        fd = os.open(os.path.join(path, OWNER_FILE), os.O_RDONLY | os.O_NOFOLLOW
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        return _claimed(path, fd)
    finally:
        os.close(fd)


def lock_if_dead(path):
    """The descriptor holding the lock of the claimed folder ``path`` when its owner is gone
    (close it once the folder is removed), else None."""
    stale, fd = _stale(path)
    return fd if stale else None


def _stale(path):
    """(whether the folder ``path`` is a dead process's, the descriptor holding its lock)."""
    try:
        fd = os.open(os.path.join(path, OWNER_FILE), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False, None  # no owner file (or not one to open): not known to be ours
    try:
        if _claimed(path, fd) and _lock(fd):
            return True, fd
    except OSError:
        pass
    os.close(fd)
    return False, None


def sweep(parent, prefix, say=None):
    """Remove the folders ``parent/prefix*`` of this user whose owner is gone; returns their
    paths, each also handed to ``say`` (a function of one line) when given."""
    try:
        names = sorted(n for n in os.listdir(parent) if n.startswith(prefix))
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(parent, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue  # a link, a file, another user's: not ours to judge
        stale, fd = _stale(path)
        if not stale:
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)  # still holding the lock: no second sweeper
        finally:
            if fd is not None:
                os.close(fd)
        if not os.path.lexists(path):
            removed.append(path)
            if say is not None:
                say(path)
    return removed
