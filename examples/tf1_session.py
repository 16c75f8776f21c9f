"""TF1: a graph with add_custom run by an NPU session (npu_bridge), checked against tf.math.add.

    python examples/tf1_session.py

The scenario of CANN's Triton sample for TensorFlow (``z = add_custom(x, y)`` on float32
[8, 2048] in a TF1 session), done so that it runs where the sample fails:

- ``import tf_ge_custom`` comes first: it registers the op and puts the package's OPP root
  (JSON, GE library, npubins) into ``ASCEND_CUSTOM_OPP_PATH`` before any session reads it;
- ``npu.session_config`` imports ``npu_bridge`` (the sample forgets it), adds the
  ``NpuOptimizer`` with validated options and turns off the Grappler passes GE cannot take;
- ``precision_mode_v2="origin"`` keeps float32 as float32 (NPU inference defaults to fp16);
- every dtype the op has, and a broadcast bias ([8, 2048] + [2048]), against ``tf.math.add``
  run on the CPU; the run's partition graphs say where ``AddCustom`` ran.

Without TF Adapter the same code runs on the CPU kernel (one warning says why). Prints one
line per dtype, then ``TF1_SESSION=PASS`` (exit 0) or ``TF1_SESSION=FAIL`` (exit 1). Runs on
TensorFlow 1.15 (TF Adapter's) and 2.x.
"""
import argparse
import sys
import warnings

import numpy as np
import tensorflow as tf

import tf_ge_custom  # first: before any session reads ASCEND_CUSTOM_OPP_PATH
from tf_ge_custom import npu

tf.compat.v1.disable_eager_execution()
SHAPE = (8, 2048)
# one unit in the last place at 1.0: the NPU's sum may differ from the CPU's by at most that much
EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "int32": 0.0}


def inputs(dtype, seed):
    rng = np.random.RandomState(seed)
    x, bias = rng.standard_normal(SHAPE) * 8, rng.standard_normal(SHAPE[1:]) * 8
    if dtype == "int32":
        return x.astype(np.int32), bias.astype(np.int32)
    numpy_type = tf.as_dtype(dtype).as_numpy_dtype
    return x.astype(np.float32).astype(numpy_type), bias.astype(np.float32).astype(numpy_type)


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # --help
    with warnings.catch_warnings(record=True) as caught:  # printed below, once
        warnings.simplefilter("always")
        config = npu.session_config(precision_mode_v2="origin")
    for w in caught:
        print("note: %s" % w.message)

    dtypes = tf_ge_custom.op_def.ADD_CUSTOM.dtypes
    values = [inputs(dtype, seed) for seed, dtype in enumerate(dtypes)]

    graph = tf.Graph()
    with graph.as_default():
        feeds, outputs = {}, []
        for dtype, (x_value, bias_value) in zip(dtypes, values):
            x = tf.compat.v1.placeholder(dtype, SHAPE, name="x_" + dtype)
            bias = tf.compat.v1.placeholder(dtype, SHAPE[1:], name="bias_" + dtype)
            feeds[x], feeds[bias] = x_value, bias_value
            outputs.append((tf_ge_custom.add_custom(x, x), tf_ge_custom.add_custom(x, bias)))

    options = tf.compat.v1.RunOptions(output_partition_graphs=True)  # to see where AddCustom ran
    metadata = tf.compat.v1.RunMetadata()
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        results = session.run(outputs, feeds, options=options, run_metadata=metadata)

    # The reference: tf.math.add in a plain session on the CPU.
    reference = tf.Graph()
    with reference.as_default(), tf.device("/cpu:0"):
        expected = []
        for x_value, bias_value in values:
            x, bias = tf.constant(x_value), tf.constant(bias_value)
            expected.append((tf.math.add(x, x), tf.math.add(x, bias)))
    with tf.compat.v1.Session(graph=reference) as session:
        expected = session.run(expected)

    ops = [node.op for partition in metadata.partition_graphs for node in partition.node]
    if ops.count("AddCustom"):
        print("AddCustom ran on: the host's CPU kernel (%d AddCustom nodes in the partition graphs)"
              % ops.count("AddCustom"))
    else:
        print("AddCustom ran on: the NPU, inside %d GeOp node(s)" % ops.count("GeOp"))
    ok = True
    for dtype, got, want in zip(dtypes, results, expected):
        errors = []
        for g, w in zip(got, want):
            g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
            allowed = EPS[dtype] * np.abs(w)  # one rounding of the sum
            errors.append(float(np.max(np.abs(g - w) - allowed)) if g.shape == w.shape else float("inf"))
        good = max(errors) <= 0
        ok &= good
        print("  %-9s x + x and x + bias[2048]: %s" % (dtype, "OK" if good else "MISMATCH"))
    print("TF1_SESSION=%s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
