"""make test's runner: the whole suite as pytest processes over disjoint parts of tests/, run by
two workers that each take the next part as soon as they are free.

Much of the suite waits on one process at a time (a child importing TensorFlow, a console
script, a native build with two jobs), and one pytest keeps one core busy at most. So on a
machine with two cores or more (``--jobs 2``, the default there) the suite runs as *parts*,
each its own pytest process, and two workers side by side take the parts from one queue:

- :data:`SPLITS` cut the long folders into parts of their own, each a list of modules: tests/ge
  is three (GE in the loop, the CANN toolkit and matrix, the rest), so that no one part is the
  suite's critical path. Parts that use the same native build folder (build/ge-tests/,
  build/ge-sanitize/, build/ge-in-loop/) take it in turn: the tests' build helpers hold a lock
  on the folder while CMake builds it (tests/build_lock.py), and the second finds it built;
- every other entry of tests/ holding a test module is a part of its own (less the modules a
  split took), computed, so a new folder lands in the queue by itself;
- the queue is longest first, by the wall time each part took in the run recorded in
  :data:`TIMES` (``tests/suite_times.json``; a part it lacks counts as long as the longest,
  so it starts early). With the longest parts started first, the two workers end within
  about one short part of each other (the longest-processing-time rule).

Before anything runs, the parts are checked to hold every tests/**/test_*.py exactly once.
Each part is its own strict run (tests/conftest.py checks the paths it was given, and appends
its own line to ``TF_GE_CUSTOM_SKIP_LOG``), writing into ``build/test-parts/<part>.log``
(``tail -f`` it); a part's log is printed whole when it ends, with a line giving its exit
status, wall and CPU time. At the end: one line per part, in the order they ended, then the
parts' wall times into ``build/suite-times.json`` (copy it over :data:`TIMES` to reorder the
queue). The exit status is the first failed part's, else 0.

Why not pytest-xdist: strict mode (tests/conftest.py) judges collection in the process that
collected (every module under the given paths collected, no collect_ignore, no deselection),
and under xdist the workers collect while only their failed collection reports reach the
controller, which judges. Parts keep every pytest process an ordinary, whole run.

Given paths of its own (``make test PYTEST_ARGS=tests/tf``) or ``--jobs 1``, it runs one pytest
with the arguments as given.
"""
import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SPLITS = (
    ("ge-in-loop", ("tests/ge/test_ge_in_loop.py", "tests/ge/test_ge_whole_models.py",
                    "tests/ge/test_ge_report.py", "tests/ge/test_library_symbols.py")),
    ("ge-cann", ("tests/ge/test_cann_matrix.py", "tests/ge/test_cann_build.py",
                 "tests/ge/test_cann_sources.py", "tests/ge/test_cann_toolkit.py")),
)
TIMES = TESTS / "suite_times.json"
PART_LOGS = ROOT / "build" / "test-parts"
RUN_TIMES = ROOT / "build" / "suite-times.json"


class PartitionError(Exception):
    """The parts do not hold every test module exactly once."""


def test_modules(paths, root=ROOT):
    """The test_*.py files (relative to ``root``, POSIX) under ``paths``."""
    found = []
    for path in paths:
        full = root / path
        found += [p.relative_to(root).as_posix() for p in
                  (sorted(full.rglob("test_*.py")) if full.is_dir() else [full] if full.name.startswith("test_") else [])]
    return found


def parts(root=ROOT, splits=SPLITS):
    """[(name, [paths])]: each split of :data:`SPLITS`, then every entry of tests/ with a test
    module under it, less the modules a split took (then its part lists the rest by file).
    Raises PartitionError unless together they hold every tests/**/test_*.py exactly once."""
    tests = root / "tests"
    missing = [p for _, paths in splits for p in paths if not (root / p).exists()]
    if missing:
        raise PartitionError("the splits name %s, which %s not exist" % (
            ", ".join(missing), "does" if len(missing) == 1 else "do"))
    taken = set(p for _, paths in splits for p in paths)
    found = [(name, list(paths)) for name, paths in splits]
    for entry in sorted(tests.iterdir()):
        path = entry.relative_to(root).as_posix()
        modules = test_modules([path], root)
        rest = [m for m in modules if m not in taken]
        if rest:
            found.append((entry.name, [path] if rest == modules else rest))
    every = sorted(p.relative_to(root).as_posix() for p in tests.rglob("test_*.py"))
    got = [m for _, paths in found for m in test_modules(paths, root)]
    if sorted(got) != every:
        twice = sorted({m for m in got if got.count(m) > 1})
        lost = sorted(set(every) - set(got))
        raise PartitionError("the parts hold %s" % "; ".join(
            part for part in ("twice: " + ", ".join(twice) if twice else "",
                              "none: " + ", ".join(lost) if lost else "") if part))
    return found


