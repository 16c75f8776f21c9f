"""Offline export end to end: a SavedModel using add_custom -> frozen .pb (-> AIR -> OM).

    python examples/export_model.py                                        # anywhere: .pb, checked, removed
    python examples/export_model.py --output out/add_model                 # the same, files kept
    python examples/export_model.py --to om --soc Ascend910B1 --output out/add_model    # CANN host

Builds a small TF2 SavedModel (``z = add_custom(x, y) * w`` with a [None, 8] batch input and
a broadcast [8] input), exports it with ``tf_ge_custom.export.export`` (freezing, checks,
verification in a fresh process; with ``--to om`` also the AIR tool and ATC), then loads the
frozen graph back and runs it on a batch, against numpy's ``(x + y) * w``. Writes the inputs
``PREFIX.x.npy`` / ``PREFIX.y.npy`` for ``tf-ge-custom run-om PREFIX.om --input PREFIX.x.npy
--input PREFIX.y.npy``. Without ``--output`` everything goes to a temporary folder, removed at
the end (the SavedModel always is). Prints ``EXPORT_MODEL=PASS`` (exit 0), or
``EXPORT_MODEL=FAIL`` and exit 1 (2: a CANN tool is missing). TensorFlow 2.
"""
import argparse
import os
import shutil
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


def run_frozen_graph(pb_path, record, x, y):
    """Run the exported frozen graph in a TF1 session, as a serving program would."""
    graph_def = tf.compat.v1.GraphDef()
    with open(pb_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    feeds = dict(zip([_tensor(t.name) for t in record.inputs], (x, y)))
    with tf.compat.v1.Session(graph=graph) as sess:
        return sess.run(_tensor(record.outputs[0].name), feeds)


def _tensor(name):
    return name if ":" in name else name + ":0"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", choices=("pb", "air", "om"), default="pb")
    parser.add_argument("--soc", help="target SoC for --to om, e.g. Ascend910B1")
    parser.add_argument("--output", help="path prefix of the files to keep (default: a temporary "
                                         "folder, removed at the end; --to air/om need it)")
    args = parser.parse_args(argv)
    if args.to != "pb" and not args.output:
        parser.error("--to %s writes files to use on the NPU: give --output PREFIX" % args.to)

    work = tempfile.mkdtemp(prefix="export-example-")
    try:
        return export_and_check(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def export_and_check(args, work):
    output = args.output or os.path.join(work, "add_model")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)  # e.g. out/ for out/add_model
    model = Scaled()
    saved = os.path.join(work, "saved_model")
    tf.saved_model.save(model, saved, signatures={"serving_default": model.serve})
    shape = "x:%d,8;y:8" % BATCH if args.to != "pb" else None
    try:
        result = export(saved, to=args.to, soc=args.soc, output=output, input_shape=shape)
    except MissingToolchainError as e:
        print("missing toolchain: %s" % e, file=sys.stderr)
        print("EXPORT_MODEL=FAIL")
        return 2
    except TfGeCustomError as e:
        print("export failed: %s" % e, file=sys.stderr)
        print("EXPORT_MODEL=FAIL")
        return 1

    rng = np.random.RandomState(0)
    x = rng.standard_normal((BATCH, 8)).astype(np.float32)
    y = rng.standard_normal(8).astype(np.float32)
    np.save(output + ".x.npy", x)
    np.save(output + ".y.npy", y)
    print("exported: " + ", ".join("%s=%s" % kv for kv in sorted(result.files.items())))
    got = run_frozen_graph(result.files["pb"], result.record, x, y)
    want = (x + y) * model.w.numpy()
    ok = got.shape == want.shape and np.array_equal(got, want)
    print("the frozen graph on a [%d, 8] batch: %s numpy's (x + y) * w"
          % (BATCH, "same as" if ok else "DIFFERENT from"))
    if "om" in result.files:
        print("next, on the NPU: tf-ge-custom run-om %s --input %s.x.npy --input %s.y.npy"
              % (result.files["om"], output, output))
    if not args.output:
        print("removed the temporary files (--output PREFIX keeps them)")
    print("EXPORT_MODEL=%s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
