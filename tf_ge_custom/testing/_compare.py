"""Comparing an op's result with the one it should equal: same shape, same dtype, NaN where
the other has NaN (a NaN's payload and sign are not compared), every other element equal (bit
for bit: ``-0.0`` is not ``0.0``), or within a tolerance the caller gives. A difference is
described by its first differing element."""
import numpy as np


def as_numpy(value):
    """A tensor or array as a numpy array (bfloat16 as float32: exact)."""
    value = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    if value.dtype.name == "bfloat16":
        value = value.astype(np.float32)
    return value


def difference(got, want, tolerance=0.0):
    """None when ``got`` equals ``want``; else a phrase naming the first differing element."""
    got, want = as_numpy(got), as_numpy(want)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        nan_got, nan_want = np.isnan(got), np.isnan(want)
        with np.errstate(invalid="ignore"):
            if tolerance:
                close = np.abs(got.astype(np.float64) - want) <= tolerance * (1 + np.abs(want))
                close |= got == want
            else:
                close = (got == want) & (np.signbit(got) == np.signbit(want))
        same = np.where(nan_want, nan_got, close & ~nan_got)
    else:
        same = got == want
    if same.all():
        return None
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    return "first differing element at %s: got %r, expected %r (%d of %d elements differ)" % (
        index, got[index].item(), want[index].item(), int((~same).sum()), same.size)
