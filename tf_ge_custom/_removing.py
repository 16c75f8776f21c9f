"""What a deleting command may remove under a folder: what the records say the package made.

:func:`plan` walks a folder without following a link and sorts what it finds:

- a file or link that a made-record (:mod:`tf_ge_custom._made`) names, and that still is
  what the record names (same device, inode, owner, size and sha256), is removed;
- a folder is removed when it is empty once those are gone, and either a record names it
  or the removal emptied it (it held something, all of it removed): an empty folder of the
  user's (a mount point) is neither;
- anything else is left, and each folder holding such things is named in one line, with
  what it holds that the package did not make;
- paths in ``skipped`` (an entry whose build lock is held) are left without a word: the
  caller has said why.

Only folders on the way to something made are looked into: a folder of the user's that
holds nothing the package made is named, not walked. :func:`execute` then removes what the
plan lists, deepest first; a folder something was put into meanwhile is left.

Standard library only, Python 3.7 syntax.
"""
import errno
import os
import stat

_SHOWN = 5  # entries named per folder


class Plan(object):
    """``files`` (to unlink), ``folders`` (to rmdir, deepest first), ``kept`` ((path, why)),
    ``size`` (bytes of the files)."""

    def __init__(self):
        self.files = []
        self.folders = []
        self.kept = []
        self.size = 0

    def removes(self, path):
        return path in self._gone

    @property
    def _gone(self):
        return set(self.files) | set(self.folders)


class Made(object):
    """Every path the records say the package made, by full path."""

    def __init__(self, same_bytes=True):
        self._same_bytes = same_bytes  # False: a file the package made whose bytes changed still is
        self._paths = {}  # full path -> (record, relative path); record None: a record file itself
        self._above = set()  # every folder holding (at any depth) a path of _paths
        self._claimed = set()

    def _add(self, full, what):
        self._paths[full] = what
        parent = os.path.dirname(full)
        while parent not in self._above and parent != os.path.dirname(parent):
            self._above.add(parent)
            parent = os.path.dirname(parent)

    def add_record(self, record):
        base = os.path.dirname(record.path)
        for relative in record.paths:
            full = os.path.join(base, relative) if relative else base
            self._add(os.path.normpath(full), (record, relative))
        self._add(record.path, (None, ""))

    def add_claimed(self, folder):
        """A claimed temporary folder of a dead command (:mod:`tf_ge_custom._owned_folders`,
        its owner file's identity checked): all of it is the package's, as its sweep says."""
        self._claimed.add(folder)
        self._add(folder, (None, ""))

    def add_folder_record(self, record, folder):
        """A record kept inside the folder it describes (``""`` is the folder)."""
        for relative in record.paths:
            full = os.path.join(folder, relative) if relative else folder
            self._add(os.path.normpath(full), (record, relative))
        self._add(record.path, (None, ""))

    def is_made(self, path):
        if self._claimed and any(path == c or path.startswith(c + os.sep) for c in self._claimed):
            return True
        found = self._paths.get(path)
        if found is None:
            return False
        record, relative = found
        return True if record is None else record.is_made(relative, path, same_bytes=self._same_bytes)

    def below(self, folder):
        """Whether anything made is at or below ``folder``."""
        return folder in self._paths or folder in self._above or self.is_made(folder)


def _listing(names):
    shown = ", ".join(names[:_SHOWN])
    return shown + (" and %d more" % (len(names) - _SHOWN) if len(names) > _SHOWN else "")


def plan(root, made, skipped=(), result=None):
    """The :class:`Plan` of removing what ``made`` (:class:`Made`) names under the folder
    ``root`` (itself included); ``root`` must be a real folder, already judged."""
    result = result or Plan()
    _plan_folder(os.path.normpath(root), made, set(skipped), result)
    return result


def _plan_folder(folder, made, skipped, result):
    """Add what goes of ``folder`` to ``result``; whether ``folder`` itself goes."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as e:
        result.kept.append((folder, "cannot be listed: %s" % (e.strerror or e)))
        return False
    left, unmade = False, []
    for name in names:
        path = os.path.join(folder, name)
        if path in skipped:
            left = True
            continue
        try:
            info = os.lstat(path)
        except OSError:
            left = True
            continue
        if stat.S_ISDIR(info.st_mode):
            if made.below(path) and _plan_folder(path, made, skipped, result):
                continue
            left = True
            if not made.below(path):
                unmade.append(name + "/")
        elif made.is_made(path):
            result.files.append(path)
            result.size += info.st_size if stat.S_ISREG(info.st_mode) else 0
        else:
            left = True
            unmade.append(name)
    if unmade:
        result.kept.append((folder, "it holds what tf-ge-custom did not make: %s" % _listing(unmade)))
    if left:
        return False
    if names or made.is_made(folder):
        result.folders.append(folder)
        return True
    return False


def execute(result):
    """Remove what ``result`` lists (files, then folders deepest first); returns the folders
    left because something was put into them meanwhile. Raises OSError (with the path) when
    a removal fails otherwise."""
    for path in result.files:
        os.unlink(path)
    left = []
    for folder in result.folders:
        try:
            os.rmdir(folder)
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            left.append(folder)
    return left
