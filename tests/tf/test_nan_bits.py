"""add_custom(x, y) is tf.raw_ops.AddV2(x, y) bit for bit on the CPU, NaN sign and payload
included, for float32 and float16 (tf_ops/add_custom_sum.h), on each of the CPU kernel's paths.

Every ordered pair of a set of special values -- signed zeros, ones, subnormals, the largest
finite values, infinities, quiet and signalling NaNs of both signs with payloads -- is added
both ways (x, y) and (y, x); the output's bit patterns (viewed as uint32 / uint16) must be
AddV2's. The shapes take each path of tf_ops/add_custom_kernels.cc: equal shapes (Eigen's
packets, then its scalar tail), a 0-d operand on either side (Left / Right), a one-element
operand of rank 1 (BCast to one dimension), BCast to 2 (the row and column cases of
TensorFlow's BinaryFunctor), 3 and 6 dimensions (Broadcast<3>, Broadcast<8>), and, from about
10^5 elements, Eigen's sharding of the work over the thread pool (2^21 and 3.3 * 10^6 elements
here). bfloat16 is not asked for: TensorFlow's own bfloat16 kernel is not consistent between
its paths. Under XLA, the AddCustom node against AddV2 compiled by the same XLA.
"""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom

pytestmark = pytest.mark.kind("oracle")

SPECIAL = {
    "float32": [
        0x00000000, 0x80000000,  # +0, -0
        0x3F800000, 0xBF800000,  # 1, -1
        0x00000001, 0x007FFFFF, 0x80000001,  # subnormals (smallest, largest, negative)
        0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,  # smallest normal, largest finite, its negative
        0x7F800000, 0xFF800000,  # +inf, -inf
        0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFC12345,  # quiet NaNs, payloads
        0x7F800001, 0x7FA00000, 0xFF800123,  # signalling NaNs
    ],
    "float16": [
        0x0000, 0x8000, 0x3C00, 0xBC00,
        0x0001, 0x03FF, 0x8001,
        0x0400, 0x7BFF, 0xFBFF,
        0x7C00, 0xFC00,
        0x7E00, 0xFE00, 0x7E01, 0x7FFF, 0xFE55,
        0x7C01, 0x7D00, 0xFC01,
    ],
}
STORAGE = {"float32": (np.float32, np.uint32), "float16": (np.float16, np.uint16)}
DTYPES = sorted(SPECIAL)


def _values(dtype):
    floats, bits = STORAGE[dtype]
    return np.array(SPECIAL[dtype], bits).view(floats)


def _bits(tensor, dtype):
    return tensor.numpy().view(STORAGE[dtype][1])


def _assert_bits_equal(x, y, dtype, beyond_addv2=False):
    """add_custom(x, y) and AddV2(x, y): same shape, same bits; names the pairs that differ.

    ``beyond_addv2``: shapes that merge to more than the 5 dimensions AddV2 broadcasts;
    then the oracle is AddV2 of both operands broadcast to the output's shape first."""
    x, y = tf.constant(x), tf.constant(y)
    ours = tf_ge_custom.add_custom(x, y)
    if beyond_addv2:
        with pytest.raises(tf.errors.UnimplementedError, match="not supported yet"):
            tf.raw_ops.AddV2(x=x, y=y)
        full_x, full_y = (tf.constant(np.ascontiguousarray(a)) for a in np.broadcast_arrays(x, y))
        want = tf.raw_ops.AddV2(x=full_x, y=full_y)  # (numpy copies the bits)
    else:
        want = tf.raw_ops.AddV2(x=x, y=y)
    assert ours.shape == want.shape
    got, expected = _bits(ours, dtype), _bits(want, dtype)
    differ = np.argwhere(got != expected)
    if differ.size:
        bx = np.broadcast_to(_bits(x, dtype), got.shape)
        by = np.broadcast_to(_bits(y, dtype), got.shape)
        shown = ["%s: %#x + %#x gave %#x, AddV2 %#x" % (tuple(i), bx[tuple(i)], by[tuple(i)],
                                                       got[tuple(i)], expected[tuple(i)])
                 for i in differ[:8]]
        pytest.fail("%d of %d elements differ from AddV2 (%s, shapes %s and %s):\n%s" % (
            len(differ), got.size, dtype, x.shape, y.shape, "\n".join(shown)))
    return got.size


def _all_pairs(dtype):
    """x and y of every ordered pair of the special values (so both orders of each pair)."""
    v = _values(dtype)
    return np.repeat(v, len(v)), np.tile(v, len(v))


