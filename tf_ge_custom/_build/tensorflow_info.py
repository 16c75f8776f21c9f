"""Ask the target environment's TensorFlow for its version and compile/link flags.

The op library must be compiled against the very TensorFlow that will load it. Under
pip's build isolation that TensorFlow is hidden from the build process, so we ask the
target interpreter itself (``sys.executable``, or ``TF_GE_CUSTOM_PYTHON``) in a child
process with pip's isolation overlay removed from its environment. The same path runs
without isolation, so there is one way the flags are obtained.

Importing TensorFlow takes seconds (ten on a loaded machine), so the answer is kept in the
build's object cache folder under a fingerprint of the TensorFlow that gave it, found without
importing it: the interpreter, and the size and time of TensorFlow's ``__init__.py`` and
framework library (any reinstall rewrites them).
"""
import hashlib
import json
import os
import sys

from . import BuildError
from .. import _processes, _atomic_files as atomic_files
from ..errors import CommandError

_QUERY = r"""
import json, sys
import tensorflow as tf
info = {
    "version": tf.__version__,
    "compile_flags": list(tf.sysconfig.get_compile_flags()),
    "link_flags": list(tf.sysconfig.get_link_flags()),
    "include": tf.sysconfig.get_include(),
    "lib": tf.sysconfig.get_lib(),
    "cxx11_abi": getattr(tf.sysconfig, "CXX11_ABI_FLAG", None),
    "python": sys.version.split()[0],
}
sys.stdout.write("\nTF_GE_CUSTOM_TF_INFO " + json.dumps(info) + "\n")
"""
_MARK = "TF_GE_CUSTOM_TF_INFO "
_FINGERPRINT = r"""
import importlib.util, json, os, sys
spec = importlib.util.find_spec("tensorflow")
files = []
if spec is not None and spec.origin:
    folder = os.path.dirname(spec.origin)
    for name in ("__init__.py", "libtensorflow_framework.so.2", "libtensorflow_framework.so.1"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            st = os.stat(path)
            files.append([path, st.st_size, st.st_mtime_ns])
sys.stdout.write(json.dumps({"python": os.path.realpath(sys.executable),
                             "version": sys.version, "tensorflow": files}) + "\n")
"""


def _target_environment():
    env = dict(os.environ)
    # pip's isolated build puts an overlay (pip-build-env-*) on PYTHONPATH that hides the
    # target site-packages and sets PYTHONNOUSERSITE; undo both for the child.
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
               if p and "pip-build-env" not in p]
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        env.pop("PYTHONPATH", None)
    if "PIP_BUILD_TRACKER" in env or "PIP_REQ_TRACKER" in env:
        env.pop("PYTHONNOUSERSITE", None)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return env


def _fingerprint(python):
    """A digest naming the TensorFlow ``python`` would import (None: none found)."""
    try:
        proc = _processes.run([python, "-c", _FINGERPRINT], timeout=120,
                            env=_target_environment(), check=False, separate_stderr=True)
        found = json.loads(proc.output.strip().splitlines()[-1])
    except (CommandError, ValueError, IndexError):
        return None
    if proc.returncode != 0 or not found.get("tensorflow"):
        return None
    text = json.dumps(found, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def query(python=None, cache_dir=None):
    """Return a dict: version, compile_flags, link_flags, include, lib, cxx11_abi, python.

    ``cache_dir``: where an earlier answer for the same TensorFlow is kept (None: ask)."""
    python = python or os.environ.get("TF_GE_CUSTOM_PYTHON") or sys.executable
    fingerprint = _fingerprint(python) if cache_dir else None
    kept = os.path.join(cache_dir, "tensorflow-%s.json" % fingerprint) if fingerprint else None
    if kept:
        try:
            with open(kept) as f:
                return json.load(f)
        except (IOError, OSError, ValueError):
            pass
    info = _ask(python)
    if kept:
        try:
            os.makedirs(cache_dir, exist_ok=True)
            atomic_files.write_json(kept, info)
        except (IOError, OSError):
            pass  # the next build asks again
    return info


def _ask(python):
    try:
        proc = _processes.run([python, "-c", _QUERY], timeout=600, env=_target_environment(),
                            check=False, separate_stderr=True)
    except CommandError as e:
        raise BuildError("cannot ask %s for TensorFlow: %s" % (python, e))
    for line in proc.output.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    raise BuildError(
        "TensorFlow is needed to build the op library, but %s could not import it "
        "(exit %d):\n%s\nInstall TensorFlow into that environment first "
        "(e.g. pip install tensorflow-cpu), or set TF_GE_CUSTOM_PYTHON to the "
        "interpreter whose TensorFlow should be used."
        % (python, proc.returncode, proc.errors.strip()[-2000:]))
