"""The one place that knows where the TensorFlow op library lives and whether it may load.

A custom-op library is only safe in the TensorFlow it was compiled against: another
version can fail with undefined symbols or, worse, crash on a changed struct layout. And a
damaged file (truncated by a full disk, half-copied) is mapped by the dynamic loader and
kills the process with SIGBUS on first touch, which no ``try`` can catch. So the build
records, in ``build_info.json``, the TensorFlow it built against and the library's size
and SHA-256; :func:`load` checks all of it before ``tf.load_op_library`` ever sees the
file, and refuses with :class:`OpLibraryError` naming the file and the rebuild command.
"""
import os
import re
import threading

from . import _checkout, _files as files
from .errors import OpLibraryError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_LIBRARY = os.path.join(_PACKAGE_DIR, "_lib", "libtf_ge_custom_ops.so")
_BUILD_INFO = os.path.join(_PACKAGE_DIR, "build_info.json")
# The record is a few hundred bytes; nothing legitimate comes near this.
_BUILD_INFO_MAX_BYTES = 1 << 20
_BUILD_INFO_MAX_DEPTH = 8
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

# Where pip recorded no source folder (installed from a wheel): the package is on no index,
# so the rebuild is from the clone or source archive it came from.
REBUILD_COMMAND = (
    "in your tf-ge-custom clone (or unpacked source archive), with this environment's "
    "python: python -m pip install --no-deps --force-reinstall --no-cache-dir .")

_lock = threading.RLock()
_loaded = None  # the module tf.load_op_library returned
_checked_path = None  # the library, once check_library_file passed it


def package_dir():
    """The folder of the build record, which the libraries' recorded paths are relative to."""
    return os.path.dirname(_BUILD_INFO)


def library_path_unchecked():
    """Where the op library belongs, whether or not it is there."""
    return _LIBRARY


def _installed_from_source():
    """The source folder pip installed this package from (PEP 610 ``direct_url.json``), or
    None when it came from an index, a wheel or an archive, or the folder is gone."""
    import glob
    from urllib.parse import unquote, urlparse

    site = os.path.dirname(_PACKAGE_DIR)
    for record in sorted(glob.glob(os.path.join(site, "tf_ge_custom-*.dist-info", "direct_url.json"))):
        try:
            url = files.load_json(record, 1 << 16, 8).get("url", "")
        except (files.FileProblem, AttributeError):
            continue
        parsed = urlparse(url) if isinstance(url, str) else None
        if parsed and parsed.scheme == "file":
            folder = unquote(parsed.path)
            if os.path.isfile(os.path.join(folder, "setup.py")):
                return folder
    return None


def rebuild_command():
    """The command that rebuilds the op library for this interpreter's TensorFlow.

    Concrete (this interpreter, the source folder it was installed from, or the clone whose
    source tree this is) when there is one, so that it works as printed; else
    :data:`REBUILD_COMMAND`.
    """
    import shlex
    import sys

    source = _checkout.checkout_of(_PACKAGE_DIR) or _installed_from_source()
    if source is None or not sys.executable:
        return REBUILD_COMMAND
    return "%s -m pip install --no-deps --force-reinstall --no-cache-dir %s" % (
        shlex.quote(sys.executable), shlex.quote(source))


def _missing_library_error():
    folder = os.path.dirname(_LIBRARY)
    if os.path.isdir(folder) and not os.access(folder, os.R_OK | os.X_OK):
        return OpLibraryError(
            "the tf_ge_custom op library folder %s cannot be read by this user (permission "
            "denied): the package is installed, but its files are not readable here. Make "
            "them readable (chmod -R a+rX %s), or reinstall: %s"
            % (folder, folder, rebuild_command()))
    return OpLibraryError(
        "the tf_ge_custom op library is missing: expected %s. %s. Build and install it: %s"
        % (_LIBRARY, _not_built_because(), rebuild_command()))


def _not_built_because():
    """Why this package folder has no build (one sentence, capitalised)."""
    why = _checkout.why_not_handed_over(_PACKAGE_DIR)
    if why:
        return why[0].upper() + why[1:]
    return "The package was not built"


def library_path():
    """Path of the TensorFlow op library, checked against the build record first.

    ``tf.load_op_library(library_path())`` is safe: the path is handed out only when the
    file has the size and SHA-256 the build recorded (a truncated or replaced library would
    crash the loading process with SIGBUS, which no ``try`` catches); otherwise
    :class:`OpLibraryError` names the file and the rebuild command. The check reads the
    library once per process (about 50 ms); later calls return at once.
    """
    global _checked_path
    if _checked_path is not None:
        return _checked_path
    with _lock:
        if not os.path.lexists(_LIBRARY):
            raise _missing_library_error()
        check_library_file(_LIBRARY, build_info())
        _checked_path = _LIBRARY
    return _LIBRARY


