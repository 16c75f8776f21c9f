"""A command line run in a child forked from a process that has imported TensorFlow once.

Most of what a user's command costs in the suite is the fresh interpreter importing TensorFlow
(about 4 CPU-seconds each, hundreds of times a run). :class:`WarmLauncher` starts one server
process per pytest process (``python tests/warm_process.py``) that imports TensorFlow and
numpy and then, for each command line, forks a child that runs it as the interpreter would:

- ``tf-ge-custom ARGS`` (the installed console script): the script file itself, as
  ``__main__``, with ``sys.argv`` as given;
- ``python -m tf_ge_custom ARGS``: the module as ``__main__``, as ``-m`` runs it;
- ``python -c CODE ARGS``: the code as ``__main__``.

The child gets the command's working folder, environment (``os.environ`` replaced whole),
``sys.path`` as a fresh interpreter computes it (the script's folder, ``''`` or the working
folder first, then ``PYTHONPATH``, then the server's own path less its script folder), stdin
from ``/dev/null`` and its own stdout and stderr files. Its exit status is what the interpreter
would give: ``SystemExit``'s code, 1 with a traceback on another exception, after non-daemon
threads are joined and ``atexit`` handlers run; a signal's death is ``-signal``.

A command line runs in a fresh process instead (:meth:`WarmLauncher.serves` says so) when the
warm child could behave differently from one:

- it is not one of the three forms above, or it runs as another user;
- its environment differs from the server's in a variable read when TensorFlow, numpy or
  Python start (:data:`IMPORT_TIME_VARIABLES`);
- a folder it puts on ``sys.path`` (``PYTHONPATH``, the working folder of ``-m`` / ``-c``)
  holds a module of a name the server has already imported (a test double of TensorFlow, a
  look-alike of ``json``): the fresh interpreter would import that one.

Tests that must see a fresh interpreter whatever the command (the documented commands, the
import-time messages) say so with ``@pytest.mark.fresh_process``.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")

# Prefixes (and whole names) of environment variables read when the interpreter, TensorFlow or
# numpy start: a command whose value differs from the server's runs in a fresh process.
IMPORT_TIME_VARIABLES = ("PYTHON", "TF_", "OMP_", "KMP_", "MKL", "OPENBLAS", "LD_", "MALLOC",
                         "GLIBC", "CUDA", "XLA_", "KERAS", "LC_", "LANG", "HOME", "TZ")
RUN_TIME_PREFIXES = ("TF_GE_CUSTOM_", "PYTHONPATH")  # read by the command itself, or handled


def _import_time(name):
    return name.startswith(IMPORT_TIME_VARIABLES) and not name.startswith(RUN_TIME_PREFIXES)


def _module_names(folder):
    """The top-level module names importable from ``folder``."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return set()
    names = set()
    for entry in entries:
        base, dot, ext = entry.partition(".")
        if not dot and os.path.isdir(os.path.join(folder, entry)):
            names.add(entry)
        elif ext in ("py", "pyc") or (ext.endswith("so") and ext.startswith(("cpython", "abi3", "so"))):
            names.add(base)
    return names


