"""add_custom returns exactly what tf.math.add returns: differential tests with hypothesis.

Ranks 0-5, zero-size dimensions, every broadcast-compatible pair, every supported dtype, and
the values where floating point is fragile (NaN, +-Inf, -0.0, subnormals, float16 and
bfloat16 overflow, int32 wrap-around), in eager mode, inside tf.function (also with None
dimensions or an unknown rank in the input signature), in TF1 graph mode with static,
partly known, unknown and unknown-rank shapes, and through the raw op (the official
sample's calling pattern), which broadcasts by itself. Then the shapes that take each of
the CPU kernel's paths at sizes where Eigen splits the work across threads.
"""
import os

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tf_ge_custom
from tf_ge_custom.op_def import ADD_CUSTOM

# 40 examples per test in CI; TF_GE_CUSTOM_HYPOTHESIS_EXAMPLES=1000 for a deeper local search
EXAMPLES = settings(max_examples=int(os.environ.get("TF_GE_CUSTOM_HYPOTHESIS_EXAMPLES", "40")),
                    deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _elements(dtype):
    if dtype == "int32":
        return st.integers(-2 ** 31, 2 ** 31 - 1)
    if dtype == "float16":
        return st.floats(width=16, allow_nan=True, allow_infinity=True)
    # float32 values; bfloat16 operands are rounded from them (below)
    return st.floats(width=32, allow_nan=True, allow_infinity=True)


def _array(dtype, shape):
    storage = {"int32": np.int32, "float16": np.float16}.get(dtype, np.float32)
    arr = hnp.arrays(storage, shape, elements=_elements(dtype))
    if dtype == "bfloat16":
        arr = arr.map(lambda a: a.astype(ml_dtypes.bfloat16))
    return arr


@st.composite
def operand_pairs(draw, dtype):
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=5, min_side=0, max_side=3))
    xs, ys = shapes.input_shapes
    return draw(_array(dtype, xs)), draw(_array(dtype, ys))


def _dims(t):
    return None if t.shape.rank is None else t.shape.as_list()


def _tf_dtype(name):
    return tf.as_dtype(name)


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_eager(dtype, assert_same):
    @EXAMPLES
    @given(operand_pairs(dtype))
    def check(pair):
        x, y = (tf.constant(v, dtype=_tf_dtype(dtype)) for v in pair)
        assert_same(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))

    check()


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_tf_function_static_shapes(dtype, assert_same):
    @EXAMPLES
    @given(operand_pairs(dtype))
    def check(pair):
        x, y = (tf.constant(v, dtype=_tf_dtype(dtype)) for v in pair)
        ours = tf.function(tf_ge_custom.add_custom)
        ref = tf.function(tf.math.add)
        concrete = ours.get_concrete_function(x, y)
        assert concrete.output_shapes == ref.get_concrete_function(x, y).output_shapes
        assert_same(ours(x, y), ref(x, y))

    check()


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_tf_function_with_none_dims_in_signature(dtype, assert_same):
    @EXAMPLES
    @given(operand_pairs(dtype), st.booleans())
    def check(pair, unknown_rank):
        x, y = (tf.constant(v, dtype=_tf_dtype(dtype)) for v in pair)

        def spec(t):
            return tf.TensorSpec(None if unknown_rank else [None] * t.shape.rank, t.dtype)

        sig = [spec(x), spec(y)]
        ours = tf.function(tf_ge_custom.add_custom, input_signature=sig)
        ref = tf.function(tf.math.add, input_signature=sig)
        assert ours.get_concrete_function().output_shapes == \
            ref.get_concrete_function().output_shapes
        assert_same(ours(x, y), ref(x, y))

    check()


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_tf1_graph_mode(dtype, assert_same):
    @EXAMPLES
    @given(operand_pairs(dtype), st.sampled_from(["static", "none_dims", "some_none",
                                                  "unknown_rank", "mixed"]),
           st.randoms(use_true_random=False))
    def check(pair, shape_kind, rnd):
        x_np, y_np = pair
        graph = tf.Graph()
        with graph.as_default():
            def placeholder(v, kind):
                if kind == "mixed":  # each operand its own kind
                    kind = rnd.choice(["static", "none_dims", "some_none", "unknown_rank"])
                shape = {"static": v.shape, "none_dims": [None] * v.ndim,
                         "some_none": [d if rnd.random() < 0.5 else None for d in v.shape],
                         "unknown_rank": None}[kind]
                return tf.compat.v1.placeholder(_tf_dtype(dtype), shape)

            px, py = placeholder(x_np, shape_kind), placeholder(y_np, shape_kind)
            ours = tf_ge_custom.add_custom(px, py)
            ref = tf.math.add(px, py)
            assert _dims(ours) == _dims(ref)
            with tf.compat.v1.Session(graph=graph) as sess:
                got, want = sess.run([ours, ref], {px: x_np, py: y_np})
        assert got.dtype == want.dtype
        assert_same(got, want)

    check()


