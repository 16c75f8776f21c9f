"""make test's runner: the whole suite as two pytest processes side by side, over disjoint paths.

Much of the suite waits on one process at a time (a child importing TensorFlow, a console
script, a native build with two jobs), and one pytest keeps one core busy at most. On a machine
with two cores or more (``--jobs 2``, the default there) the suite runs as two processes:

- *beside*: :data:`BESIDE`, tests/ge and tests/kernels: they share the native build folder
  (build/ge-tests/), so they must be in one process, and they are the suite's compiling half
  (the native tests, the sanitizers, GE in the loop, the CANN matrix). In the first
  two-process CI rehearsal (2026-12-02) they used about 2,400 CPU seconds, the rest of the
  suite about 2,450 once tests/selftest, tests/examples and tests/benchmarks, beside them
  there at first, were counted on its side (they kept the beside half running 25 minutes
  after the other had ended);
- *main*: every other entry of tests/ holding a test module, computed, so a new folder lands
  here.

Before anything runs, the two path lists are checked to hold every tests/**/test_*.py exactly
once. Each process is its own strict run (tests/conftest.py checks the paths it was given, and
appends its own line to ``TF_GE_CUSTOM_SKIP_LOG``). The main half prints as it goes; the beside
half writes to ``build/test-beside.log`` (``tail -f`` it), printed whole when both have ended,
then one line per half. The exit status is the main half's when it failed, else the beside
half's.

Given paths of its own (``make test PYTEST_ARGS=tests/tf``) or ``--jobs 1``, it runs one pytest
with the arguments as given.
"""
import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
BESIDE = ("tests/ge", "tests/kernels")
BESIDE_LOG = ROOT / "build" / "test-beside.log"


class PartitionError(Exception):
    """The two halves do not hold every test module exactly once."""


def test_modules(paths, root=ROOT):
    """The test_*.py files (relative to ``root``, POSIX) under ``paths``."""
    found = []
    for path in paths:
        full = root / path
        found += [p.relative_to(root).as_posix() for p in
                  (sorted(full.rglob("test_*.py")) if full.is_dir() else [full] if full.name.startswith("test_") else [])]
    return found


def halves(root=ROOT, beside=BESIDE):
    """(beside paths, main paths): the main half is every entry of tests/ with a test module under
    it that is not in the beside half. Raises PartitionError unless together they hold every
    tests/**/test_*.py exactly once."""
    tests = root / "tests"
    missing = [p for p in beside if not (root / p).exists()]
    if missing:
        raise PartitionError("the beside half names %s, which %s not exist" % (
            ", ".join(missing), "does" if len(missing) == 1 else "do"))
    taken = set(beside)
    main = [entry.relative_to(root).as_posix() for entry in sorted(tests.iterdir())
            if entry.relative_to(root).as_posix() not in taken and test_modules([entry.relative_to(root)], root)]
    every = sorted(p.relative_to(root).as_posix() for p in tests.rglob("test_*.py"))
    got = test_modules(beside, root) + test_modules(main, root)
    if sorted(got) != every:
        twice = sorted({m for m in got if got.count(m) > 1})
        lost = sorted(set(every) - set(got))
        raise PartitionError("the two halves hold %s" % "; ".join(
            part for part in ("twice: " + ", ".join(twice) if twice else "",
                              "neither: " + ", ".join(lost) if lost else "") if part))
    return list(beside), main


def names_paths(pytest_args, cwd):
    """True when the arguments name a path of their own (then pytest runs them as given)."""
    return any(not a.startswith("-") and os.path.exists(os.path.join(cwd, a.split("::")[0]))
               for a in pytest_args)


def _last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(no output)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None,
                        help="pytest processes: 1, or 2 (the default on a machine with 2 cores or more)")
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
        beside, rest = halves()
    except PartitionError as e:
        sys.stderr.write("error: %s (tests/run_suite.py, BESIDE)\n" % e)
        return 2

    print("make test: two pytest processes: %s here; %s beside it, into %s"
          % (" ".join(rest), " ".join(beside), os.path.relpath(str(BESIDE_LOG))), flush=True)
    BESIDE_LOG.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with open(str(BESIDE_LOG), "w") as log:
        other = subprocess.Popen([pytest] + pytest_args + beside, stdout=log, stderr=subprocess.STDOUT)
        here = subprocess.Popen([pytest] + pytest_args + rest, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, universal_newlines=True, bufsize=1)
        children = (here, other)

        def forward(signum, frame):
            for child in children:
                if child.poll() is None:
                    child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, forward)
        tail = []
        try:
            for line in here.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                if line.strip():
                    tail = [line]
            here_status = here.wait()
            other_status = other.wait()
        except KeyboardInterrupt:  # Ctrl-C: the terminal's reached the two pytests too; pass it on anyway
            forward(signal.SIGINT, None)
            for child in children:
                child.wait()
            return 130
    print("\n=== the beside half: %s (%s) ===" % (" ".join(beside), os.path.relpath(str(BESIDE_LOG))))
    with open(str(BESIDE_LOG)) as log:
        beside_text = log.read()
    sys.stdout.write(beside_text)
    print("\nmake test, both halves in %.0f s:" % (time.time() - started))
    print("  main half:   exit %d: %s" % (here_status, tail[0].strip() if tail else "(no output)"))
    print("  beside half: exit %d: %s" % (other_status, _last_line(beside_text)))
    for status in (here_status, other_status):
        if status != 0:
            return status if status > 0 else 128 - status
    return 0


if __name__ == "__main__":
    sys.exit(main())
