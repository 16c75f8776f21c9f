"""Every benchmark of the project in one run (``make bench``): a Markdown report and a plot.

Runs, each in its own process and in this order, ``bench_add_custom.py`` (throughput against
tf.math.add and numpy, eager and tf.function), ``bench_broadcast.py`` (broadcasting shapes,
peak memory), ``bench_ge_execute.py`` (the GE core's Execute path: ns and heap allocations
per call), ``bench_import.py`` (what ``import tf_ge_custom`` adds) and
``bench_cli_startup.py`` (the command line's start-up), and writes into ``--out``
(default ``benchmarks/results/``):

    README.md        one table per benchmark, the machine and versions, the goals' verdicts
    throughput.png   GB/s against size: add_custom beside tf.math.add and numpy, eager and tf.function
    raw/NAME.json    each benchmark's own --json output; raw/NAME.log its console output
    raw/NAME.load.json  the machine's 1-minute load average at the benchmark's start and end
                     (the report prints it under the benchmark's title: the load its figures
                     were measured under)

``--quick`` (``make bench BENCH_QUICK=1``) runs every benchmark briefly (few sizes, few rounds):
enough to check that each runs and that the files appear and parse, not to quote figures.
The exit status is 1 when a benchmark fails to run (a missed goal is reported, not an error).

    python benchmarks/run_all.py [--quick] [--out DIR] [--only add_custom,ge_execute] [--max-rounds N]
    python benchmarks/run_all.py --report-only [--max-rounds N]      # README.md + plot from raw/
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "results")

# (name, script, full-run arguments, quick-run arguments)
BENCHMARKS = (
    ("add_custom", "bench_add_custom.py", [], ["--max-log2", "12", "--rounds", "3", "--max-rounds", "3"]),
    ("broadcast", "bench_broadcast.py", [],
     ["--only", "scalar", "--rounds", "3", "--max-rounds", "3", "--memory-runs", "0"]),
    ("ge_execute", "bench_ge_execute.py", [], ["--rounds", "3", "--round-seconds", "0.01"]),
    ("import", "bench_import.py", [], ["--runs", "1"]),
    ("cli_startup", "bench_cli_startup.py", [], ["--runs", "1"]),
)
NAMES = tuple(b[0] for b in BENCHMARKS)
PLOT = "throughput.png"
REPORT = "README.md"
# The lines of the plot: (mode, implementation) keys of bench_add_custom.py's "gbps".
SERIES = (("add_custom", "#d62728"), ("tf.math.add", "#1f77b4"), ("numpy", "#7f7f7f"))


LOAD_SUFFIX = ".load.json"


def _load_average():
    """The 1-minute load average, or None where the system has none."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def read_load(raw_dir, name):
    """(start, end) of the load average recorded for a benchmark's run, or None (an older run)."""
    try:
        with open(os.path.join(raw_dir, name + LOAD_SUFFIX)) as f:
            load = json.load(f)["load_average_1min"]
        return float(load["start"]), float(load["end"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_benchmark(name, script, arguments, raw_dir):
    """Run one benchmark; returns (its JSON document or None, exit status, log path)."""
    json_path = os.path.join(raw_dir, name + ".json")
    log_path = os.path.join(raw_dir, name + ".log")
    if os.path.exists(json_path):
        os.remove(json_path)
    load_path = os.path.join(raw_dir, name + LOAD_SUFFIX)
    for stale in (json_path, load_path):
        if os.path.exists(stale):
            os.remove(stale)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    cmd = [sys.executable, os.path.join(HERE, script)] + list(arguments) + ["--json", json_path]
    with open(log_path, "w") as log:
        log.write("$ %s\n" % " ".join(cmd))
        log.flush()
        start = _load_average()
        # cwd: the benchmarks folder, so the benchmarks import the installed package
        status = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=HERE)
        end = _load_average()
    if start is not None and end is not None:
        # the machine's load while it ran: the condition its figures were measured under
        with open(load_path, "w") as f:
            json.dump({"load_average_1min": {"start": start, "end": end}, "cpus": os.cpu_count()}, f)
    document = None
    if status == 0 and os.path.isfile(json_path):
        with open(json_path) as f:
            document = json.load(f)
    return document, status, log_path


# --- one Markdown section per benchmark, from its JSON ------------------------------------


def _md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def section_add_custom(doc):
    rows = []
    for r in doc["results"]:
        g = r["gbps"]
        rows.append(["2^%d" % (r["n"].bit_length() - 1), "%.2f" % g["eager/add_custom"],
                     "%.2f" % g["eager/tf.math.add"], "%.3f" % r["ratio_eager"],
                     "%.2f" % g["tf.function/add_custom"], "%.2f" % g["tf.function/tf.math.add"],
                     "%.3f" % r["ratio_tf_function"], "%.2f" % g["-/numpy"], r["rounds"],
                     "yes" if r["goal_met"] else "**no**"])
    lines = ["float32, GB/s = 3 x n x 4 bytes / median time per call; ratio = median paired ratio "
             "add_custom / tf.math.add (goal >= 0.95).", "", "![throughput](%s)" % PLOT, ""]
    return lines + _md_table(["n", "eager add_custom", "eager tf.math.add", "ratio", "tf.function add_custom",
                              "tf.function tf.math.add", "ratio", "numpy", "rounds", "goal met"], rows)


def section_broadcast(doc):
    rows = []
    for r in doc["throughput"]:
        g = r["gbps"]
        rows.append([r["case"], "%s + %s" % (r["x"], r["y"]), "%.2f" % g["eager/add_custom"],
                     "%.2f" % g["eager/tf.math.add"], "%.3f" % r["ratio_eager"],
                     "%.2f" % g["tf.function/add_custom"], "%.2f" % g["tf.function/tf.math.add"],
                     "%.3f" % r["ratio_tf_function"], "yes" if r["goal_met"] else "**no**"])
    lines = _md_table(["case", "x + y", "eager add_custom GB/s", "eager tf.math.add GB/s", "ratio",
                       "tf.function add_custom GB/s", "tf.function tf.math.add GB/s", "ratio", "goal met"], rows)
    if doc.get("peak_memory"):
        lines += ["", "Peak RSS of [16384, 1] + [1, 16384] (fresh processes; goal: add_custom within 5 % of "
                  "tf.math.add):", ""]
        lines += _md_table(["mode", "baseline GB", "add_custom GB", "tf.math.add GB", "add_custom / tf.math.add"],
                           [[m["mode"], "%.3f" % (m["baseline"] / 1e9), "%.3f" % (m["add_custom"] / 1e9),
                             "%.3f" % (m["tf.math.add"] / 1e9), "%.3f" % m["ratio"]] for m in doc["peak_memory"]])
    return lines


def section_ge_execute(doc):
    rows = [[r["scenario"], r["dtype"], r["elements"], r["launches_per_call"], "%.0f" % r["ns_per_call_median"],
             "%.3f" % r["allocations_per_call"], "%.0f" % r["bytes_per_call"], r["first_call_allocations"]]
            for r in doc["scenarios"]]
    lines = ["The host cost of `Execute` in the CANN-free core (`benchmarks/ge_bench/bench_execute.cc`), a recording "
             "runtime in place of ACL. Goals: `steady` under 1 us per call; no allocation per call once the "
             "first call has been made: %s." % ("met" if doc["goals_met"] else "**missed**"), ""]
    return lines + _md_table(["scenario", "dtype", "elements", "launches", "ns per call (median)",
                              "allocations per call", "bytes per call", "allocations of the first call"], rows)


def _median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def section_import(doc):
    tf_alone, ours = _median(doc["import_tensorflow"]), _median(doc["import_package_after_tensorflow"])
    return _md_table(["import tensorflow s", "import tensorflow; import tf_ge_custom s",
                      "import tf_ge_custom after TensorFlow ms", "share of TensorFlow's import"],
                     [["%.3f" % tf_alone, "%.3f" % _median(doc["import_tensorflow_and_package"]),
                       "%.1f" % (ours * 1e3), "%.1f %%" % (100 * ours / tf_alone)]]) + \
        ["", "Medians of %d fresh processes each." % doc["runs"]]


def section_cli_startup(doc):
    return _md_table(["command", "median s", "min s", "max s", "TensorFlow log lines"],
                     [[c["command"], "%.3f" % _median(c["seconds"]), "%.3f" % min(c["seconds"]),
                       "%.3f" % max(c["seconds"]), c["tensorflow_log_lines"]] for c in doc["commands"]])


SECTIONS = {
    "add_custom": ("add_custom against tf.math.add and numpy", section_add_custom),
    "broadcast": ("Broadcasting shapes", section_broadcast),
    "ge_execute": ("The GE library's Execute path (host side of the NPU op)", section_ge_execute),
    "import": ("What `import tf_ge_custom` adds", section_import),
    "cli_startup": ("`tf-ge-custom` start-up", section_cli_startup),
}


def plot_throughput(doc, path):
    """GB/s against n, one panel per mode; add_custom beside tf.math.add and numpy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["n"] for r in doc["results"]]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, mode in zip(axes, ("eager", "tf.function")):
        for impl, colour in SERIES:
            key = "-/numpy" if impl == "numpy" else "%s/%s" % (mode, impl)
            ax.plot(sizes, [r["gbps"][key] for r in doc["results"]], marker="o", markersize=3,
                    color=colour, label=impl, linestyle="--" if impl == "numpy" else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # small sizes are per-call overhead, large ones bandwidth
        ax.set_title("%s (float32)" % mode)
        ax.set_xlabel("elements per operand")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("GB/s (read x, y; write z)")
    axes[0].legend()
    fig.suptitle("add_custom throughput on the CPU kernel, %s" % (platform.processor() or platform.machine()))
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def _versions():
    found = {"python": platform.python_version(), "machine": platform.machine(),
             "processor": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    try:
        import builtins

        builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True  # the version without TensorFlow's import
        import tf_ge_custom

        found["tf_ge_custom"] = tf_ge_custom.__version__
        from tf_ge_custom import _library

        found["tensorflow"] = (_library.build_info().get("tensorflow") or {}).get("version")
    except Exception as e:  # the report still says what ran
        found["tf_ge_custom"] = "unknown (%s)" % e
    return found


def write_report(out, results, quick, max_rounds=None):
    v = _versions()
    command = "make bench" + (" BENCH_QUICK=1" if quick else "") + (
        " BENCH_MAX_ROUNDS=%d" % max_rounds if max_rounds else "")
    lines = ["# Benchmark results", "",
             "Written by `%s` (`benchmarks/run_all.py`) on %s: tf-ge-custom %s, TensorFlow %s, "
             "Python %s, %s with %s CPUs. Figures from a shared machine: compare ratios measured in one run, "
             "not absolute numbers across runs." % (command, datetime.date.today().isoformat(), v.get("tf_ge_custom"),
                                                   v.get("tensorflow"), v["python"], v["processor"], v["cpus"])]
    if quick:
        lines += ["", "**Quick mode**: few sizes and rounds, to check that everything runs; not figures to quote."]
    for name, (doc, status, log) in results.items():
        title, render = SECTIONS[name]
        script = dict((b[0], b[1]) for b in BENCHMARKS)[name]
        lines += ["", "## %s (`benchmarks/%s`)" % (title, script), ""]
        load = read_load(os.path.join(out, "raw"), name)
        if load is not None:
            lines += ["Load average (1 minute) %.2f at its start, %.2f at its end, on %s CPUs." % (
                load[0], load[1], v["cpus"]), ""]
        if doc is None:
            lines.append("**Did not run to the end** (exit status %d): see `raw/%s`." % (status, os.path.basename(log)))
        else:
            lines += render(doc)
    text = "\n".join(lines) + "\n"
    path = os.path.join(out, REPORT)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a brief run of each benchmark (CI)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="folder for README.md, %s and raw/" % PLOT)
    parser.add_argument("--only", help="comma-separated benchmarks among: " + ", ".join(NAMES))
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: rewrite %s and %s from the raw/*.json of an earlier run" % (REPORT, PLOT))
    parser.add_argument("--max-rounds", type=int,
                        help="cap the rounds of the throughput benchmarks (their default: 151), to bound the "
                             "time of a full run on a noisy machine")
    args = parser.parse_args(argv)
    chosen = NAMES if not args.only else tuple(n.strip() for n in args.only.split(",") if n.strip())
    unknown = [n for n in chosen if n not in NAMES]
    if unknown:
        parser.error("unknown benchmark(s) %s; choose among %s" % (", ".join(unknown), ", ".join(NAMES)))
    args.out = os.path.abspath(args.out)  # the benchmarks run in benchmarks/, not here
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    results = {}
    for name, script, full, quick in BENCHMARKS:
        if name not in chosen:
            continue
        if args.report_only:
            path = os.path.join(raw, name + ".json")
            if os.path.isfile(path):
                with open(path) as f:
                    results[name] = (json.load(f), 0, os.path.join(raw, name + ".log"))
            continue
        print("== %s (%s)%s" % (name, script, " quick" if args.quick else ""), flush=True)
        arguments = list(quick if args.quick else full)
        if args.max_rounds and name in ("add_custom", "broadcast") and not args.quick:
            arguments += ["--max-rounds", str(args.max_rounds)]
        results[name] = run_benchmark(name, script, arguments, raw)
        doc, status, log = results[name]
        print("   %s: %s" % ("ok" if doc is not None else "FAILED (exit %d)" % status, log), flush=True)
    if results.get("add_custom", (None,))[0] is not None:
        plot_throughput(results["add_custom"][0], os.path.join(args.out, PLOT))
        print("wrote %s" % os.path.join(args.out, PLOT))
    print("wrote %s" % write_report(args.out, results, args.quick, args.max_rounds))
    failed = [n for n, (doc, _, _) in results.items() if doc is None]
    if failed:
        print("benchmarks that did not run to the end: %s" % ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
