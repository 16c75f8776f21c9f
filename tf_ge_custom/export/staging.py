"""Outputs that appear whole or not at all.

Every product (``.pb``, ``.json``, ``.air``, ``.om``) is written into a hidden staging folder
next to its destination (same file system) and moved into place with one rename once it is
complete and checked (``atomic_files.publish``). The staging folder is removed on the way out, whether the step
succeeded, failed or was interrupted, so a failure or Ctrl-C leaves no partial file behind;
after a ``kill -9`` the next export into that folder removes it.
"""
import os

from tf_ge_custom import _atomic_files as atomic_files, _owned_folders as owned_folders
from tf_ge_custom.errors import ExportError


# What an export to each target writes beside PREFIX (pipeline.py).
PRODUCTS = {"pb": (".pb", ".json"), "air": (".pb", ".json", ".air", ".air.log"),
            "om": (".pb", ".json", ".om", ".atc.log", ".air", ".air.log")}
STAGING_PREFIX = ".tf-ge-custom-staging-"


def _nearest_existing(folder):
    while not os.path.lexists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def _name_max(folder):
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _ours(record_path):
    """Whether ``record_path`` is an export record this package wrote."""
    from tf_ge_custom.export.graph_record import GraphRecord

    try:
        GraphRecord.load(record_path)
    except ExportError:
        return False
    return True


def output_prefix(prefix, to="pb", force=False, create=True):
    """``prefix`` as an absolute path without a product suffix, checked before any work.

    The folder is created when missing (``create``; a dry run only checks that it could
    be); refused when something else is in its place, it is not writable, or a file name
    of the export would be longer than the file system allows. An existing product that is
    a folder is refused; an existing product is replaced only when ``PREFIX.json`` beside it
    is an export record (this package wrote them), else only with ``force``.
    """
    text = os.fspath(prefix)
    if not text or "\0" in text:
        raise ExportError("--output %r is not a path prefix (e.g. out/model)" % text[:80])
    prefix = os.path.abspath(os.path.expanduser(text))
    for suffix in (".pb", ".air", ".om", ".json"):
        if prefix.endswith(suffix):
            prefix = prefix[: -len(suffix)]
    folder, name = os.path.split(prefix)
    if not name:
        raise ExportError("--output %s names a folder; give a path prefix such as %s"
                          % (text[:200], os.path.join(text, "model")))
    if os.path.isdir(prefix):
        raise ExportError("--output %s is a folder; give a path prefix such as %s"
                          % (prefix, os.path.join(prefix, "model")))
    existing = _nearest_existing(folder)
    if not os.path.isdir(existing):
        raise ExportError("output folder %s cannot be made: %s is not a folder (choose another --output)"
                          % (folder, existing))
    if not atomic_files.folder_writable(existing):
        raise ExportError("output folder %s is not writable (choose another --output)" % existing)
    products = PRODUCTS.get(to, PRODUCTS["om"])
    longest = max(len(os.fsencode(name + s)) for s in products)
    limit = _name_max(existing)
    if longest > limit:
        raise ExportError("--output name %s... is too long: %s%s would have %d bytes, more than the "
                          "%d this file system allows (choose a shorter --output)"
                          % (name[:40], "PREFIX", max(products, key=len), longest, limit))
    if existing != folder and create:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise ExportError("cannot create the output folder %s: %s" % (folder, e.strerror or e))
    in_place = [prefix + s for s in products if os.path.lexists(prefix + s)]
    for path in in_place:
        if os.path.isdir(path) or (os.path.exists(path) and not os.path.isfile(path)):
            raise ExportError("%s is in the way: it is not a regular file, and the export writes a "
                              "file there (move it away, or choose another --output)" % path)
    if in_place and not force and not _ours(prefix + ".json"):
        raise ExportError("%s: already there, and not written by tf-ge-custom export (no export "
                          "record %s.json beside it); move it away, choose another --output, or "
                          "pass --force to replace it" % (", ".join(in_place), name))
    return prefix


class Staging(object):
    """A staging folder in ``folder``; ``path(name)`` inside it, ``publish(name, dest)`` out.

    The folder is claimed by this process (:mod:`tf_ge_custom._owned_folders`): one that an
    export killed outright left in ``folder`` is removed, with a line saying so, when the next
    staging folder is made there."""

    def __init__(self, folder):
        try:
            self._owned = owned_folders.make(folder, STAGING_PREFIX)
        except OSError as e:
            raise ExportError("cannot write in the output folder %s: %s" % (folder, e.strerror or e))
        self.dir = self._owned.path
        self.published = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def publish(self, name, destination):
        source = self.path(name) if not os.path.isabs(name) else name
        try:
            atomic_files.publish(source, destination, atomic_files.FILE_MODE)
        except OSError as e:
            raise ExportError("cannot write %s: %s (nothing was left there)" % (destination, e.strerror or e))
        self.published.append(destination)
        return destination

    def close(self):
        self._owned.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
