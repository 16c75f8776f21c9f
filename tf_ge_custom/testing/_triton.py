"""The op's Triton kernel in Triton's CPU interpreter, launched through the package's launch
geometry (``kernels/geometry.py``) with its arguments in the record's slot order, against the
op's CPU kernel (the op itself, eager) bit for bit: every flat variant (patterns ``equal`` and
``scalar``) and dtype, with every float16 / bfloat16 bit pattern where the op is unary, each
attribute value of the samples, several programs looping and a tensor split into launches.

PyPI triton's interpreter gets some bfloat16 arithmetic wrong (the child's probe says whether
this one does). Where it does, a bfloat16 run that differs is held instead to the same kernel
run on its values widened to float32, the result rounded once to bfloat16 (ties to even, as
TensorFlow's bfloat16 kernels round their float32 arithmetic): that must equal the CPU kernel.
A kernel whose source has a bfloat16 path of its own (``tl.bfloat16``) has no such fallback:
its float32 run would not take that path, so a bfloat16 run that differs fails.

The interpreter is PyPI triton (triton-ascend cannot interpret), run in a child process with
it first on ``PYTHONPATH``: ``triton_interp`` names its folder, else
``$TF_GE_CUSTOM_TRITON_INTERP``, else ``.cache/triton-interp`` of the checkout holding the
current folder (``make triton-interp``). Without one the check is not run, and says so.
"""
import ast
import json
import os
import sys

import numpy as np
import tensorflow as tf

from .. import _processes
from ._host_args import kernel_dir
from ._report import CheckFailure, NotRun
from ._samples import values

ENV = "TF_GE_CUSTOM_TRITON_INTERP"


def find_interpreter(given=None):
    """The folder holding PyPI triton for the interpreter, or None."""
    candidates = [given] if given else []
    if not given:
        if os.environ.get(ENV):
            candidates.append(os.environ[ENV])
        folder = os.path.abspath(os.getcwd())
        while True:
            candidates.append(os.path.join(folder, ".cache", "triton-interp"))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    for c in candidates:
        if os.path.isdir(os.path.join(c, "triton")):
            return c
    return None


def _unary_all_bits(dtype):
    bits = np.arange(65536, dtype=np.uint16)
    return bits.view(np.float16) if dtype == "float16" else bits


def _cases(ctx):
    op, rng = ctx.op, np.random.RandomState(11)
    attr_sets = []
    for s in ctx.samples:
        if s.attrs not in attr_sets:
            attr_sets.append(s.attrs)
    attr_sets = attr_sets or [{}]
    cases, skipped = [], []
    for v in op.kernel.variants:
        if v.pattern not in ("equal", "scalar"):
            skipped.append(v.name)
            continue
        block = v.block[0]
        for dtype in op.dtypes:
            shapes = [(2 * block + 77,), (3 * block + 5,)]
            for n, shape in enumerate(shapes):
                every = len(op.inputs) == 1 and dtype in ("float16", "bfloat16") and n == 0
                for attrs in (attr_sets if n == 0 else attr_sets[:1]):
                    if every:
                        inputs = [_unary_all_bits(dtype)]
                    else:
                        inputs = [_bits(values(dtype, shape, rng), dtype) for _ in op.inputs]
                    if v.pattern == "scalar":
                        inputs[-1] = inputs[-1][:1]
                    cases.append({"variant": v.name, "function": v.function, "pattern": v.pattern,
                                  "dtype": dtype, "block": block, "params": list(v.params),
                                  "constants": dict(v.constants), "attrs": attrs,
                                  "inputs": len(op.inputs), "outputs": len(op.outputs),
                                  "max_programs": 2 if n == 0 else 1,
                                  "per_launch": None if n == 0 else 2 * block,
                                  "label": "%s %s %s%s%s" % (op.type_name, v.name, dtype,
                                                             " every bit pattern" if every else " %d elements" % shape[0],
                                                             "".join(" %s=%r" % kv for kv in sorted(attrs.items()))),
                                  "_inputs": inputs})
    return cases, skipped


