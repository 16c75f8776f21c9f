"""The comparison behind a verified .pb and ``run-om --compare-with``
(tf_ge_custom/export/checking/compare.py), held to its specification:

- floats pass when ``|got - want| <= atol + rtol * |want|``, with rtol and atol a fixed number
  of the dtype's machine epsilons: 64 for float64 and float32 (computed in the dtype itself,
  reordered reductions), 2 for float16 and bfloat16 (computed in float32 and rounded back);
- integers and booleans match exactly;
- NaN equals NaN in the same place only; infinities must match in place and sign.

The boundary of each dtype is computed here from ``numpy.finfo`` (``ml_dtypes.finfo`` for
bfloat16, the library that defines the type) and the multiples above, never read off the
table: a value one step of the dtype inside the boundary passes, the next value outside fails,
on both sides of the reference, near zero (atol) and at larger magnitudes (rtol). A loosened
or tightened row of the table fails one of them.
"""
import numpy as np
import pytest

from tf_ge_custom.export.checking.compare import TOLERANCES, compare

pytestmark = pytest.mark.kind("oracle")

# The specification: rtol = atol = this many machine epsilons of the dtype.
EPS_MULTIPLE = {"float64": 64, "float32": 64, "float16": 2, "bfloat16": 2}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _eps(dtype):
    if dtype.name == "bfloat16":
        import ml_dtypes

        return float(ml_dtypes.finfo(dtype).eps)
    return float(np.finfo(dtype).eps)


def _step(value, dtype, up):
    """The next value of ``dtype`` after the non-negative ``value``, up or down (by its bits)."""
    bits = np.array([value], dtype).view(UINT[dtype.itemsize])
    bits = bits + 1 if up else bits - 1
    return float(bits.astype(UINT[dtype.itemsize]).view(dtype)[0])


def _boundary(want, dtype, up):
    """(just inside, just outside): the last value of ``dtype`` within the specified tolerance of
    ``want`` (>= 0) going up (or down), and the next one."""
    k = EPS_MULTIPLE[dtype.name] * _eps(dtype)
    bound = k + k * abs(want)
    def away(v):
        return _step(v, dtype, up)

    v = float(np.array([want + bound if up else want - bound], np.float64).astype(dtype)[0])
    while abs(v - want) > bound:
        v = _step(v, dtype, not up)
    while abs(away(v) - want) <= bound:
        v = away(v)
    inside, outside = v, away(v)
    assert bound - abs(inside - want) < abs(outside - inside)  # within one step of the boundary
    return inside, outside


def _arr(values, dtype):
    out = np.array(values, np.float64).astype(dtype)
    assert out.astype(np.float64).tolist() == [float(v) for v in values]  # exactly representable
    return out


@pytest.mark.parametrize("name", sorted(EPS_MULTIPLE))
@pytest.mark.parametrize("want", [0.0, 1.0, 1.5, 1000.0, -1.5, -1000.0])
@pytest.mark.parametrize("up", [True, False], ids=["above", "below"])
def test_an_error_just_inside_the_tolerance_passes_and_just_outside_fails(name, want, up):
    dtype = _dtype(name)
    if want == 0.0 and not up:
        up, sign = True, -1.0  # below zero: mirror of above
    else:
        sign = -1.0 if want < 0 else 1.0
        up = up if want >= 0 else not up
    inside, outside = _boundary(abs(want), dtype, up)
    reference = _arr([want, 2.0], dtype)
    got_inside = _arr([sign * inside, 2.0], dtype)
    got_outside = _arr([sign * outside, 2.0], dtype)
    assert got_inside[0] != reference[0] or want == 0.0 and inside == 0.0
    passed = compare("z", got_inside, reference)
    assert passed.ok and passed.detail == "", passed
    assert passed.max_error == pytest.approx(abs(inside - abs(want)), rel=1e-12, abs=0)
    failed = compare("z", got_outside, reference)
    assert not failed.ok and failed.detail.startswith("beyond rtol "), failed
    assert failed.max_error == pytest.approx(abs(outside - abs(want)), rel=1e-12, abs=0)


