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


def worst(statuses):
    """The most severe status (INFO counts as OK)."""
    found = max(statuses, key=_RANK.__getitem__) if statuses else OK
    return OK if found == INFO else found
