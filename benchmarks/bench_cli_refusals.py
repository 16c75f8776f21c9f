"""How long ``tf-ge-custom`` takes to refuse a mistaken command line, through the console script.

Each case is a mistake a user makes (a misspelt ``--input-shape``, a letter among the
``--dynamic-batch-size`` values, a ``.meta`` model without ``--outputs``, a misspelt option or
command, ``build-kernels`` on a host without ``hivmc``, a negative ``--device``): the command
must refuse it in one line before it imports TensorFlow or the kernel compiler. Each runs in a
fresh process, interleaved with the others, ``--runs`` times; the reference row is ``python -c
"import tensorflow"``, what a refusal would cost after TensorFlow loads. The table gives the
median, min and max wall time, the exit status and the refusal's line; the machine (CPUs, load
average before and after) is printed first, since the times depend on it.

    python benchmarks/bench_cli_refusals.py [--runs 5] [--json out.json]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
SCRIPT = os.path.join(BIN, "tf-ge-custom")
GOAL_SECONDS = 1.0  # a refusal answers at once


def cases(work):
    om = ["--to", "om", "--soc", "Ascend910B1", "--output", "out/m"]
    return [
        ("import tensorflow (reference)", [sys.executable, "-c", "import tensorflow"]),
        ('export --input-shape "x:8x2048;y:8,2048"',
         [SCRIPT, "export", "model.pb"] + om + ["--input-shape", "x:8x2048;y:8,2048"]),
        ("export --dynamic-batch-size 1,2,x", [SCRIPT, "export", "model.pb"] + om + ["--dynamic-batch-size", "1,2,x"]),
        ("export model.meta (no --outputs)", [SCRIPT, "export", "model.meta", "--output", "out/m"]),
        ("export --ouput out/m", [SCRIPT, "export", "model.pb", "--ouput", "out/m"]),
        ("exprot model.pb", [SCRIPT, "exprot", "model.pb"]),
        ("build-kernels (no hivmc, no --ir-only)", [SCRIPT, "build-kernels", "--soc", "Ascend910B1", "--out", "out"]),
        ("run-om m.om --device -1", [SCRIPT, "run-om", "m.om", "--input", "x.npy", "--device", "-1"]),
    ]


def _prepare(work):
    """The files the cases name: their kind is told from the path (no TensorFlow needed)."""
    for name, data in (("model.pb", b"\x0a\x00"), ("model.meta", b""), ("model.index", b""), ("m.om", b"om")):
        with open(os.path.join(work, name), "wb") as f:
            f.write(data)


def _environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    env.pop("PYTHONPATH", None)
    env.pop("BISHENG_INSTALL_PATH", None)
    # a host without hivmc: no folder holding one on PATH
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and not os.path.exists(os.path.join(d, "hivmc")))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _time(cmd, env, cwd):
    started = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                          universal_newlines=True)
    return time.perf_counter() - started, proc


def machine():
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": cpus,
            "load_average": [round(x, 2) for x in load]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    env = _environment()
    work = tempfile.mkdtemp(prefix="bench-refusals-")
    _prepare(work)
    table = cases(work)
    before = machine()
    print("machine: %s, Python %s, %d CPUs, load average %s (before)" % (
        before["platform"], before["python"], before["cpus"], " ".join("%.2f" % x for x in before["load_average"])))
    times = {name: [] for name, _ in table}
    last = {}
    for _ in range(args.runs):
        for name, cmd in table:
            seconds, proc = _time(cmd, env, work)
            times[name].append(seconds)
            lines = [l for l in proc.stderr.splitlines() if l.strip()]
            last[name] = (proc.returncode, lines[-1] if lines else "", len(lines))
    after = machine()
    width = max(len(name) for name in times)
    print("%-*s  %8s  %8s  %8s  %4s  %s" % (width, "command line", "median", "min", "max", "exit",
                                             "stderr lines: the refusal"))
    for name, _ in table:
        t = times[name]
        status, line, count = last[name]
        print("%-*s  %7.3fs  %7.3fs  %7.3fs  %4d  %d: %s" % (width, name, statistics.median(t), min(t),
                                                              max(t), status, count, line[:110]))
    print("load average %s (after)" % " ".join("%.2f" % x for x in after["load_average"]))
    refusals = [name for name, _ in table[1:]]
    slow = [name for name in refusals if statistics.median(times[name]) >= GOAL_SECONDS]
    print("goal: every refusal under %.1f s (median): %s" % (
        GOAL_SECONDS, "met" if not slow else "missed by " + ", ".join(slow)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": args.runs, "machine_before": before, "machine_after": after,
                       "goal_seconds": GOAL_SECONDS, "cases": [
                           {"command": name, "seconds": times[name], "exit_status": last[name][0],
                            "stderr_lines": last[name][2], "refusal": last[name][1]}
                           for name, _ in table]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
