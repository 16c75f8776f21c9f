"""``tf-ge-custom export`` as a user meets it first: quiet, quick to refuse, and able to load a
Keras model built from the user's own layer class. Each case runs the installed console script
in a fresh process; what TensorFlow itself prints (its own log lines) is the oracle for what
the command keeps out."""
import json
import os
import re
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.kind("oracle"),
              pytest.mark.fresh_process]  # what TensorFlow prints when it starts

# TensorFlow's C++ log line (absl format): severity, MMDD, time, thread, file:line]
TF_LOG_LINE = re.compile(r"^[IWEF]\d{4} \S+\s+\d+ \S+:\d+\] ", re.M)

FAKE_TENSORFLOW = '''\
import os
open(os.environ["FAKE_TF_MARK"], "a").write("imported\\n")
raise ImportError("tensorflow test double: the import was recorded")
'''

USER_LAYERS = '''\
import tensorflow as tf
import tf_ge_custom


@tf.keras.utils.register_keras_serializable(package="mine")
class EncoderBlock(tf.keras.layers.Layer):
    """The user's own layer: twice add_custom(x, y)."""

    def call(self, inputs):
        x, y = inputs
        return tf_ge_custom.add_custom(x, y) * 2.0
'''

MAKE_MODEL = '''\
import sys
import numpy as np
import tensorflow as tf
import my_layers

x = tf.keras.Input((8,), name="x")
y = tf.keras.Input((8,), name="y")
tf.keras.Model([x, y], my_layers.EncoderBlock()([x, y])).save(sys.argv[1])
np.save("x.npy", np.arange(32, dtype=np.float32).reshape(4, 8) / 7)
np.save("y.npy", np.ones((4, 8), np.float32) / 3)
'''


@pytest.fixture(scope="module")
def user_layer_model(tmp_path_factory, user):
    """The folder holding my_layers.py (the user's layer class), enc.keras (a model of it, made
    by a fresh process) and x.npy, y.npy."""
    folder = tmp_path_factory.mktemp("user-layer")
    (folder / "my_layers.py").write_text(USER_LAYERS)
    made = user.run([sys.executable, "-c", MAKE_MODEL, str(folder / "enc.keras")], folder)
    assert made.status == 0, made
    return folder


@pytest.mark.slow
def test_export_prints_no_warning_and_no_tensorflow_log_line(tf_ge_custom_cmd, models, user, tmp_path):
    ran = tf_ge_custom_cmd("export", models["saved_model"], "--output", str(tmp_path / "m"), cwd=tmp_path,
                           env=user.env(TF_CPP_MIN_LOG_LEVEL=None))
    assert ran.status == 0, ran
    assert ran.err == "", ran  # before: TensorFlow's start-up lines and a deprecation warning
    assert not TF_LOG_LINE.search(ran.out) and "Warning" not in ran.out and " is deprecated" not in ran.out, ran


@pytest.mark.slow
def test_verbose_and_the_users_own_log_level_let_tensorflow_speak(tf_ge_custom_cmd, models, user, tmp_path):
    # what this TensorFlow prints at start-up when nothing is filtered: the oracle
    probe = user.run(user.python("import tensorflow as tf", "tf.constant(1.0) + 1"), tmp_path,
                     env=user.env(TF_CPP_MIN_LOG_LEVEL="0"))
    if not TF_LOG_LINE.search(probe.err):
        pytest.fail("this TensorFlow prints no log line at start-up, so there is nothing to keep out here")
    for extra, env in ((["--verbose"], user.env(TF_CPP_MIN_LOG_LEVEL=None)),
                       ([], user.env(TF_CPP_MIN_LOG_LEVEL="0"))):
        ran = tf_ge_custom_cmd("export", models["saved_model"], "--output", str(tmp_path / "m"), "--force",
                               *extra, cwd=tmp_path, env=env)
        assert ran.status == 0, ran
        assert TF_LOG_LINE.search(ran.err), (extra, ran)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["saved_model", "checkpoint", "frozen_pb", "keras"])
def test_no_deprecated_tensorflow_call_even_when_verbose(tf_ge_custom_cmd, models, user, tmp_path, kind):
    """TensorFlow names every deprecated function it is called through (``... is deprecated``),
    once per process, through its logger: --verbose shows all of it."""
    args = ["--outputs", "z"] if kind == "checkpoint" else []
    ran = tf_ge_custom_cmd("export", models[kind], "--output", str(tmp_path / "m"), "--verbose", *args,
                           cwd=tmp_path, env=user.env(TF_CPP_MIN_LOG_LEVEL=None))
    assert ran.status == 0, ran
    # TensorFlow's notice: "<function> (from <module>) is deprecated and will be removed ...
    # Instructions for updating: ..."
    assert " is deprecated" not in ran.text and "Instructions for updating" not in ran.text, ran


