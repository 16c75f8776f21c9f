"""The Python function of every op of ``op_def.OPS`` (``add_custom``, ``leaky_relu_custom``),
made from its record (``_op_function.py``) and its meaning (``_op_meanings.py``), under its
Python name in this module (and so in ``tf_ge_custom``).

``AddCustom`` broadcasts by itself with ``tf.math.add``'s rules (its shape function is
TensorFlow's own, its CPU kernel TensorFlow's binary-op machinery), so its function only
converts and checks its arguments as ``tf.math.add`` would: the graph holds exactly one
``AddCustom`` node for every pair of operands, whatever their shapes. ``RaggedTensor``
operands go through their flat values; under XLA the op has an XLA kernel, or lowers to
``tf.math.add`` where it cannot have one (``_xla.py``). See docs/tensorflow-op.md.
"""
import warnings

from . import _library, _op_function, _op_meanings, _vectorize, _xla
from .errors import OpLibraryError
from .op_def import OPS

try:
    _library_module = _library.load()
    _load_error = None
except OpLibraryError as e:  # keep the package importable (doctor must run); warn once
    _library_module = None
    _load_error = e
    warnings.warn(str(e), RuntimeWarning, stacklevel=2)
else:
    _xla.load_kernels()
    _vectorize.register()


def _make_functions():
    """The function of each op of OPS, made from its record, under its Python name here."""
    made = []
    for op in OPS:
        raw = getattr(_library_module, op.python_name, None) if _library_module else None
        globals()[op.python_name] = _op_function.make_function(
            op, raw, _op_meanings.meaning_of(op), _load_error)
        made.append(op.python_name)
    return made


FUNCTIONS = _make_functions()
