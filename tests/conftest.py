"""Suite-wide rules.

- The tests import the *installed* package (pytest runs in importlib mode, so the source
  tree is not on sys.path); a package without its built op library is reported at once.
- Under CI (TF_GE_CUSTOM_STRICT_SKIPS=1) a skipped test fails the run, unless its reason
  starts with one of ALLOWED_SKIP_PREFIXES: only an Ascend host, a CANN toolkit, or a
  feature TensorFlow 1.15 does not have (in the compat run) may excuse a test, never a
  missing Python package.
"""
import os

import pytest

ALLOWED_SKIP_PREFIXES = ("needs an Ascend NPU", "needs a CANN toolkit", "TensorFlow 1.15 has no")


def needs_ascend(reason):
    """skip marker for a test that can only run on an Ascend host."""
    return pytest.mark.skip(reason="needs an Ascend NPU: " + reason)


_bad_skips = []


def pytest_runtest_logreport(report):
    if report.skipped and os.environ.get("TF_GE_CUSTOM_STRICT_SKIPS") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.replace("Skipped: ", "", 1)
        if not reason.startswith(ALLOWED_SKIP_PREFIXES):
            _bad_skips.append("%s: %s" % (report.nodeid, reason))


def pytest_sessionfinish(session, exitstatus):
    if _bad_skips:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _bad_skips:
        terminalreporter.section("skips not allowed in CI (TF_GE_CUSTOM_STRICT_SKIPS=1)")
        for line in _bad_skips:
            terminalreporter.write_line(line)
