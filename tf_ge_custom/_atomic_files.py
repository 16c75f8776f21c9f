"""Files that appear whole or not at all: the one way this package writes a file in place.

Every writer of a file another program (or a later step) reads goes through here: the build
record, ``npu_supported_ops.json``, generated sources, installed libraries and kernels, the
kernel builder's manifests and IR, the OM runner's outputs. The content goes to a temporary
sibling (same folder, so same file system) which then replaces the target with one
``os.replace``: a reader sees the old file or the new one, never a part, and a failure or
Ctrl-C leaves the old file and no temporary behind.

The data is flushed to disk (``fsync``) before the rename, so that a crash right after it
cannot leave an empty file under the new name (file systems may write the rename before
the data). The folder itself is not synced: after a crash the old file may come back, which
is whole too. The cost, a few milliseconds per file, is measured in docs/adding-an-op.md
("The helpers every writer and runner uses").

Nothing is ever written through a symbolic link: a file is replaced by a rename (which
replaces a link, never follows it), a log is created fresh and renamed into place before the
first line (:func:`open_log`), and a file that must be written where it is, a lock, is
opened with ``O_NOFOLLOW`` and only when it is a regular file of this user with one name
(:func:`open_no_follow`; ge_ops/core's ``OpenForWriting`` is the same rule). A link planted
where a log goes (``out/m.atc.log`` -> ``~/.bashrc``) is replaced, its target left alone.

Standard library only, no package-relative import, Python 3.7 syntax: ``setup.py`` and
``ge_ops/codegen/generate_op_sources.py`` (which loads it by path) use it on any machine.
"""
import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile

__all__ = ["folder_writable", "target_problem", "write_bytes", "write_text", "write_json", "write_text_if_changed", "copy_file",
           "replacing", "publish", "open_log", "open_no_follow", "NotWritable"]

# Mode of a written file: readable by everyone, as open() makes it with the usual umask. The
# OPP root's files are read by other users' programs (TF Adapter, GE, atc).
FILE_MODE = 0o644


def folder_writable(folder):
    """Whether a file can be made in ``folder``: tried (an empty temporary file, removed at
    once), as modes do not tell for root, read-only mounts or immutable folders."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tf-ge-custom-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    _discard(tmp)
    return True


def target_problem(path, create_folder=True):
    """Why ``path`` cannot be written as a file (one phrase), or "" when it can.

    Checked before the work that produces the file, so that a bad path is refused at once,
    not after minutes: a folder (or anything but a regular file) in its place, a file name
    longer than the file system allows, a folder on the way that is a file, a folder that is
    not writable. With ``create_folder`` the missing folders are made.
    """
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    if os.path.isdir(path):
        return "%s is a folder; give a file name" % path
    if os.path.lexists(path) and os.path.exists(path) and not os.path.isfile(path):
        return "%s is in the way: it is not a regular file" % path
    existing = folder
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return "its folder %s cannot be made: %s is not a folder" % (folder, existing)
    try:
        limit = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    # the temporary sibling is longer than the name: "." + name + ".XXXXXXXX.tmp"
    if len(os.fsencode(name)) + 14 > limit:
        return "the file name %s... is too long for this file system (%d bytes at most)" % (
            name[:40], limit - 14)
    if not folder_writable(existing):
        return "the folder %s is not writable" % existing
    if existing != folder and create_folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            return "cannot create its folder %s: %s" % (folder, e.strerror or e)
    return ""


def _sibling(path):
    """``(fd, temporary path)`` of a new file beside ``path``; creates the folder."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    return tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                            dir=directory)


