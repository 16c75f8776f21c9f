"""``tf-ge-custom clean``: list and remove what the package made for this user outside its install.

    tf-ge-custom clean --dry-run      # lists them, removes nothing
    tf-ge-custom clean                # removes what --dry-run lists, and nothing else

Two things outlive ``pip uninstall tf-ge-custom``, both per user (docs/install.md,
"Uninstalling, and what each cache is"):

- the kernel cache (``kernels/cache.py``): npubins that graph builds and ``build-kernels
  --cache`` compiled on this host, at ``$TF_GE_CUSTOM_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/tf-ge-custom/kernels``, else ``~/.cache/tf-ge-custom/kernels``;
- the builder venv ``tf-ge-custom setup-builder`` made (``_builder_venv.py``), at
  ``$TF_GE_CUSTOM_BUILDER``, else ``$XDG_DATA_HOME/tf-ge-custom/builder``, else
  ``~/.local/share/tf-ge-custom/builder``.

A variable may name any folder, so nothing is judged by its name or by a marker file anyone
could write. What is removed is decided from what each path *is* and what the package
*made* (:mod:`tf_ge_custom._made`, :mod:`tf_ge_custom._removing`):

- the folder a variable names is looked at itself (``lstat``, before any link is resolved):
  a link is named and not followed, and a folder the trust rule refuses (another user's, one
  others may write: as ``list-kernels --cache`` refuses it, root included) is left whole;
- only files a made-record names and that still are those files (device, inode, owner,
  size, sha256) go, then the folders the records name or that this removal emptied;
- a folder holding anything else is left, in a line naming what it holds;
- a kernel cache entry whose build lock is held is left, in a line; the others are removed
  holding their lock.

No TensorFlow is imported.
"""
import errno
import fcntl
import os
import shlex
import stat
import sys

from .. import _builder_venv as builder_venv, _made as made, _removing as removing, _trust as trust
from ..errors import TfGeCustomError

_APP_DIR = "tf-ge-custom"
_OLD_RECORDS = "tf-ge-custom 0.1.0 before 2026-12-05 have none"


def add_arguments(parser):
    parser.description = ("List and remove what tf-ge-custom made for this user outside its "
                          "install: the kernel cache and the builder venv (pip uninstall "
                          "tf-ge-custom leaves both). Only what its records say it made goes.")
    parser.add_argument("--dry-run", action="store_true",
                        help="list what would be removed (and what is kept, and why); remove nothing")


def _shown_size(size):
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if size >= scale:
            return "%.1f %s" % (size / float(scale), unit)
    return "%d bytes" % size


class Part(object):
    """What clean does with one place: the :class:`tf_ge_custom._removing.Plan`, the
    ``units`` it names ((path, what): a cache entry, the venv), what it keeps and why
    (``kept``), the locks it holds until the removal is done."""

    def __init__(self):
        self.plan = removing.Plan()
        self.units = []  # (path, what): a cache entry or the venv
        self.kept = []
        self.notes = []
        self.locks = []

    def release(self):
        for fd in self.locks:
            os.close(fd)
        self.locks = []


def _given_folder(path, what, variable, uid):
    """Why the folder ``path`` (a variable's, as written) is left whole, or "" to look in."""
    try:
        info = os.lstat(path)
    except OSError as e:
        return None if e.errno in (errno.ENOENT, errno.ENOTDIR) else "cannot be looked at: %s" % (
            e.strerror or e)
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return ("a symbolic link (to %s), not followed: clean removes nothing through a link; to "
                "clean the folder it leads to, run it with %s=<that folder>" % (target, variable))
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder, so not %s" % what
    refusal = trust.check(path, trust.FOLDER, uid)
    if refusal is not None:
        return ("not trusted, as list-kernels --cache would say, so clean leaves it whole: %s"
                % refusal.detail)
    return ""


def _real_folders(path):
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    found = []
    for name in names:
        full = os.path.join(path, name)
        try:
            if stat.S_ISDIR(os.lstat(full).st_mode):
                found.append(full)
        except OSError:
            pass
    return found


def _try_lock(lock):
    """``(fd, "")`` holding the entry's lock, ``(None, "")`` when there is no lock file, or
    ``(None, why)`` when a build holds it."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        return None, "" if e.errno == errno.ENOENT else "its lock %s cannot be opened: %s" % (
            lock, e.strerror or e)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        return None, "a build holds its lock%s; run clean again when it has finished" % (
            " (process %s)" % holder if holder.isdigit() else "")
    return fd, ""


def kernel_cache_part(environ, uid=None):
    """What clean does with the kernel cache (:class:`Part`)."""
    from tf_ge_custom.kernels import cache
    from tf_ge_custom.errors import KernelCacheError

    uid = os.geteuid() if uid is None else uid
    part = Part()
    try:
        location = cache.cache_dir_as_given(environ)
    except KernelCacheError as e:
        part.kept.append(("the kernel cache", "no folder to look at: %s" % e))
        return part
    root = os.path.normpath(location.path)
    why = _given_folder(root, "a kernel cache", cache.CACHE_DIR_ENV, uid)
    if why is None:
        return part
    if why:
        part.kept.append((root, why))
        return part
    found, skipped = removing.Made(), set()
    for soc in _real_folders(root):
        for key in _real_folders(soc):
            for op in _real_folders(key):
                try:
                    names = sorted(os.listdir(op))
                except OSError:
                    continue
                for name in names:
                    if name.startswith(cache.TMP_PREFIX):
                        _killed_build(os.path.join(op, name), found, skipped, part)
                    if not name.endswith(cache.RECORD_SUFFIX):
                        continue
                    record, problem = made.read(os.path.join(op, name), cache.RECORD_KIND, uid)
                    if record is None:
                        continue  # named below as a file the package did not make
                    entry = os.path.join(op, name[: -len(cache.RECORD_SUFFIX)])
                    fd, busy = _try_lock(entry + cache.LOCK_SUFFIX)
                    if busy:
                        part.kept.append((entry, busy))
                        skipped.update((entry, entry + cache.LOCK_SUFFIX, record.path))
                        continue
                    if fd is not None:
                        part.locks.append(fd)
                    found.add_record(record)
                    part.units.append((entry, "kernel cache entry"))
    removing.plan(root, found, skipped, part.plan)
    if part.plan.kept:
        part.notes.append("note: the kernel cache keeps what tf-ge-custom has no record of making "
                          "(kernel cache entries from %s); remove such a folder by hand if it is "
                          "yours" % _OLD_RECORDS)
    _and_app_folder(root, part)
    return part


def _killed_build(path, found, skipped, part):
    """A build's claimed temporary folder (``.tmp-<dtype>-*``): removed when its build is
    gone, as the next build's sweep would; left, with a line, while it runs."""
    from .. import _owned_folders as owned_folders

    if not owned_folders.is_claimed(path):
        return  # named below as what the package did not make
    fd = owned_folders.lock_if_dead(path)
    if fd is None:
        part.kept.append((path, "a build is writing it"))
        skipped.add(path)
        return
    part.locks.append(fd)
    found.add_claimed(path)
    part.units.append((path, "temporary folder of a killed build"))


