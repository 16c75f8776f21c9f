"""Every command ends cleanly: on SIGINT, SIGTERM and SIGHUP (every program it started stopped,
its staging and temporary folders removed, 130 / 143 / 129 and one line saying what was
interrupted, no traceback), when its reader goes away or its output is closed (quietly), and
in a working directory that was deleted (named as such). A ``selftest --keep`` folder is
claimed by one run only.

Each case runs the installed console script in a fresh process. A signal is sent at a point
the test waits for: a line the command prints, a file a TEST DOUBLE writes when it starts
blocking (a ``bishengir-compile`` double, a verification child held by a ``sitecustomize``
double, a ``tensorflow`` double whose import blocks, CANN's ``atc`` double), never after a
sleep. The doubles stand in for programs to test our process handling only."""
import glob
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.kind("doubles")

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
EXPORT_DOUBLES = os.path.join(os.path.dirname(HERE), "export", "doubles")
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGQUIT: 131}
HANGING_DOUBLE = os.path.join(EXPORT_DOUBLES, "hanging_tool_double.py")
WAIT = 300  # seconds a waited-for point may take on a loaded machine

BLOCKING_TENSORFLOW = '''\
import os, time
open(os.environ["BLOCK_MARK"], "w").write(str(os.getpid()))
time.sleep(600)
'''

# A sitecustomize TEST DOUBLE: holds the export's verification child (only it) before it runs.
HOLD_VERIFY_CHILD = '''\
import os, sys, time
if "tf_ge_custom.export.checking._verify_child" in getattr(sys, "orig_argv", []):
    open(os.environ["BLOCK_MARK"], "w").write(str(os.getpid()))
    time.sleep(600)
'''

BISHENGIR_DOUBLE = '''\
import os, sys, tempfile, time
if "--version" in sys.argv:
    print("bishengir-compile 1.2.0")
    sys.exit(0)
folder = tempfile.mkdtemp(prefix="bishengir-")
open(os.environ["BLOCK_MARK"], "w").write("%d %s" % (os.getpid(), folder))
time.sleep(600)
'''


def env_for(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ASCEND_", "PYTEST_", "TF_GE_CUSTOM_")) and k != "PYTHONPATH"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


class Command(object):
    """A running ``tf-ge-custom``: its lines as they come, its descendants, its end."""

    def __init__(self, args, cwd, env, stdout=subprocess.PIPE):
        self.proc = subprocess.Popen([SCRIPT] + list(args), cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                                     stdout=stdout, stderr=subprocess.PIPE, universal_newlines=True)
        self.lines = queue.Queue()
        self.out, self.err = [], []
        streams = [(self.proc.stderr, self.err)] + ([(self.proc.stdout, self.out)] if stdout == subprocess.PIPE else [])
        self.readers = [threading.Thread(target=self._read, args=s, daemon=True) for s in streams]
        for r in self.readers:
            r.start()

    def _read(self, stream, into):
        for line in stream:
            into.append(line)
            self.lines.put(line)

    def wait_for_line(self, start):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                assert self.proc.poll() is None, "ended before %r: %s" % (start, self.text())
                continue
            if line.startswith(start):
                return line
        pytest.fail("no line %r within %d s: %s" % (start, WAIT, self.text()))

    def descendants(self):
        return descendants(self.proc.pid)

    def end(self, timeout=WAIT):
        self.proc.wait(timeout=timeout)
        for r in self.readers:
            r.join(timeout=10)
        return self.proc.returncode

    def text(self):
        return "".join(self.out) + "".join(self.err)


def wait_for_file(path):
    deadline = time.monotonic() + WAIT
    while not os.path.exists(str(path)) or not open(str(path)).read():
        assert time.monotonic() < deadline, "%s never appeared" % path
        time.sleep(0.05)
    return open(str(path)).read()


def _parents():
    found = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            found[int(stat.split("/")[2])] = int(fields[1])
    return found


def descendants(pid):
    parents, found, todo = _parents(), set(), [pid]
    while todo:
        p = todo.pop()
        children = [c for c, pp in parents.items() if pp == p and c not in found]
        found.update(children)
        todo.extend(children)
    return found


def alive(pid, wait=10.0):
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return False
        except OSError:
            return False
        time.sleep(0.05)
    return True


def assert_interrupted(command, sig, what):
    status = command.end()
    err = "".join(command.err)
    assert status == EXIT[sig], command.text()
    assert "Traceback" not in command.text(), command.text()
    lines = [l for l in err.splitlines() if l.strip()]
    assert lines[-1].startswith("tf-ge-custom ") and (": interrupted by %s while %s;" % (
        signal.Signals(sig).name, what)) in lines[-1], err


# --- signals ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_selftest_stage_stops_it_and_removes_the_work_folder(tmp_path, sig):
    command = Command(["selftest", "--only", "CPU_ADD"], tmp_path, env_for(tmp_path))
    command.wait_for_line("CPU_ADD: started")
    deadline = time.monotonic() + WAIT
    while not command.descendants():  # the stage's process, started right after the line
        assert time.monotonic() < deadline and command.proc.poll() is None, command.text()
        time.sleep(0.05)
    stage = command.descendants()
    assert glob.glob(str(tmp_path / "tmp" / "tf-ge-custom-selftest-*"))
    command.proc.send_signal(sig)
    assert_interrupted(command, sig, "running stage CPU_ADD")
    assert not [p for p in stage if alive(p)], "the stage's process outlived the selftest"
    assert os.listdir(str(tmp_path / "tmp")) == []


@pytest.mark.slow
def test_a_killed_selftest_takes_its_stage_with_it(tmp_path):
    """SIGKILL leaves no chance to clean up: the stage's Python process ends with its parent."""
    command = Command(["selftest", "--only", "CPU_ADD"], tmp_path, env_for(tmp_path))
    command.wait_for_line("CPU_ADD: started")
    deadline = time.monotonic() + WAIT
    while not command.descendants():
        assert time.monotonic() < deadline, command.text()
        time.sleep(0.05)
    stage = command.descendants()
    time.sleep(0.5)  # past the child's first statements, where it asks to die with its parent
    command.proc.kill()
    command.end()
    assert not [p for p in stage if alive(p)], "the stage's process outlived a killed selftest"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGQUIT])