# --- the build record ------------------------------------------------------------------
# What each section holds (tf_ge_custom/_build/*.py write it). Keys not listed here are
# allowed (a later build step may add some); listed keys must have these types.
_STR, _INT, _BOOL, _NULL = "a string", "an integer", "a boolean", "null"
_PATHS = "an array of relative paths"
_NAMES = "an array of strings"
_DIGESTS = "an object of strings"
_SECTIONS = {
    "tensorflow": {"version": (_STR,), "cxx11_abi": (_INT, _BOOL, _NULL), "python": (_STR,),
                   "library": (_STR,), "library_size": (_INT,), "library_sha256": (_STR,),
                   "xla_library": (_STR, _NULL), "xla_library_missing_because": (_STR, _NULL),
                   "xla_library_size": (_INT, _NULL), "xla_library_sha256": (_STR, _NULL),
                   "xla_ops": (_NAMES,)},
    "ge": {"built": (_BOOL,), "reason": (_STR,), "ascend_home": (_STR, _NULL),
           "libraries": (_PATHS,), "headers": (_PATHS,), "export_tools": (_PATHS,)},
    "kernels": {"source": (_STR, _NULL), "socs": ("an object of arrays of strings",),
                "python": (_STR,)},
    "opp": {"root": (_STR,), "arch": (_STR,), "json": (_STR,), "npu_ops": (_NAMES,),
            "npu_ops_missing_because": (_STR, _NULL)},
    # what the build read (tf_ge_custom/_checkout.py): relative path -> digest prefix
    "source": {"files": (_DIGESTS,)},
}


def _relative_path(value):
    return (isinstance(value, str) and value and not os.path.isabs(value)
            and ".." not in value.split("/") and "\0" not in value)


def _has_type(value, kind):
    if kind == _STR:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _NULL:
        return value is None
    if kind == _PATHS:
        return isinstance(value, list) and all(_relative_path(v) for v in value)
    if kind == _NAMES:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == _DIGESTS:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return isinstance(value, dict) and all(
        isinstance(v, list) and all(isinstance(d, str) for d in v) for v in value.values())


def validate_build_info(document, path=_BUILD_INFO):
    """Raise :class:`OpLibraryError` unless ``document`` has the build record's shape."""
    def refuse(what):
        return OpLibraryError(
            "the build record %s is damaged: %s. It is written by the package's build. "
            "Rebuild the package: %s" % (path, what, rebuild_command()))

    if not isinstance(document, dict):
        raise refuse("expected a JSON object at the top level, found %s"
                     % _json_type(document))
    for section, fields in _SECTIONS.items():
        if section not in document:
            continue
        value = document[section]
        if not isinstance(value, dict):
            raise refuse("%r must be an object, found %s" % (section, _json_type(value)))
        for key, kinds in fields.items():
            if key in value and not any(_has_type(value[key], k) for k in kinds):
                raise refuse("%s.%s must be %s, found %s" % (
                    section, key, " or ".join(kinds), _json_type(value[key])))
    tf = document.get("tensorflow") or {}
    if "version" in tf and not tf["version"]:
        raise refuse("tensorflow.version is empty")
    if tf.get("cxx11_abi") not in (None, 0, 1):  # True/False are 1/0
        raise refuse("tensorflow.cxx11_abi must be 0, 1 or null, found %r" % (tf["cxx11_abi"],))
    if "library_size" in tf and tf["library_size"] < 0:
        raise refuse("tensorflow.library_size is negative")
    for key in ("library_sha256", "xla_library_sha256"):
        if tf.get(key) is not None and not _SHA256.match(tf[key]):
            raise refuse("tensorflow.%s must be 64 lowercase hex digits, found %r"
                         % (key, tf[key][:80]))
    if (tf.get("xla_library_size") or 0) < 0:
        raise refuse("tensorflow.xla_library_size is negative")
    return document


