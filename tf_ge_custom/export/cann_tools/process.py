"""Running an external tool (``atc``, the AIR tool, the OM runner): stream, log, stop, report.

ATC takes minutes. Its output (stdout and stderr, merged) is echoed line by line with the
elapsed time, and a line says it is still running when it has been silent for a while; the
same lines go to a log file beside the result, headed by the command and the environment
the tool saw. A non-zero exit raises :class:`ExternalToolError` carrying the log's tail. On
Ctrl-C (or any exception while waiting) the tool's whole process group is terminated, then
killed if it lingers, before the exception goes on: nothing keeps writing after we return.
"""
import os
import shlex
import sys
import time
from typing import NamedTuple

from tf_ge_custom import _processes, _atomic_files as atomic_files
from tf_ge_custom.errors import CommandError, ExternalToolError, MissingToolchainError

TAIL_LINES = _processes.TAIL_LINES
HEARTBEAT_SECONDS = 30.0
# environment variables worth recording in a log: what decides where the tool looks
LOGGED_ENV = ("ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "LD_LIBRARY_PATH")


class ToolRun(NamedTuple):
    returncode: int
    elapsed: float
    log_path: str


def command_line(cmd, env_changes=None):
    """``cmd`` as one shell line, with the variables in ``env_changes`` set in front."""
    prefix = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted((env_changes or {}).items()))
    line = _processes.command_line(cmd)
    return (prefix + " " + line) if prefix else line


def tail_of(path, lines=TAIL_LINES):
    try:
        with open(path, "r", errors="replace") as f:
            return "\n".join(f.read().splitlines()[-lines:])
    except (IOError, OSError):
        return ""


def run_tool(cmd, log_path, label, env=None, cwd=None, out=None, heartbeat=HEARTBEAT_SECONDS,
             clock=time.monotonic, on_log=None):
    """Run ``cmd``, echoing to ``out`` (default stderr) and logging to ``log_path``
    (``on_log(log_path)`` is called once the log is in place, before the program starts).

    Returns a :class:`ToolRun`; raises :class:`ExternalToolError` on a non-zero exit (the
    message holds the log's last lines) and :class:`MissingToolchainError` when the program
    cannot be started at all. The program runs through :func:`tf_ge_custom._processes.run`,
    which stops its whole process group on Ctrl-C.
    """
    out = out or sys.stderr
    env = dict(os.environ if env is None else env)
    start = clock()

    def stamp():
        return "[%7.1fs] %s:" % (clock() - start, label)

    with atomic_files.open_log(log_path) as log:  # a link planted there is replaced, never followed
        log.write("$ %s\n" % command_line(cmd))
        for name in LOGGED_ENV:
            log.write("# %s=%s\n" % (name, env.get(name, "")))
        log.flush()
        if on_log is not None:
            on_log(log_path)

        def on_line(line):
            log.write(line + "\n")
            log.flush()
            out.write("%s %s\n" % (stamp(), line))
            out.flush()

        def on_silence(_seconds):
            out.write("%s still running\n" % stamp())
            out.flush()

        try:
            returncode = _processes.run(cmd, env=env, cwd=cwd, check=False, on_line=on_line,
                                      heartbeat=heartbeat, on_silence=on_silence,
                                      clock=clock).returncode
        except CommandError as e:
            if e.reason != _processes.NOT_STARTED:
                raise
            log.write("# cannot start: %s\n" % e)
            raise MissingToolchainError("cannot run %s (%s): %s" % (label, cmd[0], e))
        except BaseException:
            log.write("# interrupted after %.1fs: %s stopped\n" % (clock() - start, label))
            raise
        elapsed = clock() - start
        log.write("# exit status %d after %.1fs\n" % (returncode, elapsed))
    if returncode != 0:
        how = _processes.exit_phrase(returncode)
        tail = tail_of(log_path)
        raise ExternalToolError("%s failed (%s after %.1fs); full log: %s\n--- last lines of the log ---\n%s"
                                % (label, how, elapsed, log_path, tail), returncode, log_path, tail,
                                argv=cmd)
    return ToolRun(returncode, elapsed, log_path)
