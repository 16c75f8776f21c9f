"""The per-CPU NaN rule of tests/tf/nan_rule.py against bit patterns worked out by hand from
the architecture manuals (docs/tensorflow-op.md, "NaN bits"), for both CPUs on any host; and
against TensorFlow's own AddV2 on this host, for every pair of the special values of
test_nan_bits.py, so that the model and the host agree before the model is trusted for the
other CPU."""
import importlib.util
import os
import platform

import numpy as np
import pytest
import tensorflow as tf

pytestmark = pytest.mark.kind("oracle")


def _load(name):
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_nan_" + name, os.path.join(here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rule = _load("nan_rule")

# (x, y, x86_64's x + y, aarch64's x + y), worked out by hand (float32 subnormals flushed to
# zero of their sign, as TensorFlow's CPU kernels run on both CPUs):
#   x86: the first operand's NaN, quieted (| quiet bit); inf - inf: 0xffc00000
#   aarch64: a signalling NaN first (x's, then y's), quieted, else the first quiet NaN;
#   inf - inf: 0x7fc00000; float16 NaN results: sign | 0x7e00
BY_HAND = {
    "float32": [
        (0x3F800000, 0x3F800000, 0x40000000, 0x40000000),  # 1 + 1 = 2
        (0x00000001, 0x00000000, 0x00000000, 0x00000000),  # a subnormal: flushed
        (0x80000001, 0x3F800000, 0x3F800000, 0x3F800000),  # (-subnormal flushed to -0) + 1
        (0x80000001, 0x80000000, 0x80000000, 0x80000000),  # -subnormal + -0: -0
        (0x7FC00001, 0x3F800000, 0x7FC00001, 0x7FC00001),  # quiet NaN + 1
        (0x3F800000, 0xFFC12345, 0xFFC12345, 0xFFC12345),  # 1 + quiet NaN
        (0x3F800000, 0x7F800001, 0x7FC00001, 0x7FC00001),  # 1 + signalling NaN: quieted
        (0xFFC12345, 0x7FC00001, 0xFFC12345, 0xFFC12345),  # two quiet NaNs: x's
        (0x7F800001, 0x7FA00000, 0x7FC00001, 0x7FC00001),  # two signalling NaNs: x's, quieted
        (0x7FC00001, 0xFF800123, 0x7FC00001, 0xFFC00123),  # quiet + signalling: aarch64 takes y's
        (0xFFC12345, 0x7FA00000, 0xFFC12345, 0x7FE00000),  # the same, other signs and payloads
        (0x7FA00000, 0xFFC12345, 0x7FE00000, 0x7FE00000),  # signalling + quiet: x's on both
        (0x7F800000, 0xFF800000, 0xFFC00000, 0x7FC00000),  # inf - inf: the default NaNs
    ],
    "float16": [
        (0x3C00, 0x3C00, 0x4000, 0x4000),  # 1 + 1 = 2
        (0x0001, 0x0000, 0x0001, 0x0001),  # a subnormal kept: exact in float32
        (0x7E01, 0x0000, 0x7E01, 0x7E00),  # NaN + 0: the payload kept on x86 only
        (0xFE55, 0x3C00, 0xFE55, 0xFE00),  # the sign kept on both
        (0x3C00, 0x7D00, 0x7F00, 0x7E00),  # 1 + signalling NaN: quieted
        (0x7E00, 0xFC01, 0x7E00, 0xFE00),  # quiet + signalling: aarch64 takes y's sign
        (0x7C01, 0xFE55, 0x7E01, 0x7E00),  # signalling + quiet: x's on both
        (0xFE55, 0x7E01, 0xFE55, 0xFE00),  # two quiet NaNs: x's
        (0x7C00, 0xFC00, 0xFE00, 0x7E00),  # inf - inf: the default NaNs, narrowed
    ],
}


@pytest.mark.parametrize("dtype", sorted(BY_HAND))
@pytest.mark.parametrize("arch", rule.ARCHES)
def test_the_model_gives_the_hand_worked_bits(dtype, arch):
    column = 2 + rule.ARCHES.index(arch)
    for case in BY_HAND[dtype]:
        got = rule.add_bits(case[0], case[1], dtype, arch)
        assert got == case[column], "%s %s: %#x + %#x gave %#x, by hand %#x" % (
            arch, dtype, case[0], case[1], got, case[column])


def test_the_two_rules_differ_where_the_docs_say():
    assert rule.chosen_nan(0x7FC00001, 0xFF800123, "float32", "x86_64") == 0x7FC00001
    assert rule.chosen_nan(0x7FC00001, 0xFF800123, "float32", "aarch64") == 0xFF800123
    assert rule.chosen_nan(0x3F800000, 0x40000000, "float32", "aarch64") is None
    with pytest.raises(ValueError, match="x86_64, aarch64"):
        rule.chosen_nan(0, 0, "float32", "riscv64")