class WarmLauncher(object):
    """Runs command lines in children of one TensorFlow-importing server (started on first use)."""

    def __init__(self, base_env):
        self.base_env = dict(base_env)
        self._server = None
        self._modules = None
        self._log = None

    # --- which command lines it serves ---------------------------------------------------

    def form(self, argv):
        """('script' | 'module' | 'code', rest of argv) or None."""
        if argv and argv[0] == SCRIPT:
            return "script", argv[1:]
        if len(argv) >= 3 and argv[0] == sys.executable and argv[1] == "-m" and argv[2] == "tf_ge_custom":
            return "module", argv[3:]
        if len(argv) >= 3 and argv[0] == sys.executable and argv[1] == "-c":
            return "code", argv[2:]
        return None

    def serves(self, argv, cwd, env):
        """Whether ``argv`` may run warm (see the module's docstring)."""
        form = self.form(argv)
        if form is None:
            return False
        keys = set(env) | set(self.base_env)
        if any(_import_time(k) and env.get(k) != self.base_env.get(k) for k in keys):
            return False
        folders = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if form[0] != "script":
            folders.append(str(cwd))
        modules = self._server_modules()
        return not any(_module_names(folder) & modules for folder in folders)

    # --- the server ------------------------------------------------------------------

    def _start(self):
        self._log = tempfile.NamedTemporaryFile(prefix="warm-process-", suffix=".log", delete=False)
        self._server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "warm_process.py")], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._log, env=self.base_env, cwd=tempfile.gettempdir(),
            universal_newlines=True)
        hello = self._server.stdout.readline()
        if not hello:
            raise RuntimeError("the warm process server did not start:\n" + self._server_log())
        self._modules = set(json.loads(hello)["modules"])

    def _server_log(self):
        with open(self._log.name) as f:
            return f.read()[-4000:]

    def _server_modules(self):
        if self._server is None:
            self._start()
        return self._modules

    def run(self, argv, cwd, env, timeout):
        """subprocess.CompletedProcess of ``argv`` run warm (text output, as
        ``universal_newlines=True`` gives it); raises subprocess.TimeoutExpired like
        subprocess.run."""
        kind, rest = self.form(argv)
        if self._server is None:
            self._start()
        with tempfile.TemporaryDirectory(prefix="warm-run-") as folder:
            out, err = os.path.join(folder, "out"), os.path.join(folder, "err")
            request = dict(kind=kind, argv=rest, cwd=str(cwd), env=env, out=out, err=err, timeout=timeout)
            self._server.stdin.write(json.dumps(request) + "\n")
            self._server.stdin.flush()
            line = self._server.stdout.readline()
            if not line:
                raise RuntimeError("the warm process server ended:\n" + self._server_log())
            reply = json.loads(line)
            texts = []
            for path in (out, err):
                with open(path) as f:  # the locale's encoding, newlines translated: as subprocess's text mode
                    texts.append(f.read())
        if reply.get("timed_out"):
            raise subprocess.TimeoutExpired(argv, timeout, output=texts[0], stderr=texts[1])
        return subprocess.CompletedProcess(argv, reply["status"], texts[0], texts[1])

    def close(self):
        if self._server is not None:
            self._server.stdin.close()
            self._server.wait(timeout=60)
            self._server = None
        if self._log is not None:
            os.unlink(self._log.name)
            self._log = None


# --- the server (python tests/warm_process.py) -------------------------------------------

def _child(request, protocol_fds):
    """In the forked child: become the command's process and run it; never returns."""
    import atexit
    import runpy
    import threading
    import traceback
    import types

    status = 1
    try:
        for fd in protocol_fds:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["out"]), (2, request["err"])):
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        kind, argv = request["kind"], request["argv"]
        first = {"script": os.path.dirname(SCRIPT), "module": os.getcwd(), "code": ""}[kind]
        extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [first] + extra + list(sys.path)  # the server dropped its own first entry
        main = types.ModuleType("__main__")  # a fresh interpreter's empty __main__
        sys.modules["__main__"] = main
        try:
            if kind == "script":
                sys.argv = [SCRIPT] + argv
                runpy.run_path(SCRIPT, run_name="__main__")
            elif kind == "module":
                sys.argv = ["-m"] + argv
                runpy._run_module_as_main("tf_ge_custom", alter_argv=True)
            else:
                sys.argv = ["-c"] + argv[1:]
                exec(compile(argv[0], "<string>", "exec"), main.__dict__)
            status = 0
        except SystemExit as e:
            if e.code is None:
                status = 0
            elif isinstance(e.code, int):
                status = e.code
            else:
                sys.stderr.write("%s\n" % (e.code,))
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
        try:
            threading._shutdown()
        except Exception:
            pass
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    finally:
        os._exit(status & 0xFF)


def _wait(pid, timeout):
    """The child's status as subprocess gives it (-signal for a signal), or None on time-out."""
    import select
    import signal

    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return None
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def serve():
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.path.pop(0)  # this file's folder (tests/): no command sees it
    import numpy  # noqa: F401
    import tensorflow  # noqa: F401

    replies.write(json.dumps({"modules": sorted(set(n.split(".")[0] for n in sys.modules))}) + "\n")
    replies.flush()
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, (requests.fileno(), replies.fileno()))
        status = _wait(pid, request["timeout"])
        replies.write(json.dumps({"status": status, "timed_out": status is None}) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
