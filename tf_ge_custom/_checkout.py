"""A clone's source tree, imported in place, hands over to the package built from it.

Python started in a clone's root (``python``, ``python -c``, ``python -m tf_ge_custom``) puts
the root first on ``sys.path``, so ``import tf_ge_custom`` finds the clone's ``tf_ge_custom/``
folder before the installed package. That folder has no op library, no OPP root and no build
record: the build writes those into the installed copy only. :func:`hand_over` makes such an
import load the installed copy instead, when that copy was built from exactly the sources the
clone has now; then Python in the root behaves as anywhere else.

Why hand over, rather than have the build also put the op library into the source tree: a
library in the source tree is whatever the last build from that folder left there, for
whichever environment ran it (``.venv``, ``.venv-tf1.15``, a user's own), and it stays after
a source changes; it would be served stale. The installed copy is the one this interpreter's
``pip`` built against its own TensorFlow, and the handover checks, file by file, that the
clone's sources (what the build reads: :data:`SOURCES`) are the ones it was built from
(recorded by the build as ``source.files`` in ``build_info.json``). When they differ, or no
built copy is installed, nothing is handed over: the source tree stays, and every refusal of
the op library says why and names the command that builds it for this interpreter
(:func:`why_not_handed_over`, used by ``tf_ge_custom/_library.py``).

Standard library only, Python 3.7 syntax: it runs first in ``import tf_ge_custom``, and
``setup.py`` records the sources through it.
"""
import hashlib
import os
import sys

PACKAGE = "tf_ge_custom"
# What the package's build reads (the Makefile's PACKAGE_SOURCES names the same).
SOURCES = ("setup.py", "pyproject.toml", "MANIFEST.in", "tf_ge_custom", "kernels", "tf_ops",
           "ge_ops", "framework")
BUILD_INFO_NAME = "build_info.json"
# Written by a build, never read by one.
_BUILT = ("tf_ge_custom/_lib", "tf_ge_custom/opp", "tf_ge_custom/" + BUILD_INFO_NAME)
_SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so")
# A digest prefix per file: enough to tell an edit, short enough for the record.
_DIGEST_CHARS = 16
_SHOWN = 3  # changed files named in a refusal

_state = {"why_not": None}


def source_files(root):
    """``{relative path: digest prefix}`` of every source the build reads under ``root``
    (build outputs, ``__pycache__`` and ``*.egg-info`` left out)."""
    found = {}
    for top in SOURCES:
        start = os.path.join(root, top)
        if os.path.isfile(start):
            found[top] = _digest(start)
            continue
        for folder, dirs, names in os.walk(start):
            relative = os.path.relpath(folder, root).replace(os.sep, "/")
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info")
                             and "%s/%s" % (relative, d) not in _BUILT)
            for name in names:
                path = "%s/%s" % (relative, name)
                if name.endswith(_SKIPPED_SUFFIXES) or path in _BUILT:
                    continue
                full = os.path.join(folder, name)
                if os.path.isfile(full):
                    found[path] = _digest(full)
    return found


def _digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()[:_DIGEST_CHARS]


def differences(recorded, current):
    """The paths that differ between two :func:`source_files` results, sorted: changed,
    added or removed."""
    return sorted(p for p in set(recorded) | set(current) if recorded.get(p) != current.get(p))


def checkout_of(package_dir):
    """The clone whose unbuilt source tree ``package_dir`` is, or None: a ``tf_ge_custom/``
    folder beside ``setup.py`` and ``tf_ops/`` with no build record in it (an editable
    install builds into the source tree and has one)."""
    root = os.path.dirname(os.path.abspath(package_dir))
    if os.path.isfile(os.path.join(package_dir, BUILD_INFO_NAME)):
        return None
    if os.path.isfile(os.path.join(root, "setup.py")) and os.path.isdir(os.path.join(root, "tf_ops")):
        return root
    return None


def _same_folder(a, b):
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def installed_spec(root, path=None):
    """The module spec of the ``tf_ge_custom`` that ``sys.path`` holds after the clone at
    ``root``, or None."""
    from importlib.machinery import PathFinder

    cwd = os.getcwd() if os.path.isdir(".") else None
    entries = []
    for entry in sys.path if path is None else path:
        if not isinstance(entry, str):
            continue
        where = entry or cwd  # "" is the working directory
        if where is None or _same_folder(where, root):
            continue
        entries.append(entry)
    try:
        return PathFinder.find_spec(PACKAGE, entries)
    except (ImportError, ValueError, OSError):
        return None


def _recorded_sources(package_dir):
    from . import _files

    try:  # the package's reader: a regular file, capped, standard JSON
        document = _files.load_json(os.path.join(package_dir, BUILD_INFO_NAME), 1 << 20, 8)
        files = document["source"]["files"]
    except (_files.FileProblem, KeyError, TypeError):
        return None
    if not isinstance(files, dict):
        return None
    return files


def _decide(package_dir, path=None):
    """``(spec of the installed copy to use, None)`` or ``(None, why not)`` for the source
    tree at ``package_dir`` (``(None, None)``: not an unbuilt source tree)."""
    root = checkout_of(package_dir)
    if root is None:
        return None, None
    spec = installed_spec(root, path)
    where = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
    if where is None or not os.path.isfile(os.path.join(where, BUILD_INFO_NAME)):
        return None, ("no built tf_ge_custom is installed for this interpreter (%s)"
                      % (sys.executable or "python"))
    recorded = _recorded_sources(where)
    if recorded is None:
        return None, ("the tf_ge_custom installed at %s records no sources it was built from "
                      "(a build by an older tf-ge-custom), so it cannot stand in for the clone"
                      % where)
    changed = differences(recorded, source_files(root))
    if changed:
        return None, ("the tf_ge_custom installed at %s was built from other sources than the "
                      "clone has now (%d file%s: %s%s)" % (
                          where, len(changed), " differs" if len(changed) == 1 else "s differ",
                          ", ".join(changed[:_SHOWN]), ", ..." if len(changed) > _SHOWN else ""))
    return spec, None


def hand_over(name, package_file):
    """Called first by the package's ``__init__``: when it is a clone's unbuilt source tree
    and the installed copy was built from the clone's sources as they are, load that copy as
    ``sys.modules[name]`` (what the ``import`` statement then returns) and return True.

    The rest of the source tree's ``__init__`` then runs in a module object that nothing
    keeps, with every ``from . import`` resolved to the installed copy's modules (the same
    files): it changes nothing. ``setup.py`` imports the source tree itself: never then.
    """
    import builtins

    if getattr(builtins, "__TF_GE_CUSTOM_SETUP__", False):
        return False
    spec, why_not = _decide(os.path.dirname(os.path.abspath(package_file)))
    _state["why_not"] = why_not
    if spec is None:
        return False
    import importlib.util

    # the source tree's submodules imported so far (this one): the copy imports its own
    for key in [k for k in sys.modules if k.startswith(name + ".")]:
        del sys.modules[key]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return True


def why_not_handed_over(package_dir):
    """For the source tree at ``package_dir`` that was imported in place: one sentence on why
    it did not hand over to an installed copy; "" for any other package folder."""
    if checkout_of(package_dir) is None:
        return ""
    why = _state["why_not"] or _decide(package_dir)[1] or "it was imported without the handover"
    return ("this is the source tree of the clone at %s, imported in place (Python started in "
            "the clone's root finds it first on sys.path), and %s"
            % (checkout_of(package_dir), why))
