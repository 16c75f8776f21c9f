"""add_custom inside Keras models: train, save, reload (same and fresh process), export."""
import json

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.layers import AddCustom

keras = tf.keras


def _model():
    a = keras.Input((6,), name="a")
    b = keras.Input((6,), name="b")
    s = AddCustom()([a, b])
    out = keras.layers.Dense(3, kernel_initializer="glorot_uniform")(s)
    return keras.Model([a, b], out)


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(7)
    return [rng.standard_normal((16, 6)).astype(np.float32) for _ in range(2)]


def _save_inputs(tmp_path, data):
    """Write the model inputs for a subprocess; return (a.npy, b.npy, out.npy) paths."""
    paths = [str(tmp_path / n) for n in ("a.npy", "b.npy", "out.npy")]
    np.save(paths[0], data[0])
    np.save(paths[1], data[1])
    return paths


def test_layer_output_equals_tf_add(data):
    a, b = data
    np.testing.assert_array_equal(AddCustom()([a, b]).numpy(), tf.math.add(a, b).numpy())
    np.testing.assert_array_equal(AddCustom()([a, b[0]]).numpy(), (a + b[0]))


def test_layer_needs_two_inputs():
    with pytest.raises(ValueError, match="two inputs"):
        AddCustom()(tf.zeros([2, 3]))


def test_model_trains_through_the_op(data):
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    target = np.ones((16, 3), np.float32)
    before = model.evaluate(data, target, verbose=0)
    model.fit(data, target, epochs=5, verbose=0)
    assert model.evaluate(data, target, verbose=0) < before


def test_keras_save_and_reload(tmp_path, data, python_subprocess):
    model = _model()
    expected = model.predict(data, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    np.testing.assert_array_equal(keras.models.load_model(path).predict(data, verbose=0), expected)

    a, b, out = _save_inputs(tmp_path, data)
    code = (
        "import numpy as np, tensorflow as tf, tf_ge_custom.layers\n"
        "m = tf.keras.models.load_model(%r)\n"
        "assert any(type(l).__name__ == 'AddCustom' for l in m.layers)\n"
        "np.save(%r, m.predict([np.load(%r), np.load(%r)], verbose=0))\n"
    ) % (path, out, a, b)
    proc = python_subprocess(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    np.testing.assert_array_equal(np.load(out), expected)


def test_keras_export_to_saved_model_holds_addcustom(tmp_path, data, python_subprocess):
    model = _model()
    expected = model.predict(data, verbose=0)
    path = str(tmp_path / "exported")
    model.export(path)
    a, b, out = _save_inputs(tmp_path, data)
    code = (
        "import json, numpy as np, tensorflow as tf, tf_ge_custom\n"
        "m = tf.saved_model.load(%r)\n"
        "f = m.signatures['serving_default']\n"
        "gd = f.graph.as_graph_def()\n"
        "ops = [n.op for n in gd.node] + [n.op for fn in gd.library.function for n in fn.node_def]\n"
        "a, b = np.load(%r), np.load(%r)\n"
        "out = m.serve([tf.constant(a), tf.constant(b)]).numpy()\n"
        "np.save(%r, out)\n"
        "print(json.dumps(sorted(set(ops))))\n"
    ) % (path, a, b, out)
    proc = python_subprocess(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "AddCustom" in json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(np.load(out), expected, rtol=1e-6, atol=1e-6)