def test_a_signal_during_verification_stops_the_child_and_removes_staging_and_temporary_folders(
        tmp_path, models, sig):
    """SIGQUIT (Ctrl-\\) too: left to Python's default it ended the process on the spot, and
    the staging folder stayed in the output folder for good."""
    hold = tmp_path / "hold"
    hold.mkdir()
    (hold / "sitecustomize.py").write_text(HOLD_VERIFY_CHILD)
    mark = tmp_path / "verify-child.pid"
    command = Command(["export", models["saved_model"], "--output", str(tmp_path / "out" / "m")], tmp_path,
                      env_for(tmp_path, PYTHONPATH=str(hold), BLOCK_MARK=str(mark)))
    child = int(wait_for_file(mark))
    assert glob.glob(str(tmp_path / "out" / ".tf-ge-custom-staging-*"))
    assert glob.glob(str(tmp_path / "tmp" / "tf-ge-custom-verify-*"))
    command.proc.send_signal(sig)
    assert_interrupted(command, sig, "verifying the frozen graph in a fresh process")
    assert not alive(child), "the verification child outlived the export"
    assert os.listdir(str(tmp_path / "out")) == []  # no staging folder, no partial product
    assert os.listdir(str(tmp_path / "tmp")) == []


MAKE_PLAIN_PB = '''\
import sys
import tensorflow as tf
graph = tf.Graph()
with graph.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [2, 3], name="y")
    tf.identity(tf.math.add(x, y), name="z")
open(sys.argv[1], "wb").write(graph.as_graph_def().SerializeToString())
'''


