"""Element counts beyond 2^31 - 1: the CPU kernel must not count in 32 bits.

Needs about 8 GiB (two float16 tensors of 2^31 + 1027 elements); skipped on a machine with
less free memory than that, which CI's 24 GiB machines are not.
"""
import os

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom

N = 2 ** 31 + 1027


def _available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.mark.slow
def test_more_than_2_pow_31_elements():
    if _available_bytes() < 12 * 2 ** 30:
        pytest.skip("needs 12 GiB of free memory for two 4 GiB tensors (have %.1f GiB)"
                    % (_available_bytes() / 2 ** 30))
    x = tf.fill([N], tf.constant(1.5, tf.float16))
    z = tf_ge_custom.add_custom(x, x)
    del x
    assert z.shape == (N,)
    # a 32-bit element count would leave the tail (or everything) unwritten or misplaced
    tail = z[2 ** 31 - 2:].numpy()
    np.testing.assert_array_equal(tail, np.full(tail.shape, 3.0, np.float16))
    assert float(tf.reduce_min(z)) == 3.0 and float(tf.reduce_max(z)) == 3.0