def builder_venv_part(environ, uid=None):
    """What clean does with the builder venv (:class:`Part`)."""
    uid = os.geteuid() if uid is None else uid
    part = Part()
    venv = builder_venv.default_venv(environ)
    if not venv or not os.path.isabs(venv):
        return part
    venv = os.path.normpath(venv)
    why = _given_folder(venv, "a builder venv", builder_venv.VENV_ENV, uid)
    if why is None:
        return part
    if why:
        part.kept.append((venv, why))
        return part
    from .. import _given_folders as given_folders

    record, problem = made.read(given_folders.record_path(venv, builder_venv.FOLDER_KIND),
                                builder_venv.FOLDER_KIND, uid)
    if record is None:
        part.kept.append((venv, "%s: not a builder venv setup-builder recorded (venvs from %s); "
                          "remove it by hand if it is yours" % (problem, _OLD_RECORDS)))
        return part
    found = removing.Made()
    found.add_folder_record(record, venv)
    if not found.is_made(venv):
        part.kept.append((venv, "its record %s names another folder (a copy?)" % record.path))
        return part
    removing.plan(venv, found, (), part.plan)
    part.units.append((venv, "builder venv"))
    _and_app_folder(venv, part)
    return part


def _and_app_folder(path, part):
    """The default layout's ``tf-ge-custom`` folder above ``path``, when the removal empties it."""
    parent = os.path.dirname(path)
    if os.path.basename(parent) != _APP_DIR or path not in part.plan.folders:
        return
    try:
        if os.listdir(parent) == [os.path.basename(path)] and stat.S_ISDIR(os.lstat(parent).st_mode):
            part.plan.folders.append(parent)
    except OSError:
        pass


def parts(environ=None, uid=None):
    environ = os.environ if environ is None else environ
    return [kernel_cache_part(environ, uid), builder_venv_part(environ, uid)]


def lines(found, dry_run):
    """The lines clean prints for ``found`` (:func:`parts`), in order, and whether anything goes."""
    verb = "would remove" if dry_run else "removed"
    out, anything = [], False
    for part in found:
        gone = set(part.plan.files) | set(part.plan.folders)
        named = set()
        for unit, what in part.units:
            size = sum(_size(p) for p in part.plan.files if p == unit or p.startswith(unit + os.sep))
            if unit in gone:
                out.append("%s: %s (%s, %s)" % (verb, unit, what, _shown_size(size)))
                named.add(unit)
            elif any(p.startswith(unit + os.sep) for p in gone):
                out.append("%s: what tf-ge-custom made in %s (%s, %s)" % (verb, unit, what,
                                                                          _shown_size(size)))
        for folder in part.plan.folders:
            if folder not in named and not any(folder.startswith(u + os.sep) for u in named):
                out.append("%s: %s (left empty)" % (verb, folder))
        anything = anything or bool(gone)
        for path, why in part.plan.kept + part.kept:
            out.append("kept: %s: %s" % (path, why))
        out += part.notes
    return out, anything


_SIZES = {}


def _size(path):
    if path not in _SIZES:
        try:
            info = os.lstat(path)
            _SIZES[path] = info.st_size if stat.S_ISREG(info.st_mode) else 0
        except OSError:
            _SIZES[path] = 0
    return _SIZES[path]


def run(args):
    out = sys.stdout
    found = parts()
    try:
        said, anything = lines(found, args.dry_run)
        if not args.dry_run:
            for part in found:
                try:
                    left = removing.execute(part.plan)
                except OSError as e:
                    where = e.filename or "a path"
                    raise TfGeCustomError("could not remove %s: %s" % (where, e.strerror or e),
                                          fix="remove it by hand: rm -rf %s" % shlex.quote(str(where)))
                said += ["kept: %s: something was put into it meanwhile" % f for f in left]
    finally:
        for part in found:
            part.release()
    for line in said:
        out.write(line + "\n")
    if not anything:
        out.write("nothing to remove: no kernel cache entry, no builder venv that tf-ge-custom "
                  "recorded making\n")
    out.write("not covered here: the package itself (pip uninstall tf-ge-custom), and a clone's "
              "environments and build outputs (make distclean in the clone)\n")
    return 0
