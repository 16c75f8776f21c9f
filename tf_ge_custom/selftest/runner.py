"""Running the stages: one child process each, under a timeout; lines, report, exit status.

Each stage that runs gets its own folder ``<work>/<STAGE>/`` (its working directory: GE writes
``custom_op_tmp_<pid>/`` there), a log ``<work>/<STAGE>.log`` (everything the child
printed) and a child process in a new session, started through the package's one process
runner (:mod:`tf_ge_custom._processes`); a line says when it starts. When the timeout passes,
the whole process group is killed (SIGKILL: a process stuck in the driver ignores anything
gentler), the stage FAILs saying so, and the next stage starts. A stage whose needs the host
lacks SKIPs without a child (:mod:`.host`), as does a stage whose prerequisite did not PASS.
"""
import datetime
import json
import os
import sys
import time
from typing import NamedTuple, Optional

from .. import _library, _lifecycle, _processes, _atomic_files as atomic_files, _environment as environment
from .._version import __version__
from ..errors import CommandError, OpLibraryError
from . import child
from .stages import FAIL, PASS, SKIP, STAGES, STATUSES

REPORT_FORMAT = "tf-ge-custom-selftest"
REPORT_VERSION = 1
_TAIL_LINES = 3


class StageResult(NamedTuple):
    name: str
    status: str
    detail: str
    figures: dict
    seconds: float
    timeout: int
    log: Optional[str]  # the child's log, when a child ran

    def line(self):
        """``NAME=STATUS (detail, seconds)``: the one line per stage."""
        timing = "%.1f s" % self.seconds if self.log else ""
        inside = ", ".join(p for p in (self.detail, timing) if p)
        return "%s=%s (%s)" % (self.name, self.status, inside) if inside else "%s=%s" % (self.name, self.status)

    def as_dict(self):
        return {"name": self.name, "status": self.status, "detail": self.detail, "figures": self.figures,
                "seconds": round(self.seconds, 3), "timeout": self.timeout, "log": self.log}


def _log_tail(path, lines=_TAIL_LINES):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [l.strip() for l in text.splitlines() if l.strip()]
    return " | ".join(kept[-lines:])


def run_child(name, function, root, timeout, host=None, device_module=None, env=None, python=None):
    """Run ``function`` (``module:function``) in a child process under ``timeout`` seconds,
    through the package's one process runner (:func:`tf_ge_custom._processes.run`).

    The child runs in its own process group with ``<root>/<name>/`` as its working directory
    and its output in ``<root>/<name>.log``; at the timeout, or when this process is
    interrupted, its whole group is killed at once (SIGKILL: a process stuck in the driver
    ignores anything gentler); when it exits, whatever it left running in its group is
    killed too. ``env``: the child's whole environment (default: the user's, as the shell
    exported it). Returns (status, detail, figures, seconds, log path).
    """
    workdir = os.path.join(root, name)
    os.makedirs(workdir, exist_ok=True)
    log_path = os.path.join(root, name + ".log")
    result_path = os.path.join(workdir, "result.json")
    request_path = os.path.join(workdir, "request.json")
    request = {"stage": name, "function": function, "workdir": workdir, "root": root, "result": result_path,
               "host": host.as_dict() if host is not None else None, "device_module": device_module}
    atomic_files.write_json(request_path, request)  # never written through a planted link
    if os.path.exists(result_path):
        os.remove(result_path)
    env = environment.user_environment() if env is None else dict(env)
    started = time.time()
    with atomic_files.open_log(log_path) as log:  # a link planted there is replaced, never followed
        def on_line(line):
            log.write(line + "\n")
            log.flush()

        try:
            finished = _processes.run([python or sys.executable, "-c", child.BOOT, request_path],
                                      timeout=timeout, env=env, cwd=workdir, check=False, on_line=on_line,
                                      end_group=True, grace=0)
        except CommandError as e:
            if e.reason == _processes.TIMED_OUT:
                log.flush()
                return (FAIL, "did not finish within %d s: killed with its process group (a hung device, driver "
                        "or compile?); last lines: %s" % (timeout, _log_tail(log_path) or "none"),
                        {"timed_out": True}, time.time() - started, log_path)
            return FAIL, "the stage's process could not be started: %s" % e, {}, time.time() - started, log_path
    seconds = time.time() - started
    try:
        with open(result_path) as f:
            result = json.load(f)
        return result["status"], result["detail"], result.get("figures") or {}, seconds, log_path
    except (OSError, ValueError, KeyError):
        pass
    if finished.returncode < 0:
        why = "the stage's process died of %s" % _processes.signal_name(finished.returncode)
    else:
        why = "the stage's process exited with status %d without a result" % finished.returncode
    return FAIL, "%s; last lines: %s" % (why, _log_tail(log_path) or "none"), {"exit": finished.returncode}, \
        seconds, log_path


