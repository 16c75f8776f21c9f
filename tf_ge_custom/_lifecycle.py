"""What every command shares about the process it runs in: its working directory.

A relative path on the command line means "from the working directory". When that folder
was deleted (or moved) under the shell, ``os.getcwd()`` fails and Python's own messages say
only "No such file or directory"; :func:`absolute` names the cause instead.
"""
import os

from .errors import WorkingDirectoryError


def working_directory():
    """The working directory, or None when it no longer exists."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def vanished_directory_words():
    """``the working directory /x/y`` (from the shell's $PWD when it says) ``no longer exists``."""
    where = os.environ.get("PWD") or ""
    return "the working directory%s no longer exists (deleted or moved)" % (" " + where if where else "")


def absolute(path, what):
    """``path`` made absolute; :class:`WorkingDirectoryError` naming ``what`` (an option such
    as ``--out``) when it is relative and the working directory is gone."""
    path = os.path.expanduser(os.fspath(path))
    if os.path.isabs(path):
        return os.path.normpath(path)
    cwd = working_directory()
    if cwd is None:
        raise WorkingDirectoryError(
            "%s %s is a relative path, but %s" % (what, path, vanished_directory_words()),
            fix="cd to an existing folder, or give %s an absolute path" % what)
    return os.path.normpath(os.path.join(cwd, path))
