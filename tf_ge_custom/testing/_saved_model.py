"""The op in a SavedModel, reloaded and run in a fresh process that imports only the modules
that register the op (``imports``): the results equal the reference's, and the saved
functions hold the op's node (not a replacement)."""
import json
import os
import sys

import numpy as np
import tensorflow as tf

from .. import _processes
from ._report import CheckFailure

# the fresh process: import what registers the op, load, call each saved function, save bits
CHILD = r'''
import importlib, json, sys
import numpy as np
folder = sys.argv[1]
with open(folder + "/plan.json") as f:
    plan = json.load(f)
for name in plan["imports"]:
    importlib.import_module(name)
import tensorflow as tf
loaded = tf.saved_model.load(folder + "/model")
data = np.load(folder + "/inputs.npz")
out = {}
for k, case in enumerate(plan["cases"]):
    inputs = [tf.bitcast(tf.constant(data["%d/%d" % (k, i)]), d) if d == "bfloat16"
              else tf.constant(data["%d/%d" % (k, i)]) for i, d in enumerate(case["dtypes"])]
    y = getattr(loaded, "f%d" % k)(*inputs)
    out[str(k)] = tf.bitcast(y, tf.uint16).numpy() if y.dtype == tf.bfloat16 else y.numpy()
np.savez(folder + "/outputs.npz", **out)
print("OPCHECK-DONE")
'''


def _bits(x):
    return tf.bitcast(tf.constant(x), tf.uint16).numpy() if tf.as_dtype(x.dtype) == tf.bfloat16 else x


def _chosen(samples):
    """One sample per dtype and attribute set, non-empty."""
    chosen, seen = [], set()
    for s in samples:
        key = (s.dtype, tuple(sorted(s.attrs.items())))
        if key not in seen and all(x.size for x in s.inputs):
            seen.add(key)
            chosen.append(s)
    return chosen


def _pythonpath(imports):
    """The folders the fresh process must find ``imports`` in, as this process found them."""
    import importlib

    folders = []
    for name in imports:
        module = importlib.import_module(name)
        top = os.path.dirname(os.path.abspath(module.__file__))
        folder = os.path.dirname(top) if os.path.basename(module.__file__).startswith("__init__") else top
        for _ in name.split(".")[1:]:
            folder = os.path.dirname(folder)
        if folder not in folders:
            folders.append(folder)
    return folders


def _bound(function, attrs):
    return lambda *xs: function(*xs, **attrs)


def saved_model(ctx):
    op, samples = ctx.op, _chosen(ctx.samples)
    folder = os.path.join(ctx.workdir, "saved_model")
    os.makedirs(folder, exist_ok=True)
    module, cases, arrays = tf.Module(), [], {}
    for k, s in enumerate(samples):
        spec = [tf.TensorSpec(x.shape, tf.as_dtype(x.dtype)) for x in s.inputs]
        setattr(module, "f%d" % k, tf.function(_bound(ctx.function, s.attrs), input_signature=spec))
        cases.append({"sample": s.name, "dtypes": [tf.as_dtype(x.dtype).name for x in s.inputs]})
        for i, x in enumerate(s.inputs):
            arrays["%d/%d" % (k, i)] = _bits(x)
    tf.saved_model.save(module, os.path.join(folder, "model"))
    _holds_node(op, os.path.join(folder, "model"))
    np.savez(os.path.join(folder, "inputs.npz"), **arrays)
    with open(os.path.join(folder, "plan.json"), "w") as f:
        json.dump({"imports": list(ctx.imports), "cases": cases}, f)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = os.pathsep.join(_pythonpath(ctx.imports) + [p for p in [env.get("PYTHONPATH")] if p])
    proc = _processes.run([sys.executable, "-c", CHILD, folder], timeout=600, env=env, cwd=folder, check=False,
                          separate_stderr=True)
    if proc.returncode != 0 or "OPCHECK-DONE" not in proc.output:
        raise CheckFailure("the fresh process (importing %s) could not reload and run the SavedModel: exit %d: %s"
                           % (", ".join(ctx.imports), proc.returncode, proc.errors.strip()[-1500:]))
    outputs = np.load(os.path.join(folder, "outputs.npz"))
    for k, s in enumerate(samples):
        got = outputs[str(k)]
        if s.dtype == "bfloat16":
            got = tf.bitcast(tf.constant(got), tf.bfloat16)
        ctx.compare(got, ctx.expected(s), s, "SavedModel reloaded in a fresh process")
    return "%d saved functions, reloaded in a fresh process importing %s, equal the reference" % (
        len(samples), ", ".join(ctx.imports))


def _holds_node(op, path):
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    types = set()
    for meta in proto.meta_graphs:
        types.update(n.op for n in meta.graph_def.node)
        for fn in meta.graph_def.library.function:
            types.update(n.op for n in fn.node_def)
    if op.type_name not in types:
        raise CheckFailure("the SavedModel's graphs hold no %s node" % op.type_name)
