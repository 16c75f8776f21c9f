"""The commands and examples a user runs, on TF Adapter's TensorFlows (1.15.5 and 2.6.5 on
Python 3.7; the main suite's TensorFlow too): the installed console script ``tf-ge-custom``
in a fresh process, on models made by another fresh process (tests/user/make_models.py),
the written ``.pb`` held against ``tf.math.add`` here: the op must be loaded before any graph is read. On the main
suite's TensorFlow the same commands are tests/user's: this file's name keeps the main suite from
collecting it, and make test-compat names it."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom  # noqa: F401  (registers AddCustom here, to run what the command wrote)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
TF1 = tf.__version__.startswith("1.")
V = tuple(int(v) for v in tf.__version__.split(".")[:2])
BIAS = {"checkpoint": 0.5, "frozen_pb": 0.5, "tf1_saved_model": 0.5}
# What a user on each TensorFlow can export: TF1 graphs everywhere; TF2 SavedModels of a
# tf.Module and of Keras 2's model.save on TensorFlow 2.x before Keras 3 (2.16).
KINDS = ["checkpoint", "frozen_pb", "tf1_saved_model", "h5"] + ([] if TF1 else ["saved_model"]) + (
    ["keras_saved_model"] if (2, 0) <= V < (2, 16) else [])


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_") and k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _run(argv, cwd, timeout=600):
    proc = subprocess.run([str(a) for a in argv], cwd=str(cwd), env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, universal_newlines=True,
                          timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    proc = _run([sys.executable, os.path.join(ROOT, "tests", "user", "make_models.py"), str(folder)]
                + [k for k in KINDS], folder)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(str(folder / "made.json")) as f:
        made = json.load(f)
    made.update(x=str(folder / "x.npy"), y=str(folder / "y.npy"))
    return made


def _check(prefix, kind, models):
    graph_def = tf.compat.v1.GraphDef()
    with open(prefix + ".pb", "rb") as f:
        graph_def.ParseFromString(f.read())
    assert [n.op for n in graph_def.node].count("AddCustom") == 1
    with open(prefix + ".json") as f:
        record = json.load(f)
    inputs = [t["name"] for t in record["inputs"]]
    output = record["outputs"][0]["name"]
    x, y = np.load(models["x"]), np.load(models["y"])
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
        want = tf.math.add(tf.constant(x), tf.constant(y)) + np.float32(BIAS.get(kind, 0.0))
        with tf.compat.v1.Session(graph=graph) as session:
            got, want = session.run([output, want], {inputs[0] + ":0": x, inputs[1] + ":0": y})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", KINDS)
def test_export_from_the_console_script(models, tmp_path, kind):
    assert kind in models, models
    prefix = str(tmp_path / "out" / "model")
    argv = [SCRIPT, "export", models[kind], "--output", prefix]
    if kind == "checkpoint":
        argv += ["--outputs", "z"]
    proc = _run(argv, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    _check(prefix, kind, models)


def test_export_to_om_dry_run_prints_atc(models, tmp_path):
    proc = _run([SCRIPT, "export", models["checkpoint"], "--outputs", "z", "--to", "om", "--soc",
                 "Ascend910B1", "--output", str(tmp_path / "m"), "--dry-run"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert any(line.startswith("would run: ") and "atc" in line for line in proc.stdout.splitlines()), proc.stdout


def test_an_h5_file_reloads_after_importing_the_layers(models, tmp_path):
    code = ("import sys, numpy as np, tensorflow as tf\n"
            "import tf_ge_custom.layers\n"
            "model = tf.keras.models.load_model(sys.argv[1], compile=False)\n"
            "print('LOADED', type(model.layers[-1]).__name__)\n")
    proc = _run([sys.executable, "-c", code, models["h5"]], tmp_path)
    assert proc.returncode == 0 and "LOADED AddCustom" in proc.stdout, proc.stderr[-4000:]


def test_demo_runs(tmp_path):
    proc = _run([sys.executable, os.path.join(ROOT, "examples", "demo.py")], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert proc.stdout.rstrip().endswith("result: PASS")
    assert ("TF1 session" if TF1 else "TF2 tf.function") in proc.stdout, proc.stdout


if TF1:  # on TensorFlow 2 they run: tests/compat/test_selftest_and_examples.py, tests/examples/
    @pytest.mark.parametrize("name", ["keras_train.py", "export_model.py", "tf2_npu_device.py"])
    def test_tf2_examples_say_what_they_need_on_tf1(tmp_path, name):
        proc = _run([sys.executable, os.path.join(ROOT, "examples", name)], tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stderr.strip() == (
            "examples/%s needs TensorFlow 2 (2.6 or later); this is TensorFlow %s. On TensorFlow "
            "1.15 run examples/tf1_session.py or examples/demo.py." % (name, tf.__version__)), proc.stderr


def test_open_device_names_this_tensorflow(tmp_path):
    code = ("from tf_ge_custom import npu\n"
            "try:\n"
            "    npu.open_device()\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    proc = _run([sys.executable, "-c", code], tmp_path)
    assert "cannot import npu_device" in proc.stdout, proc.stdout + proc.stderr
    if TF1:
        assert "this is TensorFlow %s" % tf.__version__ in proc.stdout and "npu_bridge" in proc.stdout
        assert "matches your CANN and TensorFlow (2.6.5)" not in proc.stdout
