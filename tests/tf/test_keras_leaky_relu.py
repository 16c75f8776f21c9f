"""tf_ge_custom.layers.LeakyReluCustom behaves as a Keras activation layer and computes
tf.nn.leaky_relu.

Oracles: Keras' own layer test procedure (``keras.src.testing.TestCase.run_layer_test``:
symbolic and eager calls, serialization, a training step, mixed precision,
``supports_masking``), tf.nn.leaky_relu of the same Dense outputs, and a fresh process that
reloads the saved ``.keras`` file and SavedModel with nothing but the installed package.
"""

import numpy as np
import pytest
import tensorflow as tf

from tf_ge_custom import op_def
from tf_ge_custom.errors import AttrError, InputError
from tf_ge_custom.layers import LeakyReluCustom, custom_objects

pytestmark = pytest.mark.kind("oracle")
keras = tf.keras


def test_the_config_round_trips_and_alpha_is_checked_as_the_attribute():
    layer = LeakyReluCustom(alpha=np.float32(0.25), name="act")
    config = layer.get_config()
    assert config["alpha"] == 0.25 and type(config["alpha"]) is float and config["name"] == "act"
    again = LeakyReluCustom.from_config(config)
    assert again.alpha == 0.25 and again.name == "act"
    assert LeakyReluCustom().alpha == op_def.LEAKY_RELU_CUSTOM.attr("alpha").default == 0.2
    with pytest.raises(InputError, match="attribute alpha must be a Python or NumPy real scalar"):
        LeakyReluCustom(alpha="0.1")
    assert custom_objects()["tf_ge_custom>LeakyReluCustom"] is LeakyReluCustom


def test_a_ranged_alpha_is_refused_outside_its_range(monkeypatch):
    from tf_ge_custom import _op_function

    op = op_def.LEAKY_RELU_CUSTOM._replace(attrs=(op_def.OpAttr("alpha", "float", 0.2, 0.0, 1.0),))
    attr = op.attr("alpha")
    assert _op_function.attr_value(op, attr, 1) == 1.0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(AttrError, match=r"^leaky_relu_custom: attribute alpha is .*; it "
                                            r"must be in \[0.0, 1.0\]$"):
            _op_function.attr_value(op, attr, bad)


def test_shapes_and_masks_pass_through():
    layer = LeakyReluCustom()
    assert layer.compute_output_shape((None, 3, 5)) == (None, 3, 5)
    mask = tf.constant([[True, False]])
    assert layer.compute_mask(tf.zeros((1, 2)), mask) is mask
    assert layer.supports_masking


def test_calling_the_layer_computes_tf_nn_leaky_relu():
    x = tf.constant([[-2.0, 3.0, -0.0, float("nan")]])
    np.testing.assert_array_equal(LeakyReluCustom(alpha=0.5)(x).numpy(),
                                  tf.nn.leaky_relu(x, alpha=0.5).numpy())


def _save(folder):
    """Keras' own layer test for several alphas, a masked model, and a model saved as a
    .keras file and a SavedModel into ``folder``, in this process."""
    from keras.src import backend, testing

    x = np.random.RandomState(3).standard_normal((6, 4)).astype(np.float32)
    report = {}

    class Harness(testing.TestCase):
        def runTest(self):
            pass
    case = Harness()
    case.setUp()
    # Keras' harness builds, calls, serializes and trains the layer each time (about 20 s a
    # run on 2 cores): the default alpha by shape, then a negative and a steep one against
    # tf.nn.leaky_relu (every alpha's values: test_calling_the_layer_computes_tf_nn_leaky_relu)
    runs = 0
    for alpha in (0.2,):
        case.run_layer_test(LeakyReluCustom, init_kwargs={"alpha": alpha}, input_shape=(2, 3, 4),
                            expected_output_shape=(2, 3, 4), expected_num_trainable_weights=0,
                            expected_num_non_trainable_weights=0, expected_num_seed_generators=0,
                            expected_num_losses=0, supports_masking=True,
                            assert_built_after_instantiation=True,
                            custom_objects=custom_objects())
        runs += 1
    for alpha in (-0.5, 3.0):
        case.run_layer_test(LeakyReluCustom, init_kwargs={"alpha": alpha}, input_data=x,
                            expected_output=tf.nn.leaky_relu(x, alpha=alpha),
                            supports_masking=True, custom_objects=custom_objects())
        runs += 1
    report["layer_tests"] = runs
    masked = keras.Sequential([keras.Input((3,), dtype="int32"),
                               keras.layers.Embedding(5, 4, mask_zero=True), LeakyReluCustom(),
                               keras.layers.LSTM(2)])
    emb = masked.layers[0](tf.constant([[1, 0, 2]]))
    out = masked.layers[1](emb)
    report["mask"] = np.asarray(backend.get_keras_mask(out)).tolist()
    report["lstm_out"] = masked(tf.constant([[1, 0, 2]])).shape.as_list()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4), LeakyReluCustom(alpha=-0.3)])
    np.save(folder + "/x.npy", x)
    np.save(folder + "/dense_out.npy", model.layers[0](x).numpy())
    np.save(folder + "/saved_out.npy", model(x).numpy())
    model.save(folder + "/m.keras")
    model.export(folder + "/sm")
    return report


LOAD_CHILD = r'''
import json
import numpy as np
import tensorflow as tf
import tf_ge_custom.layers  # noqa: F401  (registers the layer)
keras = tf.keras
folder = FOLDER
x = np.load(folder + "/x.npy")
report = {}
loaded = keras.models.load_model(folder + "/m.keras")
np.save(folder + "/keras_out.npy", loaded(x).numpy())
report["alpha"] = loaded.layers[-1].alpha
sm = tf.saved_model.load(folder + "/sm")
np.save(folder + "/sm_out.npy", sm.serve(tf.constant(x)).numpy())
graph = sm.serve.get_concrete_function(tf.TensorSpec((None, 4))).graph.as_graph_def()
report["sm_ops"] = sorted(set(n.op for n in graph.node) | set(
    n.op for f in graph.library.function for n in f.node_def))
print("REPORT " + json.dumps(report))
'''


@pytest.fixture(scope="module")
def keras_children(tmp_path_factory, fresh_child):
    """The layer saved here, and reloaded in a fresh process (the installed package)."""
    folder = str(tmp_path_factory.mktemp("keras_leaky"))
    saved = _save(folder)
    loaded = fresh_child(LOAD_CHILD.replace("FOLDER", repr(folder)), folder)
    return folder, saved, loaded


def test_keras_run_layer_test_passes(keras_children):
    _, saved, _ = keras_children
    assert saved["layer_tests"] == 3
    assert saved["mask"] == [[True, False, True]]  # Embedding's mask, through the layer
    assert saved["lstm_out"] == [1, 2]


def test_a_saved_keras_file_and_saved_model_reload_in_a_fresh_process(keras_children):
    folder, _, loaded = keras_children
    # the activation of what the model's Dense gave, bit for bit, before and after reloading
    dense = tf.constant(np.load(folder + "/dense_out.npy"))
    expected = tf.bitcast(tf.nn.leaky_relu(dense, alpha=-0.3), tf.uint32).numpy()
    for name in ("saved_out", "keras_out", "sm_out"):
        np.testing.assert_array_equal(np.load("%s/%s.npy" % (folder, name)).view(np.uint32),
                                      expected, err_msg=name)
    assert loaded["alpha"] == -0.3
    assert "LeakyReluCustom" in loaded["sm_ops"] and "LeakyRelu" not in loaded["sm_ops"]
