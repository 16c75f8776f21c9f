"""Comparing a result with its reference: the max error per output and a pass/fail verdict.

Integers and booleans must match exactly. Floats pass when ``|got - want| <= atol + rtol *
|want|`` everywhere (numpy's ``isclose``), NaN where the reference has NaN and the same
infinities. The default tolerances (by dtype, below) are tight: the frozen graph runs the same
kernels on the same CPU as its source, so only evaluation order (constant folding) may differ;
an OM on the NPU may need ``--rtol``/``--atol`` for ops other than AddCustom.
"""
from typing import NamedTuple

import numpy as np

# dtype -> (rtol, atol)
TOLERANCES = {
    "float64": (1e-9, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}


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
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        error = float(diff.max())
        return Comparison(name, error, error == 0.0, "")
    default_rtol, default_atol = TOLERANCES.get(_dtype_name(want), TOLERANCES["float32"])
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
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
