"""LeakyReluCustom's kernel source, launched through the project's geometry with its
attribute as the fp32 scalar the ``attr:alpha`` slot carries, in Triton's CPU interpreter,
against TensorFlow's own ``tf.nn.leaky_relu``, bit for bit, for every dtype of the op.

The interpreter is PyPI triton's, in a child process (``make triton-interp``; see
test_interpreter_numerics.py). The inputs mix ordinary values with the special ones (signed
zeros, infinities, NaNs, the largest finite values, values whose product with alpha rounds
in the last place) and the alphas are TensorFlow's default, 0, 1, negative, above 1, one
that float16 and bfloat16 round (0.1), NaN and the infinities. Results must equal TF's bit
for bit wherever TF's is a number (signed zeros included) and be NaN where TF's is: which
NaN bits a NaN carries is the hardware's, not the kernel's (docs/kernels.md, "LeakyReluCustom").

Subnormal inputs and products are left out on purpose (the smallest normal value is in, and
-16 times it, whose product with the alphas here stays normal): TensorFlow runs its CPU
kernels with denormals flushed to zero (``port::ScopedFlushDenormal``; -tiny * 0.2 comes back
as -0.0), which no kernel source decides.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tf_ge_custom.kernels import geometry, socs
from tf_ge_custom.kernels.frontend import kernel_source_path
from tf_ge_custom.op_def import LEAKY_RELU_CUSTOM

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANT = LEAKY_RELU_CUSTOM.kernel.variant("flat")
BLOCK = VARIANT.block[0]
CORES = socs.get("Ascend910B1").vector_cores
DTYPES = LEAKY_RELU_CUSTOM.dtypes
ALPHAS = {"default": 0.2, "zero": 0.0, "one": 1.0, "negative": -0.75, "above_one": 3.7,
          "rounded": 0.1, "nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf")}
# name -> (elements, max_programs, elements per launch or None for the real limit)
SIZES = {
    "empty": (0, CORES, None),
    "one": (1, CORES, None),
    "odd": (777, CORES, None),
    "block_plus_one": (BLOCK + 1, CORES, None),
    "more_blocks_than_programs": (5 * BLOCK + 3, 2, None),
    "multi_chunk": (5 * BLOCK + 17, 2, 2 * BLOCK),
}


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    return tf


def _specials(dtype):
    info = np.finfo(np.float32 if dtype == "bfloat16" else dtype)
    big = float(info.max) if dtype != "bfloat16" else 3.3895313892515355e38  # bf16's largest
    return np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, big, -big,
                     float(info.tiny), -16 * float(info.tiny), 3.0, -3.0,
                     65504.0 if dtype == "float16" else 7.0, -7.0], dtype=np.float64)


def _inputs(rng, dtype, n):
    """``n`` values of ``dtype`` as the TF tensor and the bits the kernel reads."""
    tf = _tf()
    values = rng.standard_normal(n) * 100
    specials = _specials(dtype)
    values[:min(n, len(specials))] = specials[:n]
    x = tf.constant(values, dtype=tf.float64)
    x = tf.cast(x, getattr(tf, dtype))
    return x


def _bits(t):
    tf = _tf()
    wide = {2: tf.int16, 4: tf.int32}[t.dtype.size]
    return tf.bitcast(t, wide).numpy()


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory, interp_env):
    tf = _tf()
    tmp = tmp_path_factory.mktemp("interp")
    rng = np.random.default_rng(20261202)
    arrays, expected = {}, {}
    plan = {"block_size": BLOCK, "cases": {}}
    for dtype in DTYPES:
        for size, (n, programs, per_launch) in SIZES.items():
            x = _inputs(rng, dtype, n)
            for alpha_name, alpha in ALPHAS.items():
                if size not in ("odd", "one") and alpha_name not in ("default", "negative"):
                    continue  # every alpha at two sizes, every size at two alphas
                name = "%s/%s/%s" % (dtype, size, alpha_name)
                # the attribute is a 32-bit float: the value TF keeps is the one passed on
                alpha32 = float(np.float32(alpha))
                arrays[name + "/x"] = _bits(x) if dtype == "bfloat16" else x.numpy()
                expected[name] = _bits(tf.nn.leaky_relu(x, alpha=alpha32))
                plan["cases"][name] = {"max_programs": programs, "per_launch": per_launch,
                                       "dtype": dtype, "alpha": alpha32}
    np.savez(str(tmp / "cases.npz"), **arrays)
    (tmp / "plan.json").write_text(json.dumps(plan))
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "leaky_relu_runner.py"),
         kernel_source_path(LEAKY_RELU_CUSTOM.kernel), VARIANT.function, geometry.__file__,
         str(tmp / "cases.npz"), str(tmp / "plan.json"), str(tmp / "out.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=interp_env,
        timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return expected, dict(np.load(str(tmp / "out.npz"))), report, plan


def _is_nan_bits(bits, dtype):
    if dtype == "float32":
        b = bits.view(np.uint32)
        return (b & 0x7F800000 == 0x7F800000) & (b & 0x007FFFFF != 0)
    b = bits.view(np.uint16)
    exp, frac = {"float16": (0x7C00, 0x03FF), "bfloat16": (0x7F80, 0x007F)}[dtype]
    return (b & exp == exp) & (b & frac != 0)


def _cases(dtype):
    return sorted(n for n in (
        "%s/%s/%s" % (dtype, s, a) for s in SIZES for a in ALPHAS)
        if n.split("/")[1] in ("odd", "one") or n.split("/")[2] in ("default", "negative"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernel_equals_tf_leaky_relu_bit_for_bit(interpreted, dtype):
    expected, outputs, _, _ = interpreted
    names = _cases(dtype)
    assert len(names) == 2 * len(ALPHAS) + 2 * (len(SIZES) - 2)
    for name in names:
        want, got = expected[name], outputs[name]
        if dtype == "float32":
            got = got.view(np.int32)
        elif dtype == "float16":
            got = got.view(np.int16)
        assert got.shape == want.shape, name
        want_nan, got_nan = _is_nan_bits(want, dtype), _is_nan_bits(got, dtype)
        np.testing.assert_array_equal(got_nan, want_nan, err_msg=name)
        np.testing.assert_array_equal(got[~want_nan], want[~want_nan], err_msg=name)


def test_the_special_values_and_alphas_really_differ(interpreted):
    """The oracle is not trivial: alpha 0.1 rounds differently in float16 and bfloat16 than
    in float32, -0.0 keeps its sign through the multiply, and NaN alpha gives NaN only
    where x is not above zero."""
    expected, outputs, _, _ = interpreted
    f16 = expected["float16/odd/rounded"].view(np.uint16).view(np.float16)
    assert f16[2] == 1.0 and f16[3] == np.float16(-1.0) * np.float16(0.1)
    assert np.float16(0.1) != np.float32(0.1)
    f32 = expected["float32/odd/negative"].view(np.uint32)
    assert f32[0] == 0x80000000 and f32[1] == 0  # 0.0 * -0.75 is -0.0, -0.0 * -0.75 is +0.0
    assert expected["float32/odd/default"].view(np.uint32)[1] == 0x80000000  # -0.0 * 0.2
    nan_alpha = expected["float32/odd/nan"].view(np.float32)
    assert nan_alpha[2] == 1.0 and np.isnan(nan_alpha[3])
    assert np.isnan(expected["float32/odd/zero"].view(np.float32)[5])  # -inf * 0


def test_the_interpreter_was_pypi_triton_and_really_looped_and_chunked(interpreted):
    _, _, report, _ = interpreted
    assert report["triton"] == "3.9.0"
    launches = report["launches"]
    assert launches["float16/more_blocks_than_programs/default"] == [[0, 5 * BLOCK + 3, 2]]
    assert launches["bfloat16/multi_chunk/negative"] == [
        [0, 2 * BLOCK, 2], [2 * BLOCK, 2 * BLOCK, 2], [4 * BLOCK, BLOCK + 17, 2]]
    assert launches["float32/empty/default"] == []
