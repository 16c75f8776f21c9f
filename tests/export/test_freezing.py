"""Freezing, for real on CPU TensorFlow, from every kind of model the export accepts.

Each frozen graph is run in a session and held against numpy (the model's known math and
weights), its inputs must be named placeholders with the recorded shapes, it must hold no
variable and no training-only node, and every AddCustom must still be there.
"""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.export import freeze
from tf_ge_custom.export.freezing import inference_graph

RNG = np.random.RandomState(7)
TRAINING_OPS = {"ApplyGradientDescent", "SaveV2", "RestoreV2", "VariableV2", "VarHandleOp",
                "ReadVariableOp", "RandomUniform", "PlaceholderWithDefault", "Assert"}


def ops(graph_def):
    return [n.op for n in graph_def.node]


def inputs_of(record):
    return {t.name: (t.dtype, t.shape) for t in record.inputs}


def test_saved_model_v2_with_broadcast_none_batch_and_constant_fed_add_custom(models, run_graph):
    with freeze(models.saved_model) as frozen:
        record, graph_def = frozen.record, frozen.graph_def
        a = RNG.standard_normal((5, 3)).astype(np.float32)  # batch 5 on a None batch dim
        b = RNG.standard_normal(3).astype(np.float32)  # broadcast over the batch
        got = run_graph(graph_def, {"a": a, "b": b}, [t.name for t in record.outputs])
        source = frozen.reference_outputs({"a": a, "b": b})
    assert inputs_of(record) == {"a": ("float32", (None, 3)), "b": ("float32", (3,))}
    assert [t.key for t in record.outputs] == ["aux", "out"]
    want = models.saved_model_oracle(a, b)
    np.testing.assert_allclose(got[1], want["out"], rtol=1e-6)
    np.testing.assert_array_equal(got[0], want["aux"])
    np.testing.assert_array_equal(source[1], got[1])
    assert ops(graph_def).count("AddCustom") == 2
    assert not TRAINING_OPS & set(ops(graph_def)) and "StatefulPartitionedCall" not in ops(graph_def)
    # the AddCustom fed by two constants survived constant folding, with constant inputs
    by_name = {n.name: n for n in graph_def.node}
    fed_by_constants = [n for n in graph_def.node if n.op == "AddCustom"
                        and all(by_name[i.split(":")[0]].op == "Const" for i in n.input)]
    assert len(fed_by_constants) == 1
    assert record.op_counts["AddCustom"] == 2 and record.op_counts["Placeholder"] == 2


def test_without_the_barriers_constant_folding_removes_a_constant_fed_add_custom():
    # Why inference_graph routes AddCustom inputs through barriers: the same pass without them
    # replaces AddCustom(const, const) by a Const (Grappler's constant folding).
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
        constant = tf_ge_custom.add_custom(tf.constant([1.0, 2.0, 4.0]), tf.constant([1.0, 2.0, 4.0]))
        tf.identity(x * constant, name="z")
    graph_def = graph.as_graph_def()
    kept = inference_graph.for_inference(graph_def, ["x"], ["z:0"])
    folded = inference_graph.for_inference(graph_def, ["x"], ["z:0"], keep_kept_ops=False)
    assert ops(kept).count("AddCustom") == 1
    assert ops(folded).count("AddCustom") == 0


@pytest.mark.parametrize("suffix", ["keras", "h5"])
def test_keras_model_files(models, run_graph, suffix):
    path = models.keras if suffix == "keras" else models.h5
    with freeze(path) as frozen:
        record = frozen.record
        a = RNG.standard_normal((6, 4)).astype(np.float32)
        b = RNG.standard_normal((6, 4)).astype(np.float32)
        got = run_graph(frozen.graph_def, {"a": a, "b": b}, [t.name for t in record.outputs])
    assert inputs_of(record) == {"a": ("float32", (None, 4)), "b": ("float32", (None, 4))}
    want = models.keras_oracle(a, b)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    assert ops(frozen.graph_def).count("AddCustom") == 1
    assert "VarHandleOp" not in ops(frozen.graph_def)


def test_tf1_checkpoint_drops_training_nodes_and_restores_weights(models, run_graph):
    with freeze(models.meta, outputs=["z"]) as frozen:
        record, graph_def = frozen.record, frozen.graph_def
        x = RNG.standard_normal((4, 3)).astype(np.float32)
        y = RNG.standard_normal(3).astype(np.float32)
        got, = run_graph(graph_def, {"x": x, "y": y}, ["z:0"])
        source, = frozen.reference_outputs({"x": x, "y": y})
    assert inputs_of(record) == {"x": ("float32", (None, 3)), "y": ("float32", (3,))}
    np.testing.assert_allclose(got, (x + y) * models.V + (models.C1 + models.C2), rtol=1e-6)
    np.testing.assert_array_equal(got, source)
    names = ops(graph_def)
    assert names.count("AddCustom") == 2
    assert not TRAINING_OPS & set(names)  # optimizer, saver, dropout, the is_training switch
    assert not {"Switch", "Merge"} & set(names)  # the cond on the constant switch folded away


def test_frozen_pb_passes_through_byte_for_byte(models, tmp_path):
    with open(models.pb, "rb") as f:
        original = f.read()
    with freeze(models.pb) as frozen:
        assert frozen.serialized() == original
        assert [t.name for t in frozen.record.outputs] == ["z:0"]  # the node nothing consumes
        assert inputs_of(frozen.record) == {"x": ("float32", (2, 3)), "y": ("float32", (2, 3))}


def test_concrete_function_through_the_python_api(run_graph):
    v = tf.Variable([[2.0], [3.0]])

    @tf.function(input_signature=[tf.TensorSpec([2, None], tf.float32, name="p")])
    def f(p):
        return tf_ge_custom.add_custom(p, v)  # [2, None] + [2, 1]: broadcasting

    with freeze(f) as frozen:
        p = RNG.standard_normal((2, 5)).astype(np.float32)
        got, = run_graph(frozen.graph_def, {"p": p}, [frozen.record.outputs[0].name])
    np.testing.assert_array_equal(got, p + np.array([[2.0], [3.0]], np.float32))
    assert inputs_of(frozen.record) == {"p": ("float32", (2, None))}
    assert "AddCustom" in ops(frozen.graph_def)
