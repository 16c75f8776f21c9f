"""Where a model with the package's layers gives the bits of the same model with TensorFlow's
own layers (docs/tensorflow-op.md, "Bit for bit, and where not").

The model adds two Dense outputs and takes the leaky ReLU of the sum: keras.layers.Add and
keras.layers.LeakyReLU against AddCustom and LeakyReluCustom, the same seed and data. Oracles:
the TensorFlow-op model's weights and losses, compared with numpy's array_equal.
"""
import numpy as np
import pytest
import tensorflow as tf

from tf_ge_custom.layers import AddCustom, LeakyReluCustom

pytestmark = pytest.mark.kind("oracle")
keras = tf.keras
ALPHA = 0.2


def _model(custom):
    keras.utils.set_random_seed(7)
    a = keras.Input((16,))
    h, g = keras.layers.Dense(32)(a), keras.layers.Dense(32)(a)
    s = AddCustom()([h, g]) if custom else keras.layers.Add()([h, g])
    s = LeakyReluCustom(alpha=ALPHA)(s) if custom else keras.layers.LeakyReLU(negative_slope=ALPHA)(s)
    model = keras.Model(a, keras.layers.Dense(1)(s))
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    return model


def _data():
    rng = np.random.RandomState(0)
    return rng.standard_normal((256, 16)).astype(np.float32), rng.standard_normal((256, 1)).astype(np.float32)


def _fitted(custom):
    x, y = _data()
    model = _model(custom)
    losses = model.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0).history["loss"]
    return losses, [w.numpy() for w in model.weights]


@pytest.fixture
def remapper_off():
    """Grappler's remapper off for this test only (the option is process-wide)."""
    before = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"remapping": False})
    yield
    tf.config.optimizer.set_experimental_options({"remapping": before.get("remapping", True)})


def test_model_fit_with_the_remapper_off_gives_the_weights_bit_for_bit(remapper_off):
    theirs, ours = _fitted(custom=False), _fitted(custom=True)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(a, b)


def test_model_fit_with_tensorflows_fusions_agrees_to_rounding():
    """With the remapper on, TensorFlow fuses its own Add with the MatMul and BiasAdd before it
    into one oneDNN kernel, and cannot fuse ours: equal to float32 rounding, not bit for bit."""
    theirs, ours = _fitted(custom=False), _fitted(custom=True)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_eager_calls_and_a_tape_give_the_values_and_gradients_bit_for_bit():
    x, y = _data()
    results = []
    for custom in (False, True):
        model = _model(custom)
        with tf.GradientTape() as tape:
            out = model(x, training=True)
            loss = tf.reduce_mean(tf.square(out - y))
        results.append((out.numpy(), [g.numpy() for g in tape.gradient(loss, model.trainable_weights)]))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    for a, b in zip(results[1][1], results[0][1]):
        np.testing.assert_array_equal(a, b)


def test_tf_function_train_steps_with_the_remapper_off_give_the_weights_bit_for_bit(remapper_off):
    """Eight optimizer steps in a tf.function of a tape: a graph, so Grappler runs on it, and with
    the remapper off nothing of TensorFlow's is fused that ours is not."""
    x, y = _data()
    weights = []
    for custom in (False, True):
        model = _model(custom)
        optimizer = keras.optimizers.SGD(0.01)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_weights), model.trainable_weights))
            return loss

        for i in range(8):
            step(x[32 * i:32 * i + 32], y[32 * i:32 * i + 32])
        weights.append([w.numpy() for w in model.weights])
    for a, b in zip(weights[1], weights[0]):
        np.testing.assert_array_equal(a, b)
