"""Bad input gets a clear Python/TensorFlow error naming what was wrong; nothing crashes."""
import re

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import DTypeError, InputError, ShapeError

SUPPORTED = "float32, float16, bfloat16, int32"


@pytest.mark.parametrize("dtype", [tf.float64, tf.int64, tf.int8, tf.uint8, tf.bool,
                                   tf.complex64, tf.string])
def test_unsupported_dtype_names_the_supported_set(dtype):
    x = tf.zeros([2], dtype) if dtype != tf.string else tf.constant(["a", "b"])
    with pytest.raises(DTypeError) as info:
        tf_ge_custom.add_custom(x, x)
    assert dtype.name in str(info.value) and SUPPORTED in str(info.value)
    assert isinstance(info.value, TypeError)


def test_python_strings_are_refused_with_the_supported_set():
    with pytest.raises(DTypeError, match="string.*" + SUPPORTED):
        tf_ge_custom.add_custom("a", "b")


@pytest.mark.parametrize("x,y", [
    (tf.constant([1.0]), tf.constant([1], tf.int32)),
    (tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float32)),
    (tf.constant([1.0], tf.bfloat16), tf.constant([1.0], tf.float32)),
    (1, tf.constant([2.0])),  # as tf.math.add: x=1 is int32, y is float32
])
def test_mixed_dtypes_name_both(x, y):
    with pytest.raises(DTypeError) as info:
        tf_ge_custom.add_custom(x, y)
    msg = str(info.value)
    assert tf.convert_to_tensor(x).dtype.name in msg and tf.convert_to_tensor(y).dtype.name in msg
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        tf.math.add(x, y)  # the reference refuses them too


@pytest.mark.parametrize("bad", [None, object(), {"a": 1}, [1, [2, 3]]])
def test_unconvertible_arguments(bad):
    with pytest.raises(InputError) as info:
        tf_ge_custom.add_custom(bad, 1.0)
    assert "argument x" in str(info.value) and type(bad).__name__ in str(info.value)
    with pytest.raises(InputError, match="argument y"):
        tf_ge_custom.add_custom(tf.constant([1.0]), bad)


def test_incompatible_static_shapes_eager():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        tf_ge_custom.add_custom(tf.zeros([2, 3]), tf.zeros([4]))


def test_incompatible_static_shapes_in_graph_construction():
    with tf.Graph().as_default():
        with pytest.raises(ShapeError):
            tf_ge_custom.add_custom(tf.compat.v1.placeholder(tf.float32, [2, 3]),
                                    tf.compat.v1.placeholder(tf.float32, [None, 4]))


def test_incompatible_shapes_known_only_at_run_time():
    graph = tf.Graph()
    with graph.as_default():
        px = tf.compat.v1.placeholder(tf.float32, [None])
        z = tf_ge_custom.add_custom(px, px[:1] * 0 + tf.zeros([3]))
        with tf.compat.v1.Session(graph=graph) as sess:
            np.testing.assert_array_equal(sess.run(z, {px: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="[Ii]ncompatible shapes"):
                sess.run(z, {px: [1.0, 2.0]})


# The raw op (the official sample's calling pattern) broadcasts as tf.math.add does and
# refuses what tf.math.add refuses, naming both shapes.
@pytest.fixture(scope="module")
def raw():
    return tf.load_op_library(tf_ge_custom.library_path()).add_custom


def test_raw_op_refuses_incompatible_shapes_eagerly(raw):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        raw(tf.zeros([2, 3]), tf.zeros([4]))
    msg = str(info.value)
    assert "Incompatible shapes: [2,3] vs. [4]" in msg and "AddCustom" in msg
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.math.add(tf.zeros([2, 3]), tf.zeros([4]))  # the reference refuses them too


def test_raw_op_shape_function_refuses_incompatible_static_shapes(raw):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            raw(tf.compat.v1.placeholder(tf.float32, [2, 5]),
                tf.compat.v1.placeholder(tf.float32, [3]))
    assert re.search(r"AddCustom: x \[2,5\] and y \[3\] are not broadcast-compatible",
                     str(info.value)), str(info.value)


def test_raw_op_shape_function_resolves_unknown_dims_as_tf_add(raw):
    with tf.Graph().as_default():
        for xs, ys in [([None, 3], [2, None]), ([None, 1], [5]), ([1, None], [None, 1]),
                       (None, [3]), ([None], [])]:
            px = tf.compat.v1.placeholder(tf.float32, xs)
            py = tf.compat.v1.placeholder(tf.float32, ys)
            ours, ref = raw(px, py).shape, tf.math.add(px, py).shape
            assert (ours.rank, ours.rank and ours.as_list()) == (ref.rank, ref.rank and ref.as_list())


def test_raw_op_refuses_incompatible_run_time_shapes_in_a_session(raw):
    graph = tf.Graph()
    with graph.as_default():
        px = tf.compat.v1.placeholder(tf.float32, [None])
        py = tf.compat.v1.placeholder(tf.float32, [None])
        z = raw(px, py)
        with tf.compat.v1.Session(graph=graph) as sess:
            np.testing.assert_array_equal(sess.run(z, {px: [1.0, 2.0], py: [3.0]}), [4.0, 5.0])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Incompatible shapes: \[2\] vs. \[3\].*AddCustom"):
                sess.run(z, {px: [1.0, 2.0], py: [1.0, 2.0, 3.0]})


def test_a_broadcast_beyond_eight_merged_dimensions_is_refused_naming_both_shapes(raw):
    xs, ys = [2, 1] * 5, [1, 2] * 5  # nothing merges: 10 dimensions
    for fn in (raw, tf_ge_custom.add_custom):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            fn(tf.zeros(xs), tf.zeros(ys))
        msg = str(info.value)
        assert "[2,1,2,1,2,1,2,1,2,1]" in msg and "[1,2,1,2,1,2,1,2,1,2]" in msg
        assert "10 remain, more than the 8" in msg


@pytest.mark.parametrize("value", [
    tf.sparse.from_dense([[1.0, 0.0], [0.0, 2.0]]),
    tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]), tf.constant([2, 2])),
], ids=["SparseTensor", "IndexedSlices"])
def test_composite_tensors_other_than_ragged_are_an_input_error(value):
    for x, y, arg in [(value, 1.0, "x"), (tf.ones([2, 2]), value, "y")]:
        with pytest.raises(InputError) as info:
            tf_ge_custom.add_custom(x, y)
        msg = str(info.value)
        assert "argument %s is a %s" % (arg, type(value).__name__) in msg
        assert "RaggedTensors" in msg and "tf.sparse.to_dense" in msg


def test_a_variable_is_not_taken_for_a_composite_tensor():
    v = tf.Variable([1.0, 2.0])
    np.testing.assert_array_equal(tf_ge_custom.add_custom(v, [1.0, 1.0]).numpy(), [2.0, 3.0])


def test_the_process_survives_every_refusal_above():
    # after all those errors the op still computes correctly in this same process
    np.testing.assert_array_equal(tf_ge_custom.add_custom([1, 2], [3, 4]).numpy(), [4, 6])