def start_line(stage, timeout):
    """What is printed when a stage's process starts: ``NAME: started (up to 10 min)``."""
    limit = "%d min" % (timeout // 60) if timeout >= 120 and timeout % 60 == 0 else "%d s" % timeout
    return "%s: started (up to %s)" % (stage.name, limit)


def run_stages(host, root, stages=STAGES, timeouts=None, device_module=None, env=None, out=None, python=None):
    """Run ``stages`` in order, printing a line as each starts and its verdict as it ends; returns
    StageResults.

    ``timeouts``: {stage name: seconds}, overriding a stage's own limit.
    """
    out = out or sys.stdout
    timeouts = timeouts or {}
    results = []
    status_of = {}
    for stage in stages:
        timeout = int(timeouts.get(stage.name, stage.timeout))
        waiting = [a for a in stage.after if status_of.get(a) != PASS]
        missing = "" if waiting else "; ".join(m for m in (host.missing(r) for r in stage.needs) if m)
        if waiting:
            result = StageResult(stage.name, SKIP, "needs %s to PASS first (%s)" % (
                ", ".join(waiting), ", ".join("%s %s" % (a, status_of.get(a, "did not run")) for a in waiting)),
                {}, 0.0, timeout, None)
        elif missing:
            result = StageResult(stage.name, SKIP, "needs " + missing, {}, 0.0, timeout, None)
        else:
            out.write(start_line(stage, timeout) + "\n")
            out.flush()
            with _lifecycle.doing("running stage %s" % stage.name):
                status, detail, figures, seconds, log = run_child(stage.name, stage.function, root, timeout,
                                                                  host, device_module, env, python)
            result = StageResult(stage.name, status if status in STATUSES else FAIL, detail, figures, seconds,
                                 timeout, log)
        results.append(result)
        status_of[stage.name] = result.status
        out.write(result.line() + "\n")
        out.flush()
    return results


def counts(results):
    return {s: sum(r.status == s for r in results) for s in STATUSES}


def overall(results):
    return FAIL if any(r.status == FAIL for r in results) else PASS


def proven(results, stages=STAGES):
    """What the run showed, in words: which stages failed, or whether anything ran on an NPU
    (a PASS with every NPU stage skipped proves the CPU side only). ``stages``: where the
    results' stages are defined (a stage is an NPU stage unless marked ``cpu``)."""
    by_name = {s.name: s for s in stages}
    failed = [r.name for r in results if r.status == FAIL]
    if failed:
        return "failed: " + ", ".join(failed)
    ascend = [r for r in results if not by_name[r.name].cpu]
    on_npu = [r for r in ascend if r.status == PASS and "npu" in by_name[r.name].needs]
    passed = [r for r in ascend if r.status == PASS]
    skipped = [r for r in ascend if r.status == SKIP]
    if not passed:
        if not ascend:
            return "CPU only: no NPU stage chosen, nothing ran on an NPU"
        return "CPU only: %d NPU stage%s skipped, nothing ran on an NPU" % (
            len(skipped), "" if len(skipped) == 1 else "s")
    if not on_npu:
        return "nothing ran on an NPU: %s passed without one, %d NPU stage%s skipped" % (
            ", ".join(r.name for r in passed), len(skipped), "" if len(skipped) == 1 else "s")
    if not skipped:
        return "every NPU stage chosen passed, %d on the NPU" % len(on_npu)
    return "%d NPU stage%s passed (%d on the NPU), %d skipped: %s" % (
        len(passed), "" if len(passed) == 1 else "s", len(on_npu), len(skipped),
        ", ".join(r.name for r in skipped))


def summary_line(results, seconds, stages=STAGES):
    """``SELFTEST=PASS (2 PASS, 0 FAIL, 12 SKIP in 36.5 s; CPU only: 12 NPU stages skipped,
    nothing ran on an NPU)``: the counts, then what they prove."""
    c = counts(results)
    return "SELFTEST=%s (%d PASS, %d FAIL, %d SKIP in %.1f s; %s)" % (
        overall(results), c[PASS], c[FAIL], c[SKIP], seconds, proven(results, stages))


def build_record():
    try:
        return _library.build_info()
    except OpLibraryError as e:
        return {"error": str(e)}


def versions(host, probed):
    """The versions a bug report needs: TensorFlow and TF Adapter (asked of a child), CANN and
    the SoC (the host probe), this package and its build record."""
    return {"tf_ge_custom": __version__, "tensorflow": probed.get("tensorflow"),
            "tf_adapter": probed.get("tf_adapter") or {},
            "cann": {"home": host.cann_home, "version": host.cann_version},
            "soc": {"name": host.soc, "source": host.soc_source},
            "build": build_record()}


def report(results, host, probed, started, seconds, work_folder, command, platform_facts):
    return {"format": REPORT_FORMAT, "version": REPORT_VERSION, "command": command,
            "status": overall(results), "counts": counts(results),
            "started": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
            "seconds": round(seconds, 3), "versions": versions(host, probed),
            "host": dict(host.as_dict(), platform=platform_facts), "work_folder": work_folder,
            # the logs are named only when they are kept (--keep): a temporary folder is gone
            "stages": [dict(r.as_dict(), log=r.log if work_folder else None) for r in results]}
