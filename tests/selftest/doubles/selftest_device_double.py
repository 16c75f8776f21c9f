"""A TEST DOUBLE of tf_ge_custom.selftest.device: the same functions, no NPU, no CANN.

It stands in for the device steps so that the selftest's stages (their references, their
judging, the placement evidence) and its runner (child processes, timeouts, SKIP and FAIL
lines, the report) can be tested here. It proves nothing about TF Adapter, GE or the NPU.

What each stage's double does is set by TF_GE_CUSTOM_SELFTEST_DOUBLE, e.g.
``NPU_ADD_STATIC=wrong,GE_LOAD_ONCE=two_copies`` (stages not named: ``pass``). The stage is
the name of the working directory the runner started the child in. Behaviours:

  pass        right results, placed on the NPU, one mapping of the GE library
  wrong       one element of the first result off by 3 ulp
  host        right results, but the evidence says the op (AddCustom) ran on the host
  skip        raises StageSkip (something the step needs is missing)
  hang        starts a grandchild that sleeps (its pid in ./grandchild.pid), then sleeps
  crash       the process aborts (SIGABRT)
  two_copies  process_maps shows the GE library mapped from two files
  fail        export_om / run_om raise ExternalToolError; build_kernels_cache exits 1
  partial     build_kernels_cache writes a manifest without every dtype (a shared fixture)
"""
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from tf_ge_custom.selftest.child import StageSkip
from tf_ge_custom.selftest.device import DeviceRun

GE_LIBRARY = "libtf_ge_custom_ge.so"
EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "fixtures", "manifests")


def behaviour():
    stage = os.path.basename(os.getcwd())
    for item in os.environ.get("TF_GE_CUSTOM_SELFTEST_DOUBLE", "").split(","):
        name, _, what = item.partition("=")
        if name.strip() == stage:
            return what.strip()
    return "pass"


def _common(what):
    if what == "skip":
        raise StageSkip("the double was told to skip")
    if what == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open("grandchild.pid", "w") as f:
            f.write(str(child.pid))
        time.sleep(3600)
    if what == "crash":
        os.abort()


def run_add(pairs, dtype, dynamic=False, runs=1, prefer=None):
    what = behaviour()
    _common(what)
    outputs = [np.add(x, y).astype(x.dtype) for x, y in pairs]
    if what == "wrong":  # one element off: by 3 (int32), by 4 ulp of its dtype (floats)
        flat = next(o for o in outputs if o.size).reshape(-1)
        value = float(flat[0])
        changed = value + 3 if dtype == "int32" else (value or 1.0) * (1 + 4 * EPS[dtype])
        flat[0] = np.asarray(changed).astype(flat.dtype)
    adapter = prefer or "npu_bridge"
    if what == "host":
        return DeviceRun(outputs, False, "1 AddCustom node(s) in the partition graphs (double)", adapter)
    return DeviceRun(outputs, True, "AddCustom inside 1 GeOp node(s) (double)", adapter)


def run_op(op_type, cases, dtype, prefer=None):
    """The op's TensorFlow equivalent (_op_meanings.py) on the CPU stands in for the NPU."""
    import tensorflow as tf

    from tf_ge_custom import _op_meanings

    what = behaviour()
    _common(what)
    from tf_ge_custom import op_def

    equivalent = _op_meanings.meaning_of(op_def.get(op_type)).equivalent
    outputs = [equivalent(*[tf.constant(a) for a in inputs], **attrs).numpy() for inputs, attrs in cases]
    if what == "wrong":  # one finite element of the first non-empty result off by 4 ulp
        flat = next(o for o in outputs if o.size).reshape(-1)
        at = int(np.flatnonzero(np.isfinite(flat.astype(np.float32)) & (flat.astype(np.float32) != 0))[0])
        flat[at] = np.asarray(float(flat[at]) * (1 + 4 * EPS[dtype])).astype(flat.dtype)
    adapter = prefer or "npu_bridge"
    if what == "host":
        return DeviceRun(outputs, False, "1 %s node(s) in the partition graphs (double)" % op_type, adapter)
    return DeviceRun(outputs, True, "%s inside 1 GeOp node(s) (double)" % op_type, adapter)


def process_maps():
    what = behaviour()
    lines = ["7f0000000000-7f0000001000 r-xp 00000000 08:01 1234 /opt/x/opp/op_graph/lib/linux/x86_64/" + GE_LIBRARY,
             "7f0000001000-7f0000002000 r--p 00001000 08:01 1234 /opt/x/opp/op_graph/lib/linux/x86_64/" + GE_LIBRARY]
    if what == "two_copies":
        lines.append("7f1000000000-7f1000001000 r-xp 00000000 08:01 5678 /tmp/copy/" + GE_LIBRARY)
    return "\n".join(lines) + "\n"


