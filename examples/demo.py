"""The main job (``make demo``): a small TF graph using add_custom, checked against tf.math.add.

On an Ascend host with TF Adapter, the graph runs through an NPU session (TF1,
``npu_bridge``) or the NPU device (TF2, ``npu_device``); everywhere else on the CPU kernel.
It prints the device that actually ran the AddCustom node and the max error per dtype,
and exits non-zero when a result differs.
"""
import argparse
import importlib
import sys

import numpy as np
import tensorflow as tf

import tf_ge_custom

SHAPE = (8, 2048)
DTYPES = tf_ge_custom.op_def.ADD_CUSTOM.dtypes


def _importable(name):
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def _inputs(dtype, seed):
    rng = np.random.RandomState(seed)
    if dtype == "int32":
        return rng.randint(-1000, 1000, SHAPE).astype(np.int32), rng.randint(-1000, 1000, SHAPE[1:]).astype(np.int32)
    # numpy's own casts (bfloat16: TensorFlow's numpy type): no eager tensor, so that TF 1.15's
    # graph mode runs this too
    as_dtype = tf.as_dtype(dtype).as_numpy_dtype
    x = rng.standard_normal(SHAPE).astype(np.float32).astype(as_dtype)
    y = rng.standard_normal(SHAPE[1:]).astype(np.float32).astype(as_dtype)
    return x, y  # y broadcasts over the first dimension


def _max_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want))) if got.size else 0.0


def _devices_that_ran(run_metadata, op_type="AddCustom"):
    devices = set()
    for dev in run_metadata.step_stats.dev_stats:
        for node in dev.node_stats:
            if node.node_name.split("/")[0].startswith(op_type) or "GeOp" in node.node_name:
                devices.add(dev.device)
    return sorted(devices)


def run_tf1_session(config):
    """Build the graph once per dtype and run it in one session; return rows of results."""
    rows = []
    graph = tf.Graph()
    with graph.as_default():
        feeds, outputs = {}, []
        for i, dtype in enumerate(DTYPES):
            x_np, y_np = _inputs(dtype, i)
            px = tf.compat.v1.placeholder(dtype, x_np.shape, name="x_%s" % dtype)
            py = tf.compat.v1.placeholder(dtype, y_np.shape, name="y_%s" % dtype)
            z = tf_ge_custom.add_custom(px, py, name="AddCustom_%s" % dtype)
            ref = tf.math.add(px, py, name="reference_%s" % dtype)
            feeds.update({px: x_np, py: y_np})
            outputs.append((dtype, z, ref))
        opts = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        meta = tf.compat.v1.RunMetadata()
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
            values = sess.run([(z, ref) for _, z, ref in outputs], feeds, options=opts, run_metadata=meta)
    devices = _devices_that_ran(meta)
    for (dtype, _, _), (got, want) in zip(outputs, values):
        rows.append((dtype, got.shape, _max_error(got, want)))
    return devices, rows


def run_tf2_function():
    """Run the same computation as a tf.function on the default device (the NPU once opened)."""
    rows, devices = [], set()
    for i, dtype in enumerate(DTYPES):
        x_np, y_np = _inputs(dtype, i)
        f = tf.function(lambda a, b: (tf_ge_custom.add_custom(a, b), tf.math.add(a, b)))
        got, want = f(tf.constant(x_np), tf.constant(y_np))
        devices.add(got.device)
        rows.append((dtype, tuple(got.shape), _max_error(got.numpy(), want.numpy())))
    return sorted(devices), rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="force the CPU even when TF Adapter is present")
    args = parser.parse_args(argv)

    config = None
    # The path is chosen here, once: a TF1 session (npu_bridge, or TensorFlow 1.15 without
    # eager execution) or a TF2 tf.function (npu_device, or TensorFlow 2 on the CPU).
    tf2 = tf.executing_eagerly()
    run = run_tf2_function if tf2 else run_tf1_session
    mode = "CPU (TF Adapter not installed: npu_bridge / npu_device not importable)"
    if not args.cpu and _importable("npu_bridge"):
        import tf_ge_custom.npu as npu  # options checked before the adapter reads them

        config = npu.session_config(precision_mode_v2="origin")
        mode = "NPU through TF Adapter (npu_bridge, TF1 session)"
        run = run_tf1_session
    elif not args.cpu and tf2 and _importable("npu_device"):
        import tf_ge_custom.npu as npu  # options checked before npu_device reads them

        npu.open_device(precision_mode_v2="origin")
        mode = "NPU through TF Adapter (npu_device, TF2 tf.function)"
    elif args.cpu:
        mode = "CPU (--cpu)"

    print("tf-ge-custom %s, TensorFlow %s" % (tf_ge_custom.__version__, tf.__version__))
    print("mode: %s; %s" % (mode, "TF2 tf.function" if run is run_tf2_function else "TF1 session"))
    if run is run_tf2_function:
        devices, rows = run_tf2_function()
    else:
        devices, rows = run_tf1_session(config)
    print("AddCustom ran on: %s" % (", ".join(devices) or "unknown"))
    failed = False
    for dtype, shape, err in rows:
        ok = err == 0.0
        failed |= not ok
        print("  %-9s shape %-12s max |add_custom - tf.math.add| = %g  %s"
              % (dtype, "x".join(map(str, shape)), err, "OK" if ok else "MISMATCH"))
    print("result: %s" % ("FAIL" if failed else "PASS"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
