"""The child processes doctor runs so that it never imports TensorFlow nor maps a library
itself: one that imports TensorFlow and loads the op library, one that dlopens a GE library."""
import json
import os
import sys

from .. import _library, _processes
from ..errors import CommandError

def dlopen_in_child(path, environ):
    """Load ``path`` with RTLD_NOW in a child process (as GE does); return an error or ""."""
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"  # CPython's dlopen adds RTLD_NOW
    try:
        proc = _processes.run([sys.executable, "-c", code, path], timeout=120, env=dict(environ),
                            check=False, separate_stderr=True)
    except CommandError as e:
        return str(e)
    return "" if proc.returncode == 0 else (proc.errors.strip().splitlines() or ["failed"])[-1]


# Run in a child by probe_tensorflow: TensorFlow's version, then every check import
# tf_ge_custom makes and the load itself, then what the library registered. The package is
# imported without TensorFlow, so that nothing loads before the step that reports it.
_PROBE = r"""
import builtins, json, sys
builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True
sys.path.insert(0, sys.argv[1])  # this very package; everything else as the parent finds it
import tf_ge_custom
from tf_ge_custom import _library, _lifecycle, op_def
del sys.path[0]
_lifecycle.die_with_parent()

def say(key, value):
    sys.stdout.write("\nTF_GE_CUSTOM_PROBE " + json.dumps([key, value]) + "\n")
    sys.stdout.flush()

say("package", tf_ge_custom.__file__)
try:
    import tensorflow as tf
except Exception as e:
    say("tensorflow_error", "%s: %s" % (type(e).__name__, e))
    sys.exit(0)
say("tensorflow", tf.__version__)
try:
    _library.load()
except tf_ge_custom.OpLibraryError as e:
    say("library_error", str(e))
    sys.exit(0)
from tensorflow.python.framework import op_def_registry
ops = {}
for op in op_def.OPS:
    if hasattr(op_def_registry, "get"):
        registered = op_def_registry.get(op.type_name)
    else:  # TensorFlow 1.15
        registered = op_def_registry.get_registered_ops().get(op.type_name)
    if registered is None:
        ops[op.type_name] = None
        continue
    attrs = {a.name: a for a in registered.attr}
    dtypes = []
    if op.type_attr in attrs:
        dtypes = [tf.as_dtype(t).name for t in attrs[op.type_attr].allowed_values.list.type]
    ops[op.type_name] = {"inputs": [a.name for a in registered.input_arg],
                         "outputs": [a.name for a in registered.output_arg], "dtypes": dtypes}
say("ops", ops)
"""


_PROBE_MARK = "TF_GE_CUSTOM_PROBE "


def probe_tensorflow(timeout=600):
    """TensorFlow and this package's op library, as a child process sees them.

    Returns a dict: ``tensorflow`` (its version) or ``tensorflow_error``; then
    ``library_error`` or ``ops`` (what the library registered); ``crash`` when the child died
    of a signal (a library the recorded checks cannot fault may still crash the loader:
    in a child that is a message, not the end of doctor); ``failure`` for anything else.
    """
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        proc = _processes.run([sys.executable, "-c", _PROBE, package_parent], timeout=timeout,
                            env=env, check=False, separate_stderr=True)
    except CommandError as e:
        if e.reason == _processes.TIMED_OUT:
            return {"failure": "a child process importing TensorFlow and loading the op library "
                               "did not finish within %d s" % timeout}
        return {"failure": "cannot start a child process: %s" % e}
    found = {}
    for line in proc.output.splitlines():
        if line.startswith(_PROBE_MARK):
            key, value = json.loads(line[len(_PROBE_MARK):])
            found[key] = value
    if proc.returncode < 0:
        if "tensorflow" in found:
            found["crash"] = ("loading %s killed a child process with %s: the file is damaged "
                              "in a way the build record cannot show"
                              % (_library.library_path_unchecked(),
                                 _processes.signal_name(proc.returncode)))
        else:
            found["crash"] = ("importing TensorFlow killed a child process with %s"
                              % _processes.signal_name(proc.returncode))
    elif not found or ("ops" not in found and not set(found) & {"tensorflow_error",
                                                                "library_error"}):
        tail = (proc.errors.strip().splitlines() or ["no output"])[-1]
        found["failure"] = "a child process importing TensorFlow failed (exit %d): %s" % (
            proc.returncode, tail)
    return found
