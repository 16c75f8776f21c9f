"""Build steps that ``setup.py`` runs, one module each (pure Python, no TensorFlow import).

A step is a module with ``run(ctx)``: it reads sources under ``ctx.source_root``, writes
into ``ctx.package_dir`` (the ``tf_ge_custom`` folder being built) and records what it
built, or why it skipped, under its own key of ``ctx.build_info``. ``setup.py`` writes
``build_info`` to ``tf_ge_custom/build_info.json``, which the package and ``doctor`` read.
"""
import os
import re
import sys

from .. import _processes, _atomic_files as atomic_files
from ..errors import CommandError, TfGeCustomError

BUILD_INFO_NAME = "build_info.json"


class BuildError(TfGeCustomError):
    """A build step failed; the message says what to install or change (one of the package's
    errors: :mod:`tf_ge_custom.errors`).

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


JOBS_ENV = "TF_GE_CUSTOM_BUILD_JOBS"


def default_jobs(env=None):
    """How many compilers a build runs at once: ``TF_GE_CUSTOM_BUILD_JOBS`` when set, else
    the cores this process may run on (a container's CPU set, not the host's count)."""
    env = os.environ if env is None else env
    chosen = env.get(JOBS_ENV, "").strip()
    if chosen:
        if not chosen.isdigit() or int(chosen) < 1:
            raise BuildError("%s=%s: give a whole number of jobs, 1 or more" % (JOBS_ENV, chosen))
        return int(chosen)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


class BuildContext(object):
    """What the steps share: the folders, the job count, the object cache, the record.

    ``cache_dir``: the folder of compiled objects kept between builds
    (:mod:`.object_cache`); None compiles everything.
    """

    def __init__(self, source_root, package_dir, build_temp, jobs=None, verbose=False,
                 cache_dir=None):
        from .object_cache import ObjectCache

        self.source_root = os.path.abspath(source_root)
        self.package_dir = os.path.abspath(package_dir)
        self.build_temp = os.path.abspath(build_temp)
        self.jobs = jobs or default_jobs()
        self.verbose = verbose
        self.object_cache = ObjectCache(cache_dir)
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
        return atomic_files.write_json(path, self.build_info, sort_keys=True)


def run_command(cmd, log, verbose=False, timeout=None):
    """Run a build command; on failure raise BuildError with the command and its output."""
    if verbose:
        log(_processes.command_line(cmd))
    try:
        # in this process's group: the compilers run from worker threads, which never see a
        # Ctrl-C, so the terminal's SIGINT must reach them itself
        finished = _processes.run(cmd, timeout=timeout, check=False, new_group=False)
    except CommandError as e:
        raise BuildError("command %s: %s" % (e.reason, e), first_error(e.tail))
    if finished.returncode != 0:
        first = first_error(finished.output)
        raise BuildError("command failed (%s): %s\n%s%s" % (
            _processes.exit_phrase(finished.returncode), _processes.command_line(cmd),
            "first error: %s\n" % first if first else "", finished.output[-8000:]), first)
    return finished.output


def run_steps(ctx, steps):
    """Run ``steps`` (modules with ``run(ctx)``) in order, then write build_info.json."""
    os.makedirs(ctx.package_dir, exist_ok=True)
    os.makedirs(ctx.build_temp, exist_ok=True)
    for step in steps:
        step.run(ctx)
    return ctx.write_build_info()
