"""TF2: add_custom in a tf.function on TF Adapter's NPU device (npu_device), checked.

    python examples/tf2_npu_device.py

``npu.open_device`` sets validated options on ``npu_device.global_options()`` and opens the
NPU as the default device (import ``tf_ge_custom`` before it: the adapter reads
``ASCEND_CUSTOM_OPP_PATH`` when the device opens). ``fallback_to_cpu=True`` lets the same
program run on a host without npu_device (one warning says so); drop it on an Ascend host to
have a missing stack fail loudly. One ``tf.function`` with unknown batch size serves every
dtype and batch, a broadcast bias included; each result is compared with ``tf.math.add`` run
on the CPU. Prints the device that produced the results, one line per dtype, then
``TF2_DEVICE=PASS`` (exit 0) or ``TF2_DEVICE=FAIL`` (exit 1).
"""
import argparse
import sys
import warnings

import numpy as np
import tensorflow as tf

if not tf.executing_eagerly():  # TensorFlow 1.15: say so in one line, not with a traceback
    sys.exit("examples/tf2_npu_device.py needs TensorFlow 2 (2.6 or later); this is TensorFlow %s. On "
             "TensorFlow 1.15 run examples/tf1_session.py or examples/demo.py." % tf.__version__)

import tf_ge_custom  # first: before the device opens
from tf_ge_custom import npu

# one unit in the last place at 1.0: the NPU's sum may differ from the CPU's by at most that much
EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "int32": 0.0}


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # --help
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device = npu.open_device(precision_mode_v2="origin", fallback_to_cpu=True)
    for w in caught:
        print("note: %s" % w.message)

    ok, where = True, set()
    rng = np.random.RandomState(0)
    for dtype in tf_ge_custom.op_def.ADD_CUSTOM.dtypes:
        @tf.function(input_signature=[tf.TensorSpec([None, 2048], dtype), tf.TensorSpec([2048], dtype)])
        def step(x, bias):
            return tf_ge_custom.add_custom(x, bias)

        for batch in (8, 3):  # one traced function, two batch sizes
            x = tf.cast(rng.standard_normal((batch, 2048)) * 8, dtype)
            bias = tf.cast(rng.standard_normal(2048) * 8, dtype)
            z = step(x, bias)
            where.add(z.device)
            with tf.device("/cpu:0"):
                want = tf.math.add(tf.identity(x), tf.identity(bias)).numpy()
            got, want = z.numpy().astype(np.float64), want.astype(np.float64)
            good = got.shape == want.shape and bool(np.all(np.abs(got - want) <= EPS[dtype] * np.abs(want)))
            ok &= good
            print("  %-9s [%d, 2048] + bias[2048]: %s" % (dtype, batch, "OK" if good else "MISMATCH"))
    print("device: %s; results on %s" % ("the NPU (npu_device)" if device is not None else "CPU (no npu_device)",
                                          ", ".join(sorted(where))))
    print("TF2_DEVICE=%s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
