"""Offline export's TF1 routes on TF Adapter's TensorFlows (1.15.5, 2.6.5; Python 3.7), and on
the main suite's TensorFlow: a TF1 checkpoint (meta graph + checkpoint prefix + output node
names) and a TF1 SavedModel frozen for real, verified in a fresh process, and the frozen graph
held against numpy (known weights, broadcasting, a None batch dim, a constant-fed AddCustom).
"""
import io

import numpy as np
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.export import export

v1 = tf.compat.v1
W = np.array([1.5, -2.0, 3.0], np.float32)
C1 = np.array([1.0, 2.0, 3.0], np.float32)
C2 = np.array([10.0, 20.0, 30.0], np.float32)
TRAINING_OPS = {"ApplyGradientDescent", "SaveV2", "RestoreV2", "VariableV2", "VarHandleOp",
                "ReadVariableOp", "RandomUniform", "PlaceholderWithDefault", "Switch", "Merge"}


def _model(graph):
    """z = (x + y) * w + (c1 + c2) with x: [None, 3], y: [3], plus training-only parts."""
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        y = v1.placeholder(tf.float32, [3], name="y")
        training = v1.placeholder_with_default(False, [], name="is_training")
        w = v1.get_variable("w", initializer=tf.zeros([3]))
        z = tf_ge_custom.add_custom(x, y) * w + tf_ge_custom.add_custom(tf.constant(C1), tf.constant(C2))
        z = v1.cond(training, lambda: tf.nn.dropout(z, rate=0.5), lambda: z)
        z = tf.identity(z, name="z")
        v1.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(z * z))
        return x, y, z, w


def _check(prefix, output):
    graph_def = v1.GraphDef()
    with open(prefix + ".pb", "rb") as f:
        graph_def.ParseFromString(f.read())
    ops = [n.op for n in graph_def.node]
    assert ops.count("AddCustom") == 2 and not TRAINING_OPS & set(ops), ops
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    x = np.random.RandomState(1).standard_normal((5, 3)).astype(np.float32)
    y = np.random.RandomState(2).standard_normal(3).astype(np.float32)
    with v1.Session(graph=graph) as session:
        got = session.run(output, {"x:0": x, "y:0": y})
    np.testing.assert_allclose(got, (x + y) * W + (C1 + C2), rtol=1e-6)


def test_tf1_checkpoint_is_frozen_and_verified(tmp_path):
    graph = tf.Graph()
    x, y, z, w = _model(graph)
    with graph.as_default(), v1.Session(graph=graph) as session:
        session.run(v1.global_variables_initializer())
        session.run(w.assign(W))
        v1.train.Saver().save(session, str(tmp_path / "ckpt" / "model"))
    report = io.StringIO()
    result = export(str(tmp_path / "ckpt" / "model.meta"), outputs=["z"], output=str(tmp_path / "m"), out=report)
    assert result.verification.ok, report.getvalue()
    assert [(t.name, t.shape) for t in result.record.inputs] == [("x", (None, 3)), ("y", (3,))]
    assert [t.name for t in result.record.outputs] == ["z:0"]
    _check(str(tmp_path / "m"), "z:0")


def test_tf1_saved_model_is_frozen_and_verified(tmp_path):
    graph = tf.Graph()
    x, y, z, w = _model(graph)
    path = str(tmp_path / "saved_model")
    with graph.as_default(), v1.Session(graph=graph) as session:
        session.run(v1.global_variables_initializer())
        session.run(w.assign(W))
        builder = v1.saved_model.Builder(path)
        signature = v1.saved_model.predict_signature_def(inputs={"x": x, "y": y}, outputs={"z": z})
        builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map={"serving_default": signature})
        builder.save()
    report = io.StringIO()
    result = export(path, output=str(tmp_path / "m"), out=report)
    assert result.verification.ok, report.getvalue()
    assert [(t.name, t.key) for t in result.record.inputs] == [("x", "x"), ("y", "y")]
    assert [t.key for t in result.record.outputs] == ["z"]
    _check(str(tmp_path / "m"), result.record.outputs[0].name)
