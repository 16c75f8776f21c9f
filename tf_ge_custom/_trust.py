"""The trust rule: what the package loads or executes must be this user's (or root's), and
writable by nobody else, all the way down to it (docs/kernels.md, "What the package trusts").

It decides which npubins reach the NPU and which Python runs the kernel builder: the per-user
kernel cache, the kernel bundles of ``TF_GE_CUSTOM_KERNELS``, and ``TF_GE_CUSTOM_PYTHON`` /
the builder venv. A checksum in a manifest proves nothing about who wrote the manifest, so
the rule looks at who can write each thing on the way. ``check(path)`` walks ``path`` from
``/`` one component at a time, as the kernel resolves it, and refuses it, naming the first
component that fails and a remedy, unless every component:

- exists and can be looked at (``lstat``; nothing is opened, so a FIFO never blocks);
- is owned by this user or by root;
- is not writable by group or others, except a folder with the sticky bit (``/tmp``), where
  others may add entries but not rename or remove this user's;
- when it is a symbolic link: the link is owned by this user or root (who else could have
  put it in a folder only they may write?) and its target passes the same rule, resolved
  from where the link sits (at most :data:`MAX_SYMLINKS` links);
- is a folder on the way; at the end what is wanted: a folder, a regular file, or an
  executable regular file (a FIFO, device or socket is refused by name).

Since every folder on the way is writable only by this user or root, nobody else can swap
a component between the check and the read. ``resolve(path)`` is the same walk's answer to
where ``path`` leads (``..`` after a link goes up from the link's target, which
``os.path.normpath`` gets wrong): what the package reads and writes is that folder. The same rule, with the same parameters and
reason names, is ge_ops/core's ``trust.h``; tests/fixtures/trust/cases.json holds cases both
run.

Standard library only, Python 3.7 syntax.
"""
import errno
import os
import stat
from typing import NamedTuple, Optional

from ._files import describe_mode, shown

__all__ = ["check", "resolve", "Refusal", "make_private_folders", "privatize_tree", "owner_name",
           "FOLDER", "FILE", "EXECUTABLE", "REASONS"]

# The rule's parameters (trust.h holds the same; tests/kernels/test_trust_rule.py compares).
ROOT_UID = 0
GROUP_OTHER_WRITE = 0o022
MAX_SYMLINKS = 40  # Linux's own limit on links followed in one lookup
PRIVATE_FOLDER_MODE = 0o700  # folders the package makes for itself (the kernel cache)
PRIVATE_FILE_MODE = 0o644  # files it puts there: readable, writable by the owner only
PRIVATE_RECORD_MODE = 0o600  # the lock and the compile log it writes where they are

# What the path must be at its end.
FOLDER, FILE, EXECUTABLE = "folder", "file", "executable"
WANTS = (FOLDER, FILE, EXECUTABLE)

# Why a path is refused (the same names in trust.h).
RELATIVE = "relative"
MISSING = "missing"
UNREADABLE = "unreadable"
NOT_A_FOLDER = "not-a-folder"
NOT_A_FILE = "not-a-file"
SPECIAL = "special"
LINK_LOOP = "link-loop"
LINK_OWNER = "link-owner"
OWNER = "owner"
WRITABLE = "writable"
NOT_EXECUTABLE = "not-executable"
REASONS = (RELATIVE, MISSING, UNREADABLE, NOT_A_FOLDER, NOT_A_FILE, SPECIAL, LINK_LOOP,
           LINK_OWNER, OWNER, WRITABLE, NOT_EXECUTABLE)


class Refusal(NamedTuple):
    """Why ``path`` is not trusted: ``reason`` (one of :data:`REASONS`), ``at`` (the
    component that failed, as resolved), ``detail`` (one phrase), ``remedy``."""

    reason: str
    path: str
    at: str
    detail: str
    remedy: str

    def __str__(self):
        return "%s; %s" % (self.detail, self.remedy) if self.remedy else self.detail


def owner_name(uid):
    """``uid 65534 (nobody)``."""
    try:
        import pwd

        return "uid %d (%s)" % (uid, pwd.getpwuid(uid).pw_name)
    except (ImportError, KeyError):
        return "uid %d" % uid


