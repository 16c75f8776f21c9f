"""What add_custom puts into a graph: exactly one AddCustom node for every pair of operands,
static or dynamic, equal or broadcasting (the op broadcasts by itself), and nothing else
besides the constants that Python values become."""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom


def _ops(graph):
    return [n.op for n in graph.as_graph_def().node]


# (x shape, y shape) of placeholders; None is an unknown dimension, "?" an unknown rank
SHAPE_PAIRS = [
    ([8, 2048], [8, 2048]),
    ([2, 1], [3]),
    ([8192, 1024], [1024]),
    ([4096, 1], [1, 4096]),
    ([4, 16, 7, 7], [1, 16, 1, 1]),
    ([], [5, 5]),
    ([None, 3], [3]),
    ([None, None], [None]),
    ([None, 1], [1, None]),
    ("?", [3]),
    ("?", "?"),
]


def _placeholder(shape, name):
    return tf.compat.v1.placeholder(tf.float32, None if shape == "?" else shape, name=name)


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS, ids=[str(p) for p in SHAPE_PAIRS])
def test_tf1_graph_holds_one_addcustom_node_and_nothing_else(xs, ys):
    graph = tf.Graph()
    with graph.as_default():
        x, y = _placeholder(xs, "x"), _placeholder(ys, "y")
        z = tf_ge_custom.add_custom(x, y)
        ref = tf.math.add(x, y)
    ops = _ops(graph)
    assert ops == ["Placeholder", "Placeholder", "AddCustom", "AddV2"]
    assert z.op.type == "AddCustom" and list(z.op.inputs) == [x, y]
    assert z.shape.rank == ref.shape.rank
    if z.shape.rank is not None:
        assert z.shape.as_list() == ref.shape.as_list()


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS, ids=[str(p) for p in SHAPE_PAIRS])
def test_tf_function_graph_holds_one_addcustom_node(xs, ys):
    def spec(s):
        return tf.TensorSpec(None if s == "?" else s, tf.float32)

    f = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b)).get_concrete_function(
        spec(xs), spec(ys))
    ops = _ops(f.graph)
    assert ops.count("AddCustom") == 1
    assert set(ops) == {"Placeholder", "AddCustom", "Identity"}


def test_the_name_argument_names_the_node():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float16, [3])
        z = tf_ge_custom.add_custom(x, tf.compat.v1.placeholder(tf.float16, [2, 1]), name="my_add")
    assert z.op.name == "my_add" and z.op.type == "AddCustom"


def test_python_scalar_operand_is_a_constant_in_the_scope():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, [4])
        z = tf_ge_custom.add_custom(x, 1)
        with tf.compat.v1.Session(graph=graph) as sess:
            np.testing.assert_array_equal(sess.run(z, {x: [1, 2, 3, 4]}), [2, 3, 4, 5])
    assert _ops(graph) == ["Placeholder", "Const", "AddCustom"]
    assert any(n.name.startswith("AddCustom/") and n.op == "Const" for n in graph.as_graph_def().node)


def test_rank_zero_and_zero_elements(assert_same):
    for x, y in [(tf.constant(2.5), tf.constant(-1.0)),
                 (tf.zeros([0, 3], tf.bfloat16), tf.zeros([0, 3], tf.bfloat16)),
                 (tf.zeros([0], tf.int32), tf.constant(5)),
                 (tf.zeros([2, 0, 4], tf.float16), tf.zeros([1, 4], tf.float16))]:
        assert_same(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))
