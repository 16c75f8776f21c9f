"""Wall time of ``tf-ge-custom`` commands that do not need the op, and whether they import
TensorFlow.

Each command runs in a fresh process, interleaved with the others, ``--runs`` times; the
reference row is ``python -c "import tensorflow"`` (what a command pays when it imports
TensorFlow). Medians and spread are printed; run it before and after a change, on the same
machine, to compare.

    python benchmarks/bench_cli_startup.py [--runs 10] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
SCRIPT = os.path.join(BIN, "tf-ge-custom")


def commands(scratch):
    return [
        ("import tensorflow (reference)", [sys.executable, "-c", "import tensorflow"]),
        ("tf-ge-custom --help", [SCRIPT, "--help"]),
        ("tf-ge-custom --version", [SCRIPT, "--version"]),
        ("tf-ge-custom list-kernels", [SCRIPT, "list-kernels"]),
        ("tf-ge-custom build-kernels --help", [SCRIPT, "build-kernels", "--help"]),
        ("tf-ge-custom build-kernels --soc X", [SCRIPT, "build-kernels", "--soc", "X",
                                                "--out", os.path.join(scratch, "out")]),
        ("tf-ge-custom doctor", [SCRIPT, "doctor"]),
    ]


def _time(cmd, env):
    started = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True)
    return time.perf_counter() - started, proc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # what a user sees, log lines included
    scratch = tempfile.mkdtemp(prefix="bench-cli-")
    table = commands(scratch)
    times = {name: [] for name, _ in table}
    noise = {}
    for _ in range(args.runs):
        for name, cmd in table:
            seconds, proc = _time(cmd, env)
            times[name].append(seconds)
            noise[name] = sum(1 for line in proc.stderr.splitlines()
                              if "tensorflow" in line.lower() or line.startswith(("I0", "W0", "E0")))
    width = max(len(name) for name in times)
    print("%-*s  %8s  %8s  %8s  %s" % (width, "command", "median", "min", "max",
                                        "TF log lines on stderr"))
    for name, _ in table:
        t = times[name]
        print("%-*s  %7.3fs  %7.3fs  %7.3fs  %d" % (width, name, statistics.median(t), min(t),
                                                    max(t), noise[name]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": args.runs, "commands": [
                {"command": name, "seconds": times[name], "tensorflow_log_lines": noise[name]}
                for name, _ in table]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
