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

Only what the package itself wrote is removed, since a variable may name any folder: of the
cache, each ``<SoC>/<key>`` entry folder whose name is a cache key (then the folders that
leaves empty, up to a ``tf-ge-custom`` folder); the builder venv only when it is a venv
holding the package's builder copy (``builder_copy.json``). Anything else there is kept and
named. A link is never followed. No TensorFlow is imported.
"""
import os
import re
import shlex
import shutil
import sys

from .. import _builder_venv as builder_venv
from ..errors import TfGeCustomError

# <sha256[:16]>-triton_ascend_<v>-bishengir_<v>-cann_<v> (kernels/cache.py cache_key)
_CACHE_KEY = re.compile(r"^[0-9a-f]{16}-triton_ascend_[^/]+-bishengir_[^/]+-cann_[^/]+$")
_APP_DIR = "tf-ge-custom"


def add_arguments(parser):
    parser.description = ("List and remove what tf-ge-custom made for this user outside its "
                          "install: the kernel cache and the builder venv (pip uninstall "
                          "tf-ge-custom leaves both).")
    parser.add_argument("--dry-run", action="store_true",
                        help="list what would be removed (and what is kept, and why); remove nothing")


def _size(path):
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _shown_size(size):
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if size >= scale:
            return "%.1f %s" % (size / float(scale), unit)
    return "%d bytes" % size


def _real_folder(path):
    return os.path.isdir(path) and not os.path.islink(path)


def kernel_cache_plan(environ):
    """``(entries to remove, (path, why) kept, folders to remove once empty)`` of the cache."""
    from tf_ge_custom.kernels import cache
    from tf_ge_custom.errors import KernelCacheError

    try:
        root = cache.cache_dir(environ).path
    except KernelCacheError as e:
        return [], [("the kernel cache", "no folder to look at: %s" % e)], []
    if os.path.islink(root):
        return [], [(root, "a link, not followed")], []
    if not os.path.isdir(root):
        return [], [], []
    remove, kept, folders = [], [], []
    for soc in sorted(os.listdir(root)):
        soc_dir = os.path.join(root, soc)
        if not _real_folder(soc_dir):
            kept.append((soc_dir, "not a cache folder (<SoC>/<key>/)"))
            continue
        for key in sorted(os.listdir(soc_dir)):
            entry = os.path.join(soc_dir, key)
            if _CACHE_KEY.match(key) and _real_folder(entry):
                remove.append(entry)
            else:
                kept.append((entry, "not a cache entry (its name is no cache key)"))
        folders.append(soc_dir)
    folders.append(root)
    parent = os.path.dirname(root)
    if os.path.basename(parent) == _APP_DIR:  # the default layout's own folder
        folders.append(parent)
    return remove, kept, folders


def builder_venv_plan(environ):
    """``(venvs to remove, (path, why) kept, folders to remove once empty)``."""
    venv = builder_venv.default_venv(environ)
    if not venv or not os.path.lexists(venv):
        return [], [], []
    if not _real_folder(venv):
        return [], [(venv, "not a folder (or a link, not followed)")], []
    made = os.path.isfile(os.path.join(venv, "pyvenv.cfg")) and any(
        os.path.isfile(os.path.join(folder, builder_venv.MARKER))
        for folder, dirs, _ in os.walk(os.path.join(venv, "lib")) if folder.endswith("tf_ge_custom"))
    if not made:
        return [], [(venv, "not a venv holding the package's builder (no %s)"
                     % builder_venv.MARKER)], []
    parent = os.path.dirname(venv)
    return [venv], [], [parent] if os.path.basename(parent) == _APP_DIR else []


def plan(environ=None):
    """What ``clean`` removes: ``[(path, what, bytes)]``, ``[(path, why kept)]`` and the
    folders it removes after them when they are left empty."""
    environ = os.environ if environ is None else environ
    removals, kept, folders = [], [], []
    for what, planner in (("kernel cache entry", kernel_cache_plan),
                          ("builder venv", builder_venv_plan)):
        remove, keep, empty = planner(environ)
        removals += [(path, what, _size(path)) for path in remove]
        kept += keep
        folders += empty
    return removals, kept, folders


def emptied(folders, removed):
    """Of ``folders``, those that hold nothing but what is removed (deepest first)."""
    gone, found = set(removed), []
    for folder in sorted(set(folders), key=lambda f: (-f.count(os.sep), f)):
        if not _real_folder(folder):
            continue
        try:
            children = [os.path.join(folder, n) for n in os.listdir(folder)]
        except OSError:
            continue
        if all(c in gone for c in children):
            gone.add(folder)
            found.append(folder)
    return found


def run(args):
    out = sys.stdout
    removals, kept, folders = plan()
    empty = emptied(folders, [path for path, _, _ in removals])
    verb = "would remove" if args.dry_run else "removed"
    for path, what, size in removals:
        if not args.dry_run:
            _remove(shutil.rmtree, path)
        out.write("%s: %s (%s, %s)\n" % (verb, path, what, _shown_size(size)))
    for folder in empty:
        if not args.dry_run:
            _remove(os.rmdir, folder)  # refuses a folder something was put into meanwhile
        out.write("%s: %s (left empty)\n" % (verb, folder))
    for path, why in kept:
        out.write("kept: %s: %s\n" % (path, why))
    if not removals and not empty:
        out.write("nothing to remove: no kernel cache entry, no builder venv\n")
    out.write("not covered here: the package itself (pip uninstall tf-ge-custom), and a clone's "
              "environments and build outputs (make distclean in the clone)\n")
    return 0


def _remove(remover, path):
    try:
        remover(path)
    except OSError as e:
        raise TfGeCustomError("could not remove %s: %s" % (path, e.strerror or e),
                              fix="remove it by hand: rm -rf %s" % shlex.quote(path))
