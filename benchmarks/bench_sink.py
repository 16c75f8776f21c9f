"""The sunk static path against the eager one, on an Ascend NPU: the benchmark to run and send back.

Modelled on GE's ``args_refresh_add_custom`` sample (hicann/ge v9.2.0-beta.1): one static
TF1 graph of ``add_custom`` at float32 [4096, 4096] (and a broadcast case, [4096, 4096] +
[4096]), its operands in device variables, **two alternating buffer sets** (so that the
sunk model must refresh AddCustom's addresses between iterations, which is what makes GE
insert copies around a custom op that cannot declare its launch), 5 warm-up and 100 timed
iterations, in two sessions of the same process:

  eager  ``npu.session_config(compile_dynamic_mode=True)``: GE runs the graph dynamically and
         calls AddCustom's ``Execute`` on the host at every step
  sunk   ``npu.session_config(static_sink=True)``: GE sinks the static graph and runs the
         launch AddCustom declared (``DeclareLaunchArgs``), refreshing its addresses itself

For each path and case it prints the time per iteration (median and mean of the 100), the
achieved bandwidth (3 x the tensor's bytes per iteration: both inputs read, the output
written; a broadcast operand counts as its own size) and the ratio eager / sunk, and checks
both results against numpy. Every step runs ``session.run`` of an assign of the sum into a
device variable, so no tensor crosses to the host while timing.

What a good result looks like: the sunk path approaching the bandwidth of a device-to-device
copy: GE's sample moves 134 MB in about 102 us (about 1.3 TB/s) per D2D copy on its device;
the eager path pays the host call per step on top. Nothing here has run on an NPU: only the
judging and the report are tested (tests/benchmarks/test_bench_sink.py, with a double of the
device steps).

    python benchmarks/bench_sink.py [--warmup 5] [--iterations 100] [--json out.json]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

WARMUP, ITERATIONS = 5, 100
CASES = (("equal", (4096, 4096), (4096, 4096)), ("broadcast", (4096, 4096), (4096,)))
PATHS = ("eager", "sunk")
ITEMSIZE = 4  # float32
# GE's sample: 134 MB ([4096, 4096] float32 is 67 MB; the sample counts 2 x) in ~102 us per D2D copy
REFERENCE_GBPS = 1300.0


class DeviceUnavailable(Exception):
    """No TF Adapter / NPU here: the benchmark cannot run (the message says what is missing)."""


def _elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast_shape(x_shape, y_shape):
    """tf.math.add's output shape of two broadcast-compatible shapes."""
    rank = max(len(x_shape), len(y_shape))
    x = (1,) * (rank - len(x_shape)) + tuple(x_shape)
    y = (1,) * (rank - len(y_shape)) + tuple(y_shape)
    if any(a != b and 1 not in (a, b) for a, b in zip(x, y)):
        raise ValueError("shapes %s and %s do not broadcast" % (list(x_shape), list(y_shape)))
    return tuple(max(a, b) if 0 not in (a, b) else 0 for a, b in zip(x, y))


def bytes_moved(x_shape, y_shape):
    """Bytes one iteration must move: both inputs read once, the output written once."""
    return ITEMSIZE * (_elements(x_shape) + _elements(y_shape) + _elements(broadcast_shape(x_shape, y_shape)))


def summarize(seconds, moved):
    """Figures of one path and case from its per-iteration times (seconds)."""
    if not seconds:
        raise ValueError("no timed iterations")
    median = statistics.median(seconds)
    return {"iterations": len(seconds), "us_median": median * 1e6, "us_mean": statistics.mean(seconds) * 1e6,
            "us_min": min(seconds) * 1e6, "gbps": moved / median / 1e9, "bytes_per_iteration": moved}


def compare(results):
    """Per case: eager / sunk time ratio, the sunk bandwidth against GE's D2D copy, and what to
    conclude. ``results``: {case: {path: summary (with "correct")}}."""
    verdicts = {}
    for case, paths in results.items():
        eager, sunk = paths.get("eager"), paths.get("sunk")
        v = {"correct": all(p.get("correct") for p in paths.values())}
        if eager and sunk:
            v["ratio"] = eager["us_median"] / sunk["us_median"]
            v["sunk_of_copy_bandwidth"] = sunk["gbps"] / REFERENCE_GBPS
            if not v["correct"]:
                v["conclusion"] = "WRONG RESULT: do not use the timings"
            elif v["ratio"] < 1.0:
                v["conclusion"] = "the sunk path is slower than the eager one: please send the full output"
            elif v["sunk_of_copy_bandwidth"] >= 0.5:
                v["conclusion"] = "good: the sunk path runs near copy bandwidth"
            else:
                v["conclusion"] = "the sunk path is faster but well below copy bandwidth: please send the output"
        verdicts[case] = v
    return verdicts