def has_bfloat16_path(path):
    """Whether the kernel source names ``tl.bfloat16`` in its code (not its docstrings): a
    bfloat16 path of its own, which a float32 run of it does not take."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return any(isinstance(n, ast.Attribute) and n.attr == "bfloat16" for n in ast.walk(tree))


def _bits(x, dtype):
    return tf.bitcast(tf.constant(x), tf.uint16).numpy() if dtype == "bfloat16" else x


def _tensor(bits, dtype):
    return tf.bitcast(tf.constant(bits), tf.bfloat16) if dtype == "bfloat16" else tf.constant(bits)


def triton_interpreter(ctx):
    interp = find_interpreter(ctx.triton_interp)
    if interp is None:
        raise NotRun("no PyPI triton for Triton's CPU interpreter (pass triton_interp=, set %s, or run "
                     "`make triton-interp` in the checkout)" % ENV)
    op = ctx.op
    kernel_path = os.path.join(kernel_dir(ctx), op.kernel.source)
    cases, skipped = _cases(ctx)
    folder = os.path.join(ctx.workdir, "triton")
    os.makedirs(folder, exist_ok=True)
    arrays = {}
    for k, c in enumerate(cases):
        for i, x in enumerate(c.pop("_inputs")):
            arrays["%d/%d" % (k, i)] = x
    np.savez(os.path.join(folder, "inputs.npz"), **arrays)
    own_path = has_bfloat16_path(kernel_path)
    with open(os.path.join(folder, "plan.json"), "w") as f:
        json.dump({"cases": cases, "float32_fallback": not own_path}, f)
    import tf_ge_custom  # the child imports the same package's geometry (no TensorFlow there)

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(tf_ge_custom.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([interp, package_parent]))
    child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_triton_child.py")
    proc = _processes.run([sys.executable, child, kernel_path, os.path.join(folder, "plan.json"),
                           os.path.join(folder, "inputs.npz"), os.path.join(folder, "out.npz")],
                          timeout=900, env=env, cwd=folder, check=False, separate_stderr=True)
    if proc.returncode != 0:
        raise CheckFailure("the kernel %s did not run in the interpreter: exit %d: %s" % (
            kernel_path, proc.returncode, proc.errors.strip()[-1500:]))
    told = json.loads(proc.output.strip().splitlines()[-1])
    out = np.load(os.path.join(folder, "out.npz"))
    excused = []
    for k, c in enumerate(cases):
        inputs = [_tensor(arrays["%d/%d" % (k, i)], c["dtype"]) for i in range(c["inputs"])]
        want = c["_want"] = ctx.function(*inputs, **c["attrs"])
        got = _tensor(out["%d/0" % k].view(np.uint16) if c["dtype"] == "bfloat16" else out["%d/0" % k], c["dtype"])
        if c["dtype"] in FLUSHED:
            got, want = flushed(got, want, inputs)
        sample = type("S", (), {"name": c["label"]})
        try:
            ctx.compare(got, want, sample, "Triton interpreter against the CPU kernel", tolerance=0.0)
        except CheckFailure as e:
            if c["dtype"] != "bfloat16" or told["bfloat16_arithmetic_works"]:
                raise
            if own_path:
                raise CheckFailure("%s; this interpreter gets bfloat16 arithmetic wrong, but the kernel "
                                   "source has a bfloat16 path of its own (tl.bfloat16), which its float32 "
                                   "run would not take" % e)
            # the interpreter's fault, shown by its probe: the kernel's float32 run on the
            # same values, rounded once to bfloat16 (what TensorFlow's bfloat16 kernels do),
            # must then equal the CPU kernel
            wide = tf.cast(tf.constant(out["%d/0/float32" % k]), tf.bfloat16)
            wide, want = flushed(wide, c["_want"], inputs)
            try:
                ctx.compare(wide, want, sample, "Triton interpreter (float32 run rounded to bfloat16) "
                            "against the CPU kernel", tolerance=0.0)
            except CheckFailure as wide_failure:
                raise CheckFailure("%s; this interpreter gets bfloat16 arithmetic wrong, and the kernel's "
                                   "float32 run rounded to bfloat16 differs too: %s" % (e, wide_failure))
            excused.append(c["label"])
    return "%d kernel runs (%d launches) in Triton's CPU interpreter equal the CPU kernel%s%s" % (
        len(cases) - len(excused), told["launches"],
        "; variants %s not run here (their parameters come from the GE library's shape reduction)"
        % ", ".join(skipped) if skipped else "",
        "; %d bfloat16 runs compared through the kernel's float32 run rounded to bfloat16: this "
        "interpreter (triton %s) gets bfloat16 arithmetic wrong (%s)" % (
            len(excused), told["triton"], "; ".join(excused)) if excused else "")


# TensorFlow's CPU kernels run with denormals flushed to zero and read as zero: a float32 or
# bfloat16 result at or below the smallest normal number (a subnormal, or a subnormal product
# that rounding to bfloat16 took up to it) is compared as a zero of its sign, and an element with a subnormal
# input is not compared (what TensorFlow computes there follows from reading it as zero, which
# no kernel source decides). float16 computes in float32, where its subnormals are normal
# numbers, so it is compared as it is.
FLUSHED = ("float32", "bfloat16")


def _float32(t):
    return tf.cast(t, tf.float32).numpy()


def flushed(got, want, inputs):
    """``got`` and ``want`` as float32 arrays, results up to the smallest normal as signed zeros, and both
    zero where an input is subnormal."""
    tiny = np.finfo(np.float32).tiny
    got, want = _float32(got), _float32(want)
    with np.errstate(invalid="ignore"):
        skip = np.zeros(want.shape, bool)
        for x in inputs:
            x = _float32(x)
            skip |= np.broadcast_to((np.abs(x) < tiny) & (x != 0), want.shape)
        out = []
        for y in (got, want):
            y = np.where(np.abs(y) <= tiny, np.copysign(np.float32(0), y), y)
            out.append(np.where(skip, np.float32(0), y))
    return out
