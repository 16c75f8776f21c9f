"""tf_ge_custom.layers.AddCustom behaves as keras.layers.Add does for two inputs.

Oracles: Keras' own layer test procedure (``keras.src.testing.TestCase.run_layer_test``, the
harness Keras runs on its merging layers: symbolic and eager calls, serialization, a training
step, mixed precision, ``supports_masking``), keras.layers.Add itself (its masks, its shapes,
the same model with Add in place), and tf.broadcast_static_shape for the output shape.
"""
import warnings

import numpy as np
import pytest
import tensorflow as tf

from tf_ge_custom.layers import AddCustom, custom_objects

keras = tf.keras
pytestmark = pytest.mark.kind("oracle")


def _harness():
    """An instance of Keras' own TestCase, to call its run_layer_test."""
    from keras.src import testing

    class Harness(testing.TestCase):
        def runTest(self):  # unittest needs a test method to instantiate the case
            pass

    case = Harness()
    case.setUp()
    return case


def _mask_of(tensor):
    from keras.src import backend

    mask = backend.get_keras_mask(tensor)
    return None if mask is None else np.asarray(mask)


@pytest.mark.parametrize("shapes, output", [
    (((2, 4, 5), (2, 4, 5)), (2, 4, 5)),
    (((2, 4, 5), (2, 1, 5)), (2, 4, 5)),  # broadcasting, as + does
    (((2, 1, 5), (2, 4, 1)), (2, 4, 5)),
])
def test_keras_run_layer_test_passes(shapes, output):
    x = np.random.RandomState(0).standard_normal(shapes[0]).astype(np.float32)
    y = np.random.RandomState(1).standard_normal(shapes[1]).astype(np.float32)
    case = _harness()
    # the harness's own checks: symbolic and eager shapes, dtype, weights, serialization
    # (custom_objects: it reloads the layer from its config), a training step, mixed_float16
    case.run_layer_test(AddCustom, init_kwargs={}, input_shape=shapes,
                        expected_output_shape=output, expected_num_trainable_weights=0,
                        expected_num_non_trainable_weights=0, expected_num_seed_generators=0,
                        expected_num_losses=0, supports_masking=True,
                        assert_built_after_instantiation=True,
                        custom_objects=custom_objects())
    case.run_layer_test(AddCustom, init_kwargs={}, input_data=(x, y),
                        expected_output=tf.math.add(x, y), supports_masking=True,
                        custom_objects=custom_objects())
    # Keras' Add, through the same harness, agrees on every shape both take
    case.run_layer_test(keras.layers.Add, init_kwargs={}, input_shape=shapes,
                        expected_output_shape=output, supports_masking=True)
    # (the harness raises on a failure; the shape both report, stated here too)
    assert AddCustom().compute_output_shape(list(shapes)) == output == \
        keras.layers.Add().compute_output_shape(list(shapes))


def test_supports_masking_like_add():
    assert AddCustom().supports_masking is True
    assert AddCustom().supports_masking == keras.layers.Add().supports_masking


def test_masks_propagate_as_adds_do_for_every_combination():
    """Keras' own Add mask test (Masking on one input, then on both), each combination."""
    masking = keras.layers.Masking()
    raw_1 = tf.constant([[[0, 0], [1, 2], [0, 0], [3, 4]]], tf.float32)
    raw_2 = tf.constant([[[0, 0], [0, 0], [1, 2], [3, 4]]], tf.float32)
    for first, second in [(False, False), (True, False), (False, True), (True, True)]:
        x1 = masking(raw_1) if first else raw_1
        x2 = masking(raw_2) if second else raw_2
        ours, theirs = AddCustom()([x1, x2]), keras.layers.Add()([x1, x2])
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        if first and second:
            np.testing.assert_array_equal(_mask_of(ours), _mask_of(theirs))
            # Keras 3's Merge rule: the logical or of both masks, as Keras' own test says
            np.testing.assert_array_equal(_mask_of(ours), [[False, True, True, True]])
        else:
            assert _mask_of(ours) is None and _mask_of(theirs) is None, (first, second)