def _refuse(reason, path, at, detail, remedy=""):
    return Refusal(reason, path, at, detail, remedy)


def check(path, want=FOLDER, uid=None):
    """``None`` when ``path`` may be used as ``want`` (:data:`FOLDER`, :data:`FILE` or
    :data:`EXECUTABLE`) by user ``uid`` (default: this process's effective user), else the
    :class:`Refusal` naming the first component that fails."""
    if want not in WANTS:
        raise ValueError("want must be one of %s, got %r" % (", ".join(WANTS), want))
    uid = os.geteuid() if uid is None else uid
    path = os.fspath(path)
    if "\0" in path:
        return _refuse(MISSING, path, path, "%s holds a NUL character, which no path can" % shown(path))
    if not os.path.isabs(path):
        return _refuse(RELATIVE, path, path, "%s is not an absolute path: each program would "
                       "look for it from its own working folder" % shown(path),
                       "name it from /")
    return _walk(path, uid, want)[0]


def resolve(path):
    """``path`` as the kernel resolves it: an absolute path without links, ``.``, ``..`` or
    doubled slashes, naming what opening ``path`` would reach (a relative ``path`` is taken
    from the working folder, as the kernel takes it).

    Walked as :func:`check` walks it: a link is replaced by its target, read from where the
    link sits, and ``..`` goes up from the folder reached so far, so ``/w/link/../cache``
    is ``/w/real/cache`` when ``link`` points to ``/w/real/sub`` (``os.path.normpath`` would
    say ``/w/cache``, a folder the kernel never looks at). From the first component that does
    not exist (or cannot be looked at, or after :data:`MAX_SYMLINKS` links) on, the rest is
    taken as written, a ``..`` going up one: those folders do not exist yet, so hold no link,
    and that is where creating them puts them. Resolving says nothing about trust: judge
    ``path`` itself with :func:`check`, which walks the same components and the links on the
    way (a path that passes resolves to one that passes)."""
    path = os.fspath(path)
    if "\0" in path:
        raise ValueError("%s holds a NUL character, which no path can" % shown(path))
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    _, current, rest = _walk(path, None, None)
    for name in rest:
        current = os.path.dirname(current) if name == ".." else os.path.join(current, name)
    return current


def _walk(path, uid, want):
    """Walk the absolute ``path`` from ``/`` one component at a time, as the kernel resolves
    it; with ``want`` (a :data:`WANTS` value), judge each component for user ``uid``.

    Returns ``(refusal, current, rest)``: the first refusal (None when every component passed,
    or when nothing is judged and the walk went through), the folder (or file) reached, and the
    components not walked yet, as written (empty unless the walk stopped)."""
    judging = want is not None
    pending = [p for p in path.split("/") if p not in ("", ".")]
    current = "/"
    links = 0
    if judging:
        refusal = _component(path, current, uid, folder=True)
        if refusal is not None:
            return refusal, current, pending
    while pending:
        name = pending.pop(0)
        if name == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, name)
        stopped = [name] + pending
        try:
            info = os.lstat(candidate)
        except OSError as e:
            return _lstat_refusal(path, candidate, e), current, stopped
        if stat.S_ISLNK(info.st_mode):
            links += 1
            if links > MAX_SYMLINKS:
                return _refuse(LINK_LOOP, path, candidate, "%s: more than %d symbolic links on the "
                               "way (a loop?)" % (shown(path), MAX_SYMLINKS),
                               "point it at the real folder"), current, stopped
            if judging and info.st_uid not in (uid, ROOT_UID):
                return _refuse(LINK_OWNER, path, candidate, "%s is a symbolic link made by %s, "
                               "not by you or root" % (shown(candidate), owner_name(info.st_uid)),
                               "remove the link (rm %s) and use the real path, or make the link "
                               "yourself" % shown(candidate)), current, stopped
            try:
                target = os.readlink(candidate)
            except OSError as e:
                return _lstat_refusal(path, candidate, e), current, stopped
            if target.startswith("/"):
                current = "/"
            pending[:0] = [p for p in target.split("/") if p not in ("", ".")]
            continue
        if judging:
            refusal = _component(path, candidate, uid, folder=bool(pending), want=want, info=info)
            if refusal is not None:
                return refusal, current, stopped
        current = candidate
    if judging and current == "/" and want != FOLDER:
        return _refuse(NOT_A_FILE, path, "/", "%s is a folder, not a file" % shown(path)), current, []
    return None, current, []


