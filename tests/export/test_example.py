"""examples/export_model.py runs as documented where only TensorFlow is: a .pb, verified."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import tensorflow as tf

import tf_ge_custom  # noqa: F401  (registers AddCustom for the import below)

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "export_model.py"


def test_export_example_writes_a_verified_pb_and_inputs(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    prefix = str(tmp_path / "add_model")
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--output", prefix], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=str(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "verification (fresh process" in proc.stdout and "DIFFERS" not in proc.stdout
    x, y = np.load(prefix + ".x.npy"), np.load(prefix + ".y.npy")
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(open(prefix + ".pb", "rb").read())
    assert [n.op for n in graph_def.node].count("AddCustom") == 1
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        z = session.run("Identity:0", {"x:0": x, "y:0": y})
    np.testing.assert_allclose(z, (x + y) * np.linspace(0.5, 4.0, 8, dtype=np.float32), rtol=1e-6)
