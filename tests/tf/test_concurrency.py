"""Many threads share the op: eager calls and one TF1 session."""
import threading

import numpy as np
import tensorflow as tf

import tf_ge_custom

THREADS = 8


def _run_threads(target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # collected and re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_8_threads_x_200_eager_calls():
    dtypes = [tf.float32, tf.float16, tf.bfloat16, tf.int32]

    def work(i):
        rng = np.random.RandomState(i)
        dtype = dtypes[i % len(dtypes)]
        for k in range(200):
            shape = (rng.randint(0, 40), rng.randint(1, 6))
            x = tf.cast(rng.randint(-100, 100, shape), dtype)
            y = tf.cast(rng.randint(-100, 100, shape[1:]), dtype)  # broadcast too
            got = tf_ge_custom.add_custom(x, y)
            np.testing.assert_array_equal(got.numpy().astype(np.float64),
                                          tf.math.add(x, y).numpy().astype(np.float64))

    _run_threads(work)


def test_8_threads_share_one_tf1_session():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 16])
        y = tf.compat.v1.placeholder(tf.float32, [16])
        z = tf_ge_custom.add_custom(x, y)
    sess = tf.compat.v1.Session(graph=graph)

    def work(i):
        rng = np.random.RandomState(100 + i)
        for _ in range(100):
            xv = rng.standard_normal((rng.randint(1, 64), 16)).astype(np.float32)
            yv = rng.standard_normal(16).astype(np.float32)
            np.testing.assert_array_equal(sess.run(z, {x: xv, y: yv}), xv + yv)

    try:
        _run_threads(work)
    finally:
        sess.close()
