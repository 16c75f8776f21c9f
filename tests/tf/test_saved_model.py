"""A SavedModel using add_custom loads and runs in a fresh process after import tf_ge_custom,
its graph still holding AddCustom; without the import, TensorFlow cannot load it."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom

LOAD_AND_RUN = r"""
import json, sys
import numpy as np
import tensorflow as tf
%(import_line)s
m = tf.saved_model.load(sys.argv[0] if False else %(path)r)
x = np.load(%(x)r); y = np.load(%(y)r)
z = m.add(tf.constant(x), tf.constant(y)).numpy()
fn = m.add.get_concrete_function(tf.TensorSpec([None, None]), tf.TensorSpec([None]))
gd = fn.graph.as_graph_def()
ops = [n.op for n in gd.node] + [n.op for f in gd.library.function for n in f.node_def]
np.save(%(out)r, z)
print(json.dumps({"ops": sorted(set(ops))}))
"""


class Adder(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, None]), tf.TensorSpec([None])])
    def add(self, x, y):
        return tf_ge_custom.add_custom(x, y)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("saved_model")
    path = str(d / "adder")
    tf.saved_model.save(Adder(), path)
    x = np.random.RandomState(0).standard_normal((5, 7)).astype(np.float32)
    y = np.random.RandomState(1).standard_normal(7).astype(np.float32)
    np.save(str(d / "x.npy"), x)
    np.save(str(d / "y.npy"), y)
    return {"path": path, "x": str(d / "x.npy"), "y": str(d / "y.npy"),
            "out": str(d / "z.npy"), "expected": x + y}


def test_saved_model_runs_in_a_fresh_process_after_import(saved, python_subprocess):
    code = LOAD_AND_RUN % dict(saved, import_line="import tf_ge_custom")
    proc = python_subprocess(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "AddCustom" in report["ops"]
    np.testing.assert_array_equal(np.load(saved["out"]), saved["expected"])


def test_without_the_import_tensorflow_cannot_load_it(saved, python_subprocess):
    out = saved["out"] + ".without_import.npy"
    code = LOAD_AND_RUN % dict(saved, import_line="", out=out)
    proc = python_subprocess(code)
    assert proc.returncode != 0
    assert "Op type not registered 'AddCustom'" in proc.stderr, proc.stderr[-3000:]
    assert not os.path.exists(out)


# Graphs saved before AddCustom broadcast by itself hold BroadcastTo (+ BroadcastArgs) in
# front of an AddCustom that sees equal shapes: tests/fixtures/legacy_graphs/generate.py
# wrote them with the package as it was then. They are valid graphs of today's op.
LEGACY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "fixtures", "legacy_graphs")

LOAD_LEGACY = r"""
import json
import numpy as np
import tensorflow as tf
import tf_ge_custom
m = tf.saved_model.load(%(path)r)
x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5.5
y = np.array([0.25, -1.0, 3.0], np.float32)
xs = np.array([[1.5], [-2.0]], np.float32)
out = {"dynamic": m.add_dynamic(tf.constant(x), tf.constant(y)).numpy().tolist(),
       "dynamic_ref": tf.math.add(x, y).numpy().tolist(),
       "static": m.add_static(tf.constant(xs), tf.constant(y)).numpy().tolist(),
       "static_ref": tf.math.add(xs, y).numpy().tolist()}
ops = set()
for fn in (m.add_dynamic, m.add_static):
    gd = fn.get_concrete_function().graph.as_graph_def()
    ops.update(n.op for n in gd.node)
    for f in gd.library.function:
        ops.update(n.op for n in f.node_def)
out["ops"] = sorted(ops)
print(json.dumps(out))
"""


def test_a_saved_model_of_the_old_broadcast_to_pattern_loads_and_matches_tf_add(python_subprocess):
    proc = python_subprocess(LOAD_LEGACY % {"path": os.path.join(LEGACY, "saved_model")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"AddCustom", "BroadcastTo", "BroadcastArgs"} <= set(out["ops"])  # the old pattern
    assert out["dynamic"] == out["dynamic_ref"] and np.shape(out["dynamic"]) == (4, 3)
    assert out["static"] == out["static_ref"] and np.shape(out["static"]) == (2, 3)


def test_a_graph_def_of_the_old_broadcast_to_pattern_imports_and_matches_tf_add():
    graph_def = tf.compat.v1.GraphDef()
    with open(os.path.join(LEGACY, "graph_def.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    assert {"BroadcastTo", "BroadcastArgs", "AddCustom"} <= {n.op for n in graph_def.node}
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
        x = np.array([[1.0], [2.0], [-4.0]], np.float32)
        y = np.array([10.0, 20.0, 30.0], np.float32)
        xs, ys = np.array([[1.0], [2.0]], np.float32), np.array([[0.5, -0.5, 7.0]], np.float32)
        with tf.compat.v1.Session(graph=graph) as sess:
            got_dynamic, got_static = sess.run(
                ["z_dynamic:0", "z_static:0"], {"x:0": x, "y:0": y, "xs:0": xs, "ys:0": ys})
    np.testing.assert_array_equal(got_dynamic, tf.math.add(x, y).numpy())
    np.testing.assert_array_equal(got_static, tf.math.add(xs, ys).numpy())
