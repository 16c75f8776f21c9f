"""What each op means (``_op_function.OpMeaning``): the TensorFlow computation with its
result and its gradient. :func:`meaning_of` derives it from the record's
``equivalent`` (the TensorFlow function the op equals, by name: its gradient is that
function's, taken with a ``tf.GradientTape``), unless :data:`MEANINGS` writes it by hand,
keyed by the op's TF type (``AddCustom``'s gradient is ``tf.math.add``'s, summing over the
broadcast dimensions; ``LeakyReluCustom``'s is ``LeakyReluGrad`` straight, without the tape's
forward computation). ``ops.py`` makes the function of every op of ``op_def.OPS`` from
its record and its meaning. Adding an op: docs/adding-an-op.md.
"""
import tensorflow as tf

from ._add_gradient import add_gradient
from ._op_function import OpMeaning
from .errors import OpLibraryError


def _leaky_relu_custom_grad(op, dy):
    """tf.nn.leaky_relu's gradient (tensorflow/python/ops/nn_grad.py): LeakyReluGrad of the
    incoming gradient and the op's input, with the node's alpha."""
    return tf.raw_ops.LeakyReluGrad(gradients=dy, features=op.inputs[0],
                                    alpha=op.get_attr("alpha"))


MEANINGS = {
    "AddCustom": OpMeaning(
        summary="Return ``x + y`` element-wise, broadcasting as ``tf.math.add`` does: "
                "``tf.math.add(x, y)`` bit for bit, computed by the ``AddCustom`` op.",
        equivalent=lambda x, y, name=None: tf.math.add(x, y, name=name),
        gradient=add_gradient,
    ),
    "LeakyReluCustom": OpMeaning(
        summary="Return ``x`` where ``x > 0``, else ``x * alpha``, element-wise: "
                "``tf.nn.leaky_relu(x, alpha)`` bit for bit, computed by the "
                "``LeakyReluCustom`` op.",
        equivalent=lambda x, alpha, name=None: tf.nn.leaky_relu(x, alpha=alpha, name=name),
        gradient=_leaky_relu_custom_grad,
    ),
}


def tensorflow_function(name):
    """The TensorFlow function of the public name ``name`` ("tf.math.square"), or an
    :class:`OpLibraryError` naming what is not there."""
    parts = name.split(".")
    if parts[0] != "tf" or len(parts) < 2:
        raise OpLibraryError("the op record's equivalent %r is not a TensorFlow function's public "
                             "name (tf.<module>.<function>, e.g. tf.math.square)" % name)
    found = tf
    for i, part in enumerate(parts[1:], 1):
        found = getattr(found, part, None)
        if found is None:
            raise OpLibraryError("the op record's equivalent %s is not in TensorFlow %s (no %s)"
                                 % (name, tf.__version__, ".".join(parts[:i + 1])))
    if not callable(found):
        raise OpLibraryError("the op record's equivalent %s is not a function" % name)
    return found


def _derived_gradient(record, function):
    """The gradient of ``record``'s op: ``function``'s, of the node's inputs and attributes."""
    def gradient(op, *output_gradients):
        inputs = list(op.inputs)
        attrs = dict((a.name, op.get_attr(a.name)) for a in record.attrs)
        with tf.GradientTape() as tape:
            for x in inputs:
                tape.watch(x)
            y = function(*inputs, **attrs)
        return tape.gradient(y, inputs, output_gradients=output_gradients[0])
    return gradient


def meaning_of(record):
    """The meaning of the op ``record`` (an ``op_def.OpDefinition``): its entry in
    :data:`MEANINGS`, else the one its ``equivalent`` implies, else none (no equivalent, no
    gradient)."""
    if record.type_name in MEANINGS:
        return MEANINGS[record.type_name]
    if not record.equivalent:
        return OpMeaning(summary="Computed by the ``%s`` op, element-wise." % record.type_name,
                         equivalent=None, gradient=None)
    function = tensorflow_function(record.equivalent)
    return OpMeaning(
        summary="``%s`` of the inputs, element-wise, computed by the ``%s`` op."
                % (record.equivalent, record.type_name),
        equivalent=lambda *inputs, **attrs: function(*inputs, **attrs),
        gradient=_derived_gradient(record, function))
