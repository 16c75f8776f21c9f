"""What ``opcheck`` hands back: one :class:`CheckResult` per check, in an :class:`OpCheckReport`.

A check passed, failed, was not applicable (the record says it has nothing to check: no
attribute, no gradient), or was not run (it applies, but something it needs is missing: the
reason says what), or was skipped by the caller. "passed", "not applicable" and "skipped"
count as passing; a check that failed or did not run does not.
"""
from typing import NamedTuple

PASSED, FAILED, NOT_RUN, NOT_APPLICABLE, SKIPPED = "passed", "failed", "not run", "not applicable", "skipped"


class CheckResult(NamedTuple):
    name: str  # the check's name: "eager", "gradient", "triton_interpreter"...
    status: str  # PASSED, FAILED, NOT_RUN, NOT_APPLICABLE or SKIPPED
    detail: str  # what was checked, or where it failed (sample, path, first differing element)
    seconds: float = 0.0

    @property
    def passed(self):
        return self.status in (PASSED, NOT_APPLICABLE, SKIPPED)

    def __str__(self):
        return "%s: %s (%s)" % (self.name, self.status, self.detail)


class CheckFailure(Exception):
    """Raised inside a check: the check failed, ``str(e)`` says where."""


class NotRun(Exception):
    """Raised inside a check: the check applies but cannot run here, ``str(e)`` says why."""


class NotApplicable(Exception):
    """Raised inside a check: the record gives it nothing to check, ``str(e)`` says why."""


class OpCheckReport(list):
    """The results of ``opcheck`` for one op, a list of :class:`CheckResult` in the order run."""

    def __init__(self, type_name, results=()):
        list.__init__(self, results)
        self.type_name = type_name

    @property
    def passed(self):
        return all(r.passed for r in self)

    @property
    def failures(self):
        return [r for r in self if not r.passed]

    def result(self, name):
        for r in self:
            if r.name == name:
                return r
        raise KeyError("no check named %r in this report; its checks are %s"
                       % (name, ", ".join(r.name for r in self)))

    def __str__(self):
        lines = ["opcheck %s: %d checks, %d passed, %d not applicable, %d failed, %d not run" % (
            self.type_name, len(self), sum(r.status == PASSED for r in self),
            sum(r.status == NOT_APPLICABLE for r in self), sum(r.status == FAILED for r in self),
            sum(r.status == NOT_RUN for r in self))]
        lines += ["  %-26s %-15s %s" % (r.name, r.status, r.detail) for r in self]
        return "\n".join(lines)

    def assert_passed(self):
        """``AssertionError`` naming each check that failed or did not run, and why."""
        failures = self.failures
        if failures:
            raise AssertionError("opcheck %s: %d of %d checks did not pass:\n%s" % (
                self.type_name, len(failures), len(self),
                "\n".join("  %s [%s]: %s" % (r.name, r.status, r.detail) for r in failures)))
        return self
