"""add_custom under XLA: tf.function(jit_compile=True) and Keras' jit_compile=True.

Where the build made the XLA kernel library (TensorFlow 2.x wheels ship what it needs), XLA
compiles the AddCustom node itself: the HLO carries op_type="AddCustom". Where it cannot
(tf_ge_custom imported after TensorFlow's first XLA compilation, or no XLA library),
add_custom puts tf.math.add into the traced graph instead. Oracle: tf.math.add under XLA.
"""
import json

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import _library, _xla
from tf_ge_custom.op_def import ADD_CUSTOM

SHAPE_PAIRS = [((5,), (5,)), ((2, 3), (3,)), ((4, 1), (1, 6)), ((), (2, 2)), ((3, 1, 2), (2, 1)),
               ((0, 3), (1, 3)), ((2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2))]


def _operands(xs, ys, dtype, seed=0):
    rng = np.random.RandomState(seed)
    return [tf.cast(tf.constant(rng.standard_normal(s) * 100), dtype) for s in (xs, ys)]


def test_this_build_made_the_xla_kernel_library_and_loaded_it():
    info = _library.build_info()["tensorflow"]
    assert info["xla_library"] == "_lib/libtf_ge_custom_xla.so", info
    assert _xla.lowering_reason() is None


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_jit_compile_matches_tf_add_and_compiles_the_addcustom_node(dtype, assert_same):
    ours = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True)
    ref = tf.function(lambda a, b: tf.math.add(a, b), jit_compile=True)
    for xs, ys in SHAPE_PAIRS:
        x, y = _operands(xs, ys, dtype)
        assert_same(ours(x, y), ref(x, y))
    hlo = ours.experimental_get_compiler_ir(x, y)(stage="hlo")
    assert 'op_type="AddCustom"' in hlo, hlo


def test_jit_compile_with_unknown_dims_in_the_signature(assert_same):
    sig = [tf.TensorSpec([None, None]), tf.TensorSpec([None])]
    ours = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True,
                       input_signature=sig)
    graph_ops = [n.op for n in ours.get_concrete_function().graph.as_graph_def().node]
    assert graph_ops.count("AddCustom") == 1 and "AddV2" not in graph_ops
    for xs, ys in [((3, 4), (4,)), ((2, 1), (5,)), ((1, 7), (1,))]:
        x, y = _operands(xs, ys, tf.float32)
        assert_same(ours(x, y), tf.math.add(x, y))


def test_gradient_inside_jit_compile_matches_tf_add():
    def grads(fn):
        @tf.function(jit_compile=True)
        def g(a, b):
            with tf.GradientTape() as tape:
                tape.watch([a, b])
                loss = tf.reduce_sum(fn(a, b) ** 2)
            return tape.gradient(loss, [a, b])
        return g(*_operands((4, 1, 3), (5, 1), tf.float32, seed=3))

    for got, want in zip(grads(tf_ge_custom.add_custom), grads(tf.math.add)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_keras_jit_compile_trains_as_with_tf_add():
    from tf_ge_custom.layers import AddCustom

    keras = tf.keras

    def train(add_layer):
        keras.utils.set_random_seed(5)
        a, b = keras.Input((6,)), keras.Input((1,))
        out = keras.layers.Dense(2)(add_layer([keras.layers.Dense(6)(a), b]))
        model = keras.Model([a, b], out)
        model.compile(optimizer="sgd", loss="mse", jit_compile=True)
        rng = np.random.RandomState(0)
        data = [rng.standard_normal((32, 6)).astype(np.float32),
                rng.standard_normal((32, 1)).astype(np.float32)]
        target = rng.standard_normal((32, 2)).astype(np.float32)
        history = model.fit(data, target, epochs=3, batch_size=8, shuffle=False, verbose=0)
        return history.history["loss"], model.predict(data, verbose=0)

    class TfAdd(keras.layers.Layer):  # the oracle: the same model with tf.math.add
        def call(self, inputs):
            return tf.math.add(inputs[0], inputs[1])

    (loss, pred), (ref_loss, ref_pred) = train(AddCustom()), train(TfAdd())
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-6)
    np.testing.assert_allclose(pred, ref_pred, rtol=1e-5, atol=1e-6)


LATE_IMPORT = r"""
import json
import numpy as np
import tensorflow as tf
# an XLA compilation before the import: TensorFlow has registered its XLA kernels for good
tf.function(lambda a: a * 2.0, jit_compile=True)(tf.ones([2]))
import tf_ge_custom
from tf_ge_custom import _xla
f = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True)
x = tf.constant([[1.5], [-2.0]]); y = tf.constant([0.25, 4.0, -8.0])
traced = f.get_concrete_function(x, y).graph.as_graph_def()
eager_graph = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b)).get_concrete_function(x, y)
print(json.dumps({"reason": _xla.lowering_reason(),
                  "got": f(x, y).numpy().tolist(), "want": tf.math.add(x, y).numpy().tolist(),
                  "jit_ops": sorted({n.op for n in traced.node}),
                  "plain_ops": sorted({n.op for n in eager_graph.graph.as_graph_def().node})}))
"""


def test_imported_after_the_first_xla_compilation_it_lowers_to_tf_add(python_subprocess):
    proc = python_subprocess(LATE_IMPORT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "before tf_ge_custom was imported" in out["reason"]
    assert out["got"] == out["want"]
    assert "AddV2" in out["jit_ops"] and "AddCustom" not in out["jit_ops"]
    assert "AddCustom" in out["plain_ops"]  # outside XLA the node stays
