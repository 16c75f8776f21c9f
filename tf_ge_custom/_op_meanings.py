"""What each op beyond ``AddCustom`` means, written by hand: the one part of its Python
function that its record (``op_def.py``) cannot say (``_op_function.OpMeaning``). Keyed by
the op's TF type; ``ops.py`` makes the function of every op of ``op_def.OPS`` from its record
and this entry. Adding an op: docs/adding-an-op.md.
"""
import tensorflow as tf

from ._op_function import OpMeaning


def _leaky_relu_custom_grad(op, dy):
    """tf.nn.leaky_relu's gradient (tensorflow/python/ops/nn_grad.py): LeakyReluGrad of the
    incoming gradient and the op's input, with the node's alpha."""
    return tf.raw_ops.LeakyReluGrad(gradients=dy, features=op.inputs[0],
                                    alpha=op.get_attr("alpha"))


MEANINGS = {
    "LeakyReluCustom": OpMeaning(
        summary="Return ``x`` where ``x > 0``, else ``x * alpha``, element-wise: "
                "``tf.nn.leaky_relu(x, alpha)`` bit for bit, computed by the "
                "``LeakyReluCustom`` op.",
        equivalent=lambda x, alpha, name=None: tf.nn.leaky_relu(x, alpha=alpha, name=name),
        gradient=_leaky_relu_custom_grad,
    ),
}
