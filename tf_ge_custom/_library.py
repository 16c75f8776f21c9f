"""The one place that knows where the TensorFlow op library lives and whether it may load.

A custom-op library is only safe in the TensorFlow it was compiled against: another
version can fail with undefined symbols or, worse, crash on a changed struct layout. The
build records that version in ``build_info.json``; :func:`load` compares it with the
running TensorFlow before ``tf.load_op_library`` ever sees the file.
"""
import json
import os
import threading

from .errors import OpLibraryError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_LIBRARY = os.path.join(_PACKAGE_DIR, "_lib", "libtf_ge_custom_ops.so")
_BUILD_INFO = os.path.join(_PACKAGE_DIR, "build_info.json")

REBUILD_COMMAND = (
    "pip install --no-deps --force-reinstall --no-cache-dir tf-ge-custom "
    "(from a source checkout: pip install --no-deps --force-reinstall .)")

_lock = threading.Lock()
_loaded = None  # the module tf.load_op_library returned


def library_path():
    """Path of the TensorFlow op library (``tf.load_op_library(library_path())`` works)."""
    if not os.path.isfile(_LIBRARY):
        raise OpLibraryError(
            "the tf_ge_custom op library is missing: expected %s. The package was not "
            "built (a source tree on sys.path?). Build and install it: %s"
            % (_LIBRARY, REBUILD_COMMAND))
    return _LIBRARY


def build_info():
    """What the build recorded (``{}`` when nothing was recorded)."""
    try:
        with open(_BUILD_INFO) as f:
            return json.load(f)
    except (IOError, OSError, ValueError):
        return {}


def check_compatible(running_version, running_abi, info):
    """Raise :class:`OpLibraryError` unless ``info`` says the library fits this TensorFlow."""
    built = info.get("tensorflow") or {}
    built_version = built.get("version")
    if built_version is None:
        raise OpLibraryError(
            "the tf_ge_custom op library has no record of the TensorFlow it was built "
            "against (%s is missing or damaged); refusing to load it into TensorFlow %s. "
            "Rebuild: %s" % (_BUILD_INFO, running_version, REBUILD_COMMAND))
    if built_version != running_version:
        raise OpLibraryError(
            "the tf_ge_custom op library was built for TensorFlow %s, but TensorFlow %s "
            "is running; a custom-op library only works in the TensorFlow it was compiled "
            "against. Rebuild it against this TensorFlow: %s"
            % (built_version, running_version, REBUILD_COMMAND))
    built_abi = built.get("cxx11_abi")
    if None not in (built_abi, running_abi) and int(built_abi) != int(running_abi):
        raise OpLibraryError(
            "the tf_ge_custom op library was built with _GLIBCXX_USE_CXX11_ABI=%s but "
            "TensorFlow %s uses %s. Rebuild: %s"
            % (built_abi, running_version, running_abi, REBUILD_COMMAND))


def load():
    """Load the op library once (thread-safe) and return its generated Python module."""
    global _loaded
    with _lock:
        if _loaded is None:
            import tensorflow as tf

            check_compatible(tf.__version__, getattr(tf.sysconfig, "CXX11_ABI_FLAG", None),
                             build_info())
            path = library_path()
            try:
                _loaded = tf.load_op_library(path)
            except Exception as e:  # tf.errors.NotFoundError: undefined symbol, bad ELF
                raise OpLibraryError(
                    "TensorFlow %s could not load %s: %s. Rebuild: %s"
                    % (tf.__version__, path, e, REBUILD_COMMAND))
        return _loaded