@pytest.mark.slow
def test_sighup_while_atc_runs_stops_it_and_what_it_started_and_removes_staging(tmp_path):
    """atc runs in a session of its own (a closing terminal does not reach it): the export
    itself must stop it. The model holds no AddCustom, so no GE library is needed here."""
    pb = tmp_path / "plain.pb"
    made = subprocess.run([sys.executable, "-c", MAKE_PLAIN_PB, str(pb)], env=env_for(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert made.returncode == 0, made.stdout
    atc = tmp_path / "atc"
    atc.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (sys.executable, os.path.join(EXPORT_DOUBLES, "atc_double.py")))
    atc.chmod(0o755)
    record = tmp_path / "record.json"
    command = Command(["export", str(pb), "--to", "om", "--soc", "Ascend910B1", "--via", "pb", "--no-verify",
                       "--output", str(tmp_path / "out" / "m")], tmp_path,
                      env_for(tmp_path, TF_GE_CUSTOM_ATC=str(atc), TF_GE_CUSTOM_TEST_MODE="hang",
                              TF_GE_CUSTOM_TEST_RECORD=str(record)))
    command.wait_for_line("[")  # run_tool's stamped echo of atc's output
    while "hanging until killed" not in "".join(command.err):
        command.wait_for_line("[")
    pids = json.loads(record.read_text())
    command.proc.send_signal(signal.SIGHUP)
    assert_interrupted(command, signal.SIGHUP, "running atc")
    assert not alive(pids["pid"]) and not alive(pids["grandchild"]), "atc or its child outlived the export"
    assert not glob.glob(str(tmp_path / "out" / ".tf-ge-custom-staging-*"))
    assert not os.path.exists(str(tmp_path / "out" / "m.om"))


@pytest.mark.slow
def test_sigterm_during_build_kernels_removes_its_staging_and_the_compilers_temporary_folder(tmp_path):
    double = tmp_path / "bishengir_double.py"
    double.write_text(BISHENGIR_DOUBLE)
    wrapper = tmp_path / "bishengir-compile"
    wrapper.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (sys.executable, double))
    wrapper.chmod(0o755)
    mark = tmp_path / "bishengir.pid"
    out = tmp_path / "D"
    command = Command(["build-kernels", "--ir-only", "--soc", "Ascend910B1", "--dtype", "float32", "--out", str(out)],
                      tmp_path, env_for(tmp_path, TF_GE_CUSTOM_BISHENGIR_COMPILE=str(wrapper), BLOCK_MARK=str(mark)))
    pid, folder = wait_for_file(mark).split()
    assert os.path.isdir(folder) and glob.glob(str(out / ".tf-ge-custom-kernels-*"))
    command.proc.send_signal(signal.SIGTERM)
    assert_interrupted(command, signal.SIGTERM, "building kernels")
    assert not alive(int(pid)), "bishengir-compile outlived build-kernels"
    assert os.listdir(str(out)) == []
    assert os.listdir(str(tmp_path / "tmp")) == []  # the compiler's bishengir-* too


@pytest.mark.slow
def test_ctrl_c_while_tensorflow_loads_is_one_line_and_130(tmp_path, models):
    """The first moments of an export: TensorFlow's import (a TEST DOUBLE that blocks)."""
    fake = tmp_path / "fake" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(BLOCKING_TENSORFLOW)
    mark = tmp_path / "importing.pid"
    command = Command(["export", models["saved_model"], "--output", str(tmp_path / "out" / "m")], tmp_path,
                      env_for(tmp_path, PYTHONPATH=str(tmp_path / "fake"), BLOCK_MARK=str(mark)))
    assert int(wait_for_file(mark)) == command.proc.pid  # the command itself is importing it
    command.proc.send_signal(signal.SIGINT)
    assert_interrupted(command, signal.SIGINT, "loading and freezing the model")


# --- killed outright (SIGKILL): nothing runs on, and the next run sweeps what was left ------------

# A sitecustomize TEST DOUBLE: makes the export's verification child (only it) the hanging double.
VERIFY_CHILD_HANGS = '''\
import os, sys
if "tf_ge_custom.export.checking._verify_child" in getattr(sys, "orig_argv", []):
    sys.argv = [os.environ["HANGING_DOUBLE"]]
    exec(compile(open(sys.argv[0]).read(), sys.argv[0], "exec"), {"__name__": "__main__"})
'''


@pytest.fixture(scope="module")
def plain_pb(tmp_path_factory):
    """A frozen graph without AddCustom (no GE library needed to hand it to atc or the AIR tool)."""
    folder = tmp_path_factory.mktemp("plain")
    pb = folder / "plain.pb"
    made = subprocess.run([sys.executable, "-c", MAKE_PLAIN_PB, str(pb)], env=env_for(folder),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert made.returncode == 0, made.stdout
    return str(pb)


def _hanging_double(tmp_path):
    wrapper = tmp_path / "hanging-double"
    wrapper.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (sys.executable, HANGING_DOUBLE))
    wrapper.chmod(0o755)
    return str(wrapper)


