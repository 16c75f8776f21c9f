"""Folders a user names for a command to make and fill (``setup-builder --venv DIR``, ``run-om
--output-dir DIR``, ``build-kernels --bundle DIR``): never one of the user's own.

Such a command writes files of fixed names into the folder (a venv's ``bin/activate`` and
``pyvenv.cfg``, ``run-om.log``, ``bundle.json``), which would replace the user's files of the
same names. So a folder is taken only when it is missing (the command makes it), empty, or
holds only what an earlier run of the same command made. What a run made is known from its
made-record, ``<folder>/.tf-ge-custom-<kind>`` (:mod:`tf_ge_custom._made`): the folder's own
identity and that of each file the command left there, written when the command made them
(:func:`take` records the folder, :func:`record` what is in it at the end). A file's name or
content (``pyvenv.cfg``, ``builder_copy.json``, ``run-om.log``) is never taken as proof: a
user could have written it. Anything else (a folder holding a file of the user's, a link, a
file in its place) is refused before anything is written, naming the folder, what in it the
command did not make and what is accepted. ``tf-ge-custom clean`` reads the same record.

Standard library only, Python 3.7 syntax.
"""
import os
import stat

from . import _made as made, _owned_folders as owned_folders
from .errors import UsageError

_SHOWN = 5  # entries named in a refusal
_FOUND = {}  # folder -> {relative path: (dev, ino)} of what --force found there not made


def marker_name(kind):
    """The name of the made-record a command of ``kind`` keeps in a folder it made."""
    return ".tf-ge-custom-%s" % kind


def record_path(folder, kind):
    return os.path.join(folder, marker_name(kind))


def _unmade(folder, kind):
    """The relative paths in ``folder`` that its record (if any) does not name as made, with
    their (dev, ino); the folder itself as ``""`` when the record is not its own."""
    record, _ = made.read(record_path(folder, kind), kind)
    found = {}
    if record is None or not record.is_made("", folder, with_hash=False):
        record = None
    for parent, dirs, files in os.walk(folder):
        # a command's claimed temporary folder (a build's staging) is the package's: the
        # command sweeps it when its owner is gone (_owned_folders)
        dirs[:] = [d for d in dirs if not owned_folders.is_claimed(os.path.join(parent, d))]
        for name in sorted(dirs + files):
            full = os.path.join(parent, name)
            rel = os.path.relpath(full, folder)
            if rel == marker_name(kind) and record is not None:
                continue
            if record is None or not record.is_made(rel, full, with_hash=False):
                try:
                    info = os.lstat(full)
                except OSError:
                    continue
                found[rel] = (info.st_dev, info.st_ino)
    return found


def problem(folder, option, command, kind):
    """Why ``command`` must not take ``folder`` (given as ``option``), or "" when it may."""
    folder = os.fspath(folder)
    try:
        info = os.lstat(folder)
    except OSError:
        return ""
    if stat.S_ISLNK(info.st_mode):
        return ("%s %s is a symbolic link, which %s does not follow; give a new or empty folder"
                % (option, folder, command))
    if not stat.S_ISDIR(info.st_mode):
        return "%s %s is not a folder; give a new or empty folder" % (option, folder)
    try:
        if not os.listdir(folder):
            return ""
    except OSError as e:
        return "%s %s cannot be read: %s" % (option, folder, e.strerror or e)
    found = _unmade(folder, kind)
    if not found:
        return ""
    unmade = sorted(set(p.split(os.sep)[0] for p in found))  # named by their top-level entry
    shown = ", ".join(unmade[:_SHOWN]) + (" and %d more" % (len(unmade) - _SHOWN) if len(unmade) > _SHOWN else "")
    return ("%s %s holds what %s did not make (%s; %s records what it made in %s): nothing was "
            "changed; give a new or empty folder, or one %s made and nobody added to (folders "
            "of tf-ge-custom 0.1.0 before 2026-12-05 have no record)"
            % (option, folder, command, shown, command, marker_name(kind), command))


def refuse(folder, option, command, kind):
    """:func:`problem` as a :class:`~tf_ge_custom.errors.UsageError` (nothing done yet)."""
    reason = problem(folder, option, command, kind)
    if reason:
        raise UsageError(reason)


def take(folder, option, command, kind, check=True):
    """Make ``folder`` (when missing) and record it as ``command``'s, after checking (again)
    that it may be taken (``check=False``: the user said to replace what is there,
    ``--force``; what it holds then stays out of the record unless the command replaces it);
    returns ``folder``. Raises UsageError when it may not, or cannot be made."""
    if check:
        refuse(folder, option, command, kind)
    try:
        os.makedirs(folder, exist_ok=True)
        found = _FOUND[os.path.abspath(folder)] = {} if check else _unmade(folder, kind)
        earlier, _ = made.read(record_path(folder, kind), kind)
        paths = {}
        if earlier is not None and earlier.is_made("", folder, with_hash=False):
            paths = {rel: what for rel, what in earlier.paths.items() if rel not in found}
        if "" not in found:
            paths[""] = made.identity(folder)
        made.write(record_path(folder, kind), kind, paths)  # a run killed now leaves a taken folder
    except OSError as e:
        raise UsageError("%s %s cannot be made: %s" % (option, folder, e.strerror or e))
    return folder


def record(folder, kind, growing=()):
    """Record what is in ``folder`` now as made by the command that took it (:func:`take`):
    everything but what ``--force`` found there and the command left as it was. The files
    ``growing`` names (a log being written) are recorded by identity alone, without size and
    sha256, until a later call records them whole."""
    found = _FOUND.get(os.path.abspath(folder), {})
    paths = made.describe_tree(folder)
    paths.pop(marker_name(kind), None)
    for rel in growing:
        if rel in paths:
            paths[rel].pop("size", None)
            paths[rel].pop("sha256", None)
    for rel, (dev, ino) in found.items():
        now = paths.get(rel)
        if now is not None and (now["dev"], now["ino"]) == (dev, ino):
            del paths[rel]
    made.write(record_path(folder, kind), kind, paths)
