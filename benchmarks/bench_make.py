"""What the README's commands cost from a fresh clone: time per step, the load, the disk.

    python benchmarks/bench_make.py [--targets demo,demo,test-quick] [--json FILE] [--clone DIR]

Clones the repository's committed HEAD (``git clone --no-local``: nothing uncommitted or
ignored comes along, as for a newcomer) into a temporary folder (or ``--clone DIR``, kept),
then runs ``make TARGET`` there for each target in turn (``demo,demo`` times a second
``make demo`` with nothing changed). For each it records the wall time, the time of each
step (from one ``==> `` line of the Makefile to the next), the machine's 1-minute load
average at the start and the end (and its lowest and highest, read every 5 s while it ran),
the exit status, and afterwards the disk that ``.venv``,
``build/`` and ``.cache/`` take in the clone (``du``'s count: allocated blocks). It prints
one line per target and writes everything, with the machine (CPUs, memory) and the commit,
to ``--json``; make's own output goes to ``FILE.log`` beside it. The figures in README.md's
"The two commands" say which run they come from.

Not run by ``make bench``: it builds the package from nothing (minutes), and its figures
depend on pip's cache and on what else the machine runs, which is why it records the load.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MEASURED = (".venv", "build", ".cache")
SAMPLE_SECONDS = 5.0  # how often the load is read while a target runs
# make's own variables from a calling make would steer the clone's make
MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONPATH")


def _load_average():
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2.0 ** 20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def disk_bytes(path):
    """What ``du`` counts for a folder (allocated blocks, each file once), or 0 if absent."""
    if not os.path.exists(path):
        return 0
    seen, total = set(), 0
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    st = os.lstat(path)
    return total + st.st_blocks * 512


def run_target(clone, target, log, every=SAMPLE_SECONDS):
    """``make TARGET`` in the clone: its steps, times, load and exit status."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    log.write("$ make %s\n" % target)
    log.flush()
    load_start = _load_average()
    samples, done = [], threading.Event()

    def sample():  # the load while it runs, not only at its two ends
        while not done.wait(every):
            samples.append(_load_average())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    steps = []
    proc = subprocess.Popen(["make", target], cwd=clone, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, universal_newlines=True, bufsize=1)
    for line in proc.stdout:
        log.write(line)
        if line.startswith("==> "):
            now = time.monotonic() - started
            if steps:
                steps[-1]["seconds"] = round(now - steps[-1].pop("at"), 1)
            steps.append({"step": line[4:].strip(), "at": now})
            print("   %s %s" % (target, line.strip()), flush=True)
    status = proc.wait()
    seconds = time.monotonic() - started
    done.set()
    sampler.join()
    load_end = _load_average()
    during = [x for x in [load_start] + samples + [load_end] if x is not None]
    if steps:
        steps[-1]["seconds"] = round(seconds - steps[-1].pop("at"), 1)
    return {"target": target, "exit_status": status, "seconds": round(seconds, 1), "steps": steps,
            "load_average_1min": {"start": load_start, "end": load_end,
                                  "min": min(during) if during else None,
                                  "max": max(during) if during else None,
                                  "every_seconds": every, "samples": len(samples)},
            "disk_bytes": {name: disk_bytes(os.path.join(clone, name)) for name in MEASURED}}


def _size(n):
    return "%.1f GB" % (n / 1e9) if n >= 1e9 else "%.0f MB" % (n / 1e6)


def summary(result):
    """One line: the target, its time and steps, the load, the disk."""
    kinds = []  # consecutive lines of one step (two set-up lines, say) summed
    for step in result["steps"]:
        kind = step["step"].split(":")[0]
        if kinds and kinds[-1][0] == kind:
            kinds[-1][1] += step["seconds"]
        else:
            kinds.append([kind, step["seconds"]])
    steps = ", ".join("%s %.0f s" % (kind, seconds) for kind, seconds in kinds)
    load = result["load_average_1min"]
    disk = ", ".join("%s %s" % (name, _size(n)) for name, n in sorted(result["disk_bytes"].items()) if n)
    return "make %s: %s%.0f s (%s), load %s at the start, %s at the end (%s to %s while it ran); %s" % (
        result["target"], "exit status %d, " % result["exit_status"] if result["exit_status"] else "",
        result["seconds"], steps or "no step", load["start"], load["end"], load["min"], load["max"],
        disk or "nothing on disk")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="demo,demo",
                        help="comma-separated make targets, run in this order in one clone (default: demo,demo)")
    parser.add_argument("--json", help="write the results here (and make's output to FILE.log)")
    parser.add_argument("--clone", help="clone into this new folder and keep it (default: a temporary one)")
    parser.add_argument("--source", default=ROOT, help=argparse.SUPPRESS)  # another repository (tests)
    parser.add_argument("--every", type=float, default=SAMPLE_SECONDS, help=argparse.SUPPRESS)  # (tests)
    args = parser.parse_args(argv)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    if not targets:
        parser.error("--targets names no target")
    if args.clone and os.path.exists(args.clone):
        parser.error("--clone %s exists: name a new folder" % args.clone)
    temporary = None if args.clone else tempfile.mkdtemp(prefix="bench-make-")
    clone = os.path.abspath(args.clone or os.path.join(temporary, "clone"))
    log_path = (args.json + ".log") if args.json else os.devnull
    try:
        subprocess.run(["git", "clone", "-q", "--no-local", args.source, clone], check=True)
        commit = subprocess.run(["git", "-C", clone, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                                universal_newlines=True, check=True).stdout.strip()
        results = []
        with open(log_path, "w") as log:
            for target in targets:
                results.append(run_target(clone, target, log, args.every))
                print(summary(results[-1]), flush=True)
                if results[-1]["exit_status"]:
                    break
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    document = {"commit": commit, "date": time.strftime("%Y-%m-%d"), "targets": results,
                "machine": {"cpus": os.cpu_count(), "memory_gib": _memory_gib(),
                            "machine": platform.machine(), "python": platform.python_version()}}
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(document, f, indent=1)
        os.replace(args.json + ".tmp", args.json)
    return 1 if any(r["exit_status"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