def _host_arch():
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


@pytest.mark.parametrize("dtype", sorted(BY_HAND))
def test_the_model_of_this_host_is_tensorflows_addv2(dtype):
    """Every ordered pair of test_nan_bits.py's special values, added by AddV2 on this host
    (equal shapes: TensorFlow's own kernel), equals the model of this host's CPU."""
    bits_test = _load("test_nan_bits")
    values = bits_test._values(dtype)
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    got = bits_test._bits(tf.raw_ops.AddV2(x=tf.constant(x), y=tf.constant(y)), dtype)
    uint = bits_test.STORAGE[dtype][1]
    want = rule.add_bits_array(x.view(uint), y.view(uint), dtype, _host_arch())
    differ = np.flatnonzero(got != want)
    assert not differ.size, "%d of %d pairs differ from the %s model: %s" % (
        differ.size, got.size, _host_arch(), ", ".join(
            "%#x + %#x gave %#x, model %#x" % (x.view(uint)[i], y.view(uint)[i], got[i], want[i])
            for i in differ[:8]))


@pytest.mark.parametrize("dtype", sorted(BY_HAND))
def test_the_own_functor_follows_this_hosts_rule_on_every_path(dtype, monkeypatch):
    """add_custom's own functor (tf_ops/add_custom_sum.h: what computes beyond AddV2's 5
    dimensions; TF_GE_CUSTOM_OWN_CPU_FUNCTORS=1 makes it compute every node made while it is
    set: here, those of a new TF1 session) gives the model's bits for this host's CPU on each
    path of test_nan_bits.py: Eigen's packets and scalar tail, a scalar on either side, the 2-,
    3- and 6-dimensional broadcasts, threaded sizes."""
    from tf_ge_custom import ops

    bits_test = _load("test_nan_bits")
    values = bits_test._values(dtype)
    floats, uint = bits_test.STORAGE[dtype]
    n = len(values)
    bits = values.view(uint)
    table = rule.add_bits_array(np.repeat(bits, n), np.tile(bits, n), dtype, _host_arch()).reshape(n, n)
    gx, gy = bits_test._grid(dtype)
    gx3, gy3 = bits_test._grid(dtype, 3)
    x6 = np.ascontiguousarray(np.broadcast_to(gx.reshape(n, 1, 1, 1, 1, 1), (n, 1, 2, 1, 2, 1)))
    y6 = np.ascontiguousarray(np.broadcast_to(gy.reshape(1, n, 1, 1, 1, 1), (1, n, 1, 2, 1, 2)))
    px, py = np.repeat(values, n), np.tile(values, n)
    reps = (1 << 21) // (n * n) + 1  # sharded over the thread pool
    cases = [  # (x, y, the expected bits)
        (np.concatenate([px, px[:3]]), np.concatenate([py, py[:3]]),
         np.concatenate([table.ravel(), table.ravel()[:3]])),
        (px[:3], py[:3], table.ravel()[:3]),
        (np.tile(px, reps), np.tile(py, reps), np.tile(table.ravel(), reps)),
        (gx, gy, table),
        (gy.reshape(1, n), gx.reshape(n, 1), table.T),
        (gx3, gy3, np.repeat(table[:, :, None], 3, axis=2)),
        (x6, y6, np.broadcast_to(table.reshape(n, n, 1, 1, 1, 1), (n, n, 2, 2, 2, 2))),
    ]
    for i in (0, 12, 17):  # a 0-d and a one-element operand, on either side
        cases += [(values[i], values, table[i]), (values, values[i], table[:, i]),
                  (values[i:i + 1], values, table[i]), (values, values[i:i + 1], table[:, i])]
    monkeypatch.setenv("TF_GE_CUSTOM_OWN_CPU_FUNCTORS", "1")
    graph = tf.compat.v1.Graph()
    with graph.as_default():
        fetches, feed = [], {}
        for x, y, _ in cases:
            px_, py_ = (tf.compat.v1.placeholder(tf.as_dtype(dtype), np.shape(a)) for a in (x, y))
            feed[px_], feed[py_] = np.asarray(x, floats), np.asarray(y, floats)
            fetches.append(tf.bitcast(ops.add_custom(px_, py_), tf.as_dtype(uint)))
        with tf.compat.v1.Session(graph=graph) as session:
            got_all = session.run(fetches, feed)
    for (x, y, want), got in zip(cases, got_all):
        differ = np.argwhere(got != want)
        assert not differ.size, "%s, shapes %s + %s: %d of %d differ from the %s model, first at %s: %#x, model %#x" % (
            dtype, np.shape(x), np.shape(y), len(differ), got.size, _host_arch(), tuple(differ[0]),
            got[tuple(differ[0])], want[tuple(differ[0])])
