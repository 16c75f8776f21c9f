"""Folders a user names for a command to make and fill (``setup-builder --venv DIR``, ``run-om
--output-dir DIR``, ``build-kernels --bundle DIR``): never one of the user's own.

Such a command writes files of fixed names into the folder (a venv's ``bin/activate`` and
``pyvenv.cfg``, ``run-om.log``, ``bundle.json``), which would replace the user's files of the
same names. So a folder is taken only when it is missing (the command makes it), empty, or
made by an earlier run of the same command: the command leaves a marker file in each folder it
makes (``.tf-ge-custom-<kind>``), and a folder an older version made without one is
recognised by what it holds (``also_ours``). Anything else (a non-empty folder of the user's,
a file or a link to nothing in its place) is refused before anything is written, naming the
folder, what is in it and what is accepted (:func:`problem` checks; :func:`take` checks again
and makes the folder, then the marker, at the moment the command starts writing).

Standard library only, Python 3.7 syntax.
"""
import os

from .errors import UsageError

_SHOWN = 5  # entries named in a refusal


def marker_name(kind):
    return ".tf-ge-custom-%s" % kind


def problem(folder, option, command, kind, also_ours=None):
    """Why ``command`` must not take ``folder`` (given as ``option``), or "" when it may."""
    folder = os.fspath(folder)
    if os.path.islink(folder) and not os.path.exists(folder):
        return "%s %s is a symbolic link to nothing; give a new or empty folder" % (option, folder)
    if not os.path.lexists(folder):
        return ""
    if not os.path.isdir(folder):
        return "%s %s is not a folder; give a new or empty folder" % (option, folder)
    try:
        entries = sorted(os.listdir(folder))
    except OSError as e:
        return "%s %s cannot be read: %s" % (option, folder, e.strerror or e)
    if not entries or marker_name(kind) in entries or (also_ours is not None and also_ours(folder)):
        return ""
    shown = ", ".join(entries[:_SHOWN]) + (" and %d more" % (len(entries) - _SHOWN) if len(entries) > _SHOWN else "")
    return ("%s %s is not empty, and %s did not make it (no %s in it; it holds %s): nothing was changed; "
            "give a new or empty folder, or one %s made" % (option, folder, command, marker_name(kind), shown,
                                                            command))


def refuse(folder, option, command, kind, also_ours=None):
    """:func:`problem` as a :class:`~tf_ge_custom.errors.UsageError` (nothing done yet)."""
    reason = problem(folder, option, command, kind, also_ours)
    if reason:
        raise UsageError(reason)


def take(folder, option, command, kind, also_ours=None, check=True):
    """Make ``folder`` (when missing) and mark it as ``command``'s, after checking (again) that
    it may be taken (``check=False``: the user said to replace what is there, ``--force``);
    returns ``folder``. Raises UsageError when it may not, or cannot be made."""
    if check:
        refuse(folder, option, command, kind, also_ours)
    try:
        os.makedirs(folder, exist_ok=True)
        marker = os.path.join(folder, marker_name(kind))
        if not os.path.lexists(marker):
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "w") as f:
                f.write("made by tf-ge-custom %s; a later run of it may replace what it wrote here\n" % command)
    except OSError as e:
        raise UsageError("%s %s cannot be made: %s" % (option, folder, e.strerror or e))
    return folder
