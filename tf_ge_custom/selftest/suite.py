"""The selftest itself: pick the stages, claim the work folder, probe the host, run the stages,
print the summary and write the report (``tf-ge-custom selftest``'s work; its command line is
``tf_ge_custom/_commands/selftest.py``).

The stages' child processes get the user's environment as the shell exported it
(:func:`tf_ge_custom._environment.user_environment`): what ``import tf_ge_custom`` added in
this process is taken out again, so that the DOCTOR stage reports the shell the user has, not
the one this process made.
"""
import os
import shutil
import sys
import tempfile
import time

from ..errors import UsageError

SEND_BACK = "When reporting a problem, send %s and the *.log files in %s (docs/selftest.md)."
RERUN = ("To report a problem: tf-ge-custom selftest --json selftest.json --keep selftest-logs, then send "
         "selftest.json and selftest-logs/*.log (docs/selftest.md).")
# Written into a --keep folder: an earlier selftest made it, so a later one may reuse it.
MARKER = ".tf-ge-custom-selftest"
# Present while a selftest uses a --keep folder: created with O_EXCL, it holds the pid.
RUNNING = ".tf-ge-custom-selftest.running"
# Child processes run before the stages (their folders and logs sit beside the stages').
PROBES = ("VERSIONS", "DETECT_SOC")


