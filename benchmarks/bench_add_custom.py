"""Throughput of tf_ge_custom.add_custom against tf.math.add, beside numpy, in one run.

For float32 vectors of 2^10 ... 2^24 elements, eager and inside tf.function, the three
implementations are timed interleaved (round-robin, in a shuffled order each round) so that
machine noise hits them alike. Each sample times a batch of calls sized to take ~50 ms;
rounds continue (31 at least, --max-rounds at most) until each ratio's standard error is
below 0.01 or the ratio lies three standard errors away from the 0.95 goal.
Bandwidth (3 x n x 4 bytes: read x and y, write z) comes from the median time per call over
the rounds; each ratio is the median over rounds of that round's paired ratio, which cancels
the slow drifts of a shared machine.

Goals: add_custom / tf.math.add throughput ratio >= 0.95 at every size, and from
2^22 elements add_custom within 10% of the best bandwidth measured at that size.

    python benchmarks/bench_add_custom.py [--rounds 31] [--max-rounds 151] [--json out.json]
"""
import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

import numpy as np
import tensorflow as tf

import tf_ge_custom

SIZES = [2 ** k for k in range(10, 25)]
BATCH_SECONDS = 0.05


def _calls_per_batch(fn):
    fn()
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < BATCH_SECONDS / 4:
        fn()
        calls += 1
    return max(1, calls * 4)


def _time_batch(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


MODES = ("eager", "tf.function")
TARGET_SE = 0.01  # keep sampling until each ratio's standard error is below this,
RATIO_GOAL = 0.95  # or until it is three standard errors away from the goal


def _paired(samples, mode):
    """Per-round throughput ratio add_custom / tf.math.add (time of ref / time of ours)."""
    return [ref / ours for ours, ref in zip(samples[(mode, "add_custom")],
                                            samples[(mode, "tf.math.add")])]


def _median_se(values):
    return 1.2533 * statistics.stdev(values) / len(values) ** 0.5


def _decided(values):
    """The ratio is known well enough: precise, or three standard errors from the goal."""
    ratio, se = statistics.median(values), _median_se(values)
    return se <= TARGET_SE or abs(ratio - RATIO_GOAL) >= 3 * se


def compare(impls, min_rounds, max_rounds, rng):
    """Time ``impls`` ({(mode, name): fn}) interleaved in a shuffled order each round.

    Each mode in MODES must have an "add_custom" and a "tf.math.add" entry. Rounds continue
    (``min_rounds`` at least, ``max_rounds`` at most) until each mode's paired ratio is
    decided. Returns (median seconds per call, ratios, their standard errors, rounds).
    """
    calls = {k: _calls_per_batch(fn) for k, fn in impls.items()}
    samples = {k: [] for k in impls}
    keys = list(impls)
    rounds = 0
    while True:
        rng.shuffle(keys)
        for k in keys:
            samples[k].append(_time_batch(impls[k], calls[k]))
        rounds += 1
        if rounds >= min_rounds and (rounds >= max_rounds or all(
                _decided(_paired(samples, mode)) for mode in MODES)):
            break
    seconds = {k: statistics.median(v) for k, v in samples.items()}
    ratios = {mode: statistics.median(_paired(samples, mode)) for mode in MODES}
    errors = {mode: _median_se(_paired(samples, mode)) for mode in MODES}
    return seconds, ratios, errors, rounds


def measure(size, min_rounds, max_rounds, rng):
    x_np = np.random.RandomState(0).standard_normal(size).astype(np.float32)
    y_np = np.random.RandomState(1).standard_normal(size).astype(np.float32)
    x, y = tf.constant(x_np), tf.constant(y_np)
    f_ours = tf.function(tf_ge_custom.add_custom)
    f_ref = tf.function(tf.math.add)
    # correctness first: a fast wrong answer is not a result
    np.testing.assert_array_equal(tf_ge_custom.add_custom(x, y).numpy(), x_np + y_np)
    np.testing.assert_array_equal(f_ours(x, y).numpy(), x_np + y_np)
    impls = {
        ("eager", "add_custom"): lambda: tf_ge_custom.add_custom(x, y),
        ("eager", "tf.math.add"): lambda: tf.math.add(x, y),
        ("tf.function", "add_custom"): lambda: f_ours(x, y),
        ("tf.function", "tf.math.add"): lambda: f_ref(x, y),
        ("-", "numpy"): lambda: np.add(x_np, y_np),
    }
    seconds, ratios, errors, rounds = compare(impls, min_rounds, max_rounds, rng)
    gbps = {k: 3 * size * 4 / s / 1e9 for k, s in seconds.items()}
    return seconds, gbps, ratios, errors, rounds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31, help="rounds at least")
    parser.add_argument("--max-rounds", type=int, default=151,
                        help="rounds at most, while a ratio's standard error exceeds %.2f" % TARGET_SE)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--max-log2", type=int, default=24)
    args = parser.parse_args(argv)
    rng = random.Random(42)
    sizes = [s for s in SIZES if s <= 2 ** args.max_log2]

    print("tf-ge-custom %s | TensorFlow %s | numpy %s | %s | %d CPUs | >= %d rounds"
          % (tf_ge_custom.__version__, tf.__version__, np.__version__, platform.processor()
             or platform.machine(), os.cpu_count(), args.rounds))
    header = ("| n | eager add_custom GB/s | eager tf.math.add GB/s | ratio (± se) | "
              "tf.function add_custom GB/s | tf.function tf.math.add GB/s | ratio (± se) | "
              "numpy GB/s | add_custom / best | rounds |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    results, ok = [], True
    for size in sizes:
        seconds, gbps, ratios, errors, rounds = measure(size, args.rounds, args.max_rounds, rng)
        r_eager, r_func = ratios["eager"], ratios["tf.function"]
        best = max(gbps.values())
        ours_best = max(gbps[("eager", "add_custom")], gbps[("tf.function", "add_custom")])
        of_best = ours_best / best
        size_ok = min(r_eager, r_func) >= RATIO_GOAL and (size < 2 ** 22 or of_best >= 0.90)
        ok &= size_ok
        print("| 2^%d | %.2f | %.2f | %.3f ± %.3f | %.2f | %.2f | %.3f ± %.3f | %.2f | %.3f | %d |%s"
              % (size.bit_length() - 1, gbps[("eager", "add_custom")], gbps[("eager", "tf.math.add")],
                 r_eager, errors["eager"], gbps[("tf.function", "add_custom")],
                 gbps[("tf.function", "tf.math.add")], r_func, errors["tf.function"],
                 gbps[("-", "numpy")], of_best, rounds, "" if size_ok else " <- goal missed"))
        sys.stdout.flush()
        results.append({"n": size, "seconds_per_call": {"%s/%s" % k: v for k, v in seconds.items()},
                        "gbps": {"%s/%s" % k: v for k, v in gbps.items()},
                        "ratio_eager": r_eager, "ratio_tf_function": r_func,
                        "ratio_standard_errors": errors, "rounds": rounds,
                        "add_custom_of_best": of_best, "goal_met": size_ok})
    print("goals %s" % ("met at every size" if ok else "MISSED somewhere (see marks)"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tensorflow": tf.__version__, "rounds": args.rounds, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