def _discard(tmp):
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_bytes(path, data, mode=FILE_MODE):
    """Replace ``path`` with ``data`` (bytes) whole; returns ``path``."""
    fd, tmp = _sibling(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # mkstemp makes 0600
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    return path


def write_text(path, text, mode=FILE_MODE):
    """Replace ``path`` with ``text`` encoded as UTF-8, whole; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"), mode)


def write_json(path, document, indent=2, sort_keys=False, mode=FILE_MODE):
    """Replace ``path`` with ``document`` as JSON (``indent``, a final newline); returns ``path``.

    ``document`` is serialized before anything is written, so a value JSON cannot hold
    raises (TypeError, ValueError for NaN) and leaves ``path`` as it was.
    """
    text = json.dumps(document, indent=indent, sort_keys=sort_keys, allow_nan=False) + "\n"
    return write_text(path, text, mode)


def write_text_if_changed(path, text, mode=FILE_MODE):
    """:func:`write_text` unless ``path`` already holds exactly ``text``; returns whether it
    wrote. Generated sources use it, so that a build tool sees no change when there is none."""
    try:
        with open(path, "rb") as f:
            if f.read() == text.encode("utf-8"):
                return False
    except (IOError, OSError):
        pass
    write_text(path, text, mode)
    return True


def copy_file(source, destination):
    """Replace ``destination`` with a copy of ``source`` (its bytes and permission bits);
    returns ``destination``."""
    fd, tmp = _sibling(destination)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        shutil.copymode(source, tmp)
        os.replace(tmp, destination)
    except BaseException:
        _discard(tmp)
        raise
    return destination


@contextlib.contextmanager
def replacing(path):
    """A temporary path beside ``path`` for a producer that writes by name (a linker's
    ``-o``, ``numpy.save``); on a normal exit it replaces ``path``, on an exception it is
    removed and ``path`` stays as it was::

        with atomic_files.replacing(library) as tmp:
            run([cxx, "-shared", "-o", tmp] + objects)

    The producer creates the file itself (so its permission bits are the producer's: a
    linker makes a library executable); the temporary path sits in a fresh hidden folder,
    so no two writers share one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                              dir=directory)
    tmp = os.path.join(folder, os.path.basename(path))
    try:
        yield tmp
        publish(tmp, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def publish(finished, path, mode=None):
    """Move the finished file ``finished`` over ``path`` (both on one file system): its data
    to disk, then one rename. ``mode``: permission bits to give it first (None: as they are)."""
    fd = os.open(finished, os.O_RDONLY)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(finished, path)
    return path


class NotWritable(OSError):
    """A file :func:`open_no_follow` refuses to write: a symbolic link, another user's file,
    a hard link, anything but a regular file. The message names it and what to do."""


def open_no_follow(path, flags=os.O_WRONLY, mode=0o600):
    """A descriptor of ``path`` opened for writing where it is (a lock, a log appended to),
    created with ``mode`` when absent; never through a symbolic link at its last component,
    and only when it is a regular file of this user with one name (a hard link to another
    file would be written through as well); its mode is set to ``mode``. ``flags``:
    ``O_WRONLY`` or ``O_RDWR``, plus ``O_APPEND`` / ``O_TRUNC``. Raises
    :class:`NotWritable` (or OSError when the folder cannot be written)."""
    path = os.fspath(path)
    try:
        # O_TRUNC waits for the checks below: open would truncate whatever it reached first.
        fd = os.open(path, (flags & ~os.O_TRUNC) | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotWritable("%s is a symbolic link; it is never written through "
                              "(a link planted there would make this write into its target): "
                              "remove it" % path)
        raise
    try:
        info = os.fstat(fd)
        problem = ""
        if not stat.S_ISREG(info.st_mode):
            problem = "it is not a regular file"
        elif info.st_uid != os.geteuid():
            problem = "it belongs to uid %d, not to this user" % info.st_uid
        elif info.st_nlink != 1:
            problem = ("it has %d names (a hard link to another file would be written through)"
                       % info.st_nlink)
        if problem:
            raise NotWritable("refusing to write %s: %s; remove it" % (path, problem))
        if stat.S_IMODE(info.st_mode) != mode:
            os.fchmod(fd, mode)
        if flags & os.O_TRUNC:
            os.ftruncate(fd, 0)
        # O_NONBLOCK only kept the open from waiting on a FIFO (refused above).
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_log(path, mode=FILE_MODE):
    """A new, empty text file at ``path`` to write a log into, as a file object: created
    beside it and renamed into place at once, so whatever was at ``path`` (an old log, a
    symbolic link planted there) is replaced, never written through. Readers see the log
    grow as it is written."""
    fd, tmp = _sibling(path)
    try:
        os.fchmod(fd, mode)
        os.replace(tmp, path)
    except BaseException:
        os.close(fd)
        _discard(tmp)
        raise
    return os.fdopen(fd, "w")
