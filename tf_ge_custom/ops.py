"""``add_custom``: the Python face of the ``AddCustom`` op, and its gradient; and the
function of every other op of ``op_def.OPS``, made from its record (``_op_function.py``) and
its meaning (``_op_meanings.py``): ``leaky_relu_custom``.

``AddCustom`` broadcasts by itself with ``tf.math.add``'s rules (its shape function is
TensorFlow's own, its CPU kernel TensorFlow's binary-op machinery), so this wrapper only
converts and checks its arguments as ``tf.math.add`` would: the graph holds exactly one
``AddCustom`` node for every pair of operands, whatever their shapes. ``RaggedTensor``
operands go through their flat values; under XLA the op has an XLA kernel, or lowers to
``tf.math.add`` where it cannot have one (``_xla.py``). See docs/tensorflow-op.md.
"""
import warnings

import tensorflow as tf

from . import _library, _vectorize, _xla
from .errors import DTypeError, InputError, OpLibraryError, ShapeError
from .op_def import ADD_CUSTOM

_SUPPORTED = frozenset(tf.as_dtype(name) for name in ADD_CUSTOM.dtypes)
_SUPPORTED_NAMES = ", ".join(ADD_CUSTOM.dtypes)
# The eager tensors' class (the per-call fast path) and the composite tensors' (refused),
# found once for every op function.
from . import _op_function  # noqa: E402
from ._op_function import _Composite, _EagerTensor  # noqa: E402

try:
    _raw_add_custom = getattr(_library.load(), ADD_CUSTOM.python_name)
    _load_error = None
except OpLibraryError as e:  # keep the package importable (doctor must run); warn once
    _raw_add_custom = None
    _load_error = e
    warnings.warn(str(e), RuntimeWarning, stacklevel=2)
else:
    _xla.load_kernels()
    _vectorize.register()


def _check_not_composite(value, arg):
    # RaggedTensors are handled before this; variables are composite in TF 2.x but convert.
    if isinstance(value, _Composite) and not isinstance(value, tf.Variable):
        raise InputError(
            "add_custom: argument %s is a %s; add_custom takes tensors, numpy arrays, Python "
            "scalars and lists (and RaggedTensors, through their flat values). Convert it "
            "to a dense tensor first (a SparseTensor: tf.sparse.to_dense; an IndexedSlices: "
            "tf.convert_to_tensor), or use the op made for it (tf.sparse.add)."
            % (arg, type(value).__name__))


def _convert(value, arg, dtype_hint=None):
    _check_not_composite(value, arg)
    try:
        return tf.convert_to_tensor(value, dtype_hint=dtype_hint, name=arg)
    except (TypeError, ValueError) as e:
        raise InputError(
            "add_custom: argument %s (a %s) cannot be converted to a tensor: %s. "
            "add_custom accepts tensors, numpy arrays, Python scalars and lists whose "
            "dtype is one of: %s" % (arg, type(value).__name__, e, _SUPPORTED_NAMES))


def _check_dtypes(x, y):
    xd, yd = x.dtype.base_dtype, y.dtype.base_dtype
    if xd != yd:
        raise DTypeError(
            "add_custom: x is %s but y is %s; both must have the same dtype, one of: %s "
            "(cast one with tf.cast)" % (xd.name, yd.name, _SUPPORTED_NAMES))
    if xd not in _SUPPORTED:
        raise DTypeError(
            "add_custom: dtype %s is not supported; supported dtypes: %s"
            % (xd.name, _SUPPORTED_NAMES))


def _check_shapes(x, y):
    """ShapeError when the static shapes cannot broadcast (the op would refuse them too)."""
    try:
        tf.broadcast_static_shape(x.shape, y.shape)
    except ValueError:
        raise ShapeError(
            "add_custom: shapes %s and %s are not broadcast-compatible (each dimension "
            "must be equal, or 1 in one of them)" % (x.shape, y.shape))


