"""``add_custom``: the Python face of the ``AddCustom`` op, and its gradient.

The ``AddCustom`` node only ever sees two tensors of equal shape (the NPU kernel is flat),
so this wrapper converts and broadcasts its arguments exactly as ``tf.math.add`` would
before the node. When the shapes are statically equal, the graph holds the one
``AddCustom`` node and nothing else.
"""
import warnings

import tensorflow as tf

from . import _library
from .errors import DTypeError, InputError, OpLibraryError, ShapeError
from .op_def import ADD_CUSTOM

_SUPPORTED = frozenset(tf.as_dtype(name) for name in ADD_CUSTOM.dtypes)
_SUPPORTED_NAMES = ", ".join(ADD_CUSTOM.dtypes)
try:  # the concrete class of eager tensors, for the per-call fast path (TF 1.15 and 2.x)
    from tensorflow.python.framework.ops import EagerTensor as _EagerTensor
except ImportError:  # pragma: no cover - a TensorFlow without it just skips the fast path
    _EagerTensor = None

try:
    _raw_add_custom = getattr(_library.load(), ADD_CUSTOM.python_name)
    _load_error = None
except OpLibraryError as e:  # keep the package importable (doctor must run); warn once
    _raw_add_custom = None
    _load_error = e
    warnings.warn(str(e), RuntimeWarning, stacklevel=2)


def _convert(value, arg, dtype_hint=None):
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


def _broadcast_shape(x, y):
    try:
        return tf.broadcast_static_shape(x.shape, y.shape)
    except ValueError:
        raise ShapeError(
            "add_custom: shapes %s and %s are not broadcast-compatible (each dimension "
            "must be equal, or 1 in one of them)" % (x.shape, y.shape))


def _needs_broadcast(t, target):
    return not (t.shape.is_fully_defined() and t.shape == target)


def _broadcast(x, y):
    """Broadcast x and y to one shape in front of the node; returns (x, y, static shape)."""
    target = _broadcast_shape(x, y)
    if target.is_fully_defined():
        if _needs_broadcast(x, target):
            x = tf.broadcast_to(x, target.as_list())
        if _needs_broadcast(y, target):
            y = tf.broadcast_to(y, target.as_list())
    else:
        shape = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
        x = tf.broadcast_to(x, shape)
        y = tf.broadcast_to(y, shape)
    return x, y, target


def add_custom(x, y, name=None):
    """Return ``x + y`` element-wise, computed by the ``AddCustom`` op.

    Behaves as ``tf.math.add``: arguments may be tensors, numpy arrays, Python scalars or
    lists (``y`` is converted with ``x``'s dtype as a hint), and broadcast-compatible shapes
    are broadcast. Supported dtypes: float32, float16, bfloat16, int32.

    Raises:
      DTypeError: the dtypes differ or are not supported (a ``TypeError``).
      ShapeError: the shapes are statically not broadcast-compatible (a ``ValueError``).
      InputError: an argument cannot be converted to a tensor (a ``TypeError``).
      OpLibraryError: the op library could not be loaded (an ``ImportError``).
    """
    if _raw_add_custom is None:
        raise _load_error
    # Fast path, eager only: two tensors that need no conversion, check or broadcast go
    # straight to the op (names are meaningless in eager mode, so no name scope either).
    if type(x) is _EagerTensor and type(y) is _EagerTensor:
        dtype = x.dtype
        if dtype == y.dtype and dtype in _SUPPORTED and x.shape == y.shape:
            return _raw_add_custom(x, y)
    with tf.compat.v1.name_scope(name, ADD_CUSTOM.type_name, [x, y]) as scope:
        x = _convert(x, "x")
        y = _convert(y, "y", dtype_hint=x.dtype.base_dtype)
        _check_dtypes(x, y)
        if x.shape.is_fully_defined() and x.shape == y.shape:
            return _raw_add_custom(x, y, name=scope)
        x, y, target = _broadcast(x, y)
        z = _raw_add_custom(x, y, name=scope)
        if not tf.executing_eagerly():
            z.set_shape(target)
        return z


def _register_gradient():
    # The node's inputs always have the output's shape, so each receives the incoming
    # gradient unchanged; broadcast_to in front of it reduces the gradient where needed.
    def _add_custom_grad(op, grad):
        return [grad, grad]

    try:
        tf.RegisterGradient(ADD_CUSTOM.type_name)(_add_custom_grad)
    except KeyError:  # registered already (module reloaded)
        pass


_register_gradient()
