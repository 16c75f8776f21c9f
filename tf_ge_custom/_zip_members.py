"""Members of a zip archive, read with a bound on what they inflate.

A damaged or hostile archive (a ``.keras`` model, a wheel) can declare a member of gigabytes
in a file of kilobytes. Reading such a member whole to say what is wrong would cost more than
the load being diagnosed. So every read here checks the declared sizes first. Then it streams
in chunks and stops at a cap in bytes. zipfile itself never inflates a member past its
declared size, and it checks the CRC when a member ends.
"""
import os
import tempfile
import zipfile

CAP_FLOOR = 256 << 20  # bytes: the cap of a small archive
CAP_RATIO = 100  # the cap of a large archive, as a multiple of its size on disk
CHUNK = 1 << 20  # bytes read at once
IN_MEMORY = 16 << 20  # a spooled copy stays in memory up to this size, then goes to a file


class TooLarge(ValueError):
    """A member inflates to more than the cap allows."""


def cap_for(path):
    """The bytes a diagnosis may inflate from the archive ``path``."""
    return max(CAP_FLOOR, CAP_RATIO * os.path.getsize(path))


def cap_words(cap):
    """The cap in the user's terms, for an error line."""
    return "%d MiB (%d times the archive's size, at least %d MiB)" % (cap >> 20, CAP_RATIO, CAP_FLOOR >> 20)


def declared_problem(archive, cap):
    """Why the members' declared sizes are more than ``cap`` allows ("" when they are not)."""
    total = 0
    for info in archive.infolist():
        if info.file_size > cap:
            return ("its member %s declares %d bytes when inflated, more than the %s this check reads: "
                    "a zip bomb or a damaged archive" % (info.filename, info.file_size, cap_words(cap)))
        total += info.file_size
    if total > cap:
        return ("its members declare %d bytes in all when inflated, more than the %s this check reads: "
                "a zip bomb or a damaged archive" % (total, cap_words(cap)))
    return ""


def copy_member(archive, name, sink, budget):
    """Copy the member ``name`` into ``sink`` (a file, or None to discard) in chunks.

    Returns the bytes copied. Raises :class:`TooLarge` past ``budget`` bytes, and
    zipfile.BadZipFile when the member's CRC does not match.
    """
    copied = 0
    with archive.open(name) as member:
        while True:
            chunk = member.read(CHUNK)
            if not chunk:
                return copied
            copied += len(chunk)
            if copied > budget:
                raise TooLarge("its member %s inflates to more than the %d bytes left to read" % (name, budget))
            if sink is not None:
                sink.write(chunk)


def first_damaged(archive, cap):
    """The name of the first member whose CRC does not match, or None; at most ``cap`` bytes read."""
    left = cap
    for info in archive.infolist():
        if info.is_dir():
            continue
        try:
            left -= copy_member(archive, info.filename, None, left)
        except zipfile.BadZipFile:
            return info.filename
    return None


def spooled(archive, name, cap):
    """A file object holding the member ``name``, at most ``cap`` bytes, positioned at its start.

    It stays in memory up to :data:`IN_MEMORY` bytes and moves to a temporary file beyond.
    The caller closes it.
    """
    copy = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)
    try:
        copy_member(archive, name, copy, cap)
    except BaseException:
        copy.close()
        raise
    copy.seek(0)
    return copy


def head(archive, name, size=4096):
    """The first ``size`` bytes of the member ``name`` (fewer when it is shorter)."""
    with archive.open(name) as member:
        return member.read(size)
