"""CI's timer: run a command, then say in one line how long it took and how much CPU it used.

  python3 .ci/timed.py NAME -- COMMAND [ARG ...]

The CPU time is the command's own and that of every process it waited for (``os.wait4``), so
a part's line counts its pytest children, compilers and TensorFlow starts. The line is printed
and appended to ``build/ci-times.txt`` (.ci/run prints that file at the end). The exit status is
the command's.
"""
import os
import subprocess
import sys
import time

TIMES = os.path.join("build", "ci-times.txt")


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python3 .ci/timed.py NAME -- COMMAND [ARG ...]\n")
        return 2
    name, command = argv[0], argv[2:]
    started = time.time()
    proc = subprocess.Popen(command)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = status = os.waitstatus_to_exitcode(status)
    line = "%-10s wall %5.0f s  CPU %5.0f s (user %.0f + system %.0f)  exit %d" % (
        name, time.time() - started, usage.ru_utime + usage.ru_stime, usage.ru_utime, usage.ru_stime, status)
    print("=== time: %s ===" % line, flush=True)
    os.makedirs(os.path.dirname(TIMES), exist_ok=True)
    with open(TIMES, "a") as f:
        f.write(line + "\n")
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
