"""Records of what the package made: the one thing a deleting command trusts.

A command that deletes (``tf-ge-custom clean``) or overwrites (``setup-builder --venv``,
``run-om --output-dir``, ``build-kernels --bundle``) must never touch a file of the user's.
A name, a folder layout or a marker file (``pyvenv.cfg``, ``builder_copy.json``) proves
nothing: anyone can write them. So whatever makes files that outlive the command writes a
*made-record* when it makes them, and the deleting side takes only what a record names and
what still *is* that thing.

A record is a JSON file naming, for each path it covers (relative to the folder it
describes): the kind (``file``, ``folder``, ``link``), the ``lstat`` identity (device and
inode, which a copy or a new file never keeps), the owner's uid and, for a file, its size
and sha256. It also names its own device and inode: a record copied into place by hand
(``cp``) is a new inode, so it is not one the package wrote, and is ignored. A record is
written whole or not at all (a temporary sibling renamed into place; a rename keeps the
inode).

Where records are (docs/install.md, "What clean removes"):

- the kernel cache: ``<SoC>/<key>/<op>/<dtype>.made.json`` beside the entry it describes
  (the entry folder, its files and its lock, ``kernels/cache.py``);
- a folder a command was given and filled: ``<folder>/.tf-ge-custom-<kind>``
  (:mod:`tf_ge_custom._given_folders`), covering the folder itself and what it wrote.

Standard library only, Python 3.7 syntax.
"""
import errno
import hashlib
import json
import os
import stat
import tempfile

FORMAT = 1
TITLE = "tf-ge-custom made-record"
MAX_RECORD_BYTES = 64 << 20  # a builder venv's record: some 20 000 paths
FILE, FOLDER, LINK = "file", "folder", "link"


def _kind(mode):
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return FOLDER
    if stat.S_ISLNK(mode):
        return LINK
    return None


def sha256_of(path):
    """sha256 of the regular file ``path``, read without following a link (None if it cannot)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        for chunk in iter(lambda: os.read(fd, 1 << 20), b""):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def identity(path, with_hash=True):
    """What a record says of ``path`` (never following a link), or None when it is missing
    or is neither a file, a folder nor a link."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    kind = _kind(info.st_mode)
    if kind is None:
        return None
    found = {"kind": kind, "dev": info.st_dev, "ino": info.st_ino, "uid": info.st_uid}
    if kind == FILE:
        found["size"] = info.st_size
        if with_hash:
            found["sha256"] = sha256_of(path)
    return found


def describe_tree(folder, name=""):
    """``{relative path: identity}`` of ``folder`` and everything below it, links not
    followed; the folder itself is ``name`` (``""``: the record describes the folder it is
    in), the rest ``name/sub/...``."""
    found = {}
    top = identity(folder)
    if top is None or top["kind"] != FOLDER:
        raise OSError(errno.ENOTDIR, "not a folder", folder)
    found[name] = top
    for parent, dirs, files in os.walk(folder):
        rel_parent = os.path.relpath(parent, folder)
        for entry in sorted(dirs + files):
            rel = entry if rel_parent == "." else os.path.join(rel_parent, entry)
            seen = identity(os.path.join(parent, entry))
            if seen is not None:
                found[os.path.join(name, rel) if name else rel] = seen
    return found


def write(record_path, kind, paths):
    """Write the record of ``kind`` (what made it: ``kernel-cache``, ``builder``, ...) naming
    ``paths`` (``{relative path: identity}``, relative to the record's folder) at
    ``record_path``, whole, with its own identity; returns ``record_path``."""
    folder = os.path.dirname(os.path.abspath(record_path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(record_path) + ".", suffix=".tmp",
                               dir=folder)
    try:
        info = os.fstat(fd)
        from ._version import __version__

        document = {"title": TITLE, "format": FORMAT, "kind": kind, "version": __version__,
                    "self": {"dev": info.st_dev, "ino": info.st_ino}, "paths": paths}
        data = (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")
        with os.fdopen(fd, "wb") as f:
            fd = None
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.rename(tmp, record_path)  # a rename keeps the inode the record names
    except BaseException:
        if fd is not None:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return record_path


class Record(object):
    """A record read back: ``path``, ``kind``, ``paths`` (relative path -> identity)."""

    def __init__(self, path, kind, paths, version):
        self.path = path
        self.kind = kind
        self.paths = paths
        self.version = version

    def is_made(self, relative, full_path, with_hash=True, same_bytes=True):
        """Whether ``full_path`` is still what the record says the package made at
        ``relative`` (same kind, device, inode and owner; with ``same_bytes`` a file also the
        same size and, ``with_hash``, sha256, where the record gives them)."""
        expected = self.paths.get(relative)
        if not isinstance(expected, dict):
            return False
        found = identity(full_path, with_hash=False)
        if found is None or any(found[k] != expected.get(k) for k in ("kind", "dev", "ino", "uid")):
            return False
        if found["kind"] == FILE and same_bytes:
            if "size" in expected and found["size"] != expected["size"]:
                return False
            if with_hash and "sha256" in expected and sha256_of(full_path) != expected["sha256"]:
                return False
        return True


def read(record_path, kind, uid=None):
    """``(Record, "")`` when ``record_path`` is a record of ``kind`` that the package wrote
    there (its own identity matches, it belongs to ``uid``, default this user), else
    ``(None, why)``."""
    uid = os.geteuid() if uid is None else uid
    try:
        fd = os.open(record_path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None, "no record of what tf-ge-custom made"
        return None, "its record %s cannot be read: %s" % (record_path, e.strerror or e)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
            return None, "%s is not a record tf-ge-custom wrote" % record_path
        data = b""
        for chunk in iter(lambda: os.read(fd, 1 << 20), b""):
            data += chunk
    except OSError as e:
        return None, "its record %s cannot be read: %s" % (record_path, e.strerror or e)
    finally:
        os.close(fd)
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:
        return None, "%s is not a record tf-ge-custom wrote (not JSON)" % record_path
    own = document.get("self") if isinstance(document, dict) else None
    if (not isinstance(own, dict) or document.get("title") != TITLE or document.get("format") != FORMAT
            or not isinstance(document.get("paths"), dict)):
        return None, "%s is not a record tf-ge-custom wrote" % record_path
    if document.get("kind") != kind:
        return None, "%s is a record of %s, not of %s" % (record_path, document.get("kind"), kind)
    if (own.get("dev"), own.get("ino")) != (info.st_dev, info.st_ino) or info.st_uid != uid:
        return None, ("%s is not the record tf-ge-custom wrote there (a copy, or another user's)"
                      % record_path)
    return Record(record_path, kind, document["paths"], document.get("version")), ""
