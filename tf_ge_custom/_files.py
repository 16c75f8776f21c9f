"""Reading the files the package ships or a user hands it, without surprises.

Every reader of such a file (the build record, kernel manifests, ``npu_supported_ops.json``
files, ``vendors/config.ini``, JSON option values) goes through here, so that whatever the
file is, the caller gets one :class:`FileProblem` it turns into the package's named error:

- only regular files are read: a directory, FIFO (which would block ``open`` forever),
  socket or device is refused at once, and so is a symlink loop or a dangling link;
- a size cap, checked before and while reading;
- text must be UTF-8;
- JSON must be standard JSON (no ``NaN``/``Infinity``, which Python's ``json`` accepts and
  every C++ reader refuses), nested no deeper than a limit (Python's parser would raise
  ``RecursionError`` around 1000 levels; the C++ readers stop at their own limit).

Standard library only, Python 3.7 syntax: ``import tf_ge_custom`` reads the build record
through it.
"""
import errno
import hashlib
import json
import os
import re
import stat

__all__ = ["FileProblem", "read_bytes", "regular_file_size", "sha256_file", "read_text", "parse_json", "load_json",
           "describe_mode", "shown", "open_regular", "MAX_JSON_DEPTH"]

# The kernel manifests are refused past a depth of 512 (docs/kernel-manifest.md);
# the Python readers use the same default so that both give a file the same verdict.
MAX_JSON_DEPTH = 512

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class FileProblem(Exception):
    """Why a file or text could not be read: ``kind`` is ``"io"`` or ``"syntax"``.

    Internal: each reader turns it into its own named error (``OpLibraryError``,
    ``ManifestError``, ...), with the path and what it expected.
    """

    def __init__(self, kind, message):
        self.kind = kind
        super(FileProblem, self).__init__(message)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text):
    """``text`` with control characters escaped (``\\n``, ``\\t``, ``\\x1b``...), for a value
    from the environment or the file system put into a one-line message: a newline in a
    variable must not split a report line, nor an escape sequence drive the terminal."""
    text = str(text)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), "\\x%02x" % ord(m.group())), text)


def describe_mode(mode):
    """``"a directory"``, ``"a FIFO"``, ... for a ``st_mode`` that is not a regular file."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def _os_error(path, e):
    if e.errno == errno.ELOOP:
        return FileProblem("io", "%s is a symlink loop (too many levels of symbolic links)"
                           % path)
    if e.errno == errno.ENOENT and os.path.islink(path):
        return FileProblem("io", "%s is a dangling symlink (its target does not exist)" % path)
    return FileProblem("io", "cannot read %s: %s" % (path, e.strerror or e))


def _open_regular(path):
    """``(fd, stat)`` of the regular file ``path``, opened read-only without blocking."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise _os_error(path, e)
    except ValueError as e:  # an embedded NUL character
        raise FileProblem("io", "cannot read %r: %s" % (path, e))
    try:
        info = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise _os_error(path, e)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FileProblem("io", "%s is %s, not a regular file" % (path, describe_mode(info.st_mode)))
    return fd, info


def open_regular(path):
    """``(fd, stat)`` of the regular file ``path`` opened read-only without blocking (a FIFO,
    device or socket is refused before anything waits on it); raises FileProblem. The caller
    closes ``fd``."""
    return _open_regular(path)


def regular_file_size(path):
    """The size of the regular file ``path``; raises FileProblem for anything else."""
    fd, info = _open_regular(path)
    os.close(fd)
    return info.st_size


def sha256_file(path):
    """Hex SHA-256 of the regular file ``path``'s bytes; raises FileProblem for anything else."""
    fd, _ = _open_regular(path)
    h = hashlib.sha256()
    try:
        for chunk in iter(lambda: os.read(fd, 1 << 20), b""):
            h.update(chunk)
    except OSError as e:
        raise _os_error(path, e)
    finally:
        os.close(fd)
    return h.hexdigest()


def read_bytes(path, max_bytes):
    """The bytes of the regular file ``path`` (at most ``max_bytes``); raises FileProblem.

    The file is opened without blocking (a FIFO would otherwise wait for a writer) and its
    type is taken from the open descriptor, so what is checked is what is read.
    """
    path = os.fspath(path)
    fd, info = _open_regular(path)
    try:
        if info.st_size > max_bytes:
            raise FileProblem("io", "%s has %d bytes, more than the %d allowed"
                              % (path, info.st_size, max_bytes))
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise FileProblem("io", "%s grew past the %d bytes allowed while it was read"
                                  % (path, max_bytes))
        return b"".join(chunks)
    except OSError as e:
        raise _os_error(path, e)
    finally:
        os.close(fd)


def _decode(data, where):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileProblem("syntax", "%s is not UTF-8 text (byte %d: %s)" % (where, e.start, e.reason))


def read_text(path, max_bytes):
    """The UTF-8 text of the regular file ``path``; raises FileProblem."""
    return _decode(read_bytes(path, max_bytes), path)


def _depth_over(text, limit):
    """The nesting depth of JSON ``text`` once it passes ``limit``, else None (linear scan)."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return depth
        else:
            depth -= 1
    return None


class _NotJson(ValueError):
    pass


class _FromHook(Exception):  # not a ValueError: passes the parse-error handlers below
    def __init__(self, error):
        self.error = error
        super(_FromHook, self).__init__(str(error))


def _no_constant(name):
    raise _NotJson("%s is not JSON (standard JSON has no NaN or Infinity)" % name)


def parse_json(text, where="the text", max_depth=MAX_JSON_DEPTH, object_pairs_hook=None):
    """Parse standard JSON ``text`` (str or UTF-8 bytes); raises FileProblem("syntax", ...).

    ``object_pairs_hook`` may raise its own exception (e.g. for duplicate keys); it is not
    caught here.
    """
    if isinstance(text, bytes):
        text = _decode(text, where)
    if _depth_over(text, max_depth) is not None:
        raise FileProblem("syntax", "%s nests arrays/objects deeper than %d levels"
                          % (where, max_depth))
    hook = None
    if object_pairs_hook is not None:
        def hook(pairs):
            try:
                return object_pairs_hook(pairs)
            except Exception as e:  # the caller's own refusal: handed back as it was
                raise _FromHook(e)
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=hook)
    except _FromHook as e:
        raise e.error
    except RecursionError:  # belt and braces: the scan above should have caught it
        raise FileProblem("syntax", "%s nests arrays/objects too deeply" % where)
    except (json.JSONDecodeError, _NotJson) as e:
        raise FileProblem("syntax", "%s is not valid JSON: %s" % (where, e))
    except ValueError as e:  # Python 3.11+: an integer of more than 4300 digits
        raise FileProblem("syntax", "%s holds a number this reader refuses (%s)"
                          % (where, str(e).split(";")[0][:120]))


def load_json(path, max_bytes, max_depth=MAX_JSON_DEPTH):
    """Read and parse the JSON file ``path``; raises FileProblem."""
    return parse_json(read_bytes(path, max_bytes), path, max_depth)
