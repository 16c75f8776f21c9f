"""The child process one selftest stage runs in (started by :mod:`.runner`).

``python -c <BOOT> REQUEST.json``: :data:`BOOT` imports the package without TensorFlow (a
stage imports it when it needs it) and ties the child's life to the selftest's (it is killed
when the selftest process dies, whatever kills it), then :func:`main` reads the request, calls the stage's
function with a :class:`StageContext` and writes its :class:`Outcome` as JSON to the
request's ``result`` path (written whole: a temporary file, then a rename). Everything the
stage prints, TensorFlow's and the adapter's logs included, goes to the stage's log file.

A stage function returns an :class:`Outcome` (:func:`passed`, :func:`failed`) or raises
:class:`StageSkip` (something it needs is missing); a ``MissingToolchainError`` counts as a
SKIP too, any other exception as a FAIL naming it (its traceback is in the log).
"""
import importlib
import json
import os
import sys
import time
import traceback
from typing import NamedTuple

from .. import _atomic_files as atomic_files
from .stages import FAIL, PASS, SKIP

# What the runner passes to ``python -c``: the package without TensorFlow's import.
BOOT = ("import builtins, sys; builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True; "
        "from tf_ge_custom import _lifecycle; _lifecycle.die_with_parent(); "
        "from tf_ge_custom.selftest import child; sys.exit(child.main(sys.argv[1:]))")
DEVICE_MODULE = "tf_ge_custom.selftest.device"


class StageSkip(Exception):
    """Raised by a stage when something it needs is missing: the message says what."""


class Outcome(NamedTuple):
    status: str  # PASS, FAIL or SKIP
    detail: str  # PASS: the figures in words; FAIL: the reason; SKIP: what is missing
    figures: dict  # the numbers behind the detail, for --json

    def as_dict(self):
        return {"status": self.status, "detail": self.detail, "figures": self.figures}


def passed(detail, **figures):
    return Outcome(PASS, detail, figures)


def failed(reason, **figures):
    return Outcome(FAIL, reason, figures)


def skipped(missing, **figures):
    return Outcome(SKIP, missing, figures)


class StageContext(object):
    """What a stage function gets: the stage, the host facts, its own folder, the SoC, the
    device-step module (:mod:`tf_ge_custom.selftest.device`, or a test double), and the
    folders of the stages before it (``RUN_OM`` reads what ``EXPORT_OM`` wrote)."""

    def __init__(self, request):
        from .host import Host

        self.stage = request["stage"]
        self.workdir = request["workdir"]
        self.root = request["root"]
        self.host = Host.from_dict(request["host"]) if request.get("host") else Host()
        self.soc = self.host.soc
        self._device_module = request.get("device_module") or DEVICE_MODULE
        self._device = None

    @property
    def device(self):
        if self._device is None:
            self._device = importlib.import_module(self._device_module)
        return self._device

    def folder_of(self, stage):
        return os.path.join(self.root, stage)


def _write_result(path, outcome, seconds):
    record = dict(outcome.as_dict(), seconds=round(seconds, 3))
    atomic_files.write_json(path, record)  # a fresh sibling renamed into place: no planted link followed


def run_stage(request):
    """Call the stage function named in ``request``; an exception becomes the outcome."""
    from ..errors import MissingToolchainError

    module_name, function_name = request["function"].split(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
        outcome = function(StageContext(request))
        if not isinstance(outcome, Outcome):
            outcome = failed("the stage returned %r, not an outcome" % (outcome,))
    except StageSkip as e:
        outcome = skipped(str(e))
    except MissingToolchainError as e:
        outcome = skipped(str(e))
    except Exception as e:  # the stage's failure, reported; the traceback goes to the log
        traceback.print_exc()
        text = str(e).strip()
        first = text.splitlines()[0] if text else ""
        outcome = failed("%s: %s" % (type(e).__name__, first), error=text[:4000])
    return outcome


def main(argv):
    with open(argv[0]) as f:
        request = json.load(f)
    started = time.time()
    outcome = run_stage(request)
    sys.stdout.flush()
    sys.stderr.flush()
    _write_result(request["result"], outcome, time.time() - started)
    return 0
