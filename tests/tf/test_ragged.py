"""RaggedTensor operands: add_custom adds their flat values, with the result tf.math.add
gives (values and row partitions), where tf.math.add's broadcasting reduces to the flat
values; elsewhere a clear ShapeError."""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import ShapeError
from tf_ge_custom.op_def import ADD_CUSTOM


def _assert_same_ragged(got, want):
    assert isinstance(got, tf.RaggedTensor) and got.dtype == want.dtype
    assert got.ragged_rank == want.ragged_rank
    for g, w in zip(got.nested_row_splits, want.nested_row_splits):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(tf.cast(got.flat_values, tf.float32).numpy(),
                                  tf.cast(want.flat_values, tf.float32).numpy())


def _ragged(dtype, seed, ragged_rank, inner):
    rng = np.random.RandomState(seed)
    if ragged_rank == 1:
        rows = [rng.randint(-50, 50, (n,) + inner).tolist() for n in (3, 0, 2, 5)]
    else:
        rows = [[rng.randint(-50, 50, (n,) + inner).tolist() for n in ns] for ns in ((2, 1), (), (3,))]
    return tf.ragged.constant(rows, dtype=dtype, ragged_rank=ragged_rank)


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
@pytest.mark.parametrize("ragged_rank,inner", [(1, ()), (1, (3,)), (2, ()), (2, (2, 1))])
def test_ragged_plus_ragged_with_the_same_row_partitions(dtype, ragged_rank, inner):
    x = _ragged(dtype, 1, ragged_rank, inner)
    y = x.with_flat_values(tf.reverse(x.flat_values, [0]))  # same partitions, other values
    _assert_same_ragged(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
@pytest.mark.parametrize("dense", ["python_scalar", "scalar_tensor", "bias_vector", "bias_1"])
def test_ragged_plus_a_dense_operand_over_the_inner_dimensions(dtype, dense):
    x = _ragged(dtype, 3, 1, (3,))  # shape [4, None, 3]
    y = {"python_scalar": 2, "scalar_tensor": tf.constant(7, dtype),
         "bias_vector": tf.constant([1, -2, 3], dtype), "bias_1": tf.constant([5], dtype)}[dense]
    _assert_same_ragged(tf_ge_custom.add_custom(x, y), tf.math.add(x, y))
    _assert_same_ragged(tf_ge_custom.add_custom(y, x), tf.math.add(y, x))


def test_ragged_inside_tf_function_with_a_ragged_signature():
    spec = tf.RaggedTensorSpec([None, None], tf.float32)

    @tf.function(input_signature=[spec, spec])
    def f(a, b):
        return tf_ge_custom.add_custom(a, b)

    x = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
    _assert_same_ragged(f(x, x * 2.0), tf.math.add(x, x * 2.0))
    ops = [n.op for n in f.get_concrete_function().graph.as_graph_def().node]
    assert ops.count("AddCustom") == 1


def test_gradient_through_ragged_flat_values():
    values = tf.Variable([1.0, 2.0, 3.0])

    def grad(fn):
        with tf.GradientTape() as tape:
            x = tf.RaggedTensor.from_row_splits(values, [0, 2, 3])
            loss = tf.reduce_sum(fn(x, 2.0) ** 2)
        return tape.gradient(loss, values).numpy()

    np.testing.assert_array_equal(grad(tf_ge_custom.add_custom), grad(tf.math.add))


def test_different_row_partitions_are_refused():
    x = tf.ragged.constant([[1.0, 2.0], [3.0]])
    y = tf.ragged.constant([[1.0], [2.0, 3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_splits"):
        tf_ge_custom.add_custom(x, y)  # tf.math.add refuses them as well
    with pytest.raises(ShapeError, match="same row partitions"):
        tf_ge_custom.add_custom(x, tf.ragged.constant([[[1.0]], [[2.0]]]))  # ragged ranks differ
    with pytest.raises(ShapeError, match="same row partitions"):
        tf_ge_custom.add_custom(x, x.with_row_splits_dtype(tf.int32))


def test_a_dense_operand_reaching_the_ragged_dimensions_is_a_shape_error():
    x = tf.ragged.constant([[1.0, 2.0], [3.0]])  # [2, None]
    with pytest.raises(ShapeError) as info:
        tf_ge_custom.add_custom(x, tf.constant([[1.0], [2.0]]))  # tf.math.add broadcasts this
    msg = str(info.value)
    assert "uniform inner dimensions only (rank <= 0 here)" in msg and "(2, 1)" in msg
    assert "tf.math.add" in msg
