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