def queue(found, times):
    """The parts longest first by ``times`` ({name: seconds}); a part without a time counts as
    the longest; ties keep their order."""
    longest = max(list(times.values()) + [0.0])
    return sorted(found, key=lambda part: -times.get(part[0], longest + 1))


def read_times(path=TIMES):
    try:
        with open(str(path)) as f:
            return {str(k): float(v) for k, v in json.load(f)["seconds"].items()}
    except (IOError, OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def names_paths(pytest_args, cwd):
    """True when the arguments name a path of their own (then pytest runs them as given)."""
    return any(not a.startswith("-") and os.path.exists(os.path.join(cwd, a.split("::")[0]))
               for a in pytest_args)


def _last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(no output)"


class Runner(object):
    """Two (or ``jobs``) workers taking parts from one queue; each part one pytest process."""

    def __init__(self, pytest, pytest_args, todo, jobs):
        self.pytest, self.pytest_args = pytest, list(pytest_args)
        self.todo, self.jobs = list(todo), jobs
        self.lock = threading.Lock()
        self.running, self.done = {}, []  # pid -> Popen; [(name, status, wall, cpu, last line)]
        self.stopping = False

    def _next(self):
        with self.lock:
            if self.stopping or not self.todo:
                return None
            return self.todo.pop(0)

    def _run_part(self, name, paths):
        log_path = PART_LOGS / (name + ".log")
        started = time.time()
        with open(str(log_path), "w") as log:
            with self.lock:
                if self.stopping:
                    return
                proc = subprocess.Popen([self.pytest] + self.pytest_args + paths, stdout=log,
                                        stderr=subprocess.STDOUT)
                self.running[proc.pid] = proc
            _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall, cpu = time.time() - started, usage.ru_utime + usage.ru_stime
        text = log_path.read_text(errors="replace")
        with self.lock:
            del self.running[proc.pid]
            line = "part %s (%s): exit %d in %.0f s, CPU %.0f s: %s" % (
                name, " ".join(paths), proc.returncode, wall, cpu, _last_line(text))
            self.done.append((name, proc.returncode, wall, cpu, line))
            sys.stdout.write("\n=== %s ===\n%s" % (line, text))
            sys.stdout.flush()

    def _worker(self):
        while True:
            part = self._next()
            if part is None:
                return
            self._run_part(*part)

    def forward(self, signum):
        with self.lock:
            self.stopping = True
            for proc in self.running.values():
                proc.send_signal(signum)

    def run(self):
        workers = [threading.Thread(target=self._worker, daemon=True) for _ in range(self.jobs)]
        for worker in workers:
            worker.start()
        while any(w.is_alive() for w in workers):
            for worker in workers:
                worker.join(0.2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None,
                        help="workers: 1 (one pytest), or 2 (the default on a machine with 2 cores or more)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER,
                        help="arguments for pytest (after --)")
    args = parser.parse_args(argv)
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    jobs = args.jobs if args.jobs is not None else (2 if (os.cpu_count() or 1) >= 2 else 1)
    if jobs not in (1, 2):
        parser.error("--jobs takes 1 or 2, got %d" % jobs)
    pytest = os.path.join(os.path.dirname(sys.executable), "pytest")
    if jobs == 1 or names_paths(pytest_args, os.getcwd()):
        os.execv(pytest, [pytest] + pytest_args)
    try:
        found = parts()
    except PartitionError as e:
        sys.stderr.write("error: %s (tests/run_suite.py, SPLITS)\n" % e)
        return 2
    todo = queue(found, read_times())
    print("make test: %d parts on %d workers, longest first (%s): %s; each into %s/<part>.log"
          % (len(todo), jobs, os.path.relpath(str(TIMES)), ", ".join(n for n, _ in todo),
             os.path.relpath(str(PART_LOGS))), flush=True)
    PART_LOGS.mkdir(parents=True, exist_ok=True)
    runner = Runner(pytest, pytest_args, todo, jobs)
    started = time.time()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda signum, frame: runner.forward(signum))
    try:
        runner.run()
    except KeyboardInterrupt:  # Ctrl-C: the terminal's reached the pytests too; pass it on anyway
        runner.forward(signal.SIGINT)
        runner.run()
        return 130
    print("\nmake test: %d parts on %d workers in %.0f s, in the order they ended:"
          % (len(runner.done), jobs, time.time() - started))
    for _, _, _, _, line in runner.done:
        print("  " + line)
    with open(str(RUN_TIMES), "w") as f:
        json.dump({"seconds": {name: round(wall, 1) for name, _, wall, _, _ in runner.done}}, f,
                  indent=1, sort_keys=True)
        f.write("\n")
    if len(runner.done) != len(todo):
        print("error: %d of %d parts did not run" % (len(todo) - len(runner.done), len(todo)))
        return 1
    for name, status, _, _, _ in runner.done:
        if status != 0:
            return status if status > 0 else 128 - status
    return 0


if __name__ == "__main__":
    sys.exit(main())