CONVERSIONS = [
    (1.5, [1.0, 2.0]),
    ([1, 2, 3], 4),
    (np.float16(2.5), np.array([1.0, 2.0], np.float16)),
    (np.arange(6, dtype=np.int32).reshape(2, 3), [10, 20, 30]),
    (tf.constant([[1.0], [2.0]], tf.bfloat16), 0.5),
    (tf.constant(3), 4),
    (np.float32(-0.0), -0.0),
    # numpy arrays follow x's dtype when they can, as in tf.math.add
    (tf.constant([1.0, 2.5], tf.bfloat16), np.array([1.0, 3.0], np.float32)),
    (tf.constant([1.0], tf.float16), np.array([0.1], np.float64)),
]


@pytest.mark.parametrize("x,y", CONVERSIONS, ids=range(len(CONVERSIONS)))
def test_python_values_convert_as_tf_add_converts_them(x, y, assert_same):
    assert_same(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))


@pytest.fixture(scope="module")
def raw_add_custom():
    return tf.load_op_library(tf_ge_custom.library_path()).add_custom


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_raw_op_broadcasts_as_tf_add(dtype, raw_add_custom, assert_same):
    @EXAMPLES
    @given(operand_pairs(dtype))
    def check(pair):
        x, y = (tf.constant(v, dtype=_tf_dtype(dtype)) for v in pair)
        assert_same(raw_add_custom(x, y), tf.math.add(x, y))

    check()


# Shapes that take each path of the CPU kernel (tf_ops/add_custom_kernels.cc), large enough
# for Eigen to split the work across the thread pool: (x shape, y shape).
KERNEL_PATHS = {
    "equal": ((3, 1000, 33), (3, 1000, 33)),
    "scalar_x": ((), (70001,)),
    "scalar_y": ((513, 129), ()),
    "one_element_y": ((257, 1031), (1, 1)),  # merges to one dimension, y a single element
    "leading_ones": ((1, 1, 4099), (4099,)),  # merges to one dimension, no broadcast
    "bias_row": ((1025, 257), (257,)),
    "bias_column": ((1025, 257), (1025, 1)),
    "outer": ((1023, 1), (1, 1031)),
    "outer_reversed": ((1, 1031), (1023, 1)),
    "nchw_bias": ((4, 64, 17, 19), (1, 64, 1, 1)),
    "nhwc_bias": ((4, 17, 19, 64), (64,)),
    "both_broadcast_3d": ((7, 1, 301), (1, 129, 1)),
    "rank_4_collapsed": ((2, 1, 3, 1), (1, 5, 1, 7)),
    "rank_5": ((2, 1, 3, 1, 5), (1, 4, 1, 6, 1)),
    "zero_size": ((0, 1, 5), (3, 1)),
}


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
@pytest.mark.parametrize("path", sorted(KERNEL_PATHS))
def test_every_kernel_path_at_threaded_sizes(path, dtype, assert_same):
    xs, ys = KERNEL_PATHS[path]
    rng = np.random.RandomState(len(path))
    x, y = (tf.cast(tf.constant(rng.standard_normal(s) * 1000), dtype) for s in (xs, ys))
    assert_same(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))
    assert_same(tf_ge_custom.add_custom(y, x), tf.math.add(y, x))


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
@pytest.mark.parametrize("rank", [6, 7, 8])
def test_broadcasts_that_stay_six_to_eight_dimensional(rank, dtype):
    # Alternating 1s keep BCast from merging any dimension: TensorFlow's own CPU kernel
    # refuses these (Unimplemented beyond 5); add_custom, like the BroadcastTo it replaced,
    # computes them. The oracle is numpy.
    xs = [2 if i % 2 else 1 for i in range(rank)]
    ys = [1 if i % 2 else 3 for i in range(rank)]
    rng = np.random.RandomState(rank)
    # small integers: exact in every dtype, sums too (bfloat16 holds integers to 256)
    x_np = rng.randint(-100, 100, xs).astype(np.float32)
    y_np = rng.randint(-100, 100, ys).astype(np.float32)
    got = tf_ge_custom.add_custom(tf.cast(x_np, dtype), tf.cast(y_np, dtype))
    assert got.dtype == dtype and got.shape == np.broadcast(x_np, y_np).shape
    np.testing.assert_array_equal(tf.cast(got, tf.float32).numpy(), x_np + y_np)


def test_an_input_buffer_is_reused_when_tensorflow_allows_it():
    # In a graph, the kernel may forward an input TensorFlow holds the only reference to,
    # as tf.math.add's does; the result must be the same either way.
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 64])
        bias = tf.compat.v1.placeholder(tf.float32, [64])
        z = tf_ge_custom.add_custom(x * 2.0, bias)  # x * 2.0 is consumed once: forwardable
        ref = tf.math.add(x * 2.0, bias)
        with tf.compat.v1.Session(graph=graph) as sess:
            feed = {x: np.arange(128 * 64, dtype=np.float32).reshape(128, 64),
                    bias: np.arange(64, dtype=np.float32)}
            got, want = sess.run([z, ref], feed)
    np.testing.assert_array_equal(got, want)