def chosen(only):
    """The stages ``--only`` names (all of them without it), in their order."""
    from .stages import NAMES, STAGES

    if not only:
        return STAGES
    names = [n.strip().upper() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown or not names:
        raise UsageError("--only %r: unknown stage %s; the stages are: %s" % (
            only, ", ".join(unknown) or "(none given)", ", ".join(NAMES)))
    return tuple(s for s in STAGES if s.name in names)


def _written_by_selftest(name):
    from .stages import NAMES

    base = name[:-len(".log")] if name.endswith(".log") else name
    return base in NAMES or base in PROBES


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _claim(folder):
    """Create ``folder/RUNNING`` with O_EXCL (only one process can), holding this pid. A claim
    left by a selftest that no longer runs is taken over; a live one is refused."""
    path = os.path.join(folder, RUNNING)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            try:
                with open(path) as f:
                    text = f.read().strip()
            except OSError:
                text = ""
            if not text.isdigit() or _pid_alive(int(text)):
                raise UsageError("--keep %s: another selftest (%s) is using it; give another folder" % (
                    folder, "process %s" % text if text.isdigit() else "just starting"),
                    fix="wait for it to end, or remove %s if no selftest runs" % path)
            stale = "%s.stale-%d" % (path, os.getpid())
            try:  # only one of several newcomers moves a given stale claim away
                os.rename(path, stale)
                os.unlink(stale)
            except OSError:
                pass
            continue
        with os.fdopen(fd, "w") as f:
            f.write("%d\n" % os.getpid())
        return path
    raise UsageError("--keep %s: another selftest took it first; give another folder" % folder)


def work_folder(keep):
    """(folder, kept): the ``--keep`` folder, else a new temporary one.

    A ``--keep`` folder is made when missing and taken when empty, or when an earlier
    selftest wrote it (its marker file is there): then what that run wrote (each stage's
    folder and log) is removed first, and anything else in it left alone. Any other folder
    is refused, as is a file in its place. The folder is claimed atomically (a file created
    with O_EXCL, removed by :func:`release`): two selftests started together never share one.
    """
    if not keep:
        return tempfile.mkdtemp(prefix="tf-ge-custom-selftest-"), False
    from .. import _lifecycle

    folder = _lifecycle.absolute(keep, "--keep")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise UsageError("--keep %s: not a folder; give a new or empty folder" % folder)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise UsageError("--keep %s: %s" % (folder, e.strerror or e))
    entries = os.listdir(folder)
    if entries and MARKER not in entries and RUNNING not in entries:
        raise UsageError("--keep %s: not empty, and no earlier selftest wrote it (no %s in it); give a "
                         "new or empty folder, or one an earlier selftest --keep wrote" % (folder, MARKER))
    claim = _claim(folder)
    try:
        entries = os.listdir(folder)
        if MARKER not in entries and set(entries) - {RUNNING}:  # files came while we claimed
            raise UsageError("--keep %s: not empty, and no earlier selftest wrote it (no %s in it)"
                             % (folder, MARKER))
        for name in entries:
            if _written_by_selftest(name):
                path = os.path.join(folder, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
        with open(os.path.join(folder, MARKER), "w") as f:
            f.write("this folder holds the logs and files of tf-ge-custom selftest --keep; a later run "
                    "may replace them\n")
    except OSError as e:
        os.unlink(claim)
        raise UsageError("--keep %s: %s" % (folder, e.strerror or e))
    except BaseException:
        os.unlink(claim)
        raise
    return folder, True


def release(folder):
    """End the claim :func:`work_folder` made on a ``--keep`` folder."""
    try:
        os.unlink(os.path.join(folder, RUNNING))
    except OSError:
        pass


def _header(host, probed):
    from .._version import __version__

    adapters = ", ".join("%s %s" % (n, v or "(version unknown)") for n, v in sorted(
        (probed.get("tf_adapter") or {}).items()) if host.has(n)) or "none"
    return ("tf-ge-custom %s selftest | TensorFlow %s | TF Adapter: %s | CANN: %s | SoC: %s | NPU: %s" % (
        __version__, probed.get("tensorflow") or "unknown", adapters,
        host.cann_version or ("at %s (version unknown)" % host.cann_home if host.cann_home else "none"),
        "%s (%s)" % (host.soc, host.soc_source) if host.soc else "unknown",
        ", ".join(host.npu_devices) or "none"))


def detect_soc(root, device_module=None, env=None):
    """The device's SoC name from a child process: (name, error)."""
    from . import runner

    status, detail, figures, _, _ = runner.run_child("DETECT_SOC", "tf_ge_custom.selftest.npu_stages:detect_soc",
                                                     root, 120, None, device_module, env)
    return (figures.get("soc"), "") if status == "PASS" and figures.get("soc") else (None, detail)


def check_arguments(soc=None, json_path=None, only=None, timeout=None):
    """UsageError for a bad argument, before anything runs; returns the chosen stages."""
    stages = chosen(only)
    if soc:
        from ..kernels import socs

        try:
            socs.get(soc)
        except KeyError as e:
            raise UsageError("--soc: %s" % e.args[0])
    if timeout is not None and timeout < 1:
        raise UsageError("--timeout %d: give a number of seconds >= 1" % timeout)
    if json_path:
        from .. import _lifecycle, _atomic_files as atomic_files

        problem = atomic_files.target_problem(_lifecycle.absolute(json_path, "--json"))
        if problem:
            raise UsageError("--json %s: %s" % (json_path[:200], problem))
    return stages


def selftest(soc=None, json_path=None, keep=None, only=None, timeout=None, out=None, device_module=None,
             env=None, host=None, timeouts=None):
    """The command's work; returns the exit status (raises UsageError for a bad argument).

    ``env``: the environment of the stages' processes (default: the user's, see the module
    docstring). ``device_module`` and ``host`` let tests put doubles in for the device steps
    and the host facts; ``timeouts`` ({stage: seconds}) sets single stages' limits."""
    from .. import _lifecycle, _environment as environment
    from . import host as host_facts
    from . import runner
    from .stages import STAGES

    out = out or sys.stdout
    env = environment.user_environment() if env is None else env
    argv = ["tf-ge-custom", "selftest"] + (["--soc", soc] if soc else []) + (["--only", only] if only else []) + (
        ["--timeout", str(timeout)] if timeout else [])
    stages = check_arguments(soc, json_path, only, timeout)
    root, kept = work_folder(keep)
    started = time.time()
    try:
        if host is None:
            host = host_facts.probe(soc, detect_soc=lambda: detect_soc(root, device_module, env), env=env)
        with _lifecycle.doing("asking a child process for TensorFlow's version"):
            status, detail, probed, _, _ = runner.run_child(
                "VERSIONS", "tf_ge_custom.selftest.cpu_stages:versions", root, 300, host, device_module, env)
        if status != "PASS":
            probed = {"tensorflow": "unknown (%s)" % detail}
        out.write(_header(host, probed) + "\n")
        out.flush()
        limits = {s.name: timeout for s in STAGES} if timeout else timeouts
        results = runner.run_stages(host, root, stages, limits, device_module, env, out)
        seconds = time.time() - started
        out.write(runner.summary_line(results, seconds) + "\n")
        document = runner.report(results, host, probed, started, seconds, root if kept else None,
                                 " ".join(argv), host_facts.platform_facts())
        if json_path:
            from .. import _atomic_files as atomic_files

            try:  # whole or not at all, no temporary left behind
                atomic_files.write_json(json_path, document, indent=1)
            except (OSError, TypeError, ValueError) as e:
                from ..errors import TfGeCustomError

                raise TfGeCustomError("cannot write the report %s: %s" % (
                    json_path, getattr(e, "strerror", None) or e))
            out.write("report: %s\n" % json_path)
        if kept:
            out.write("logs and files: %s\n" % root)
        if json_path and kept:
            out.write(SEND_BACK % (json_path, root) + "\n")
        elif document["status"] != "PASS":
            out.write(RERUN + "\n")
        return 1 if document["status"] != "PASS" else 0
    finally:
        if kept:
            release(root)
        else:
            shutil.rmtree(root, ignore_errors=True)


def list_stages(out=None):
    from .stages import STAGES

    out = out or sys.stdout
    width = max(len(s.name) for s in STAGES)
    for s in STAGES:
        needs = ", ".join(s.needs + tuple("%s PASS" % a for a in s.after)) or "nothing (CPU)"
        out.write("%-*s  %s\n%-*s  needs: %s; timeout %d s\n" % (width, s.name, s.summary, width, "", needs, s.timeout))
    return 0
