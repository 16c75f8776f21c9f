"""A model without AddCustom exports like any TensorFlow graph, and the report says so in one
line (a user who expected the op in it learns it is not there before an OM is built)."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
NOTE = ("  note: none in this model, so it exports as any TensorFlow graph and runs without "
        "AddCustom")
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
    lines = _export(tmp_path, "tf.math.add(x, 2.0 * x)")
    at = lines.index("AddCustom nodes (0):")
    assert lines[at + 1] == NOTE
    assert lines[at + 2].startswith("ops (")
    assert (tmp_path / "out" / "m.pb").is_file()


@pytest.mark.slow
def test_a_model_with_add_custom_has_no_note(tmp_path):
    lines = _export(tmp_path, "tf_ge_custom.add_custom(x, 2.0 * x)")
    at = lines.index("AddCustom nodes (1):")
    assert not lines[at + 1].startswith("  note:") and NOTE not in lines