def test_a_missing_model_is_refused_before_tensorflow_is_imported(tf_ge_custom_cmd, user, tmp_path):
    (tmp_path / "fake" / "tensorflow").mkdir(parents=True)
    (tmp_path / "fake" / "tensorflow" / "__init__.py").write_text(FAKE_TENSORFLOW)
    mark = tmp_path / "imported.txt"
    env = user.env(PYTHONPATH=str(tmp_path / "fake"), FAKE_TF_MARK=str(mark))
    for args, words in ((["no/such/model", "--output", "out/m"], "model not found: %s" % (tmp_path / "no/such/model")),
                        (["no/such/model", "--to", "om", "--output", "out/m"], "--to om needs the target SoC"),
                        ([str(tmp_path), "--output", "out/m"], "a directory without saved_model.pb")):
        ran = tf_ge_custom_cmd("export", *args, cwd=tmp_path, env=env)
        assert ran.status == 1 and words in ran.err, ran
        assert not mark.exists(), "TensorFlow was imported before the refusal: %r" % ran
    assert not (tmp_path / "out").exists()


def test_unknown_import_and_missing_inputs_are_refused_before_tensorflow(tf_ge_custom_cmd, models, user, tmp_path):
    (tmp_path / "fake" / "tensorflow").mkdir(parents=True)
    (tmp_path / "fake" / "tensorflow" / "__init__.py").write_text(FAKE_TENSORFLOW)
    mark = tmp_path / "imported.txt"
    env = user.env(PYTHONPATH=str(tmp_path / "fake"), FAKE_TF_MARK=str(mark))
    for args, words in ((["--import", "no_such_module_here"],
                         "--import no_such_module_here: no module no_such_module_here on the Python path or in the "
                         "working directory"),
                        (["--inputs", "missing.npy"], "cannot read input file")):
        ran = tf_ge_custom_cmd("export", models["saved_model"], "--output", "out/m", *args, cwd=tmp_path, env=env)
        assert ran.status == 1 and words in ran.err, ran
        assert not mark.exists(), "TensorFlow was imported before the refusal: %r" % ran


def _check_twice_add(pb, folder):
    """The .pb computes 2 * tf.math.add(x, y) on the user's inputs (run here by TensorFlow)."""
    import tensorflow as tf

    import tf_ge_custom  # noqa: F401  (registers AddCustom to run the graph)

    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(open(pb, "rb").read())
    record = json.load(open(os.path.splitext(pb)[0] + ".json"))
    assert [n.op for n in graph_def.node].count("AddCustom") == 1
    x, y = np.load(str(folder / "x.npy")), np.load(str(folder / "y.npy"))
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        got = session.run(record["outputs"][0]["name"], {t["name"] + ":0": v for t, v in zip(record["inputs"], (x, y))})
    np.testing.assert_array_equal(got, tf.math.add(x, y).numpy() * np.float32(2))


@pytest.mark.documents("tf-ge-custom export encoder.keras --import my_layers --output out/encoder")
@pytest.mark.slow
def test_a_keras_model_of_the_users_own_layer_exports_with_import(tf_ge_custom_cmd, user_layer_model, tmp_path):
    model = str(user_layer_model / "enc.keras")
    # not imported: one line naming the class, --import with its module, and the SavedModel route
    ran = tf_ge_custom_cmd("export", model, "--output", str(tmp_path / "a"), cwd=tmp_path)
    assert ran.status == 1, ran
    (line,) = [l for l in ran.err.splitlines() if l.strip()]
    assert line.startswith("tf-ge-custom export: error: cannot load the Keras model %s: it uses the class "
                           "'EncoderBlock' (module my_layers)" % model), line
    assert "pass --import my_layers" in line and "SavedModel" in line, line
    assert not (tmp_path / "a.pb").exists()
    # by module name, from the folder holding it
    ran = tf_ge_custom_cmd("export", model, "--output", str(tmp_path / "b"), "--import", "my_layers",
                           cwd=user_layer_model)
    assert ran.status == 0, ran
    _check_twice_add(str(tmp_path / "b.pb"), user_layer_model)
    # by file, from anywhere
    ran = tf_ge_custom_cmd("export", model, "--output", str(tmp_path / "c"), "--import",
                           str(user_layer_model / "my_layers.py"), cwd=tmp_path)
    assert ran.status == 0, ran
    _check_twice_add(str(tmp_path / "c.pb"), user_layer_model)
