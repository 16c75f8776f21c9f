"""The selftest's CPU stages and the session/device examples on TF Adapter's TensorFlows.

``make test-compat`` runs this on TensorFlow 1.15.5 and 2.6.5 (Python 3.7), the TensorFlows
Ascend users run `tf-ge-custom selftest` and the examples on; the main suite runs it on the
current TensorFlow. Python 3.7 syntax.
"""
import json
import os
import re
import subprocess
import sys

import pytest
import tensorflow as tf

TF1 = tf.__version__.startswith("1.")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMAND = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


def test_selftest_cpu_stages_pass(tmp_path):
    proc = subprocess.run([COMMAND, "selftest", "--only", "DOCTOR,CPU_ADD", "--json", "report.json"],
                          cwd=str(tmp_path), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert re.search(r"^DOCTOR=PASS \(", proc.stdout, re.M), proc.stdout
    assert re.search(r"^CPU_ADD=PASS \(", proc.stdout, re.M), proc.stdout
    with open(str(tmp_path / "report.json")) as f:
        report = json.load(f)
    assert report["versions"]["tensorflow"] == tf.__version__
    cpu_add = [s for s in report["stages"] if s["name"] == "CPU_ADD"][0]
    # TensorFlow 1.15 runs graphs only; 2.x also eagerly and in tf.function
    modes = ["graph"] if TF1 else ["graph", "eager", "tf.function"]
    assert cpu_add["figures"]["modes"] == modes
    assert cpu_add["figures"]["comparisons"] == 4 * 5 * len(modes)


def _example(name, tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], cwd=str(tmp_path), env=_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc.stdout


def test_tf1_session_example(tmp_path):
    out = _example("tf1_session.py", tmp_path)
    assert out.rstrip().endswith("TF1_SESSION=PASS"), out


@pytest.mark.skipif(TF1, reason="TensorFlow 1.15 has no TF2 runtime for the TF2 examples (npu_device is for TF 2.6.5)")
def test_tf2_examples(tmp_path):
    assert _example("tf2_npu_device.py", tmp_path).rstrip().endswith("TF2_DEVICE=PASS")
    assert _example("keras_train.py", tmp_path).rstrip().endswith("KERAS_TRAIN=PASS")