def _grid(dtype, *trailing):
    """x of shape (n, 1, *trailing) and y of shape (1, n, *trailing): the pair (i, j) at [i, j]."""
    v = _values(dtype)
    n = len(v)
    x = np.broadcast_to(v.reshape((n, 1) + (1,) * len(trailing)), (n, 1) + trailing)
    y = np.broadcast_to(v.reshape((1, n) + (1,) * len(trailing)), (1, n) + trailing)
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_special_values_cover_what_the_test_says(dtype):
    v = _values(dtype)
    bits = np.array(SPECIAL[dtype], STORAGE[dtype][1])
    quiet_bit = 0x400000 if dtype == "float32" else 0x200
    nans = np.isnan(v)
    assert nans.sum() == 8 and np.signbit(v[nans]).sum() == 3  # NaNs of both signs
    assert ((bits[nans] & quiet_bit) == 0).sum() == 3  # signalling ones among them
    tiny = np.finfo(STORAGE[dtype][0]).tiny
    assert ((np.abs(v) < tiny) & (v != 0)).sum() == 3  # subnormals
    assert np.isinf(v).sum() == 2 and (v == 0).sum() == 2 and np.signbit(v[v == 0]).tolist() == [False, True]


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_shapes_packets_and_scalar_tail(dtype):
    x, y = _all_pairs(dtype)
    assert _assert_bits_equal(x, y, dtype) == 400
    # 403 elements: Eigen's packets, then 3 in its scalar tail; then fewer than one packet
    assert _assert_bits_equal(np.concatenate([x, x[:3]]), np.concatenate([y, y[:3]]), dtype) == 403
    for start in range(0, 400, 3):
        _assert_bits_equal(x[start:start + 3], y[start:start + 3], dtype)
    for i in range(0, 400, 37):  # one element each
        _assert_bits_equal(x[i:i + 1], y[i:i + 1], dtype)
        _assert_bits_equal(x[i], y[i], dtype)  # two 0-d tensors


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_scalar_operand_on_either_side(dtype):
    v = _values(dtype)
    for s in v:  # Left (0-d x) and Right (0-d y), every pair in both orders
        assert _assert_bits_equal(s, v, dtype) == len(v)
        assert _assert_bits_equal(v, s, dtype) == len(v)
        # a one-element rank-1 operand: BCast merges to one dimension, then Left / Right
        _assert_bits_equal(np.array([s]), v, dtype)
        _assert_bits_equal(v, np.array([s]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_paths(dtype):
    x, y = _grid(dtype)  # (20, 1) + (1, 20): the outer case of the 2-D BCast
    assert _assert_bits_equal(x, y, dtype) == 400
    assert _assert_bits_equal(y.reshape(1, -1), x.reshape(-1, 1), dtype) == 400
    full_x, _ = np.broadcast_arrays(x, y)
    assert _assert_bits_equal(np.ascontiguousarray(full_x), y, dtype) == 400  # a row broadcast
    assert _assert_bits_equal(y.reshape(-1, 1), np.ascontiguousarray(full_x.T), dtype) == 400
    x3, y3 = _grid(dtype, 3)  # 3 dimensions that do not merge: Broadcast<3>
    assert _assert_bits_equal(x3, y3, dtype) == 1200
    assert _assert_bits_equal(y3.transpose(1, 0, 2), x3.transpose(1, 0, 2), dtype) == 1200
    # 6 dimensions broadcasting in turn (x, y, x, y, ...): Broadcast<8> of this op's own
    # functor (AddV2 refuses them), passing x's NaN on as AddV2's broadcasts do
    # (copies, not arithmetic: a multiplication would quiet the signalling NaNs)
    x6 = np.ascontiguousarray(np.broadcast_to(x.reshape(20, 1, 1, 1, 1, 1), (20, 1, 2, 1, 2, 1)))
    y6 = np.ascontiguousarray(np.broadcast_to(y.reshape(1, 20, 1, 1, 1, 1), (1, 20, 1, 2, 1, 2)))
    assert _assert_bits_equal(x6, y6, dtype, beyond_addv2=True) == 400 * 16
    assert _assert_bits_equal(y6, x6, dtype, beyond_addv2=True) == 400 * 16


@pytest.mark.parametrize("dtype", DTYPES)
def test_threaded_paths(dtype):
    x, y = _all_pairs(dtype)
    reps = (1 << 21) // 400 + 1  # 2,097,200 elements: sharded over the thread pool
    assert _assert_bits_equal(np.tile(x, reps), np.tile(y, reps), dtype) == 400 * reps
    big = np.tile(x, reps)
    _assert_bits_equal(big, y[7], dtype)  # Right over a threaded flat loop
    _assert_bits_equal(x[12], big, dtype)  # Left
    x3, y3 = _grid(dtype, 8192)  # 3.3 million elements through Broadcast<3>
    assert _assert_bits_equal(x3, y3, dtype) == 400 * 8192


@pytest.mark.parametrize("dtype", DTYPES)
def test_under_xla_the_node_matches_addv2_compiled_by_the_same_xla(dtype):
    ours = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True)
    ref = tf.function(lambda a, b: tf.raw_ops.AddV2(x=a, y=b), jit_compile=True)
    x, y = _all_pairs(dtype)
    gx, gy = _grid(dtype)
    for a, b in ((x, y), (gx, gy), (x[5], y), (x, y[9])):
        a, b = tf.constant(a), tf.constant(b)
        np.testing.assert_array_equal(_bits(ours(a, b), dtype), _bits(ref(a, b), dtype))
    assert 'op_type="AddCustom"' in ours.experimental_get_compiler_ir(a, b)(stage="hlo")
