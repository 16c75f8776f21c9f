"""Broadcasting add_custom against tf.math.add: throughput ratios in one run, peak memory.

Throughput: for each shape pair below (the broadcast forms the kernel variants serve, at several sizes), eager and
inside tf.function, add_custom and tf.math.add are timed interleaved with the paired-ratio
method of bench_add_custom.py (same rounds, same stopping rule). GB/s counts the bytes an
add must move: both inputs read once, the output written once. Goal: every ratio >= 0.95.

Peak memory: ``add_custom(tf.ones([16384, 1]), tf.ones([1, 16384]))`` and the same with
tf.math.add, each in its own fresh process (several alternating runs, the median of each
process's peak RSS, VmHWM), eager and in tf.function; a process that only creates the
inputs gives the baseline. Goal: add_custom's peak within 5 % of tf.math.add's.

    python benchmarks/bench_broadcast.py [--rounds 31] [--max-rounds 151] [--json out.json]
                                         [--only bias_add,outer] [--memory-runs 3]
"""
import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys

import numpy as np

# (case, x shape, y shape): the four cases at their sizes, then more sizes and the
# [N, C] + [N, 1] and NCHW / NHWC bias patterns
CASES = [
    ("bias_add", (8192, 1024), (1024,)),
    ("bias_add", (1024, 1024), (1024,)),
    ("bias_add", (64, 1024), (1024,)),
    ("outer", (4096, 1), (1, 4096)),
    ("outer", (1024, 1), (1, 1024)),
    ("outer", (256, 1), (1, 256)),
    ("scalar", (4 * 2 ** 20,), ()),
    ("scalar", (2 ** 20,), ()),
    ("scalar", (2 ** 16,), ()),
    ("equal", (4 * 2 ** 20,), (4 * 2 ** 20,)),
    ("equal", (2 ** 20,), (2 ** 20,)),
    ("equal", (2 ** 16,), (2 ** 16,)),
    ("row_bias", (8192, 1024), (8192, 1)),
    ("row_bias", (1024, 1024), (1024, 1)),
    ("row_bias", (64, 1024), (64, 1)),
    ("nchw_bias", (32, 256, 14, 14), (1, 256, 1, 1)),
    ("nchw_bias", (8, 64, 56, 56), (1, 64, 1, 1)),
    ("nchw_bias", (2, 16, 8, 8), (1, 16, 1, 1)),
    ("nhwc_bias", (8, 56, 56, 64), (64,)),
]
MEMORY_SHAPES = ((16384, 1), (1, 16384))
RATIO_GOAL = 0.95
MEMORY_GOAL = 1.05


def _shape(s):
    return "[" + ",".join(str(d) for d in s) + "]"


