"""A small Keras model with add_custom in it: trained a few steps, saved, reloaded, checked.

    python examples/keras_train.py

The model adds a learned projection of one input to the other through the ``AddCustom``
layer (``tf_ge_custom.layers``), then a dense head; ``fit`` trains it on a synthetic
regression for a few epochs, so gradients flow through ``add_custom`` (they are
``tf.math.add``'s). On an Ascend host with npu_device the model runs on the NPU
(``npu.open_device``); elsewhere on the CPU kernel. The model is saved in Keras' own format
and loaded back (``import tf_ge_custom.layers`` registers the layer, as a new process would
need), and the reloaded model must predict exactly what the trained one does. Prints the loss
per epoch, then ``KERAS_TRAIN=PASS`` (exit 0) or ``KERAS_TRAIN=FAIL`` (exit 1). TensorFlow 2.
"""
import argparse
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import tensorflow as tf

if not tf.executing_eagerly():  # TensorFlow 1.15: say so in one line, not with a traceback
    sys.exit("examples/keras_train.py needs TensorFlow 2 (2.6 or later); this is TensorFlow %s. On "
             "TensorFlow 1.15 run examples/tf1_session.py or examples/demo.py." % tf.__version__)

import tf_ge_custom
import tf_ge_custom.layers  # registers the AddCustom layer for saving and loading
from tf_ge_custom import npu

FEATURES = 16


def build_model():
    a, b = tf.keras.Input((FEATURES,), name="a"), tf.keras.Input((FEATURES,), name="b")
    projected = tf.keras.layers.Dense(FEATURES, name="project")(a)
    h = tf_ge_custom.layers.AddCustom(name="add_custom")([projected, b])
    out = tf.keras.layers.Dense(1, name="head")(tf.keras.layers.Activation("tanh")(h))
    return tf.keras.Model([a, b], out)


def data(n, seed):
    rng = np.random.RandomState(seed)
    a = rng.standard_normal((n, FEATURES)).astype(np.float32)
    b = rng.standard_normal((n, FEATURES)).astype(np.float32)
    target = np.tanh(a[:, :1] - 0.5 * b[:, 1:2]).astype(np.float32)
    return [a, b], target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--output", help="folder for the saved model (default: a temporary one)")
    args = parser.parse_args(argv)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device = npu.open_device(precision_mode_v2="origin", fallback_to_cpu=True)
    for w in caught:
        print("note: %s" % w.message)
    print("running on: %s" % ("the NPU (npu_device)" if device is not None else "the CPU"))

    tf.random.set_seed(0)
    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    inputs, target = data(512, 1)
    history = model.fit(inputs, target, batch_size=64, epochs=args.epochs, verbose=0, shuffle=False)
    losses = history.history["loss"]
    for epoch, loss in enumerate(losses, 1):
        print("  epoch %d  loss %.5f" % (epoch, loss))
    learned = losses[-1] < 0.5 * losses[0]

    folder = args.output or tempfile.mkdtemp(prefix="keras-add-custom-")
    try:
        os.makedirs(folder, exist_ok=True)
        # Keras' own format where it exists (TensorFlow 2.13+, Keras 3); H5 on older ones (2.6.5)
        major, minor = (int(p) for p in tf.__version__.split(".")[:2])
        path = os.path.join(folder, "add_custom_model" + (".keras" if (major, minor) >= (2, 13) else ".h5"))
        model.save(path)
        reloaded = tf.keras.models.load_model(path)
        probe, _ = data(32, 2)
        same = np.array_equal(reloaded.predict(probe, verbose=0), model.predict(probe, verbose=0))
        has_layer = any(isinstance(layer, tf_ge_custom.layers.AddCustom) for layer in reloaded.layers)
    finally:
        if not args.output:  # the temporary folder goes, whatever happened
            shutil.rmtree(folder, ignore_errors=True)
    print("loss %.5f -> %.5f over %d epochs: %s" % (losses[0], losses[-1], len(losses),
                                                      "went down" if learned else "DID NOT go down by half"))
    print("saved %s and reloaded it: %s, %s" % (
        os.path.basename(path), "AddCustom layer restored" if has_layer else "NO AddCustom layer",
        "same predictions" if same else "DIFFERENT predictions"))
    ok = learned and same and has_layer
    print("KERAS_TRAIN=%s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
