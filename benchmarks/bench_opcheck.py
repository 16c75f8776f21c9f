"""How long ``tf_ge_custom.testing.opcheck`` takes per op, and how many checks it runs.

For each op of ``op_def.OPS`` (or those ``--only`` names), in one process: the wall time of
``opcheck(op)`` (its fresh process for the SavedModel and its child for Triton's interpreter
included; TensorFlow's import is timed once, apart), the number of checks that ran and passed,
and the count of each status. Goals (docs/testing-your-op.md): at least 10 checks run per op,
each op in under 60 s on the CPU. The machine (CPUs, the 1-minute load average before and after each op)
is printed first, since the times depend on it. A missed goal is reported, not an error; the
exit status is 1 when a check of an op fails or does not run (then the figures mean nothing).

    python benchmarks/bench_opcheck.py [--only AddCustom,LeakyReluCustom] [--triton-interp DIR] [--json out.json]
"""
import argparse
import json
import logging
import os
import platform
import sys
import time

GOAL_CHECKS = 10
GOAL_SECONDS = 60.0


def load_average():
    """The 1-minute load average, or None where the system has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def run_op(op, triton_interp=None):
    """``(seconds, [(check, status)])`` of one opcheck of ``op``."""
    from tf_ge_custom.testing import opcheck

    started = time.time()
    report = opcheck(op, triton_interp=triton_interp)
    return time.time() - started, [(r.name, r.status) for r in report]


def summarize(seconds, results, load_before, load_after):
    """The figures and verdicts of one op from its time and its checks' statuses."""
    statuses = {}
    for _, status in results:
        statuses[status] = statuses.get(status, 0) + 1
    ran = statuses.get("passed", 0)
    bad = [name for name, status in results if status in ("failed", "not run")]
    return {"seconds": seconds, "checks": len(results), "checks_run": ran, "statuses": statuses,
            "not_passed": bad, "load_before": load_before, "load_after": load_after,
            "checks_goal_met": ran >= GOAL_CHECKS, "seconds_goal_met": seconds < GOAL_SECONDS}


def _load_text(value):
    return "n/a" if value is None else "%.2f" % value


def report(figures, import_seconds, out):
    cpus = os.cpu_count()
    out.write("machine: %s, %s CPUs, Python %s; import tensorflow and tf_ge_custom.testing: %.1f s\n"
              % (platform.platform(), cpus, platform.python_version(), import_seconds))
    out.write("goals: >= %d checks run per op, < %.0f s per op\n\n" % (GOAL_CHECKS, GOAL_SECONDS))
    out.write("| op | seconds | checks run | checks | load before | load after | verdict |\n")
    out.write("|---|---|---|---|---|---|---|\n")
    for name, f in figures.items():
        verdict = []
        if f["not_passed"]:
            verdict.append("CHECKS DID NOT PASS: %s" % ", ".join(f["not_passed"]))
        verdict.append("checks goal %s" % ("met" if f["checks_goal_met"] else "MISSED"))
        verdict.append("time goal %s" % ("met" if f["seconds_goal_met"] else "MISSED"))
        out.write("| %s | %.1f | %d | %d | %s | %s | %s |\n" % (
            name, f["seconds"], f["checks_run"], f["checks"], _load_text(f["load_before"]),
            _load_text(f["load_after"]), "; ".join(verdict)))


def main(argv=None, run=None, out=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated op types (default: every op)")
    parser.add_argument("--triton-interp", default=None, help="PyPI triton's folder for the interpreter check")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    started = time.time()
    from tf_ge_custom import op_def
    import tf_ge_custom.testing  # noqa: F401  (TensorFlow: timed apart from the ops)

    import_seconds = time.time() - started
    # TensorFlow's notes that opcheck's many tf.functions retrace: noise in the table
    # (autograph_silence sets its own level while it listens)
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    ops = list(op_def.OPS)
    if args.only:
        try:
            ops = [op_def.get(name) for name in args.only.split(",")]
        except KeyError as e:
            parser.error(str(e).strip("'\""))
    run = run or run_op
    figures = {}
    for op in ops:
        before = load_average()
        seconds, results = run(op, args.triton_interp)
        figures[op.type_name] = summarize(seconds, results, before, load_average())
    report(figures, import_seconds, out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpus": os.cpu_count(), "import_seconds": import_seconds, "goal_checks": GOAL_CHECKS,
                       "goal_seconds": GOAL_SECONDS, "ops": figures}, f, indent=1)
    return 1 if any(f["not_passed"] for f in figures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
