"""Running an external tool (``atc``, the AIR tool, the OM runner): stream, log, stop, report.

ATC takes minutes. Its output (stdout and stderr, merged) is echoed line by line with the
elapsed time, and a line says it is still running when it has been silent for a while; the
same lines go to a log file beside the result, headed by the command and the environment
the tool saw. A non-zero exit raises :class:`ExternalToolError` carrying the log's tail. On
Ctrl-C (or any exception while waiting) the tool's whole process group is terminated, then
killed if it lingers, before the exception goes on: nothing keeps writing after we return.
"""
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import NamedTuple

from ..errors import ExternalToolError, MissingToolchainError

TAIL_LINES = 40
HEARTBEAT_SECONDS = 30.0
TERMINATE_GRACE_SECONDS = 5.0
# environment variables worth recording in a log: what decides where the tool looks
LOGGED_ENV = ("ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "LD_LIBRARY_PATH")


class ToolRun(NamedTuple):
    returncode: int
    elapsed: float
    log_path: str


def command_line(cmd, env_changes=None):
    """``cmd`` as one shell line, with the variables in ``env_changes`` set in front."""
    prefix = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted((env_changes or {}).items()))
    line = " ".join(shlex.quote(c) for c in cmd)
    return (prefix + " " + line) if prefix else line


def _reader(stream, lines):
    try:
        for raw in iter(stream.readline, b""):
            lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
    except (OSError, ValueError):  # the pipe was closed under us after an interruption
        pass
    lines.put(None)


def _stop(proc):
    """Terminate the tool's process group; kill it if it does not exit in time."""
    for sig, wait in ((signal.SIGTERM, TERMINATE_GRACE_SECONDS), (signal.SIGKILL, TERMINATE_GRACE_SECONDS)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)  # the tool and anything it started (start_new_session)
        except OSError:
            try:
                proc.send_signal(sig)
            except OSError:
                pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def tail_of(path, lines=TAIL_LINES):
    try:
        with open(path, "r", errors="replace") as f:
            return "\n".join(f.read().splitlines()[-lines:])
    except (IOError, OSError):
        return ""


def run_tool(cmd, log_path, label, env=None, cwd=None, out=None, heartbeat=HEARTBEAT_SECONDS,
             clock=time.monotonic):
    """Run ``cmd``, echoing to ``out`` (default stderr) and logging to ``log_path``.

    Returns a :class:`ToolRun`; raises :class:`ExternalToolError` on a non-zero exit (the
    message holds the log's last lines) and :class:`MissingToolchainError` when the program
    cannot be started at all.
    """
    out = out or sys.stderr
    env = dict(os.environ if env is None else env)
    start = clock()

    def stamp():
        return "[%7.1fs] %s:" % (clock() - start, label)

    with open(log_path, "w") as log:
        log.write("$ %s\n" % command_line(cmd))
        for name in LOGGED_ENV:
            log.write("# %s=%s\n" % (name, env.get(name, "")))
        log.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            log.write("# cannot start: %s\n" % e)
            raise MissingToolchainError("cannot run %s (%s): %s" % (label, cmd[0], e))
        lines = queue.Queue()
        reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
        reader.start()
        try:
            while True:
                try:
                    line = lines.get(timeout=heartbeat)
                except queue.Empty:
                    out.write("%s still running\n" % stamp())
                    out.flush()
                    continue
                if line is None:
                    break
                log.write(line + "\n")
                log.flush()
                out.write("%s %s\n" % (stamp(), line))
                out.flush()
            returncode = proc.wait()
        except BaseException:
            _stop(proc)
            log.write("# interrupted after %.1fs: %s stopped\n" % (clock() - start, label))
            raise
        finally:
            reader.join(timeout=TERMINATE_GRACE_SECONDS)  # the tool is gone: its pipe ends
            proc.stdout.close()
        elapsed = clock() - start
        log.write("# exit status %d after %.1fs\n" % (returncode, elapsed))
    if returncode != 0:
        how = ("killed by signal %d" % -returncode) if returncode < 0 else ("exit status %d" % returncode)
        tail = tail_of(log_path)
        raise ExternalToolError("%s failed (%s after %.1fs); full log: %s\n--- last lines of the log ---\n%s"
                                % (label, how, elapsed, log_path, tail), returncode, log_path, tail)
    return ToolRun(returncode, elapsed, log_path)
