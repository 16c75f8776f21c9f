"""Compiled objects and linked libraries kept between builds: a reinstall redoes only what changed.

``pip install .`` builds the package anew each time: without this cache every reinstall
compiles every translation unit of the op library again (one to three minutes each for the
kernels and the XLA kernel on two loaded cores) and links the XLA kernel library against
TensorFlow's (about 15 s). An object is stored under a key that covers everything that
decides its bytes:

- the compiler command (compiler, every flag, the include folders), the source's name
  (the folders of the op's own headers by their place in the list, not their path: a build
  in another folder, as pip's from an sdist, reuses the objects);
- the compiler itself (its ``--version`` text and the real path of its program);
- the TensorFlow it is compiled against (version, ABI flag, and its installation record:
  the ``RECORD`` of its distribution, every installed file with its sha256, so the same
  TensorFlow in another environment, as another clone's venv, gives the same key; without a
  record, its header folder's path);
- the bytes of the source and of every header of the package's own header folders (beside
  the sources, and the generated folder) that it includes, directly or through another such
  header (TensorFlow's headers are covered by its version and folder). The includes are read
  from the text, every ``#include`` counted whatever ``#if`` surrounds it; a source that
  includes through a macro counts every header of those folders. So a new op's sources and
  headers, and the generated header of its registrations, leave every other op's objects as
  they were.

A library's key covers the link command and the bytes of every object it links. A changed
byte in any of these is a different key, so a stale file is never reused. The cache lives in
``build/object-cache/`` of the source tree (``TF_GE_CUSTOM_BUILD_CACHE`` names another
folder; ``0`` turns it off). Entries are written whole (atomic_files), each a ``<key>.o`` or
``<key>.so``; a hit refreshes its time, and only the newest :data:`KEEP` entries stay. The
TensorFlow query's answer is kept there too (``tensorflow_info.py``).

Pure Python, Python 3.7 syntax; no TensorFlow import.
"""
import glob
import hashlib
import json
import os
import re

from .. import _atomic_files as atomic_files

ENV = "TF_GE_CUSTOM_BUILD_CACHE"
FOLDER = os.path.join("build", "object-cache")
KEEP = 64  # entries (a few MB in all): a few builds of each TensorFlow (make test-compat builds for three)
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".inc")


def cache_dir(source_root, env=None):
    """The cache folder for a build of ``source_root``, or None when it is turned off."""
    env = os.environ if env is None else env
    chosen = env.get(ENV, "")
    if chosen == "0":
        return None
    return os.path.abspath(chosen) if chosen else os.path.join(source_root, FOLDER)


def _headers(folders):
    found = []
    for folder in folders:
        for suffix in _HEADER_SUFFIXES:
            found.extend(glob.glob(os.path.join(folder, "*" + suffix)))
    return sorted(set(found))


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>|(\S.*))?', re.M)


def included_headers(source, folders):
    """The headers of ``folders`` that ``source`` includes, directly or through one another
    (read from the text; a quoted name is looked for beside the including file first), sorted.
    An include whose name is a macro counts every header of ``folders``."""
    folders = [os.path.abspath(f) for f in folders]
    seen, todo = set(), [os.path.abspath(source)]
    while todo:
        path = todo.pop()
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except (IOError, OSError):
            continue
        for quoted, angled, other in _INCLUDE.findall(text):
            if other or not (quoted or angled):
                return _headers(folders)  # #include MACRO: it may name any of them
            name = quoted or angled
            places = ([os.path.dirname(path)] if quoted else []) + folders
            for place in places:
                candidate = os.path.normpath(os.path.join(place, name))
                if any(candidate.startswith(f + os.sep) for f in folders) and os.path.isfile(candidate):
                    if candidate not in seen:
                        seen.add(candidate)
                        todo.append(candidate)
                    break
    return sorted(seen)


def _file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _key(record):
    text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def link_key(command, objects, identity):
    """The cache key of linking ``objects`` with ``command`` (the linker and its flags,
    without the objects and ``-o LIBRARY``)."""
    return _key({"command": list(command), "objects": [_file_digest(o) for o in objects],
                 "identity": identity})


def object_key(command, source, header_folders, identity, places=None):
    """The cache key of compiling ``source`` with ``command`` (the compiler and its flags,
    without ``-c SOURCE -o OBJECT``); ``identity``: a JSON-able record of the compiler and the
    TensorFlow it compiles against. Reads the source and the headers of ``header_folders`` it
    includes (:func:`included_headers`). ``places``: ``{folder: name}`` of other folders whose
    path the command may hold and whose content ``identity`` already covers (TensorFlow's
    headers, by its installation record): each is keyed by its name, not its path."""
    folders = [os.path.abspath(f) for f in header_folders]
    named = sorted(((os.path.abspath(f), "<%s>" % n) for f, n in (places or {}).items()),
                   key=lambda pair: -len(pair[0]))

    def placed(arg):  # where the tree lies is not what is compiled: the headers' bytes are
        for i, folder in enumerate(folders):
            arg = arg.replace(folder, "<header folder %d>" % i)
        for folder, name in named:
            arg = arg.replace(folder, name)
        return arg

    record = {
        "command": [placed(arg) for arg in command],
        "source": os.path.basename(source),
        "source_sha256": _file_digest(source),
        "headers": [[os.path.basename(h), _file_digest(h)] for h in included_headers(source, header_folders)],
        "identity": identity,
    }
    return _key(record)


def _mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:  # removed meanwhile by another build's trim
        return 0.0


class ObjectCache(object):
    """``fetch(key, path)`` / ``store(key, path)`` over one folder (``suffix``: ``.o`` for an
    object, ``.so`` for a library); a disabled cache (``directory`` None) never hits and
    stores nothing."""

    def __init__(self, directory, keep=KEEP):
        self.directory = directory
        self.keep = keep
        self.hits = 0
        self.misses = 0

    def _entry(self, key, suffix):
        return os.path.join(self.directory, key + suffix)

    def fetch(self, key, path, suffix=".o"):
        """Copy the cached file of ``key`` to ``path``; whether there was one."""
        if self.directory is None:
            self.misses += 1
            return False
        entry = self._entry(key, suffix)
        try:
            atomic_files.copy_file(entry, path)
            os.utime(entry, None)  # used now: the last to go when the cache is trimmed
        except (IOError, OSError):
            self.misses += 1
            return False
        self.hits += 1
        return True

    def store(self, key, path, suffix=".o"):
        """Keep a copy of the freshly made ``path`` under ``key`` (best effort: a full disk or
        a read-only tree costs the next build its time, never this build)."""
        if self.directory is None:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            atomic_files.copy_file(path, self._entry(key, suffix))
        except (IOError, OSError):
            pass

    def trim(self):
        """Remove all but the :attr:`keep` most recently used entries."""
        if self.directory is None or not os.path.isdir(self.directory):
            return
        entries = [p for suffix in (".o", ".so", ".json")
                   for p in glob.glob(os.path.join(self.directory, "*" + suffix))]
        entries.sort(key=_mtime, reverse=True)
        for stale in entries[self.keep:]:
            try:
                os.unlink(stale)
            except OSError:
                pass
