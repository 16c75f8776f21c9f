"""The official sample's pattern works unchanged: tf.load_op_library(path).add_custom(x, y)."""
import os

import numpy as np
import tensorflow as tf

import tf_ge_custom


def test_library_path_points_at_the_installed_op_library():
    path = tf_ge_custom.library_path()
    assert os.path.isabs(path) and os.path.isfile(path)
    # inside the package, and never under the OPP root's framework/ (GE dlopens everything there)
    package_dir = os.path.dirname(tf_ge_custom.__file__)
    assert path.startswith(package_dir + os.sep)
    assert os.sep + "framework" + os.sep not in os.path.relpath(path, package_dir)


def test_load_op_library_pattern_computes_the_sum():
    lib = tf.load_op_library(tf_ge_custom.library_path())
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.full((3, 4), 0.5, np.float32)
    np.testing.assert_array_equal(lib.add_custom(x, y).numpy(), x + y)


def test_sample_pattern_in_a_tf1_session():
    graph = tf.Graph()
    with graph.as_default():
        lib = tf.load_op_library(tf_ge_custom.library_path())
        x = tf.constant([1.0, 2.0])
        z = lib.add_custom(x, x)
        with tf.compat.v1.Session(graph=graph) as sess:
            np.testing.assert_array_equal(sess.run(z), [2.0, 4.0])
