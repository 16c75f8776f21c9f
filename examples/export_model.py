"""Offline export end to end: a SavedModel using add_custom -> frozen .pb (-> AIR -> OM).

    python examples/export_model.py --output out/add_model                   # anywhere: .pb
    python examples/export_model.py --to om --soc Ascend910B1 --output out/add_model    # CANN host

Builds a small TF2 SavedModel (``z = add_custom(x, y) * w`` with a [None, 8] batch input and
a broadcast [8] input), exports it with ``tf_ge_custom.export.export`` (freezing, checks,
verification in a fresh process; with ``--to om`` also the AIR tool and ATC), and writes
inputs ``PREFIX.x.npy`` / ``PREFIX.y.npy`` for ``tf-ge-custom run-om PREFIX.om --input
PREFIX.x.npy --input PREFIX.y.npy``. Exit status as ``tf-ge-custom export``'s.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

if not tf.executing_eagerly():  # TensorFlow 1.15: say so in one line, not with a traceback
    sys.exit("examples/export_model.py needs TensorFlow 2 (2.6 or later); this is TensorFlow %s. On "
             "TensorFlow 1.15 run examples/tf1_session.py or examples/demo.py." % tf.__version__)

import tf_ge_custom
from tf_ge_custom.errors import MissingToolchainError, TfGeCustomError
from tf_ge_custom.export import export

BATCH = 4  # the OM's batch: ATC needs fixed shapes (or a dynamic option)


class Scaled(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.linspace(0.5, 4.0, 8, dtype=np.float32), name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32, name="x"),
                                  tf.TensorSpec([8], tf.float32, name="y")])
    def serve(self, x, y):
        return {"z": tf_ge_custom.add_custom(x, y) * self.w}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", choices=("pb", "air", "om"), default="pb")
    parser.add_argument("--soc", help="target SoC for --to om, e.g. Ascend910B1")
    parser.add_argument("--output", required=True, help="path prefix of the files written")
    args = parser.parse_args(argv)

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)  # e.g. out/ for out/add_model
    model = Scaled()
    saved = os.path.join(tempfile.mkdtemp(prefix="export-example-"), "saved_model")
    tf.saved_model.save(model, saved, signatures={"serving_default": model.serve})
    shape = "x:%d,8;y:8" % BATCH if args.to != "pb" else None
    try:
        result = export(saved, to=args.to, soc=args.soc, output=args.output, input_shape=shape)
    except MissingToolchainError as e:
        print("missing toolchain: %s" % e, file=sys.stderr)
        return 2
    except TfGeCustomError as e:
        print("export failed: %s" % e, file=sys.stderr)
        return 1

    rng = np.random.RandomState(0)
    x = rng.standard_normal((BATCH, 8)).astype(np.float32)
    y = rng.standard_normal(8).astype(np.float32)
    np.save(args.output + ".x.npy", x)
    np.save(args.output + ".y.npy", y)
    print("exported: " + ", ".join("%s=%s" % kv for kv in sorted(result.files.items())))
    if "om" in result.files:
        print("next, on the NPU: tf-ge-custom run-om %s --input %s.x.npy --input %s.y.npy"
              % (result.files["om"], args.output, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
