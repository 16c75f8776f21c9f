"""tf-ge-custom: Triton-written ops for TensorFlow on Ascend NPUs (``op_def.OPS``:
``AddCustom`` and ``LeakyReluCustom``).

``import tf_ge_custom`` registers every op of the package with TensorFlow (so SavedModels
and GraphDefs holding them load) and makes the package's OPP root (``opp_root()``) visible
to TF Adapter and GE by putting it first in ``ASCEND_CUSTOM_OPP_PATH``
(``TF_GE_CUSTOM_SET_OPP_PATH=0`` opts out). Each op has its Python function under its
record's Python name: ``tf_ge_custom.add_custom(x, y)``,
``tf_ge_custom.leaky_relu_custom(x, alpha=0.2)``; ``tf_ge_custom.layers`` has a Keras layer
per op, and ``tf_ge_custom.npu`` configures TF1 sessions and the TF2 device.

Without TensorFlow installed the package still imports, so that its pure-Python tools
(the kernel builder, the manifest reader) run in a toolchain-only environment; the op
functions then raise :class:`OpLibraryError`.

The ``tf-ge-custom`` command (and ``python -m tf_ge_custom`` on Python 3.10+) imports the
package without TensorFlow: most of its commands do not need the ops, and TensorFlow's
import costs seconds. There an op function (or ``tf_ge_custom.ops``) imports TensorFlow
and loads the ops on first use.
"""
import builtins as _builtins
import os as _os
import sys as _sys

# Imported from a clone's unbuilt source tree (Python started in the clone's root): load the
# copy installed from those very sources instead (_checkout.py says why, and when not).
from . import _checkout

_checkout.hand_over(__name__, __file__)

from . import errors, op_def  # noqa: E402
from ._library import library_path
from ._version import __version__
from .opp import opp_root
from .errors import (DTypeError, InputError, OpLibraryError, ShapeError,
                     TfGeCustomError)

__all__ = [
    "__version__", "add_custom", "library_path", "opp_root", "npu", "op_def", "errors",
    "TfGeCustomError", "OpLibraryError", "DTypeError", "ShapeError", "InputError",
]

COMMAND_NAME = "tf-ge-custom"


def _started_as_command(argv=None, orig_argv=None):
    """Whether this process is the package's command line (``tf-ge-custom ...``).

    The console script runs with ``argv[0]`` naming it; ``python -m tf_ge_custom`` is
    recognised from ``sys.orig_argv`` (Python 3.10+), and before that (the Pythons of TF
    Adapter's hosts) from the module runpy is starting.
    """
    argv = _sys.argv if argv is None else argv
    if argv and isinstance(argv[0], str) and _os.path.basename(argv[0]) == COMMAND_NAME:
        return True
    orig_argv = getattr(_sys, "orig_argv", None) if orig_argv is None else orig_argv
    if argv and argv[0] == "-m" and orig_argv is None:
        return _module_runpy_starts() == __name__
    if not argv or argv[0] != "-m" or not orig_argv:
        return False
    args = iter(orig_argv[1:])
    for arg in args:
        if arg == "-m":
            return next(args, None) == __name__
        if arg.startswith("-m"):
            return arg == "-m" + __name__
        if arg in ("-X", "-W"):  # options whose value is the next argument
            next(args, None)
        elif not arg.startswith("-") or arg == "-c":
            return False
    return False


def _module_runpy_starts():
    """The module ``python -m`` names, read off runpy's frame while it imports that module's
    package (``sys.argv[0]`` is ``"-m"`` only then), or None."""
    frame = _sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_run_module_as_main" and frame.f_globals.get("__name__") == "runpy":
            name = frame.f_locals.get("mod_name")
            return name if isinstance(name, str) else None
        frame = frame.f_back
    return None


# setup.py imports the pure build modules through this package: no TensorFlow then, and no
# activation. The command line activates but defers TensorFlow to the commands that need it.
_SETUP = getattr(_builtins, "__TF_GE_CUSTOM_SETUP__", False)
_DEFER_TENSORFLOW = _SETUP or getattr(_builtins, "__TF_GE_CUSTOM_NO_TENSORFLOW__", False) \
    or _started_as_command()

if not _SETUP:
    from . import _environment

    # Before TensorFlow: anything that reads ASCEND_CUSTOM_OPP_PATH (TF Adapter, GE) must
    # find the OPP root in it from the start. Idempotent across imports and reloads.
    _environment.activate()


def _add_custom_without_tensorflow(error):
    def add_custom(x, y, name=None):
        raise OpLibraryError(
            "tf_ge_custom.add_custom needs TensorFlow, which cannot be imported here "
            "(%s). Install TensorFlow, then rebuild this package against it." % error)
    return add_custom


_TENSORFLOW_ERROR = []  # the ImportError of TensorFlow's one failed import, once tried


def _tensorflow_error():
    """Why TensorFlow cannot be imported (an ImportError), or None; one attempt per process,
    however many op functions ask."""
    if not _TENSORFLOW_ERROR:
        try:
            import tensorflow as _tf  # noqa: F401
        except ImportError as e:
            _TENSORFLOW_ERROR.append(e)
        else:
            _TENSORFLOW_ERROR.append(None)
    return _TENSORFLOW_ERROR[0]


def _import_add_custom():
    error = _tensorflow_error()
    if error is not None:
        return _add_custom_without_tensorflow(error)
    from .ops import add_custom as function

    return function


# the functions of the other ops of op_def.OPS (made in ops.py from their records)
_OTHER_FUNCTIONS = tuple(op.python_name for op in op_def.OPS if op.python_name != "add_custom")
__all__ += list(_OTHER_FUNCTIONS)


def _import_function(name):
    """The function ``name`` of an op beyond AddCustom (ops.py), or, without TensorFlow,
    one that says so as add_custom does."""
    error = _tensorflow_error()
    if error is not None:
        def function(*args, **kwargs):
            raise OpLibraryError(
                "tf_ge_custom.%s needs TensorFlow, which cannot be imported here (%s). "
                "Install TensorFlow, then rebuild this package against it." % (name, error))
        function.__name__ = name
        return function
    from . import ops

    return getattr(ops, name)


if not _DEFER_TENSORFLOW:
    add_custom = _import_add_custom()
    for _name in _OTHER_FUNCTIONS:
        globals()[_name] = _import_function(_name)
    if getattr(add_custom, "__module__", "") != __name__:  # TensorFlow is there
        # .keras / .h5 files holding the layer load after `import tf_ge_custom`; Keras
        # itself is not imported for it (_keras_hook.py)
        from . import _keras_hook

        _keras_hook.install()


def __getattr__(name):  # PEP 562 (Python 3.7+): import optional parts on first use
    if name == "add_custom" and not _SETUP:
        function = _import_add_custom()
        globals()["add_custom"] = function
        return function
    if name in _OTHER_FUNCTIONS and not _SETUP:
        function = _import_function(name)
        globals()[name] = function
        return function
    if name in ("layers", "npu"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
