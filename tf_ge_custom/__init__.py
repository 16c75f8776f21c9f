"""tf-ge-custom: the Triton-written ``AddCustom`` op for TensorFlow on Ascend NPUs.

``import tf_ge_custom`` registers the ``AddCustom`` op with TensorFlow (so SavedModels and
GraphDefs holding it load) and makes the package's OPP root (``opp_root()``) visible to
TF Adapter and GE by putting it first in ``ASCEND_CUSTOM_OPP_PATH``
(``TF_GE_CUSTOM_SET_OPP_PATH=0`` opts out). ``tf_ge_custom.add_custom(x, y)`` is the op's
Python function; ``tf_ge_custom.npu`` configures TF1 sessions and the TF2 device.

Without TensorFlow installed the package still imports, so that its pure-Python tools
(the kernel builder, the manifest reader) run in a toolchain-only environment;
``add_custom`` then raises :class:`OpLibraryError`.
"""
import builtins as _builtins

from . import errors, op_def
from ._library import library_path
from ._version import __version__
from .opp import opp_root
from .errors import (DTypeError, InputError, OpLibraryError, ShapeError,
                     TfGeCustomError)

__all__ = [
    "__version__", "add_custom", "library_path", "opp_root", "npu", "op_def", "errors",
    "TfGeCustomError", "OpLibraryError", "DTypeError", "ShapeError", "InputError",
]

# setup.py imports the pure build modules through this package: no TensorFlow then.
if not getattr(_builtins, "__TF_GE_CUSTOM_SETUP__", False):
    from . import environment as _environment

    # Before TensorFlow: anything that reads ASCEND_CUSTOM_OPP_PATH (TF Adapter, GE) must
    # find the OPP root in it from the start. Idempotent across imports and reloads.
    _environment.activate()
    try:
        import tensorflow as _tf  # noqa: F401
    except ImportError as _e:
        _tf_import_error = _e

        def add_custom(x, y, name=None):
            raise OpLibraryError(
                "tf_ge_custom.add_custom needs TensorFlow, which cannot be imported here "
                "(%s). Install TensorFlow, then rebuild this package against it." % _tf_import_error)
    else:
        from .ops import add_custom


def __getattr__(name):  # PEP 562 (Python 3.7+): import optional parts on first use
    if name in ("layers", "npu"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
