"""What add_custom puts into a graph: one AddCustom node when shapes are statically equal,
broadcasting in front of the node otherwise (the node itself never sees unequal shapes)."""
import numpy as np
import tensorflow as tf

import tf_ge_custom


def _ops(graph):
    return [n.op for n in graph.as_graph_def().node]


def test_equal_static_shapes_give_a_single_node_and_nothing_else():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [8, 2048], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [8, 2048], name="y")
        z = tf_ge_custom.add_custom(x, y)
    assert _ops(graph) == ["Placeholder", "Placeholder", "AddCustom"]
    assert z.op.name == "AddCustom" and z.shape.as_list() == [8, 2048]


def test_the_name_argument_names_the_node():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float16, [3])
        z = tf_ge_custom.add_custom(x, x, name="my_add")
    assert z.op.name == "my_add" and z.op.type == "AddCustom"


def test_tf_function_with_static_equal_shapes_holds_one_addcustom():
    f = tf.function(tf_ge_custom.add_custom).get_concrete_function(
        tf.TensorSpec([4, 5]), tf.TensorSpec([4, 5]))
    ops = _ops(f.graph)
    assert ops.count("AddCustom") == 1
    assert set(ops) <= {"Placeholder", "AddCustom", "Identity"}


def test_broadcasting_happens_before_the_node_which_sees_equal_shapes():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 1])
        y = tf.compat.v1.placeholder(tf.float32, [3])
        z = tf_ge_custom.add_custom(x, y)
    (node,) = [op for op in graph.get_operations() if op.type == "AddCustom"]
    assert [t.shape.as_list() for t in node.inputs] == [[2, 3], [2, 3]]
    assert z.shape.as_list() == [2, 3]
    assert _ops(graph).count("BroadcastTo") == 2


def test_python_scalar_operand_is_a_constant_in_the_scope():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, [4])
        z = tf_ge_custom.add_custom(x, 1)
        with tf.compat.v1.Session(graph=graph) as sess:
            np.testing.assert_array_equal(sess.run(z, {x: [1, 2, 3, 4]}), [2, 3, 4, 5])
    assert any(n.name.startswith("AddCustom/") and n.op == "Const" for n in graph.as_graph_def().node)


def test_rank_zero_and_zero_elements(assert_same):
    for x, y in [(tf.constant(2.5), tf.constant(-1.0)),
                 (tf.zeros([0, 3], tf.bfloat16), tf.zeros([0, 3], tf.bfloat16)),
                 (tf.zeros([0], tf.int32), tf.constant(5)),
                 (tf.zeros([2, 0, 4], tf.float16), tf.zeros([1, 4], tf.float16))]:
        assert_same(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))