def detect_soc():
    _common(behaviour())
    return "Ascend910B1"


def export_om(model_dir, soc, prefix, log=None):
    what = behaviour()
    _common(what)
    if what == "fail":
        from tf_ge_custom.errors import ExternalToolError

        raise ExternalToolError("atc (double) failed: E10001 invalid model")
    assert os.path.isdir(model_dir) and os.path.isfile(os.path.join(model_dir, "saved_model.pb")), model_dir
    with open(prefix + ".om", "wb") as f:
        f.write(b"OM double " + soc.encode() + b"\0" * 2048)
    return {"pb": prefix + ".pb", "om": prefix + ".om"}


class _Comparison(object):
    def __init__(self, name, max_error, ok):
        self.name, self.max_error, self.ok = name, max_error, ok

    def line(self):
        return "  %s: max error %g %s" % (self.name, self.max_error, "OK" if self.ok else "MISMATCH")


class _Result(object):
    def __init__(self, status, comparisons):
        self.status, self.comparisons = status, comparisons


def run_om(om, inputs, log=None):
    what = behaviour()
    _common(what)
    assert os.path.isfile(om) and all(os.path.isfile(p) for p in inputs), (om, inputs)
    if what == "fail":
        return _Result("FAIL", [_Comparison("z", 0.5, False)])
    return _Result("PASS", [_Comparison("z", 0.0, True)])


def build_kernels_cache(soc, cache_dir, timeout):
    what = behaviour()
    _common(what)
    if what == "fail":
        return 1, "compiling add_kernel for %s\nerror: hivmc not found (double)\n" % soc
    if what == "partial":
        target = os.path.join(cache_dir, soc, "abc123-triton3.2.0")
        shutil.copytree(os.path.join(FIXTURES, "valid_binaries"), target)
        shutil.copy(os.path.join(FIXTURES, "valid_binaries.json"), os.path.join(target, "manifest.json"))
        return 0, "compiled (double)\n"
    return 0, "nothing written (double)\n"


def _dump_node(name, op_type, inputs):
    lines = ["  node {"] + ['    input: "%s:0"' % i for i in inputs] + [
        '    output: "%s:0"' % name, '    name: "%s"' % name, '    op_type: "%s"' % op_type,
        '    attribute {', '      name: "_kernel"', '      s: "node { name: \\"inner\\" }"', '    }', "  }"]
    return "\n".join(lines)


def run_sunk(pairs, dtype, dump_dir, runs=1):
    """SINK's device step, doubled: right results, and GE's graph dump written as the double's
    behaviour says: ``pass`` (the built graph has each AddCustom fed by the placeholders, an
    earlier dump has an Identity that the judging must not take for the built graph),
    ``copies`` (the built graph has an Identity in front of the first AddCustom and a
    MemcpyAsync after it), ``nodump`` (no file)."""
    from tf_ge_custom.selftest.device import SunkRun

    what = behaviour()
    _common(what)
    run = run_add(pairs, dtype, runs=runs, prefer="npu_bridge") if what != "copies" else DeviceRun(
        [np.add(x, y).astype(x.dtype) for x, y in pairs], True, "AddCustom inside 1 GeOp node(s) (double)",
        "npu_bridge")
    if what == "nodump":
        return SunkRun(run, [])
    early, built = [], []
    for i in range(len(pairs)):
        early.append(_dump_node("ident_%d" % i, "Identity", ["x_%d" % i]))
        early.append(_dump_node("AddCustom_%d" % i, "AddCustom", ["ident_%d" % i, "y_%d" % i]))
        if what == "copies" and i == 0:
            built.append(_dump_node("copy_in", "Identity", ["x_0"]))
            built.append(_dump_node("AddCustom_0", "AddCustom", ["copy_in", "y_0"]))
            built.append(_dump_node("copy_out", "MemcpyAsync", ["AddCustom_0"]))
        else:
            built.append(_dump_node("AddCustom_%d" % i, "AddCustom", ["x_%d" % i, "y_%d" % i]))
    files = []
    for index, stage, nodes in ((3, "PreRunBegin", early), (12, "PreRunAfterBuild", built)):
        path = os.path.join(dump_dir, "ge_onnx_%08d_graph_1_%s.pbtxt" % (index, stage))
        with open(path, "w") as f:
            f.write("graph {\n%s\n}\n" % "\n".join(nodes))
        files.append(path)
    return SunkRun(run, files)
