"""Build steps that ``setup.py`` runs, one module each (pure Python, no TensorFlow import).

A step is a module with ``run(ctx)``: it reads sources under ``ctx.source_root``, writes
into ``ctx.package_dir`` (the ``tf_ge_custom`` folder being built) and records what it
built, or why it skipped, under its own key of ``ctx.build_info``. ``setup.py`` writes
``build_info`` to ``tf_ge_custom/build_info.json``, which the package and ``doctor`` read.
"""
import json
import os
import re
import shlex
import subprocess
import sys

BUILD_INFO_NAME = "build_info.json"


class BuildError(Exception):
    """A build step failed; the message says what to install or change.

    ``first_error`` is the first error line of a failed command's output (compiler, linker
    or CMake), when there is one: with many errors, the first is the one to fix.
    """

    def __init__(self, message, first_error=None):
        super(BuildError, self).__init__(message)
        self.first_error = first_error


_ERROR_LINE = re.compile(r"\berror\b|: cannot find |undefined reference", re.I)


def first_error(output):
    """The first line of a build log that reports an error, or None."""
    for line in output.splitlines():
        if _ERROR_LINE.search(line):
            return line.strip()
    return None


class BuildContext(object):
    def __init__(self, source_root, package_dir, build_temp, jobs=None, verbose=False):
        self.source_root = os.path.abspath(source_root)
        self.package_dir = os.path.abspath(package_dir)
        self.build_temp = os.path.abspath(build_temp)
        self.jobs = jobs or os.cpu_count() or 1
        self.verbose = verbose
        self.build_info = {}

    @property
    def opp_root(self):
        """The OPP root inside the package being built."""
        return os.path.join(self.package_dir, "opp")

    def log(self, message):
        sys.stderr.write("tf-ge-custom build: %s\n" % message)
        sys.stderr.flush()

    def write_build_info(self):
        path = os.path.join(self.package_dir, BUILD_INFO_NAME)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.build_info, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
        return path


def run_command(cmd, log, verbose=False):
    """Run a build command; on failure raise BuildError with the command and its output."""
    if verbose:
        log(" ".join(shlex.quote(c) for c in cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        first = first_error(proc.stdout)
        raise BuildError("command failed (exit %d): %s\n%s%s" % (
            proc.returncode, " ".join(shlex.quote(c) for c in cmd),
            "first error: %s\n" % first if first else "", proc.stdout[-8000:]), first)
    return proc.stdout


def run_steps(ctx, steps):
    """Run ``steps`` (modules with ``run(ctx)``) in order, then write build_info.json."""
    os.makedirs(ctx.package_dir, exist_ok=True)
    os.makedirs(ctx.build_temp, exist_ok=True)
    for step in steps:
        step.run(ctx)
    return ctx.write_build_info()