def _lstat_refusal(path, at, e):
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return _refuse(MISSING, path, at, "%s does not exist%s" % (
            shown(path), "" if at == path else " (%s is missing)" % shown(at)),
            "check the path, or create it")
    return _refuse(UNREADABLE, path, at, "%s cannot be looked at: %s" % (shown(at), e.strerror or e),
                   "make its folders searchable by you")


def _component(path, at, uid, folder, want=FOLDER, info=None):
    """The refusal of one resolved component (a folder on the way when ``folder``)."""
    if info is None:
        try:
            info = os.lstat(at)
        except OSError as e:
            return _lstat_refusal(path, at, e)
    mode = info.st_mode
    if folder or want == FOLDER:
        if not stat.S_ISDIR(mode):
            kind = SPECIAL if not stat.S_ISREG(mode) else NOT_A_FOLDER
            return _refuse(kind, path, at, "%s is %s, not a folder" % (
                shown(at), describe_mode(mode) if kind == SPECIAL else "a file"),
                "point it at a folder")
    elif not stat.S_ISREG(mode):
        kind = NOT_A_FILE if stat.S_ISDIR(mode) else SPECIAL
        return _refuse(kind, path, at, "%s is %s, not a regular file" % (shown(at), describe_mode(mode)),
                       "point it at a regular file")
    if info.st_uid not in (uid, ROOT_UID):
        return _refuse(OWNER, path, at, "%s is owned by %s, not by you (%s) or root" % (
            shown(at), owner_name(info.st_uid), owner_name(uid)),
            "use a folder of your own, or have it made yours (chown -R %d %s, as root) "
            "if nobody else has written there" % (uid, shown(at)))
    if mode & GROUP_OTHER_WRITE and not (stat.S_ISDIR(mode) and mode & stat.S_ISVTX):
        return _refuse(WRITABLE, path, at, "%s is writable by %s (mode %04o)" % (
            shown(at), "group and others" if mode & 0o022 == 0o022 else
            "its group" if mode & 0o020 else "others", stat.S_IMODE(mode)),
            "chmod go-w %s if nobody else has written there, else start afresh in a folder "
            "only you may write" % shown(at))
    if not folder and want == EXECUTABLE and not mode & 0o100:
        return _refuse(NOT_EXECUTABLE, path, at, "%s is not executable (mode %04o)" % (
            shown(at), stat.S_IMODE(mode)), "chmod u+x %s" % shown(at))
    return None


def make_private_folders(path):
    """``mkdir -p path``: every folder it makes gets mode 0700 whatever the umask (the
    folders that exist keep theirs). Returns the folders made (as :func:`resolve` names them:
    a ``..`` after a link goes up from its target, as in the kernel), outermost first."""
    path = resolve(path)
    missing = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    made = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_FOLDER_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process; the rule judges it
        os.chmod(folder, PRIVATE_FOLDER_MODE)  # the umask may have taken bits away
        made.append(folder)
    return made


def privatize_tree(folder):
    """Give ``folder`` and everything below it the private modes (folders 0700, files 0644):
    what a build wrote under any umask, before it joins the cache. Links are left alone
    (the rule judges them)."""
    os.chmod(folder, PRIVATE_FOLDER_MODE)
    for top, dirs, names in os.walk(folder):
        for name in dirs:
            path = os.path.join(top, name)
            if not os.path.islink(path):
                os.chmod(path, PRIVATE_FOLDER_MODE)
        for name in names:
            path = os.path.join(top, name)
            if not os.path.islink(path):
                os.chmod(path, PRIVATE_FILE_MODE)