def test_compute_mask_is_adds():
    m1 = np.array([[True, False, True, False]])
    m2 = np.array([[True, True, False, False]])
    x = np.zeros((1, 4, 2), np.float32)
    layer, add = AddCustom(), keras.layers.Add()
    np.testing.assert_array_equal(np.asarray(layer.compute_mask([x, x], [m1, m2])),
                                  np.asarray(add.compute_mask([x, x], [m1, m2])))
    assert layer.compute_mask([x, x], None) is None and layer.compute_mask([x, x], [m1, None]) is None
    with pytest.raises(ValueError, match="should be a list"):
        layer.compute_mask([x, x], m1)  # Add's own refusal


def _embedding_lstm(merge):
    tokens = keras.Input((6,), dtype="int32")
    embedded = keras.layers.Embedding(12, 4, mask_zero=True)(tokens)
    projected = keras.layers.Dense(4)(embedded)  # Dense passes the mask on
    merged = merge()([embedded, projected])
    out = keras.layers.LSTM(3)(merged)
    return keras.Model(tokens, out)


def test_embedding_mask_reaches_the_lstm_through_the_layer_as_through_add():
    keras.utils.set_random_seed(3)
    ours = _embedding_lstm(AddCustom)
    reference = _embedding_lstm(keras.layers.Add)
    reference.set_weights(ours.get_weights())
    tokens = np.array([[3, 5, 7, 0, 0, 0], [1, 2, 3, 4, 5, 6], [9, 0, 0, 0, 0, 0]], np.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = ours.predict(tokens, verbose=0)
    assert not [w for w in caught if "destroy the mask" in str(w.message)], caught
    np.testing.assert_allclose(got, reference.predict(tokens, verbose=0), rtol=1e-6, atol=1e-7)
    # the mask matters here: the LSTM reading the padding too gives other outputs
    unmasked = _embedding_lstm(lambda: keras.layers.Lambda(lambda t: t[0] + t[1]))
    unmasked.set_weights(ours.get_weights())
    assert np.abs(unmasked.predict(tokens, verbose=0) - got)[[0, 2]].max() > 1e-3


@pytest.mark.parametrize("x, y, as_add", [
    ((None, 4, 5), (None, 4, 5), True), ((2, 1, 5), (2, 4, 1), True), ((None, 1), (None, 7), True),
    # Add gives (None, None, 3) here: a batch of 8 and one of 1, an unknown and a 5; + knows more
    ((8, None, 3), (1, 5, 1), False),
    ((None, 3), (3,), False), ((), (2, 2), False),  # other ranks: Add inserts axes after the batch
])
def test_compute_output_shape_is_the_broadcast_shape(x, y, as_add):
    got = AddCustom().compute_output_shape([x, y])
    assert got == tuple(tf.broadcast_static_shape(tf.TensorShape(x), tf.TensorShape(y)).as_list())
    if as_add:  # where Add's shape rule says as much
        assert got == keras.layers.Add().compute_output_shape([x, y])
    symbolic = AddCustom()([keras.KerasTensor(x), keras.KerasTensor(y)])
    assert tuple(symbolic.shape) == got


def test_incompatible_shapes_are_refused_by_name():
    with pytest.raises(ValueError, match=r"x \(None, 3\) and y \(None, 4\) are not broadcast-compatible"):
        AddCustom().compute_output_shape([(None, 3), (None, 4)])
    with pytest.raises(ValueError, match="two input shapes"):
        AddCustom().compute_output_shape([(None, 3)])


def test_an_int32_model_keeps_its_dtype():
    a, b = keras.Input((3,), dtype="int32"), keras.Input((3,), dtype="int32")
    out = AddCustom()([a, b])
    assert out.dtype == "int32"
    model = keras.Model([a, b], out)
    x = np.array([[2 ** 31 - 1, -5, 7]], np.int32)
    y = np.array([[1, 5, -7]], np.int32)
    got = model.predict([x, y], verbose=0)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, tf.math.add(x, y).numpy())
