"""Fixtures of the export tests: small models of every kind, test doubles, a fake OPP root.

The models compute known functions of their inputs with known weights, so that every test
can hold a frozen graph (or an OM double's output) against numpy, not against the source
model alone. The doubles in doubles/ stand in for `atc`, the AIR tool and the OM runner to
test our process handling only; they prove nothing about the real tools.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
import tf_ge_custom.layers  # noqa: F401  (the Keras layer)

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "manifests"
V = np.array([1.5, -2.0, 3.0], np.float32)  # the SavedModel's variable
C1 = np.array([1.0, 2.0, 3.0], np.float32)  # constants fed to an AddCustom
C2 = np.array([10.0, 20.0, 30.0], np.float32)
W = np.arange(8, dtype=np.float32).reshape(4, 2) / 4  # the Keras Dense kernel
BIAS = np.array([0.5, -1.0], np.float32)


class Models(object):
    """Paths of the saved models and the numpy oracle of each."""

    V, C1, C2, W, BIAS = V, C1, C2, W, BIAS

    def __init__(self, root):
        self.root = root

    @staticmethod
    def saved_model_oracle(a, b):
        return {"out": (a + b) * V + (C1 + C2), "aux": a}

    @staticmethod
    def keras_oracle(a, b):
        return [(a + b) @ W + BIAS, a + b]


def _saved_model(path):
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(V)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a"),
                                      tf.TensorSpec([3], tf.float32, name="b")])
        def serve(self, a, b):
            constant = tf_ge_custom.add_custom(tf.constant(C1), tf.constant(C2))  # all-constant inputs
            return {"out": tf_ge_custom.add_custom(a, b) * self.v + constant, "aux": tf.identity(a)}

    model = Model()
    tf.saved_model.save(model, path, signatures={"serving_default": model.serve,
                                                 "other": model.serve.get_concrete_function()})


def _keras(root):
    a = tf.keras.Input((4,), name="a")
    b = tf.keras.Input((4,), name="b")
    h = tf_ge_custom.layers.AddCustom()([a, b])
    dense = tf.keras.layers.Dense(2)
    model = tf.keras.Model([a, b], [dense(h), h])
    dense.set_weights([W, BIAS])
    model.save(str(root / "model.keras"))
    model.save(str(root / "model.h5"))


def tf1_checkpoint(prefix):
    """A TF1 training graph saved as meta graph + checkpoint: z = (x + y) * w + (c1 + c2).

    x: [None, 3] and y: [3] broadcast; w is restored from the checkpoint (V); the graph also
    holds an optimizer step, a saver and an is_training switch that only dropout reads.
    """
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [3], name="y")
        training = tf.compat.v1.placeholder_with_default(False, [], name="is_training")
        w = tf.compat.v1.get_variable("w", initializer=tf.zeros([3]))
        z = tf_ge_custom.add_custom(x, y) * w + tf_ge_custom.add_custom(tf.constant(C1), tf.constant(C2))
        z = tf.compat.v1.cond(training, lambda: tf.nn.dropout(z, rate=0.5), lambda: z)
        z = tf.identity(z, name="z")
        loss = tf.reduce_sum(z * z)
        tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train_step")
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(w.assign(V))
            saver.save(session, prefix)
    return prefix


def frozen_add_pb(path, shape=(2, 3)):
    """A frozen GraphDef: Placeholders x, y of ``shape`` and z = AddCustom(x, y)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape, name="x")
        y = tf.compat.v1.placeholder(tf.float32, shape, name="y")
        tf.identity(tf_ge_custom.add_custom(x, y), name="z")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    return path


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    _saved_model(str(root / "saved_model"))
    _keras(root)
    tf1_checkpoint(str(root / "ckpt" / "model"))
    frozen_add_pb(str(root / "add.pb"))
    frozen_add_pb(str(root / "add_dynamic.pb"), (None, 3))
    m = Models(root)
    m.saved_model = str(root / "saved_model")
    m.keras = str(root / "model.keras")
    m.h5 = str(root / "model.h5")
    m.meta = str(root / "ckpt" / "model.meta")
    m.pb = str(root / "add.pb")
    m.pb_dynamic = str(root / "add_dynamic.pb")
    return m


@pytest.fixture
def doubles(tmp_path):
    """``{name: executable}`` for the doubles (wrappers running them with this Python)."""
    out = {}
    for name in ("atc", "air_tool", "om_runner"):
        wrapper = tmp_path / ("%s_double" % name)
        wrapper.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (sys.executable, HERE / "doubles" / ("%s_double.py" % name)))
        wrapper.chmod(0o755)
        out[name] = str(wrapper)
    return out


@pytest.fixture
def fake_opp_root(tmp_path):
    """An OPP root with stand-in GE libraries and float32/int32 npubins for Ascend910B1."""
    root = tmp_path / "opp"
    arch = tf_ge_custom.opp.host_arch()
    for rel in ("op_graph/lib/linux/%s/libtf_ge_custom_ge.so" % arch,
                "framework/tensorflow/libtf_ge_custom_parsers.so"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"stand-in")
    kernels = root / "kernels" / "Ascend910B1"
    kernels.mkdir(parents=True)
    shutil.copy(str(FIXTURES / "valid_binaries.json"), str(kernels / "manifest.json"))
    for binary in (FIXTURES / "valid_binaries").iterdir():
        shutil.copy(str(binary), str(kernels / binary.name))
    return str(root)


@pytest.fixture
def tool_env(tmp_path, doubles):
    """An environment with the doubles as atc / AIR tool / OM runner and no CANN."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    env.update({"TF_GE_CUSTOM_ATC": doubles["atc"], "TF_GE_CUSTOM_AIR_TOOL": doubles["air_tool"],
                "TF_GE_CUSTOM_OM_RUNNER": doubles["om_runner"], "ASCEND_HOME_PATH": str(tmp_path / "cann"),
                "TF_GE_CUSTOM_TEST_RECORD": str(tmp_path / "record.json")})
    return env


def _alive(pid):
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except IOError:
        return False


@pytest.fixture
def alive():
    """``alive(pid)``, waiting up to 5 s for a stopped process (and its reaping) to go."""
    def check(pid):
        for _ in range(50):
            if not _alive(pid):
                return False
            time.sleep(0.1)
        return True
    return check


@pytest.fixture
def read_record(tmp_path):
    def read(suffix=""):
        path = tmp_path / ("record.json" + suffix)
        return json.loads(path.read_text()) if path.exists() else None
    return read


@pytest.fixture
def run_graph():
    """Run a GraphDef in a session: ``run_graph(graph_def, {input: value}, [tensor names])``."""
    def run(graph_def, feeds, fetches):
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run(fetches, {name + ":0": value for name, value in feeds.items()})
    return run


@pytest.fixture
def cli(capsys):
    """Run ``tf-ge-custom ARGS`` in this process: (exit status, stdout, stderr)."""
    from tf_ge_custom.cli import main

    def run(args, env=None):
        old = dict(os.environ)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        try:
            status = main(list(args))
        finally:
            os.environ.clear()
            os.environ.update(old)
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    return run


@pytest.fixture
def cli_process(tmp_path):
    """Start ``tf-ge-custom ARGS`` as a new process (a Popen; stdout/stderr piped)."""
    def start(args, env=None):
        full = dict(os.environ if env is None else env)
        full.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        full.pop("PYTHONPATH", None)
        return subprocess.Popen([sys.executable, "-m", "tf_ge_custom"] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True, env=full, cwd=str(tmp_path))
    return start