def _killed_case(name, tmp_path, plain_pb):
    """(command line, environment, leftovers: globs of what the killed run may leave) of one
    case; the hanging double is the program the command is running when it is killed."""
    double, out, tmp = _hanging_double(tmp_path), tmp_path / "out", tmp_path / "tmp"
    staging = [str(out / ".tf-ge-custom-staging-*")]
    if name == "atc":
        return (["export", plain_pb, "--to", "om", "--soc", "Ascend910B1", "--via", "pb", "--no-verify",
                 "--output", str(out / "m")], {"TF_GE_CUSTOM_ATC": double}, staging)
    if name == "the AIR tool":
        return (["export", plain_pb, "--to", "air", "--no-verify", "--output", str(out / "m")],
                {"TF_GE_CUSTOM_AIR_TOOL": double, "ASCEND_HOME_PATH": str(tmp_path / "cann")}, staging)
    if name == "the verification child":
        hold = tmp_path / "hold"
        hold.mkdir()
        (hold / "sitecustomize.py").write_text(VERIFY_CHILD_HANGS)
        return (["export", plain_pb, "--output", str(out / "m")],
                {"PYTHONPATH": str(hold), "HANGING_DOUBLE": HANGING_DOUBLE},
                staging + [str(tmp / "tf-ge-custom-verify-*")])
    if name == "the OM runner":
        import numpy as np

        (tmp_path / "m.om").write_bytes(b"stand-in om")
        np.save(str(tmp_path / "x.npy"), np.ones((2, 3), np.float32))
        return (["run-om", str(tmp_path / "m.om"), "--input", str(tmp_path / "x.npy"), "--input",
                 str(tmp_path / "x.npy")],
                {"TF_GE_CUSTOM_OM_RUNNER": double, "ASCEND_HOME_PATH": str(tmp_path / "cann")},
                [str(tmp / "tf-ge-custom-run-om-*")])
    if name == "bishengir-compile":
        return (["build-kernels", "--ir-only", "--soc", "Ascend910B1", "--dtype", "float32", "--out", str(out)],
                {"TF_GE_CUSTOM_BISHENGIR_COMPILE": double},
                [str(out / ".tf-ge-custom-kernels-*"), str(tmp / "tf-ge-custom-build-kernels-*")])
    assert name == "the builder's Python"
    return (["setup-builder", "--python", double, "--venv", str(tmp_path / "builder")], {}, [])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["atc", "the AIR tool", "the verification child", "the OM runner",
                                  "bishengir-compile", "the builder's Python"])
def test_a_command_killed_outright_takes_every_program_it_started_with_it(tmp_path, plain_pb, name):
    """``kill -9`` of the command while it runs a TEST DOUBLE of the program (its pid and those of
    its child and of a grandchild in a session of its own recorded): none of them, and no other
    process the command started, runs on; the next run of the command sweeps what the killed
    one left (its staging and temporary folders), each with a line saying so."""
    args, extra, leftovers = _killed_case(name, tmp_path, plain_pb)
    record = tmp_path / "hang.json"
    env = env_for(tmp_path, TF_GE_CUSTOM_TEST_HANG_RECORD=str(record), **extra)
    command = Command(args, tmp_path, env)
    pids = json.loads(wait_for_file(record))
    started = command.descendants()
    assert {pids["pid"], pids["child"], pids["session_child"]} <= started, (pids, started)
    command.proc.kill()
    assert command.end() == -signal.SIGKILL
    running = sorted(p for p in started if alive(p))
    assert not running, "%s: still running after kill -9 of the command: %s (the double: %s)" % (
        name, running, pids)
    left = [path for pattern in leftovers for path in glob.glob(pattern)]
    assert len(left) == len(leftovers), (leftovers, left)  # what only a sweep can remove
    extra.pop("PYTHONPATH", None)  # the next run's verification child runs
    again = subprocess.run([SCRIPT] + args, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, universal_newlines=True, timeout=WAIT,
                           env=env_for(tmp_path, TF_GE_CUSTOM_TEST_MODE="fail", **extra))
    assert "Traceback" not in again.stdout + again.stderr, again.stderr
    for path in left:
        assert ("note: removed %s, left behind by a tf-ge-custom command that was killed" % path) in again.stderr, \
            again.stderr
        assert not os.path.exists(path)
    assert not [path for pattern in leftovers for path in glob.glob(pattern)], again.stderr


# --- output ----------------------------------------------------------------------------------


def _closed_pipe():
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes anything: EPIPE on every write
    return write


@pytest.mark.parametrize("args", [["selftest", "--list"], ["doctor"], ["list-kernels"], ["list-kernels", "--help"],
                                  ["build-kernels", "--help"], ["--help"]])