def test_the_table_has_a_reasoned_row_for_each_float_dtype_and_the_epsilons_are_numpys():
    assert set(TOLERANCES) == set(EPS_MULTIPLE)
    for name, row in TOLERANCES.items():
        # the row is what the specification says, in the dtype's own epsilon
        k = EPS_MULTIPLE[name] * _eps(_dtype(name))
        assert (row.rtol, row.atol) == (k, k), name
        assert "eps" in row.reason, name


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_])
def test_integers_and_booleans_must_match_exactly(dtype):
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    top = int(info.max) if info else 1
    want = np.array([0, top], dtype)
    assert compare("i", want.copy(), want) == ("i", 0.0, True, "")
    got = want.copy()
    got[1] = top - 1 if info else 0
    result = compare("i", got, want)
    assert not result.ok and result.max_error == 1.0 and result.detail == "1 of 2 values differ", result


def test_int64_beyond_float64s_integers_still_differs():
    # 2**53 + 1 and 2**53 are the same float64: an integer check through floats would pass them
    want = np.array([2 ** 53 + 1, 2 ** 63 - 1], np.int64)
    got = np.array([2 ** 53, 2 ** 63 - 2], np.int64)
    assert float(got[0]) == float(want[0])
    result = compare("i", got, want)
    assert not result.ok and result.detail == "2 of 2 values differ", result


@pytest.mark.parametrize("name", sorted(EPS_MULTIPLE))
def test_nan_in_the_same_place_is_equal_and_against_a_number_differs(name):
    dtype = _dtype(name)
    want = np.array([1.0, np.nan, -3.0], np.float64).astype(dtype)
    same = compare("z", want.copy(), want)
    assert same.ok and same.max_error == 0.0, same
    number = np.array([1.0, 2.0, -3.0], np.float64).astype(dtype)
    for got, ref, counts in ((number, want, (0, 1)), (want, number, (1, 0))):
        # even a tolerance that would pass any finite error does not excuse a NaN
        result = compare("z", got, ref, rtol=1e30, atol=1e30)
        assert not result.ok and result.max_error == float("inf"), result
        assert result.detail == "NaN in %d places, expected %d" % counts, result
    moved = np.array([np.nan, 1.0, -3.0], np.float64).astype(dtype)
    assert not compare("z", moved, want).ok


@pytest.mark.parametrize("name", sorted(EPS_MULTIPLE))
def test_infinities_must_match_in_place_and_sign(name):
    dtype = _dtype(name)
    inf = float("inf")
    want = np.array([inf, -inf, 2.0], np.float64).astype(dtype)
    assert compare("z", want.copy(), want).ok
    largest = _step(inf, dtype, False)  # the largest finite value of the dtype
    cases = {
        "sign": [-inf, -inf, 2.0],
        "finite for +inf": [largest, -inf, 2.0],
        "finite for -inf": [inf, -largest, 2.0],
        "inf for a finite value": [inf, -inf, inf],
    }
    for case, values in cases.items():
        got = np.array(values, np.float64).astype(dtype)
        result = compare("z", got, want, rtol=1e30, atol=1e30)
        assert (result.ok, result.max_error, result.detail) == (False, inf, "infinities differ"), case


def test_complex_values_compare_both_parts_by_the_parts_dtype():
    k = EPS_MULTIPLE["float32"] * _eps(np.dtype(np.float32))
    want = np.array([1 + 1j, 2 - 2j], np.complex64)
    assert compare("c", want + np.complex64(k * 0.5), want).ok
    got = want + np.complex64(1j * 4 * k)  # imaginary part beyond, real part equal
    result = compare("c", got, want)
    assert not result.ok and result.detail.startswith("imaginary part: beyond rtol"), result


def test_given_tolerances_override_the_dtypes():
    want = np.array([1.0], np.float32)
    got = np.array([1.01], np.float32)
    assert not compare("z", got, want).ok
    assert compare("z", got, want, rtol=0.0, atol=0.011).ok
    assert not compare("z", got, want, rtol=0.0, atol=0.009).ok


def test_shape_and_dtype_mismatches_fail_whatever_the_tolerance():
    want = np.zeros((2, 3), np.float32)
    assert compare("z", np.zeros((3, 2), np.float32), want, rtol=1e30, atol=1e30).detail == \
        "shape [3, 2], expected [2, 3]"
    assert compare("z", np.zeros((2, 3), np.float64), want, rtol=1e30, atol=1e30).detail == \
        "dtype float64, expected float32"