def report(results, verdicts, meta):
    """The text a user sends back."""
    lines = ["AddCustom sunk vs eager | %s | %d warm-up + %d timed iterations, 2 alternating buffer sets"
             % (meta.get("host", "?"), meta.get("warmup", WARMUP), meta.get("iterations", ITERATIONS)),
             "| case | path | us per iteration (median) | mean | min | GB/s | result |", "|---|---|---|---|---|---|---|"]
    for case, paths in results.items():
        for path in PATHS:
            if path in paths:
                p = paths[path]
                lines.append("| %s | %s | %.1f | %.1f | %.1f | %.0f | %s |" % (
                    case, path, p["us_median"], p["us_mean"], p["us_min"], p["gbps"],
                    "matches numpy" if p.get("correct") else "DIFFERS from numpy"))
    for case, v in verdicts.items():
        if "ratio" in v:
            lines.append("%s: eager / sunk = %.2fx; sunk at %.0f%% of a D2D copy's ~%.0f GB/s; %s" % (
                case, v["ratio"], 100 * v["sunk_of_copy_bandwidth"], REFERENCE_GBPS, v["conclusion"]))
    return "\n".join(lines)


# --- the device steps (need TF Adapter's npu_bridge and an NPU; not run in this project's CI) ---

def device_run(path, x_shape, y_shape, warmup=WARMUP, iterations=ITERATIONS):
    """One path over one case: (per-iteration seconds, results correct)."""
    try:
        import npu_bridge  # noqa: F401  (registers NpuOptimizer)
    except ImportError as e:
        raise DeviceUnavailable("npu_bridge (TF Adapter for TF1) is not importable: %s" % e)
    import numpy as np
    import tensorflow as tf

    import tf_ge_custom
    from tf_ge_custom import npu

    options = {"precision_mode_v2": "origin"}
    config = (npu.session_config(static_sink=True, **options) if path == "sunk"
              else npu.session_config(compile_dynamic_mode=True, **options))
    rng = np.random.RandomState(1)
    sets = [(rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal(y_shape).astype(np.float32))
            for _ in range(2)]
    graph = tf.Graph()
    with graph.as_default():
        steps, outs = [], []
        for k, (x, y) in enumerate(sets):  # two buffer sets: each step's addresses differ
            xv = tf.compat.v1.Variable(x, name="x%d" % k)
            yv = tf.compat.v1.Variable(y, name="y%d" % k)
            zv = tf.compat.v1.Variable(np.zeros(np.broadcast(x, y).shape, np.float32), name="z%d" % k)
            steps.append(tf.compat.v1.assign(zv, tf_ge_custom.add_custom(xv, yv)).op)
            outs.append(zv)
        init = tf.compat.v1.global_variables_initializer()
    seconds = []
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        session.run(init)
        for i in range(warmup + iterations):
            t0 = time.perf_counter()
            session.run(steps[i % 2])
            if i >= warmup:
                seconds.append(time.perf_counter() - t0)
        results = session.run(outs)
    correct = all(np.array_equal(z, x + y) for z, (x, y) in zip(results, sets))
    return seconds, correct


def run(device=device_run, warmup=WARMUP, iterations=ITERATIONS):
    """Every case on both paths through ``device`` (the device step; tests pass a double)."""
    results = {}
    for case, xs, ys in CASES:
        results[case] = {}
        for path in PATHS:
            seconds, correct = device(path, xs, ys, warmup, iterations)
            results[case][path] = dict(summarize(seconds, bytes_moved(xs, ys)), correct=correct)
    return results


def main(argv=None, device=device_run, out=None):
    out = out or sys.stdout
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.warmup < 0 or args.iterations < 1:
        parser.error("--warmup must be >= 0 and --iterations >= 1")
    try:
        results = run(device, args.warmup, args.iterations)
    except DeviceUnavailable as e:
        out.write("bench_sink: cannot run here: %s\n" % e)
        return 2
    verdicts = compare(results)
    meta = {"host": platform.node() or platform.machine(), "warmup": args.warmup, "iterations": args.iterations}
    out.write(report(results, verdicts, meta) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results, "verdicts": verdicts,
                       "reference_gbps": REFERENCE_GBPS}, f, indent=1)
    return 0 if all(v["correct"] for v in verdicts.values()) else 1


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
