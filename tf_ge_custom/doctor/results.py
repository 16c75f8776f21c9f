"""What a doctor check returns: a status, what it found, and the fix."""
from typing import NamedTuple, Optional

OK, INFO, WARN, FAIL = "OK", "INFO", "WARN", "FAIL"


STATUSES = (OK, INFO, WARN, FAIL)


_RANK = {OK: 0, INFO: 0, WARN: 1, FAIL: 2}


class Instruction(str):
    """A fix that is an instruction for a person, not a command that runs as printed (a
    plain ``str`` fix is such a command)."""


def is_command(fix):
    return bool(fix) and not isinstance(fix, Instruction)


class Check(NamedTuple):
    name: str
    status: str  # OK, WARN or FAIL
    detail: str  # what was found
    fix: str = ""  # what to do (empty when OK): a command, or an Instruction
    data: Optional[dict] = None  # structured findings for --json

    def as_dict(self):
        return {"name": self.name, "status": self.status, "detail": self.detail,
                "fix": self.fix, "fix_is_command": is_command(self.fix), "data": self.data or {}}


def check(name, looks_at, own=False):
    """Mark a check function with its line's name, what it looks at (one sentence: the table
    of docs/npu.md is made from these, ``doctor.reporting.markdown_table``) and whether it
    checks what the package installs itself (``own``: it decides on every host) rather than
    the Ascend stack (folded into one line on a host without any of it)."""
    def mark(function):
        function.check_name = name
        function.looks_at = looks_at
        function.own = own
        return function
    return mark


def worst(statuses):
    """The most severe status (INFO counts as OK)."""
    found = max(statuses, key=_RANK.__getitem__) if statuses else OK
    return OK if found == INFO else found
