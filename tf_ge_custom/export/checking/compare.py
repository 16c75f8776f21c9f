"""Comparing a result with its reference: the max error per output and a pass/fail verdict.

The specification (held by tests/export/test_tolerances.py against ``numpy.finfo``):

- integers and booleans must match exactly;
- floats pass when ``|got - want| <= atol + rtol * |want|`` everywhere (numpy's ``isclose``
  rule), with the dtype's ``rtol`` and ``atol`` from :data:`TOLERANCES`, each a multiple of
  the dtype's machine epsilon (the gap between 1 and the next value of the dtype);
- NaN must be where the reference has NaN (NaN against NaN in the same place is equal), and an
  infinity where the reference has one, of the same sign;
- complex values: the real and the imaginary parts each, by the part's dtype.

What we compare runs the same kernels on the same CPU as its source (a frozen graph), so only
evaluation order (constant folding, reassociated reductions, fused kernels) may differ; an OM
on the NPU may need ``--rtol``/``--atol`` for ops other than AddCustom.
"""
from typing import NamedTuple

import numpy as np


class Tolerance(NamedTuple):
    rtol: float
    atol: float
    reason: str


# Machine epsilons, 2**-(stored significand bits); the tests hold them against numpy.finfo.
_EPS = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}

TOLERANCES = {
    "float64": Tolerance(
        64 * _EPS["float64"], 64 * _EPS["float64"],
        "computed in float64 itself: two evaluation orders of a reduction over n terms differ by "
        "about n eps; 64 eps covers reordered sums of dozens of terms; atol: the same error at "
        "magnitude 1, for results that cancel to about zero"),
    "float32": Tolerance(
        64 * _EPS["float32"], 64 * _EPS["float32"],
        "computed in float32 itself: two evaluation orders of a reduction over n terms differ by "
        "about n eps; 64 eps covers reordered sums of dozens of terms; atol: the same error at "
        "magnitude 1, for results that cancel to about zero"),
    "float16": Tolerance(
        2 * _EPS["float16"], 2 * _EPS["float16"],
        "TensorFlow's CPU kernels compute float16 in float32 and round each result to float16, "
        "so two evaluation orders differ by a rounding or two: 2 eps"),
    "bfloat16": Tolerance(
        2 * _EPS["bfloat16"], 2 * _EPS["bfloat16"],
        "TensorFlow's CPU kernels compute bfloat16 in float32 and round each result to "
        "bfloat16, so two evaluation orders differ by a rounding or two: 2 eps"),
}
EXACT = "integers and booleans have no rounding: they must match exactly"
# A float dtype without its own row (e.g. numpy's longdouble) is held to float32's.
_FALLBACK = "float32"


class Comparison(NamedTuple):
    name: str
    max_error: float  # max |got - want| over finite values (inf when NaN/inf placements differ)
    ok: bool
    detail: str  # "" or why it failed (shape, dtype, NaN placement)

    def line(self):
        return "  %-32s max |error| = %-12.6g %s%s" % (
            self.name, self.max_error, "OK" if self.ok else "DIFFERS",
            "" if not self.detail else " (%s)" % self.detail)


def _dtype_name(a):
    return "bfloat16" if a.dtype.name == "bfloat16" else a.dtype.name


def tolerance(dtype_name):
    """The :class:`Tolerance` of a float dtype by name (float32's for one without a row)."""
    return TOLERANCES.get(dtype_name, TOLERANCES[_FALLBACK])


def compare(name, got, want, rtol=None, atol=None):
    """A :class:`Comparison` of ``got`` against the reference ``want``."""
    got, want = np.asarray(got), np.asarray(want)
    if _dtype_name(got) != _dtype_name(want):
        return Comparison(name, float("inf"), False, "dtype %s, expected %s" % (_dtype_name(got), _dtype_name(want)))
    if got.shape != want.shape:
        return Comparison(name, float("inf"), False, "shape %s, expected %s" % (list(got.shape), list(want.shape)))
    if got.size == 0:
        return Comparison(name, 0.0, True, "")
    if want.dtype.kind in "iub":
        # exact: through float64, 64-bit integers above 2**53 would round to the same value
        differ = got != want
        if not differ.any():
            return Comparison(name, 0.0, True, "")
        error = max(abs(int(g) - int(w)) for g, w in zip(got[differ], want[differ]))
        return Comparison(name, float(error), False, "%d of %d values differ" % (int(differ.sum()), got.size))
    if want.dtype.kind == "c":
        parts = [_compare_floats(name, part(got), part(want), rtol, atol) for part in (np.real, np.imag)]
        bad = [(which, p) for which, p in zip(("real", "imaginary"), parts) if not p.ok]
        return Comparison(name, max(p.max_error for p in parts), not bad,
                          "; ".join("%s part: %s" % (which, p.detail) for which, p in bad))
    return _compare_floats(name, got, want, rtol, atol)


def _compare_floats(name, got, want, rtol, atol):
    default = tolerance(_dtype_name(want))
    rtol = default.rtol if rtol is None else rtol
    atol = default.atol if atol is None else atol
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if not np.array_equal(nan_g, nan_w):
        return Comparison(name, float("inf"), False, "NaN in %d places, expected %d"
                          % (int(nan_g.sum()), int(nan_w.sum())))
    inf_w = np.isinf(w)
    if not np.array_equal(g[inf_w], w[inf_w]) or np.isinf(g[~inf_w]).any():
        return Comparison(name, float("inf"), False, "infinities differ")
    finite = ~(nan_w | inf_w)
    diff = np.abs(g[finite] - w[finite])
    error = float(diff.max()) if diff.size else 0.0
    ok = bool(np.all(diff <= atol + rtol * np.abs(w[finite])))
    return Comparison(name, error, ok, "" if ok else "beyond rtol %g, atol %g" % (rtol, atol))
