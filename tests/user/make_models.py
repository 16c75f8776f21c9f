"""Builds, in a fresh process, the models a user exports (run by tests/user/conftest.py).

    python make_models.py FOLDER [KIND ...]

Each model computes ``z = add_custom(x, y)`` over float32 [4, 8] inputs named x and y, with
a variable term where the format has variables (so that freezing has work to do):

  saved_model/   TF2: a tf.Module whose tf.function calls tf_ge_custom.add_custom
  ckpt/model.meta + checkpoint   TF1: a graph with a variable, saved by tf.compat.v1.train.Saver
  frozen.pb      a frozen GraphDef holding AddCustom
  model.keras, model.h5   a Keras functional model with the AddCustom layer
  tf1_saved_model/, keras_saved_model/   (asked for by name) simple_save's, Keras 2's model.save
  variables_saved_model/, dense.keras, dense.h5   (asked for by name) with weights to damage:
                 a tf.Module holding a variable, a Keras model with a Dense layer
  x.npy, y.npy   inputs

Writes FOLDER/made.json: {kind: path} of what this TensorFlow could make.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf

import tf_ge_custom

SHAPE = (4, 8)
BIAS = 0.5  # the TF1 models add a variable holding BIAS: z = add_custom(x, y) + BIAS


def saved_model(folder):
    class Adder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(SHAPE, tf.float32, name="x"),
                                      tf.TensorSpec(SHAPE, tf.float32, name="y")])
        def __call__(self, x, y):
            return {"z": tf_ge_custom.add_custom(x, y)}

    adder = Adder()
    path = os.path.join(folder, "saved_model")
    tf.saved_model.save(adder, path, signatures={"serving_default": adder.__call__})
    return path


def _tf1_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, SHAPE, name="x")
        y = tf.compat.v1.placeholder(tf.float32, SHAPE, name="y")
        bias = tf.compat.v1.get_variable("bias", initializer=tf.constant(BIAS, tf.float32, SHAPE))
        tf.identity(tf_ge_custom.add_custom(x, y) + bias, name="z")
    return graph


def checkpoint(folder):
    graph = _tf1_graph()
    prefix = os.path.join(folder, "ckpt", "model")
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        session.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver().save(session, prefix)
    return prefix + ".meta"


def frozen_pb(folder):
    graph = _tf1_graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        session.run(tf.compat.v1.global_variables_initializer())
        graph_def = tf.compat.v1.graph_util.convert_variables_to_constants(
            session, graph.as_graph_def(), ["z"])
    path = os.path.join(folder, "frozen.pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString())
    return path


def tf1_saved_model(folder):
    graph = _tf1_graph()
    path = os.path.join(folder, "tf1_saved_model")
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as session:
        session.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.saved_model.simple_save(
            session, path, inputs={"x": graph.get_tensor_by_name("x:0"), "y": graph.get_tensor_by_name("y:0")},
            outputs={"z": graph.get_tensor_by_name("z:0")})
    return path


def keras_saved_model(folder):
    """Keras 2's model.save(FOLDER): a SavedModel with keras_metadata.pb (and an optimizer)."""
    model = _keras_model()
    model.compile(optimizer="adam", loss="mse")
    path = os.path.join(folder, "keras_saved_model")
    model.save(path)
    return path


def _keras_model(dense=False):
    """The AddCustom layer on inputs x and y; with ``dense``, a Dense layer after it (weights)."""
    import tf_ge_custom.layers

    keras = tf.keras
    x = keras.Input(SHAPE[1:], name="x")
    y = keras.Input(SHAPE[1:], name="y")
    z = tf_ge_custom.layers.AddCustom()([x, y])
    return keras.Model([x, y], keras.layers.Dense(4)(z) if dense else z)


def _keras_saver(name, dense=False):
    def save(folder):
        path = os.path.join(folder, name)
        _keras_model(dense).save(path)
        return path
    return save


keras_file, h5_file = _keras_saver("model.keras"), _keras_saver("model.h5")
dense_keras, dense_h5 = _keras_saver("dense.keras", dense=True), _keras_saver("dense.h5", dense=True)


def variables_saved_model(folder):
    class Shifted(tf.Module):
        def __init__(self):
            super(Shifted, self).__init__()
            self.shift = tf.Variable(np.arange(SHAPE[0] * SHAPE[1], dtype=np.float32).reshape(SHAPE))

        @tf.function(input_signature=[tf.TensorSpec(SHAPE, tf.float32, name="x"),
                                      tf.TensorSpec(SHAPE, tf.float32, name="y")])
        def __call__(self, x, y):
            return {"z": tf_ge_custom.add_custom(x, y) + self.shift}

    shifted = Shifted()
    path = os.path.join(folder, "variables_saved_model")
    tf.saved_model.save(shifted, path, signatures={"serving_default": shifted.__call__})
    return path


MAKERS = {"saved_model": saved_model, "checkpoint": checkpoint, "frozen_pb": frozen_pb,
          "keras": keras_file, "h5": h5_file, "tf1_saved_model": tf1_saved_model,
          "keras_saved_model": keras_saved_model, "variables_saved_model": variables_saved_model,
          "dense_keras": dense_keras, "dense_h5": dense_h5}
DEFAULT = ("saved_model", "checkpoint", "frozen_pb", "keras", "h5")
TF2_ONLY = ("saved_model", "keras", "variables_saved_model", "dense_keras")  # tf.Module SavedModels, .keras files


def main(folder, kinds):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.RandomState(7)
    for name in ("x", "y"):
        np.save(os.path.join(folder, name + ".npy"), rng.standard_normal(SHAPE).astype(np.float32))
    made = {}
    version = tuple(int(v) for v in tf.__version__.split(".")[:2])
    for kind in kinds or DEFAULT:
        if kind in TF2_ONLY and version < (2, 0):
            continue
        if kind in ("keras", "dense_keras") and version < (2, 12):
            continue  # the .keras format came with Keras 2.12
        if kind == "keras_saved_model" and not (2, 0) <= version < (2, 16):
            continue  # Keras 3 (TensorFlow 2.16+) saves no SavedModel with model.save
        made[kind] = MAKERS[kind](folder)
    with open(os.path.join(folder, "made.json"), "w") as f:
        json.dump(made, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