def _node(x, y, name):
    """The AddCustom node, or tf.math.add inside an XLA cluster that has no kernel for it."""
    if _xla.must_lower():
        return tf.math.add(x, y, name=name)
    return _raw_add_custom(x, y, name=name)


def add_custom(x, y, name=None):
    """Return ``x + y`` element-wise, computed by the ``AddCustom`` op.

    Behaves as ``tf.math.add``: arguments may be tensors, numpy arrays, Python scalars or
    lists (``y`` is converted with ``x``'s dtype as a hint), and broadcast-compatible shapes
    are broadcast by the op itself. ``RaggedTensor`` operands with the same row partitions,
    or one ``RaggedTensor`` and a dense operand that broadcasts over its uniform inner
    dimensions (a scalar, a ``[D]`` bias), are added through their flat values.
    Supported dtypes: float32, float16, bfloat16, int32.

    Raises:
      DTypeError: the dtypes differ or are not supported (a ``TypeError``).
      ShapeError: the shapes are statically not broadcast-compatible (a ``ValueError``).
      InputError: an argument cannot be converted to a tensor, or is a composite tensor
        other than a ``RaggedTensor`` (a ``TypeError``).
      OpLibraryError: the op library could not be loaded (an ``ImportError``).
    """
    if _raw_add_custom is None:
        raise _load_error
    # Fast path, eager only: two tensors that need no conversion go straight to the op
    # (names are meaningless in eager mode, so no name scope either).
    if type(x) is _EagerTensor and type(y) is _EagerTensor:
        dtype = x.dtype
        if dtype == y.dtype and dtype in _SUPPORTED:
            try:
                return _raw_add_custom(x, y)
            except tf.errors.InvalidArgumentError:
                _check_shapes(x, y)  # the usual cause: name both shapes as a ShapeError
                raise
    if isinstance(x, tf.RaggedTensor) or isinstance(y, tf.RaggedTensor):
        return _add_ragged(x, y, name)
    with tf.compat.v1.name_scope(name, ADD_CUSTOM.type_name, [x, y]) as scope:
        x = _convert(x, "x")
        y = _convert(y, "y", dtype_hint=x.dtype.base_dtype)
        _check_dtypes(x, y)
        _check_shapes(x, y)
        return _node(x, y, scope)


def _add_ragged(x, y, name):
    """add_custom over the flat values of RaggedTensor operands (as tf.math.add's result)."""
    with tf.compat.v1.name_scope(name, ADD_CUSTOM.type_name, [x, y]):
        ragged = x if isinstance(x, tf.RaggedTensor) else y
        if not isinstance(x, tf.RaggedTensor):
            x = _convert(x, "x", dtype_hint=ragged.dtype)
        if not isinstance(y, tf.RaggedTensor):
            y = _convert(y, "y", dtype_hint=ragged.dtype)
        _check_dtypes(x, y)
        if isinstance(x, tf.RaggedTensor) and isinstance(y, tf.RaggedTensor):
            try:  # checks that both have the same row partitions (at run time if need be)
                return tf.ragged.map_flat_values(add_custom, x, y)
            except ValueError as e:
                raise ShapeError(
                    "add_custom: RaggedTensor operands need the same row partitions (and "
                    "ragged rank, and row_splits dtype); got shapes %s and %s, ragged ranks "
                    "%d and %d: %s" % (x.shape, y.shape, x.ragged_rank, y.ragged_rank, e))
        dense = y if ragged is x else x
        inner = ragged.flat_values.shape.rank - 1  # the uniform dimensions after the ragged ones
        if dense.shape.rank is None or dense.shape.rank > inner:
            raise ShapeError(
                "add_custom: a dense operand added to a RaggedTensor may broadcast over its "
                "uniform inner dimensions only (rank <= %d here), got shape %s for a "
                "RaggedTensor of shape %s. Use tf.math.add to broadcast across ragged or "
                "batch dimensions." % (inner, dense.shape, ragged.shape))
        if ragged is x:
            return x.with_flat_values(add_custom(x.flat_values, y))
        return y.with_flat_values(add_custom(x, y.flat_values))


