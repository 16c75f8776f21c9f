"""The quick tier, by rule: a test that starts no process (so compiles nothing, and starts no
TensorFlow of its own) is quick; ``make test-quick`` runs the whole of tests/ with this plugin,
and a test skips at the moment it would start a process, with the reason
``quick tier: starts a process (...)``, naming what it started.

Like pip's unit tests, which refuse their ``script`` fixture, the rule is what a test uses,
not a list of names: a new test lands in the tier it belongs to by itself. What counts as
starting a process: every program subprocess or multiprocessing starts (both go through
``_posixsubprocess.fork_exec``, which subprocess also holds as ``_fork_exec``), ``os.fork``, ``os.posix_spawn``/``os.posix_spawnp`` and
``os.system``, from the test's set-up (fixtures included) to its teardown, from any of its
threads (a test whose worker thread was refused, and that then failed, is the same skip). Tests marked
``smoke`` may start processes: they are the tier's one run of each console command.
Turned on by ``TF_GE_CUSTOM_QUICK=1`` (tests/conftest.py); never in strict mode.
"""
import os

import pytest

QUICK_VAR = "TF_GE_CUSTOM_QUICK"
REASON = "quick tier: starts a process"


class QuickTier(object):
    def __init__(self):
        self.active = self.allowed_now = False
        self.refused = None  # the first refusal of the running test, from any of its threads
        self._patch()

    def _refuse(self, what):
        if self.active and not self.allowed_now:
            reason = "%s (%s)" % (REASON, what)
            self.refused = self.refused or reason
            pytest.skip(reason)

    def _patch(self):
        import _posixsubprocess
        import subprocess

        tier = self
        targets = [(_posixsubprocess, "fork_exec"), (os, "fork"), (os, "system")]
        if getattr(subprocess, "_fork_exec", None) is not None:  # its own name for fork_exec
            targets.append((subprocess, "_fork_exec"))
        targets += [(os, name) for name in ("posix_spawn", "posix_spawnp") if hasattr(os, name)]
        for module, name in targets:
            original = getattr(module, name)

            def guarded(*args, __original=original, __name=name, **kwargs):
                what = __name
                if __name in ("fork_exec", "_fork_exec") and args and isinstance(args[0], (list, tuple)) and args[0]:
                    what = os.fsdecode(args[0][0])
                elif __name == "system" and args:
                    what = str(args[0])[:80]
                tier._refuse(what)
                return __original(*args, **kwargs)

            setattr(module, name, guarded)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.active, self.refused = True, None
        self.allowed_now = item.get_closest_marker("smoke") is not None
        try:
            yield
        finally:
            self.active = self.allowed_now = False

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        # A process refused in another thread of the test (a pool, a worker) ends that thread,
        # not the test, which then fails on the missing work: it is the same skip.
        outcome = yield
        report = outcome.get_result()
        if self.refused and report.failed:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, "Skipped: " + self.refused)
