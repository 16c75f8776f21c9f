"""Stage functions for the runner's tests: each does one thing a real stage might (no TensorFlow)."""
import os
import sys
import time

from tf_ge_custom.selftest.child import StageSkip, passed


def passes(ctx):
    print("a line for the log")
    return passed("fine", answer=42, workdir=ctx.workdir, soc=ctx.soc)


def skips(ctx):
    raise StageSkip("a piece the stage needs")


def raises(ctx):
    raise RuntimeError("first line of the reason\nsecond line")


def returns_nothing(ctx):
    return None


def exits_without_a_result(ctx):
    sys.stdout.write("about to exit\n")
    sys.stdout.flush()
    os._exit(3)


def sleeps(ctx):
    sys.stdout.write("sleeping now\n")
    sys.stdout.flush()
    time.sleep(3600)
