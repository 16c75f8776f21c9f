"""Gradients through add_custom equal those through tf.math.add, broadcasting included."""
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
