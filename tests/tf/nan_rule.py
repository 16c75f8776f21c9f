"""The NaN rule of x + y per CPU, as bit patterns: a model of what AddV2 gives on each host
(docs/tensorflow-op.md, "NaN bits"), written from the architecture manuals, not from the
library's code (tf_ops/add_custom_sum.h).

- x86_64 (SSE/AVX ADDSS and kin): the first source's NaN, quieted; inf - inf gives the
  negative default NaN. float16 through F16C: a NaN keeps its sign and payload.
- aarch64 (FADD, FPCR.DN = 0; the Arm ARM's FPProcessNaNs): a signalling NaN first (the first
  operand's, then the second's), quieted, else the first quiet NaN; inf - inf gives the
  positive default NaN. float16 through Eigen's portable conversion: a NaN result is the one
  quiet NaN with the chosen NaN's sign.

TensorFlow's kernels pass x as the first operand, so "first" is x here. They also run with
float32 subnormals flushed to zero, inputs and results alike, keeping the sign (x86's MXCSR
FTZ and DAZ, AArch64's FPCR.FZ: TensorFlow's ScopedFlushDenormal,
tensorflow/core/platform/denormal.h); float16 is widened exactly, so only its float32 sum is
flushed, which no float16 sum is.
"""
import numpy as np

ARCHES = ("x86_64", "aarch64")
_LAYOUT = {  # dtype: (unsigned type, float type, exponent mask, quiet bit, sign bit)
    "float32": (np.uint32, np.float32, 0x7F800000, 0x00400000, 0x80000000),
    "float16": (np.uint16, np.float16, 0x7C00, 0x0200, 0x8000),
}
_DEFAULT_NAN32 = {"x86_64": 0xFFC00000, "aarch64": 0x7FC00000}


def _is_nan(bits, dtype):
    _, _, exponent, _, sign = _LAYOUT[dtype]
    magnitude = bits & ~sign
    return (magnitude & exponent) == exponent and magnitude != exponent


def _is_signalling(bits, dtype):
    return _is_nan(bits, dtype) and not bits & _LAYOUT[dtype][3]


def _flushed(value):
    """A float32 array with its subnormals replaced by zeros of the same sign."""
    tiny = np.finfo(np.float32).tiny
    return np.where(np.abs(value) < tiny, np.copysign(np.float32(0), value), value).astype(np.float32)


def chosen_nan(x, y, dtype, arch):
    """The operand whose NaN x + y passes on (its bits), or None where neither is a NaN."""
    if arch not in ARCHES:
        raise ValueError("arch %r: the rule is known for %s" % (arch, ", ".join(ARCHES)))
    if arch == "aarch64":
        for v in (x, y):
            if _is_signalling(v, dtype):
                return v
    for v in (x, y):
        if _is_nan(v, dtype):
            return v
    return None


def add_bits(x, y, dtype, arch):
    """The bits of x + y (x, y: bit patterns as ints) on ``arch`` for float32 or float16."""
    uint, floating, _, quiet, sign = _LAYOUT[dtype]
    nan = chosen_nan(x, y, dtype, arch)
    if nan is None:  # numbers: IEEE's sum, rounded to nearest even (float16 via float32)
        a, b = (_flushed(np.array([v], uint).view(floating).astype(np.float32)) for v in (x, y))
        with np.errstate(over="ignore", invalid="ignore"):
            total = _flushed(a + b)
        if np.isnan(total[0]):  # inf - inf: the default NaN
            nan = _DEFAULT_NAN32[arch]
            if dtype == "float32":
                return nan
            return ((nan >> 16) & 0x8000) | 0x7E00
        return int(total.astype(floating).view(uint)[0])
    if dtype == "float16" and arch == "aarch64":
        return (nan & sign) | 0x7E00
    return nan | quiet


def add_bits_array(x, y, dtype, arch):
    """add_bits over two equal-length arrays of bit patterns."""
    uint = _LAYOUT[dtype][0]
    return np.array([add_bits(int(a), int(b), dtype, arch) for a, b in zip(x, y)], uint)
