"""``tf-ge-custom export --import MODULE`` from a folder that also holds modules named like
installed ones: the user's module is found in the working folder, after the standard library
and the installed packages, so a ``json.py`` or ``numpy.py`` (or a ``colorsys.py`` beside a
module that imports colorsys) never replaces them. Run as users run it: the installed console
script and ``python -m tf_ge_custom``, each in a fresh process; the .pb it writes is run here by
TensorFlow (2 * tf.math.add of the inputs)."""
import json
import os
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.kind("oracle"), pytest.mark.slow]

USER_LAYERS = '''\
import colorsys  # noqa: F401  standard library modules the export has not imported before
import wave  # noqa: F401

import tensorflow as tf
import tf_ge_custom


@tf.keras.utils.register_keras_serializable(package="shadowing")
class TwiceAdd(tf.keras.layers.Layer):
    def call(self, inputs):
        x, y = inputs
        return tf_ge_custom.add_custom(x, y) * 2.0
'''

MAKE_MODEL = '''\
import sys
import tensorflow as tf
import my_layers

x = tf.keras.Input((8,), name="x")
y = tf.keras.Input((8,), name="y")
tf.keras.Model([x, y], my_layers.TwiceAdd()([x, y])).save(sys.argv[1])
'''

SHADOW = 'raise ImportError("the working folder\'s %s.py was imported instead of the installed %s")\n'

@pytest.fixture(scope="module")
def folder(tmp_path_factory, user):
    """my_layers.py and tw.keras (made by a fresh process before the look-alikes exist)."""
    folder = tmp_path_factory.mktemp("shadowing")
    (folder / "my_layers.py").write_text(USER_LAYERS)
    made = user.run([sys.executable, "-c", MAKE_MODEL, str(folder / "tw.keras")], folder)
    assert made.status == 0, made
    return folder

def _shadow(folder, names):
    for name in names:
        (folder / (name + ".py")).write_text(SHADOW % (name, name))

def _check_twice_add(pb):
    import tensorflow as tf

    import tf_ge_custom  # noqa: F401  (registers AddCustom to run the graph)

    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(open(pb, "rb").read())
    record = json.load(open(os.path.splitext(pb)[0] + ".json"))
    assert [n.op for n in graph_def.node].count("AddCustom") == 1
    x = np.arange(16, dtype=np.float32).reshape(2, 8) / 3
    y = np.full((2, 8), 0.25, np.float32)
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        got = session.run(record["outputs"][0]["name"],
                          {t["name"] + ":0": v for t, v in zip(record["inputs"], (x, y))})
    np.testing.assert_array_equal(got, tf.math.add(x, y).numpy() * np.float32(2))

def test_the_console_script_exports_beside_json_numpy_and_colorsys_look_alikes(folder, tf_ge_custom_cmd, tmp_path):
    _shadow(folder, ["json", "numpy", "colorsys", "wave"])
    try:
        ran = tf_ge_custom_cmd("export", "tw.keras", "--import", "my_layers",
                               "--output", str(tmp_path / "tw"), cwd=folder)
    finally:
        for name in ("json", "numpy", "colorsys", "wave"):
            (folder / (name + ".py")).unlink()
    assert ran.status == 0, ran
    assert "was imported instead of" not in ran.err
    _check_twice_add(str(tmp_path / "tw.pb"))

def test_python_m_puts_the_working_folder_first_and_the_export_moves_it_last(folder, tf_ge_custom_cmd, tmp_path):
    """``python -m`` starts with the working folder first on sys.path (Python's own rule, so
    a json.py there breaks Python's start already); what the user's module imports after
    ``--import`` put it last is the installed module."""
    _shadow(folder, ["colorsys", "wave"])
    try:
        ran = tf_ge_custom_cmd("export", "tw.keras", "--import", "my_layers",
                               "--output", str(tmp_path / "tw"), cwd=folder, launcher="python -m")
    finally:
        for name in ("colorsys", "wave"):
            (folder / (name + ".py")).unlink()
    assert ran.status == 0, ran
    _check_twice_add(str(tmp_path / "tw.pb"))


@pytest.mark.kind("plumbing")
def test_import_modules_takes_the_users_module_after_the_installed_ones(tmp_path, monkeypatch):
    """In this process (where a mutated package copy on PYTHONPATH reaches it too): the working
    folder, first on sys.path as python -m puts it, ends up last, once; its colorsys.py look-alike
    is not what the user's module gets."""
    import colorsys as installed

    from tf_ge_custom.export import pipeline

    (tmp_path / "users_module_here.py").write_text("import colorsys\nFOUND = colorsys.__file__\n")
    _shadow(tmp_path, ["colorsys"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path)] + [p for p in sys.path if p])
    monkeypatch.delitem(sys.modules, "colorsys")
    monkeypatch.delitem(sys.modules, "users_module_here", raising=False)
    pipeline.import_modules(["users_module_here"])
    assert sys.path[-1] == str(tmp_path) and sys.path.count(str(tmp_path)) == 1 and "" not in sys.path
    assert sys.modules["users_module_here"].FOUND == installed.__file__