def throughput(cases, min_rounds, max_rounds, rng):
    import tensorflow as tf

    import tf_ge_custom
    from bench_add_custom import compare

    f_ours = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b))
    f_ref = tf.function(lambda a, b: tf.math.add(a, b))
    header = ("| case | x + y | eager add_custom GB/s | eager tf.math.add GB/s | ratio (± se) | "
              "tf.function add_custom GB/s | tf.function tf.math.add GB/s | ratio (± se) | rounds |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    results, ok = [], True
    for name, xs, ys in cases:
        x_np = np.random.RandomState(0).standard_normal(xs).astype(np.float32)
        y_np = np.random.RandomState(1).standard_normal(ys).astype(np.float32)
        x, y = tf.constant(x_np), tf.constant(y_np)
        want = x_np + y_np  # correctness first: a fast wrong answer is not a result
        np.testing.assert_array_equal(tf_ge_custom.add_custom(x, y).numpy(), want)
        np.testing.assert_array_equal(f_ours(x, y).numpy(), want)
        impls = {
            ("eager", "add_custom"): lambda: tf_ge_custom.add_custom(x, y),
            ("eager", "tf.math.add"): lambda: tf.math.add(x, y),
            ("tf.function", "add_custom"): lambda: f_ours(x, y),
            ("tf.function", "tf.math.add"): lambda: f_ref(x, y),
        }
        seconds, ratios, errors, rounds = compare(impls, min_rounds, max_rounds, rng)
        moved = (x_np.size + y_np.size + want.size) * 4
        gbps = {k: moved / s / 1e9 for k, s in seconds.items()}
        case_ok = min(ratios.values()) >= RATIO_GOAL
        ok &= case_ok
        print("| %s | %s + %s | %.2f | %.2f | %.3f ± %.3f | %.2f | %.2f | %.3f ± %.3f | %d |%s" % (
            name, _shape(xs), _shape(ys), gbps[("eager", "add_custom")],
            gbps[("eager", "tf.math.add")], ratios["eager"], errors["eager"],
            gbps[("tf.function", "add_custom")], gbps[("tf.function", "tf.math.add")],
            ratios["tf.function"], errors["tf.function"], rounds,
            "" if case_ok else " <- goal missed"))
        sys.stdout.flush()
        results.append({"case": name, "x": list(xs), "y": list(ys), "rounds": rounds,
                        "gbps": {"%s/%s" % k: v for k, v in gbps.items()},
                        "ratio_eager": ratios["eager"], "ratio_tf_function": ratios["tf.function"],
                        "ratio_standard_errors": errors, "goal_met": case_ok})
    return results, ok


_CHILD = r"""
import resource, sys
import tensorflow as tf
import tf_ge_custom
impl, mode = sys.argv[1], sys.argv[2]
x = tf.ones(%(xs)r)
y = tf.ones(%(ys)r)
fn = {"add_custom": tf_ge_custom.add_custom, "tf.math.add": tf.math.add,
      "baseline": None}[impl]
if fn is not None:
    if mode == "tf.function":
        fn = tf.function(fn)
    z = fn(x, y)
    assert float(tf.reduce_sum(z)) == 2.0 * z.shape.num_elements()
    del z
# VmHWM: this process's own peak; ru_maxrss would start from the parent's RSS at fork
with open("/proc/self/status") as f:
    hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")]
print((hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024)
""" % {"xs": list(MEMORY_SHAPES[0]), "ys": list(MEMORY_SHAPES[1])}


def _peak_rss(impl, mode):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    # cwd: the benchmarks folder, so that the child imports the installed package
    proc = subprocess.run([sys.executable, "-c", _CHILD, impl, mode], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    if proc.returncode != 0:
        raise RuntimeError("peak-memory child %s/%s failed:\n%s" % (impl, mode, proc.stderr[-3000:]))
    return int(proc.stdout.strip().splitlines()[-1])


def peak_memory(runs):
    """Median peak RSS per (mode, impl) over ``runs`` alternating fresh processes."""
    keys = [(mode, impl) for mode in ("eager", "tf.function")
            for impl in ("baseline", "add_custom", "tf.math.add")]
    peaks = {k: [] for k in keys}
    for _ in range(runs):
        for mode, impl in keys:
            peaks[(mode, impl)].append(_peak_rss(impl, mode))
    medians = {k: statistics.median(v) for k, v in peaks.items()}
    print("\npeak RSS of %s + %s (median of %d fresh processes each):" % (
        _shape(MEMORY_SHAPES[0]), _shape(MEMORY_SHAPES[1]), runs))
    print("| mode | baseline (inputs only) GB | add_custom GB | tf.math.add GB | "
          "add_custom / tf.math.add | above baseline: add_custom / tf.math.add GB |")
    print("|---|---|---|---|---|---|")
    ok, rows = True, []
    for mode in ("eager", "tf.function"):
        base, ours, ref = (medians[(mode, i)] for i in ("baseline", "add_custom", "tf.math.add"))
        ratio = ours / ref
        ok &= ratio <= MEMORY_GOAL
        print("| %s | %.3f | %.3f | %.3f | %.3f | %.3f / %.3f |%s" % (
            mode, base / 1e9, ours / 1e9, ref / 1e9, ratio, (ours - base) / 1e9,
            (ref - base) / 1e9, "" if ratio <= MEMORY_GOAL else " <- goal missed"))
        rows.append({"mode": mode, "baseline": base, "add_custom": ours, "tf.math.add": ref,
                     "ratio": ratio, "runs": peaks[(mode, "add_custom")]})
    return rows, ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31, help="rounds at least")
    parser.add_argument("--max-rounds", type=int, default=151, help="rounds at most")
    parser.add_argument("--only", help="comma-separated case names (default: all)")
    parser.add_argument("--memory-runs", type=int, default=3,
                        help="fresh processes per implementation for peak memory (0: skip)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tensorflow as tf

    import tf_ge_custom

    cases = [c for c in CASES if not args.only or c[0] in args.only.split(",")]
    print("tf-ge-custom %s | TensorFlow %s | %s | %d CPUs | float32 | >= %d rounds"
          % (tf_ge_custom.__version__, tf.__version__, platform.processor() or platform.machine(),
             os.cpu_count(), args.rounds))
    results, ok = throughput(cases, args.rounds, args.max_rounds, random.Random(42))
    memory, memory_ok = peak_memory(args.memory_runs) if args.memory_runs else ([], True)
    print("goals %s" % ("met" if ok and memory_ok else "MISSED somewhere (see marks)"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tensorflow": tf.__version__, "throughput": results, "peak_memory": memory},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
