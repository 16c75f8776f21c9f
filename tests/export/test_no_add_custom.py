"""A model without any of the package's ops exports like any TensorFlow graph, and the report
says so in one line (a user who expected an op in it learns it is not there before an OM is
built)."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

from tf_ge_custom import op_def

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
# every op of the records, in their order (an op added to them included), in words written
# out here: "A and B", "A, B or C"
TYPES = [op.type_name for op in op_def.OPS]


def _in_words(names, conjunction):
    return names[0] if len(names) == 1 else "%s %s %s" % (", ".join(names[:-1]), conjunction, names[-1])


NOTE = ("  note: none in this model, so it exports as any TensorFlow graph and runs without "
        "%s" % _in_words(TYPES, "or"))
HEADER = _in_words(TYPES, "and") + " nodes (%d):"
SAVE = r"""
import sys
import tensorflow as tf
import tf_ge_custom

class Model(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def serve(self, x):
        return {"z": %s}

model = Model()
tf.saved_model.save(model, sys.argv[1], signatures={"serving_default": model.serve})
"""


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env


def _export(tmp_path, body):
    model = tmp_path / "model"
    proc = subprocess.run([sys.executable, "-c", SAVE % body, str(model)], env=_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    proc = subprocess.run([SCRIPT, "export", str(model), "--to", "pb", "--output", str(tmp_path / "out" / "m")],
                          env=_env(), cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc.stdout.splitlines()


@pytest.mark.slow
def test_a_model_without_add_custom_exports_with_a_one_line_note(tmp_path):
    assert TYPES[:2] == ["AddCustom", "LeakyReluCustom"]
    lines = _export(tmp_path, "tf.math.add(x, 2.0 * x)")
    at = lines.index(HEADER % 0)
    assert lines[at + 1] == NOTE
    assert lines[at + 2].startswith("ops (")
    assert (tmp_path / "out" / "m.pb").is_file()


@pytest.mark.slow
def test_a_model_with_both_ops_has_no_note_and_exports_a_verified_pb_holding_both(tmp_path):
    lines = _export(tmp_path, "tf_ge_custom.leaky_relu_custom(tf_ge_custom.add_custom(x, 2.0 * x), alpha=-0.3)")
    at = lines.index(HEADER % 2)
    assert not lines[at + 1].startswith("  note:") and NOTE not in lines
    nodes = lines[at + 1:at + 3]
    # AddCustom's line as it always was (its two input shapes), the other op's named
    assert nodes[0].split()[1:] == ["float32", "[?,", "4]", "+", "[?,", "4]"], nodes
    assert nodes[1].split()[1:] == ["float32", "[?,", "4]", "(LeakyReluCustom)"], nodes
    # the export's own verification: the frozen graph against the SavedModel, in a fresh process
    at = [l for l in lines if l.startswith("verification (fresh process")]
    assert at and lines[lines.index(at[0]) + 1].split() == ["z", "max", "|error|", "=", "0", "OK"], lines
    # the frozen graph computes tf.nn.leaky_relu(x + 2x, -0.3), run here by TensorFlow
    check = r"""
import sys
import numpy as np
import tensorflow as tf
import tf_ge_custom
import json
graph_def = tf.compat.v1.GraphDef()
graph_def.ParseFromString(open(sys.argv[1] + ".pb", "rb").read())
record = json.load(open(sys.argv[1] + ".json"))
ops = sorted(n.op for n in graph_def.node if n.op.endswith("Custom"))
assert ops == ["AddCustom", "LeakyReluCustom"], ops
x = np.random.RandomState(5).standard_normal((3, 4)).astype(np.float32)
graph = tf.Graph()
with graph.as_default():
    tf.graph_util.import_graph_def(graph_def, name="")
    (inp,), (out,) = record["inputs"], record["outputs"]
    with tf.compat.v1.Session(graph=graph) as s:
        got = s.run(out["name"], {inp["name"] + ":0": x})
want = tf.nn.leaky_relu(tf.math.add(x, 2.0 * x), alpha=-0.3).numpy()
np.testing.assert_array_equal(got, want)
print("SAME")
"""
    proc = subprocess.run([sys.executable, "-c", check, str(tmp_path / "out" / "m")], env=_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    assert proc.returncode == 0 and "SAME" in proc.stdout, proc.stdout[-3000:]
