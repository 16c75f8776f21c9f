"""``tf-ge-custom selftest``: run every stage this host can run; one line each.

    tf-ge-custom selftest [--soc SOC] [--json FILE] [--keep DIR] [--only A,B] [--timeout S] [--list]

Exit status: 0 when no stage FAILs (SKIPs included), 1 when one does, 2 for a bad argument.
"""
import os
import shutil
import sys
import tempfile
import time

SEND_BACK = "When reporting a problem, send %s and the *.log files in %s (docs/selftest.md)."
RERUN = ("To report a problem: tf-ge-custom selftest --json selftest.json --keep selftest-logs, then send "
         "selftest.json and selftest-logs/*.log (docs/selftest.md).")


def add_arguments(parser):
    from .stages import NAMES

    parser.description = ("Run, stage by stage, everything this host can run: the installation, add_custom "
                          "on the CPU, and on an Ascend host the NPU session, device, kernels, broadcasting, "
                          "large tensors, the GE library and the offline OM route. One line per stage: "
                          "NAME=PASS / FAIL / SKIP. Exit status 1 when a stage FAILs.")
    parser.add_argument("--soc", help="the SoC to check kernels and build OMs for, e.g. Ascend910B1 "
                                      "(default: asked of the NPU, when there is one)")
    parser.add_argument("--json", metavar="FILE", help="also write a JSON report (versions, every stage) here")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the logs and files of every stage in DIR (a new or empty folder)")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated stages to run, among: " + ", ".join(NAMES))
    parser.add_argument("--timeout", type=int, metavar="SECONDS",
                        help="limit every stage to SECONDS (default: each stage's own, 5 to 60 minutes)")
    parser.add_argument("--list", action="store_true", help="list the stages and what each checks, then exit")


def _fail(message):
    sys.stderr.write("tf-ge-custom selftest: error: %s\n" % message)
    return 2


def _chosen(only):
    from .stages import NAMES, STAGES

    if not only:
        return STAGES
    names = [n.strip().upper() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown or not names:
        raise ValueError("--only %r: unknown stage %s; the stages are: %s" % (
            only, ", ".join(unknown) or "(none given)", ", ".join(NAMES)))
    return tuple(s for s in STAGES if s.name in names)


def _work_folder(keep):
    """(folder, kept): the --keep folder (created; refused when not empty), else a temporary one."""
    if not keep:
        return tempfile.mkdtemp(prefix="tf-ge-custom-selftest-"), False
    keep = os.path.abspath(keep)
    if os.path.exists(keep) and (not os.path.isdir(keep) or os.listdir(keep)):
        raise ValueError("--keep %s: %s; give a new or empty folder" % (
            keep, "not a folder" if not os.path.isdir(keep) else "not empty"))
    os.makedirs(keep, exist_ok=True)
    return keep, True


def _header(host, probed):
    from .._version import __version__

    adapters = ", ".join("%s %s" % (n, v or "(version unknown)") for n, v in sorted(
        (probed.get("tf_adapter") or {}).items()) if host.has(n)) or "none"
    return ("tf-ge-custom %s selftest | TensorFlow %s | TF Adapter: %s | CANN: %s | SoC: %s | NPU: %s" % (
        __version__, probed.get("tensorflow") or "unknown", adapters,
        host.cann_version or ("at %s (version unknown)" % host.cann_home if host.cann_home else "none"),
        "%s (%s)" % (host.soc, host.soc_source) if host.soc else "unknown",
        ", ".join(host.npu_devices) or "none"))


def _detect_soc(root, device_module=None, env=None):
    """The device's SoC name from a child process: (name, error)."""
    from . import runner

    status, detail, figures, _, _ = runner.run_child("DETECT_SOC", "tf_ge_custom.selftest.npu_stages:detect_soc",
                                                     root, 120, None, device_module, env)
    return (figures.get("soc"), "") if status == "PASS" and figures.get("soc") else (None, detail)


def selftest(soc=None, json_path=None, keep=None, only=None, timeout=None, out=None, device_module=None,
             env=None, host=None, timeouts=None):
    """The command's work; returns the exit status. ``device_module`` and ``host`` let tests put
    doubles in for the device steps and the host facts; ``timeouts`` ({stage: seconds}) sets
    single stages' limits."""
    from . import host as host_facts
    from . import runner
    from .stages import STAGES

    out = out or sys.stdout
    argv = ["tf-ge-custom", "selftest"] + (["--soc", soc] if soc else []) + (["--only", only] if only else []) + (
        ["--timeout", str(timeout)] if timeout else [])
    try:
        stages = _chosen(only)
        if soc:
            from ..kernels import socs

            socs.get(soc)
        if timeout is not None and timeout < 1:
            raise ValueError("--timeout %d: give a number of seconds >= 1" % timeout)
        if json_path:
            from .. import atomic_files

            problem = atomic_files.target_problem(json_path)
            if problem:
                raise ValueError("--json %s: %s" % (json_path[:200], problem))
        root, kept = _work_folder(keep)
    except KeyError as e:
        return _fail("--soc: %s" % e.args[0])
    except ValueError as e:
        return _fail(str(e))
    started = time.time()
    try:
        if host is None:
            host = host_facts.probe(soc, detect_soc=lambda: _detect_soc(root, device_module, env))
        status, detail, probed, _, _ = runner.run_child("VERSIONS", "tf_ge_custom.selftest.cpu_stages:versions",
                                                        root, 300, host, device_module, env)
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
            from .. import atomic_files

            try:  # whole or not at all, no temporary left behind
                atomic_files.write_json(json_path, document, indent=1)
            except (OSError, TypeError, ValueError) as e:
                sys.stderr.write("tf-ge-custom selftest: error: cannot write the report %s: %s\n"
                                 % (json_path, getattr(e, "strerror", None) or e))
                return 1
            out.write("report: %s\n" % json_path)
        if kept:
            out.write("logs and files: %s\n" % root)
        if json_path and kept:
            out.write(SEND_BACK % (json_path, root) + "\n")
        elif document["status"] != "PASS":
            out.write(RERUN + "\n")
        return 1 if document["status"] != "PASS" else 0
    finally:
        if not kept:
            shutil.rmtree(root, ignore_errors=True)


def list_stages(out=None):
    from .stages import STAGES

    out = out or sys.stdout
    width = max(len(s.name) for s in STAGES)
    for s in STAGES:
        needs = ", ".join(s.needs + tuple("%s PASS" % a for a in s.after)) or "nothing (CPU)"
        out.write("%-*s  %s\n%-*s  needs: %s; timeout %d s\n" % (width, s.name, s.summary, width, "", needs, s.timeout))
    return 0


def run(args):
    if args.list:
        return list_stages()
    return selftest(soc=args.soc, json_path=args.json, keep=args.keep, only=args.only, timeout=args.timeout)
