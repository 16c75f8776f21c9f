"""Outputs that appear whole or not at all.

Every product (``.pb``, ``.json``, ``.air``, ``.om``) is written into a hidden staging folder
next to its destination (same file system) and moved into place with one rename once it is
complete and checked (``atomic_files.publish``). The staging folder is removed on the way out, whether the step
succeeded, failed or was interrupted, so a failure or Ctrl-C leaves no partial file behind.
"""
import os
import shutil
import tempfile

from .. import atomic_files
from ..errors import ExportError


def output_prefix(prefix):
    """``prefix`` as an absolute path without a product suffix; its folder must be writable."""
    prefix = os.path.abspath(os.path.expanduser(prefix))
    for suffix in (".pb", ".air", ".om", ".json"):
        if prefix.endswith(suffix):
            prefix = prefix[: -len(suffix)]
    folder = os.path.dirname(prefix)
    if not os.path.isdir(folder):
        raise ExportError("output folder %s does not exist (create it, or choose another --output)" % folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError("output folder %s is not writable (choose another --output)" % folder)
    if os.path.isdir(prefix):
        raise ExportError("--output %s is a folder; give a path prefix such as %s"
                          % (prefix, os.path.join(prefix, "model")))
    return prefix


class Staging(object):
    """A staging folder in ``folder``; ``path(name)`` inside it, ``publish(name, dest)`` out."""

    def __init__(self, folder):
        self.dir = tempfile.mkdtemp(prefix=".tf-ge-custom-staging-", dir=folder)
        self.published = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def publish(self, name, destination):
        source = self.path(name) if not os.path.isabs(name) else name
        atomic_files.publish(source, destination, atomic_files.FILE_MODE)
        self.published.append(destination)
        return destination

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