def _broadcast_gradient_args(x, y):
    """Shapes, reduction axes and whether to reduce, per operand, as tf.math.add's gradient
    finds them (tensorflow/python/ops/math_grad.py, SmartBroadcastGradientArgs): the axes
    from the static shapes when they decide, BroadcastGradientArgs at run time otherwise."""
    x_shape, y_shape = tf.shape(x), tf.shape(y)
    x_axes = y_axes = None
    if not tf.executing_eagerly() and x.shape.rank is not None and y.shape.rank is not None:
        x_axes, y_axes = _static_reduction_axes(x.shape.as_list(), y.shape.as_list())
    if x_axes is None:
        x_axes, y_axes = tf.raw_ops.BroadcastGradientArgs(s0=x_shape, s1=y_shape)
        return (x_shape, x_axes, True), (y_shape, y_axes, True)
    x_rank, y_rank = x.shape.rank, y.shape.rank
    return ((x_shape, x_axes, bool(x_axes) or x_rank < y_rank),
            (y_shape, y_axes, bool(y_axes) or y_rank < x_rank))


def _static_reduction_axes(xs, ys):
    """The broadcast axes of x and y, or (None, None) when an unknown dim leaves it open."""
    rank = max(len(xs), len(ys))
    xs = [1] * (rank - len(xs)) + xs
    ys = [1] * (rank - len(ys)) + ys
    x_axes, y_axes = [], []
    for axis, (xd, yd) in enumerate(zip(xs, ys)):
        if xd == 1 and yd != 1:
            x_axes.append(axis)
        elif yd == 1 and xd != 1:
            y_axes.append(axis)
        elif xd is None or yd is None:
            return None, None
    return x_axes, y_axes


def _reduce(grad, shape_axes_must_reduce):
    shape, axes, must_reduce = shape_axes_must_reduce
    if grad is None or not must_reduce:
        return grad
    return tf.reshape(tf.reduce_sum(grad, axes, keepdims=True), shape)


def _fully_defined_and_equal(*shapes):
    return all(s.is_fully_defined() for s in shapes) and all(
        s.as_list() == shapes[0].as_list() for s in shapes)


def _add_custom_grad(op, grad):
    """tf.math.add's gradient (AddV2's in math_grad.py): the incoming gradient, summed over
    each operand's broadcast dimensions and reshaped to that operand's shape."""
    x, y = op.inputs
    skip = getattr(op, "skip_input_indices", None) or ()  # set by the eager tape
    if 1 in skip and y.shape.rank == 0 and y.shape.is_fully_defined():
        return grad, None
    if isinstance(grad, tf.Tensor) and _fully_defined_and_equal(x.shape, y.shape, grad.shape):
        return grad, grad
    gx = None if 0 in skip else grad
    gy = None if 1 in skip else grad
    if gx is None and gy is None:
        return None, None
    bx, by = _broadcast_gradient_args(x, y)
    return _reduce(gx, bx), _reduce(gy, by)


def _register_gradient():
    try:
        tf.RegisterGradient(ADD_CUSTOM.type_name)(_add_custom_grad)
    except KeyError:  # registered already (module reloaded)
        pass


_register_gradient()


def _make_other_functions():
    """The function of each op of OPS beyond AddCustom, made from its record, under its
    Python name in this module (and so in tf_ge_custom)."""
    from . import _op_function, _op_meanings
    from .op_def import OPS

    library = _library.load() if _load_error is None else None
    made = []
    for op in OPS:
        if op is ADD_CUSTOM:
            continue
        raw = getattr(library, op.python_name, None) if library is not None else None
        globals()[op.python_name] = _op_function.make_function(
            op, raw, _op_meanings.meaning_of(op), _load_error)
        made.append(op.python_name)
    return made


# AutoGraph calls add_custom as it is, as it calls every op function (_op_function.py).
add_custom = _op_function.as_op_function(add_custom)  # noqa: F811 (the same function, marked)
FUNCTIONS = [ADD_CUSTOM.python_name] + _make_other_functions()
