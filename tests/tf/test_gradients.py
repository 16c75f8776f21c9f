"""Gradients through add_custom equal those through tf.math.add, broadcasting included.

AddCustom broadcasts by itself, so its gradient must sum the incoming gradient over each
operand's broadcast dimensions, as AddV2's does; with static shapes it must build the same
graph as AddV2's (the static shortcuts), with unknown dims the same run-time reduction.
"""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom

SHAPE_PAIRS = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((), (2, 2)),
    ((4, 1, 5), (3, 1)),
    ((0, 3), (1, 3)),
    ((4, 1, 3, 1), (1, 5, 1, 2)),
    ((2, 3, 4), ()),
    ((1, 1), (3,)),
]


def _values(shape, seed):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def _tape_grads(fn, x, y):
    xv, yv = tf.Variable(x), tf.Variable(y)
    with tf.GradientTape() as tape:
        z = fn(xv, yv)
        # a non-uniform upstream gradient, so a wrong reduction cannot pass by symmetry
        loss = tf.reduce_sum(z * tf.reshape(tf.range(tf.size(z), dtype=z.dtype), tf.shape(z)))
    return tape.gradient(loss, [xv, yv])


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS)
def test_gradient_tape_eager(xs, ys):
    x, y = _values(xs, 1), _values(ys, 2)
    got = _tape_grads(tf_ge_custom.add_custom, x, y)
    want = _tape_grads(tf.math.add, x, y)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS)
def test_gradient_tape_in_tf_function_with_none_dims(xs, ys):
    x, y = _values(xs, 3), _values(ys, 4)
    sig = [tf.TensorSpec([None] * len(xs)), tf.TensorSpec([None] * len(ys))]

    def grads_of(fn):
        @tf.function(input_signature=sig)
        def g(a, b):
            with tf.GradientTape() as tape:
                tape.watch([a, b])
                z = fn(a, b)
                loss = tf.reduce_sum(z * z)
            return tape.gradient(loss, [a, b])
        return g(x, y)

    for g, w in zip(grads_of(tf_ge_custom.add_custom), grads_of(tf.math.add)):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS)
def test_tf1_gradients(xs, ys):
    x, y = _values(xs, 5), _values(ys, 6)
    graph = tf.Graph()
    with graph.as_default():
        px = tf.compat.v1.placeholder(tf.float32, [None] * len(xs))
        py = tf.compat.v1.placeholder(tf.float32, ys)  # one static shape, one dynamic
        ours = tf.compat.v1.gradients(tf.reduce_sum(tf.sin(tf_ge_custom.add_custom(px, py))), [px, py])
        ref = tf.compat.v1.gradients(tf.reduce_sum(tf.sin(tf.math.add(px, py))), [px, py])
        with tf.compat.v1.Session(graph=graph) as sess:
            got, want = sess.run([ours, ref], {px: x, py: y})
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_second_order_gradient():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            z = tf_ge_custom.add_custom(x * x, x)
        g = inner.gradient(z, x)  # 2x + 1
    np.testing.assert_array_equal(g.numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(outer.gradient(g, x).numpy(), [2.0, 2.0])


def _gradient_op_types(fn, xs, ys):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, xs)
        y = tf.compat.v1.placeholder(tf.float32, ys)
        z = fn(x, y)
        upstream = tf.compat.v1.placeholder(tf.float32, z.shape)
        before = set(graph.get_operations())
        tf.compat.v1.gradients(z, [x, y], grad_ys=upstream)
        return sorted(op.type for op in graph.get_operations() if op not in before)


@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS + [
    ((None, 3), (3,)), ((None, None), (None,)), ((None, 1), (1, None)), (None, (3,)), (None, None),
], ids=str)
def test_the_gradient_graph_is_the_one_tf_add_builds(xs, ys):
    # same ops: the static shortcuts (no reduction for equal shapes, constant axes) where the
    # shapes decide, BroadcastGradientArgs at run time where they do not
    assert _gradient_op_types(tf_ge_custom.add_custom, xs, ys) == \
        _gradient_op_types(tf.math.add, xs, ys)


def test_tf1_gradients_with_unknown_rank():
    x, y = _values((2, 1, 3), 7), _values((4, 1), 8)
    graph = tf.Graph()
    with graph.as_default():
        px = tf.compat.v1.placeholder(tf.float32, None)
        py = tf.compat.v1.placeholder(tf.float32, None)
        ours = tf.compat.v1.gradients(tf.reduce_sum(tf_ge_custom.add_custom(px, py) ** 2), [px, py])
        ref = tf.compat.v1.gradients(tf.reduce_sum(tf.math.add(px, py) ** 2), [px, py])
        with tf.compat.v1.Session(graph=graph) as sess:
            got, want = sess.run([ours, ref], {px: x, py: y})
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("watched", ["x", "y"])
def test_a_tape_watching_one_operand_gets_its_reduced_gradient(watched):
    x, y = tf.constant(_values((3, 4), 9)), tf.constant(_values((4,), 10))

    def grad(fn):
        with tf.GradientTape() as tape:
            tape.watch(x if watched == "x" else y)
            loss = tf.reduce_sum(fn(x, y) ** 2)
        return tape.gradient(loss, x if watched == "x" else y)

    got, want = grad(tf_ge_custom.add_custom), grad(tf.math.add)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_second_order_gradient_through_a_broadcast():
    def hessian_diag(fn):
        x = tf.Variable(_values((3, 1), 11))
        y = tf.Variable(_values((4,), 12))
        with tf.GradientTape(persistent=True) as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_sum(fn(x * x, y) ** 2)
            gx, gy = inner.gradient(loss, [x, y])
            s = tf.reduce_sum(gx) + tf.reduce_sum(gy)
        return [t.numpy() for t in [gx, gy] + outer.gradient(s, [x, y])]

    for g, w in zip(hessian_diag(tf_ge_custom.add_custom), hessian_diag(tf.math.add)):
        np.testing.assert_allclose(g, w, rtol=1e-6)
