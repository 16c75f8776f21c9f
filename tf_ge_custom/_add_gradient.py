"""The gradient of an op that adds its two inputs with broadcasting (``AddCustom``):
``tf.math.add``'s (``AddV2``'s in ``tensorflow/python/ops/math_grad.py``), the incoming
gradient summed over each input's broadcast dimensions and reshaped to that input's shape.
``_op_meanings.MEANINGS`` names it as ``AddCustom``'s gradient."""
import tensorflow as tf


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


def add_gradient(op, grad):
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