def _json_type(value):
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"),
                       (str, "a string"), (list, "an array"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def build_info(path=None):
    """What the build recorded (``{}`` when no record exists).

    Raises :class:`OpLibraryError` for a record that exists but cannot be read or does not
    have the expected shape (a directory, a FIFO, malformed JSON, a wrong type...).
    """
    path = path or _BUILD_INFO
    if not os.path.lexists(path):
        return {}
    try:
        document = files.load_json(path, _BUILD_INFO_MAX_BYTES, _BUILD_INFO_MAX_DEPTH)
    except files.FileProblem as e:
        raise OpLibraryError("the build record %s cannot be used: %s. Rebuild the package: %s"
                             % (path, e, rebuild_command()))
    return validate_build_info(document, path)


def check_library_file(path, info, key="library"):
    """Raise :class:`OpLibraryError` unless ``path`` is the file the build recorded under
    ``tensorflow.<key>_size`` / ``<key>_sha256`` (``key``: "library" or "xla_library").

    Size first (a truncated copy is the common damage), then SHA-256. Only a regular file
    is looked at: anything else would be refused by the loader anyway, or block it.
    """
    built = info.get("tensorflow") or {}
    size, digest = built.get(key + "_size"), built.get(key + "_sha256")
    if size is None or digest is None:
        raise OpLibraryError(
            "the build record %s has no size and SHA-256 for %s (a build by an older "
            "tf-ge-custom, or a damaged record), so the file cannot be checked before it is "
            "loaded; refusing to load it. Rebuild: %s" % (_BUILD_INFO, path, rebuild_command()))
    try:
        found = files.regular_file_size(path)
    except files.FileProblem as e:
        raise OpLibraryError("cannot use the op library: %s. Rebuild: %s" % (e, rebuild_command()))
    if found != size:
        raise OpLibraryError(
            "the op library %s has %d bytes, but the build recorded %d: the file is damaged "
            "(truncated or replaced) and loading it could crash the process. Rebuild: %s"
            % (path, found, size, rebuild_command()))
    try:
        actual = files.sha256_file(path)
    except files.FileProblem as e:
        raise OpLibraryError("cannot use the op library: %s. Rebuild: %s" % (e, rebuild_command()))
    if actual != digest:
        raise OpLibraryError(
            "the op library %s does not match the build record (SHA-256 %s, recorded %s): "
            "the file was changed after the build and is not loaded. Rebuild: %s"
            % (path, actual, digest, rebuild_command()))


def check_compatible(running_version, running_abi, info):
    """Raise :class:`OpLibraryError` unless ``info`` says the library fits this TensorFlow."""
    built = info.get("tensorflow") or {}
    built_version = built.get("version")
    if built_version is None:
        why = _checkout.why_not_handed_over(_PACKAGE_DIR)
        raise OpLibraryError(
            "the tf_ge_custom op library has no record of the TensorFlow it was built "
            "against (%s is missing or damaged); refusing to load it into TensorFlow %s. "
            "%sRebuild: %s" % (_BUILD_INFO, running_version,
                               "It is missing because %s. " % why if why else "",
                               rebuild_command()))
    if built_version != running_version:
        raise OpLibraryError(
            "the tf_ge_custom op library was built for TensorFlow %s, but TensorFlow %s "
            "is running; a custom-op library only works in the TensorFlow it was compiled "
            "against. Rebuild it against this TensorFlow: %s"
            % (built_version, running_version, rebuild_command()))
    built_abi = built.get("cxx11_abi")
    if None not in (built_abi, running_abi) and int(built_abi) != int(running_abi):
        raise OpLibraryError(
            "the tf_ge_custom op library was built with _GLIBCXX_USE_CXX11_ABI=%s but "
            "TensorFlow %s uses %s. Rebuild: %s"
            % (int(built_abi), running_version, running_abi, rebuild_command()))


def check_before_load(running_version, running_abi):
    """Every check :func:`load` makes before loading; returns the library's path."""
    check_compatible(running_version, running_abi, build_info())
    return library_path()


def _check_defines_ops(module, path):
    from .op_def import OPS

    absent = [op.python_name for op in OPS if not hasattr(module, op.python_name)]
    if absent:
        raise OpLibraryError(
            "%s loaded, but it is not the tf_ge_custom op library: it defines no %s. "
            "Rebuild: %s" % (path, ", ".join(absent), rebuild_command()))


def ensure_loaded():
    """Register the package's ops (and their XLA kernels) in this process's TensorFlow before
    a graph that may hold one is read; raise :class:`OpLibraryError` when it cannot be.

    Every command that reads or runs a graph calls it first, however the process started:
    the command line imports the package without TensorFlow (``tf_ge_custom/__init__.py``),
    so nothing else would load the op there. Idempotent and cheap after the first call.
    """
    import warnings

    try:
        with warnings.catch_warnings():  # the refusal is raised below, not warned about
            warnings.simplefilter("ignore", RuntimeWarning)
            from . import ops
    except ImportError as e:
        raise OpLibraryError(
            "the tf_ge_custom op library needs TensorFlow, which cannot be imported here "
            "(%s). Install the TensorFlow it was built for, then rebuild: %s"
            % (e, rebuild_command()))
    if ops._load_error is not None:
        raise ops._load_error
    return ops


def load():
    """Load the op library once (thread-safe) and return its generated Python module."""
    global _loaded
    with _lock:
        if _loaded is None:
            try:
                import tensorflow as tf
            except ImportError as e:
                raise OpLibraryError(
                    "the tf_ge_custom op library needs TensorFlow, which cannot be imported "
                    "here (%s). Install the TensorFlow it was built for, then rebuild: %s"
                    % (e, rebuild_command()))

            path = check_before_load(tf.__version__,
                                     getattr(tf.sysconfig, "CXX11_ABI_FLAG", None))
            try:
                module = tf.load_op_library(path)
            except Exception as e:  # tf.errors.NotFoundError: undefined symbol, bad ELF
                raise OpLibraryError(
                    "TensorFlow %s could not load %s: %s. Rebuild: %s"
                    % (tf.__version__, path, e, rebuild_command()))
            _check_defines_ops(module, path)
            _loaded = module
        return _loaded
