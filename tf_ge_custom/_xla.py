"""The package's ops under XLA: ``tf.function(jit_compile=True)``, Keras ``jit_compile=True``.

Where the build made ``libtf_ge_custom_xla.so`` (TensorFlow wheels that ship the tf2xla
headers and export their symbols: see docs/tensorflow-op.md), loading it registers an XLA
kernel for each op that has a ``tf_ops/<op>_xla.cc`` (``AddCustom`` compiles like ``AddV2``,
``LeakyReluCustom`` like ``LeakyRelu``). TensorFlow registers XLA kernels once per process,
at its first XLA compilation, so this works when ``tf_ge_custom`` is imported before that.
Otherwise (no XLA library in this build, or imported too late) each op's function puts its
TensorFlow equivalent into graphs traced inside an XLA context instead of its node
(``add_custom`` ``tf.math.add``, ``leaky_relu_custom`` ``tf.nn.leaky_relu``: the same numbers
from XLA's own kernels).
"""
import os
import warnings

import tensorflow as tf

from . import _library
from .errors import OpLibraryError

_lowering_reason = "the XLA kernel library was not loaded yet"


def _xla_kernels_registered_already():
    # TensorFlow registers every XLA kernel (AddV2's too) for the *_XLA_JIT devices in one
    # go; once AddV2 has one, a kernel registered later is never picked up.
    from tensorflow.python.framework import kernels

    return any(k.device_type.endswith("_JIT")
               for k in kernels.get_registered_kernels_for_op("AddV2").kernel)


def load_kernels():
    """Load the XLA kernel library if there is one; return why the ops lower, or None."""
    global _lowering_reason
    info = _library.build_info().get("tensorflow") or {}
    relative = info.get("xla_library")
    if not relative:
        _lowering_reason = "this build has no XLA kernel library (%s)" % info.get(
            "xla_library_missing_because", "not recorded")
    elif _xla_kernels_registered_already():
        _lowering_reason = ("TensorFlow compiled with XLA before tf_ge_custom was imported, "
                            "and registers XLA kernels only once per process")
    else:
        path = os.path.join(_library.package_dir(), relative)
        try:  # checked like the op library: a damaged file is refused, never mapped
            _library.check_library_file(path, _library.build_info(), key="xla_library")
            tf.load_op_library(path)
            _lowering_reason = None
        except OpLibraryError as e:
            _lowering_reason = str(e)
        except Exception as e:  # tf.errors.NotFoundError: a missing symbol, a bad file
            _lowering_reason = "TensorFlow could not load %s: %s. Rebuild: %s" % (
                path, e, _library.rebuild_command())
        if _lowering_reason is not None:  # the build made one, and it cannot be used: say so
            warnings.warn("tf_ge_custom: the XLA kernel library is not used: %s (under "
                          "jit_compile=True, each op becomes its TensorFlow equivalent until "
                          "then: add_custom tf.math.add)" % _lowering_reason, RuntimeWarning,
                          stacklevel=3)
    return _lowering_reason


def lowering_reason():
    """Why the ops lower to their TensorFlow equivalents inside XLA clusters; None when they
    do not."""
    return _lowering_reason


def has_xla_kernel(type_name):
    """Whether the loaded XLA library holds a kernel for the op ``type_name``: the build
    records each op whose ``tf_ops/<op>_xla.cc`` it compiled (``xla_ops``)."""
    info = _library.build_info().get("tensorflow") or {}
    return _lowering_reason is None and type_name in (info.get("xla_ops") or ())


def must_lower(type_name=None):
    """True while tracing a graph that XLA will compile, when AddCustom (or the op
    ``type_name``) has no XLA kernel."""
    if tf.executing_eagerly():
        return False
    if _lowering_reason is None and (type_name is None or has_xla_kernel(type_name)):
        return False
    from tensorflow.python.ops import control_flow_util

    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())