def test_a_reader_that_went_away_ends_the_command_quietly(tmp_path, args):
    write = _closed_pipe()
    try:
        command = Command(args, tmp_path, env_for(tmp_path), stdout=write)
    finally:
        os.close(write)
    status = command.end()
    assert "".join(command.err) == "", command.text()  # no BrokenPipeError, no "Exception ignored"
    assert status == 141, status  # 128 + SIGPIPE, as a program killed by it (git, cat) ends


def test_selftest_list_piped_into_head_prints_the_first_line_and_nothing_else(tmp_path):
    proc = subprocess.run("'%s' selftest --list | head -1; exit ${PIPESTATUS[0]}" % SCRIPT, shell=True,
                          executable="/bin/bash", cwd=str(tmp_path), env=env_for(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=WAIT)
    assert proc.stdout.startswith("DOCTOR ") and len(proc.stdout.splitlines()) == 1
    assert proc.stderr == "" and proc.returncode in (0, 141), proc.stderr


def test_doctor_with_stdout_closed_runs_and_says_nothing(tmp_path):
    proc = subprocess.run("'%s' doctor >&-" % SCRIPT, shell=True, cwd=str(tmp_path), env=env_for(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=WAIT)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # before: an AttributeError traceback


# --- a deleted working directory -------------------------------------------------------------


def _in_deleted_folder(tmp_path, args):
    gone = tmp_path / "gone"
    gone.mkdir()
    line = "cd '%s' && rmdir '%s' && exec '%s' %s" % (gone, gone, SCRIPT, " ".join("'%s'" % a for a in args))
    proc = subprocess.run(line, shell=True, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=WAIT)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc, str(gone)


@pytest.mark.parametrize("args, option", [(["build-kernels", "--ir-only", "--out", "rel"], "--out rel"),
                                          (["export", "/nonexistent/model", "--output", "rel/m"], "--output rel/m"),
                                          (["selftest", "--keep", "logs"], "--keep logs")])
def test_a_relative_path_in_a_deleted_working_directory_is_named_as_such(tmp_path, args, option):
    proc, gone = _in_deleted_folder(tmp_path, args)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "tf-ge-custom %s: error: %s is a relative path, but the working directory %s no longer exists "
        "(deleted or moved)" % (args[0], option, gone)), proc.stderr
    assert proc.stderr.splitlines()[1].startswith("fix: cd to an existing folder"), proc.stderr


@pytest.mark.slow
def test_doctor_in_a_deleted_working_directory_runs_its_checks_and_says_so(tmp_path):
    proc, gone = _in_deleted_folder(tmp_path, ["doctor"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("WARN  working directory") and "%s no longer exists" % gone in lines[1], lines
    assert any(l.startswith("OK    op library") for l in lines), lines  # the checks ran


# --- selftest --keep: one run per folder --------------------------------------------------------


@pytest.mark.slow
def test_selftests_started_together_never_share_a_keep_folder(tmp_path):
    """Six runs on one new folder at once, each held in its first child process (a TEST DOUBLE
    of tensorflow that blocks): exactly one holds the folder, the others are refused."""
    fake = tmp_path / "fake" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import os, time\nopen(os.environ['BLOCK_MARK'] + str(os.getppid()), 'w')"
                                      ".write('held')\ntime.sleep(600)\n")
    marks = str(tmp_path / "held-")
    env = env_for(tmp_path, PYTHONPATH=str(tmp_path / "fake"), BLOCK_MARK=marks)
    runs = [Command(["selftest", "--keep", "logs", "--only", "DOCTOR"], tmp_path, env) for _ in range(6)]
    deadline = time.monotonic() + WAIT
    while sum(r.proc.poll() is not None for r in runs) + len(glob.glob(marks + "*")) < len(runs):
        assert time.monotonic() < deadline, [r.text() for r in runs]
        time.sleep(0.1)
    holders = [r for r in runs if r.proc.poll() is None]
    refused = [r for r in runs if r.proc.poll() is not None]
    assert len(holders) == 1, "%d runs share the folder" % len(holders)
    for r in refused:
        assert r.end() == 2 and "another selftest" in "".join(r.err), r.text()
    holders[0].proc.send_signal(signal.SIGTERM)
    assert holders[0].end() == 143
    # the claim ended with the run: the folder is free for the next one
    assert not os.path.exists(str(tmp_path / "logs" / ".tf-ge-custom-selftest.running"))
