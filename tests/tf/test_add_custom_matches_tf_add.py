"""add_custom returns exactly what tf.math.add returns: differential tests with hypothesis.

Ranks 0-5, zero-size dimensions, every broadcast-compatible pair, every supported dtype, and
the values where floating point is fragile (NaN, +-Inf, -0.0, subnormals, float16 and
bfloat16 overflow, int32 wrap-around), in eager mode, inside tf.function (also with None
dimensions in the input signature) and in TF1 graph mode.
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
    @given(operand_pairs(dtype), st.sampled_from(["static", "none_dims", "unknown_rank"]))
    def check(pair, shape_kind):
        x_np, y_np = pair
        graph = tf.Graph()
        with graph.as_default():
            def placeholder(v):
                shape = {"static": v.shape, "none_dims": [None] * v.ndim,
                         "unknown_rank": None}[shape_kind]
                return tf.compat.v1.placeholder(_tf_dtype(dtype), shape)

            px, py = placeholder(x_np), placeholder(y_np)
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
