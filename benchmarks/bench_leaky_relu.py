"""Throughput of tf_ge_custom's leaky_relu_custom against tf.nn.leaky_relu, in one run.

For vectors of 2^10 ... 2^24 elements of each dtype (float32, float16, bfloat16), eager and
inside tf.function, the two are timed interleaved (round-robin, in a shuffled order each
round) so that machine noise hits them alike; each sample times a batch of calls sized to take
~50 ms; rounds continue (--rounds at least, --max-rounds at most) until each ratio's standard
error is below 0.01 or the ratio lies three standard errors away from the goal. Each ratio is
the median over rounds of that round's paired throughput ratio (tf.nn.leaky_relu's time /
leaky_relu_custom's), which cancels the slow drifts of a shared machine. Goal: ratio >= 0.95
at every size and dtype.

It times the installed package's ``tf_ge_custom.leaky_relu_custom``:

    python benchmarks/bench_leaky_relu.py [--rounds 15] [--max-rounds 61] [--json out.json]
"""
import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

SIZES = [2 ** k for k in range(10, 25)]
DTYPES = ("float32", "float16", "bfloat16")
BATCH_SECONDS = 0.05
RATIO_GOAL = 0.95


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


TARGET_SE = 0.01


def _ratios(samples, mode):
    return [r / o for o, r in zip(samples[(mode, "ours")], samples[(mode, "tf")])]


def _decided(values):
    ratio, se = statistics.median(values), 1.2533 * statistics.stdev(values) / len(values) ** 0.5
    return se <= TARGET_SE or abs(ratio - RATIO_GOAL) >= 3 * se


def measure(tf, ours, size, dtype, rounds, max_rounds, rng):
    import numpy as np

    x = tf.cast(tf.constant(np.random.RandomState(0).standard_normal(size), tf.float32), dtype)
    f_ours = tf.function(lambda x: ours(x, alpha=0.2))
    f_ref = tf.function(lambda x: tf.nn.leaky_relu(x, alpha=0.2))
    bits = tf.uint32 if dtype == "float32" else tf.uint16
    # correctness first: a fast wrong answer is not a result
    for a, b in ((ours(x, alpha=0.2), tf.nn.leaky_relu(x, alpha=0.2)), (f_ours(x), f_ref(x))):
        np.testing.assert_array_equal(tf.bitcast(a, bits).numpy(), tf.bitcast(b, bits).numpy())
    impls = {("eager", "ours"): lambda: ours(x, alpha=0.2),
             ("eager", "tf"): lambda: tf.nn.leaky_relu(x, alpha=0.2),
             ("tf.function", "ours"): lambda: f_ours(x),
             ("tf.function", "tf"): lambda: f_ref(x)}
    calls = {k: _calls_per_batch(fn) for k, fn in impls.items()}
    samples = {k: [] for k in impls}
    keys = list(impls)
    done = 0
    while True:
        rng.shuffle(keys)
        for k in keys:
            samples[k].append(_time_batch(impls[k], calls[k]))
        done += 1
        if done >= rounds and (done >= max_rounds or all(
                _decided(_ratios(samples, mode)) for mode in ("eager", "tf.function"))):
            break
    ratios = {mode: statistics.median(_ratios(samples, mode)) for mode in ("eager", "tf.function")}
    itemsize = 4 if dtype == "float32" else 2
    gbps = {k: 2 * size * itemsize / statistics.median(v) / 1e9 for k, v in samples.items()}
    return ratios, gbps, done


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds at least")
    parser.add_argument("--max-rounds", type=int, default=61, help="rounds at most")
    parser.add_argument("--max-log2", type=int, default=24)
    parser.add_argument("--dtype", action="append", choices=DTYPES)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    import tensorflow as tf

    import tf_ge_custom

    ours = tf_ge_custom.leaky_relu_custom

    rng = random.Random(35)
    print("TensorFlow %s | %s | %d CPUs | %d rounds" % (
        tf.__version__, platform.processor() or platform.machine(), os.cpu_count(), args.rounds))
    header = ("| dtype | n | eager ours GB/s | eager tf GB/s | ratio | tf.function ours GB/s | "
              "tf.function tf GB/s | ratio | rounds |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    results, ok = [], True
    for dtype in args.dtype or DTYPES:
        for size in (s for s in SIZES if s <= 2 ** args.max_log2):
            ratios, gbps, done = measure(tf, ours, size, dtype, args.rounds, args.max_rounds, rng)
            size_ok = min(ratios.values()) >= RATIO_GOAL
            ok &= size_ok
            print("| %s | 2^%d | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %d |%s" % (
                dtype, size.bit_length() - 1, gbps[("eager", "ours")], gbps[("eager", "tf")],
                ratios["eager"], gbps[("tf.function", "ours")], gbps[("tf.function", "tf")],
                ratios["tf.function"], done, "" if size_ok else " below goal"))
            sys.stdout.flush()
            results.append({"dtype": dtype, "n": size, "ratios": ratios, "rounds": done,
                            "gbps": {"%s %s" % k: v for k, v in gbps.items()}})
    print("goal (ratio >= %.2f everywhere): %s" % (RATIO_GOAL, "met" if ok else "NOT met"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tensorflow": tf.__version__, "rounds": args.rounds, "results": results},
                      f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
