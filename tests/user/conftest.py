"""The product as a user runs it: the installed console script in a fresh process.

Nothing here imports the package into the process that runs the command: every command runs
as ``tf-ge-custom ...`` (the console script pip installed next to this interpreter) or
``python -m tf_ge_custom ...``, with a plain environment (no PYTHONPATH, no ASCEND_*), on
models made by another fresh process (make_models.py). What a command writes is checked
here, in the test process, against TensorFlow's own ``tf.math.add``.
"""
import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
SCRIPT = os.path.join(BIN, "tf-ge-custom")
LAUNCHERS = {"script": [SCRIPT], "python -m": [sys.executable, "-m", "tf_ge_custom"]}
NOBODY = 65534


def user_env(**extra):
    """The environment of a user's shell: this venv's bin first on PATH, nothing of pytest's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ASCEND_", "PYTEST_", "TF_GE_CUSTOM_")) and k != "PYTHONPATH"}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update({k: v for k, v in extra.items() if v is not None})
    for k in [k for k, v in extra.items() if v is None]:
        env.pop(k, None)
    return env


class Ran(object):
    def __init__(self, argv, proc):
        self.argv = argv
        self.status = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def text(self):
        return self.out + self.err

    def __repr__(self):
        return "%s -> %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            " ".join(self.argv), self.status, self.out[-4000:], self.err[-4000:])


# The warm launcher of this pytest process (tests/warm_process.py), and whether the running
# test asked for a fresh interpreter (@pytest.mark.fresh_process); set by _launch_mode.
WARM = {"launcher": None, "fresh": True}


def run(argv, cwd, env=None, timeout=600, user=None):
    """Run ``argv`` as a user would; asserts that no Python traceback was printed.

    A command line the warm launcher serves runs in a child forked from a process that has
    imported TensorFlow (tests/warm_process.py); one it does not serve, one run as another
    user, and every command of a test marked ``fresh_process`` run in a fresh process."""
    argv = [str(a) for a in argv]
    env = env or user_env()
    launcher = WARM["launcher"]
    if user is None and launcher is not None and not WARM["fresh"] and launcher.serves(argv, cwd, env):
        proc = launcher.run(argv, cwd, env, timeout)
    else:
        kwargs = {}
        if user is not None:
            kwargs["preexec_fn"] = lambda: (os.setgid(user), os.setuid(user))
        proc = subprocess.run(argv, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, universal_newlines=True, timeout=timeout, **kwargs)
    ran = Ran(argv, proc)
    assert "Traceback" not in ran.text, ran
    return ran


@pytest.fixture(scope="session")
def warm_launcher():
    """The session's warm launcher (started on its first command)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_tests_warm_process", os.path.join(os.path.dirname(HERE), "warm_process.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    launcher = module.WarmLauncher(user_env())
    yield launcher
    launcher.close()


@pytest.fixture(autouse=True)
def _launch_mode(request, warm_launcher):
    """Commands of this test run warm unless it is marked ``fresh_process`` or runs a
    documented command line (``documents``): each of those runs in a fresh interpreter."""
    WARM["launcher"] = warm_launcher
    WARM["fresh"] = any(request.node.get_closest_marker(m) is not None for m in ("fresh_process", "documents"))
    yield
    WARM["fresh"] = True


@pytest.fixture(scope="session")
def tf_ge_custom_cmd():
    """``tf_ge_custom_cmd(*args, cwd=..., launcher="script")`` runs the command line."""
    assert os.access(SCRIPT, os.X_OK), "no console script %s: is the package installed?" % SCRIPT

    def command(*args, **kwargs):
        launcher = kwargs.pop("launcher", "script")
        return run(LAUNCHERS[launcher] + list(args), **kwargs)
    return command


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """{kind: path} of the models make_models.py made (once per session), plus "x", "y"."""
    folder = tmp_path_factory.mktemp("models")
    made = run([sys.executable, os.path.join(HERE, "make_models.py"), str(folder)], folder)
    assert made.status == 0, made
    with open(str(folder / "made.json")) as f:
        paths = json.load(f)
    paths.update(x=str(folder / "x.npy"), y=str(folder / "y.npy"), folder=str(folder))
    return paths


BIAS = {"saved_model": 0.0, "keras": 0.0, "h5": 0.0, "checkpoint": 0.5, "frozen_pb": 0.5}


@pytest.fixture(scope="session")
def check_pb():
    """``check_pb(path, kind, x, y)``: the .pb holds AddCustom and computes tf.math.add(x, y)
    (+ the model's variable), run here on TensorFlow's CPU kernels."""
    import tensorflow as tf

    import tf_ge_custom  # noqa: F401  (registers AddCustom in this process to run the graph)

    def check(path, kind, x_path, y_path, record=None):
        graph_def = tf.compat.v1.GraphDef()
        with open(path, "rb") as f:
            graph_def.ParseFromString(f.read())
        ops = [n.op for n in graph_def.node]
        assert ops.count("AddCustom") == 1, ops
        assert not set(ops) & {"VariableV2", "VarHandleOp", "ReadVariableOp"}, ops
        record = record or json.load(open(os.path.splitext(path)[0] + ".json"))
        inputs = [t["name"] for t in record["inputs"]]
        outputs = [t["name"] for t in record["outputs"]]
        assert len(inputs) == 2 and len(outputs) == 1, record
        x, y = np.load(x_path), np.load(y_path)
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            got = session.run(outputs[0], {inputs[0] + ":0": x, inputs[1] + ":0": y})
        want = tf.math.add(tf.constant(x), tf.constant(y)).numpy() + np.float32(BIAS[kind])
        np.testing.assert_array_equal(got, want)
        return record
    return check


@pytest.fixture
def open_tmp(tmp_path):
    """A folder every user may enter (pytest's own is private to its owner): for commands
    run as another user."""
    folder = tmp_path / "shared"
    folder.mkdir()
    for p in (tmp_path, folder):
        os.chmod(str(p), 0o755)
    parent = tmp_path.parent
    while parent != parent.parent:  # pytest's base folders are 0700
        mode = stat.S_IMODE(os.stat(str(parent)).st_mode)
        if not mode & 0o001:
            os.chmod(str(parent), mode | 0o111)
        parent = parent.parent
    return folder


@pytest.fixture
def package_copy(open_tmp):
    """(site folder, package folder): a copy of the installed package a test may damage; run
    commands with PYTHONPATH=site so that the copy is imported."""
    import tf_ge_custom

    site = open_tmp / "site"
    shutil.copytree(os.path.dirname(tf_ge_custom.__file__), str(site / "tf_ge_custom"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site, site / "tf_ge_custom"


class _User(object):
    """What the tests use to act as a user: ``run``, ``env``, ``python`` (a ``-c`` argv)."""

    nobody = NOBODY
    script = SCRIPT

    @staticmethod
    def run(argv, cwd, env=None, timeout=600, user=None):
        return run(argv, cwd, env, timeout, user)

    @staticmethod
    def unwritable(folder):
        """A context in which ``folder`` cannot be written: mode 0555, and for root (whom
        modes do not stop) the immutable attribute (chattr +i)."""
        import contextlib

        @contextlib.contextmanager
        def context():
            os.chmod(str(folder), 0o555)
            immutable = os.geteuid() == 0
            if immutable:
                done = subprocess.run(["chattr", "+i", str(folder)], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, universal_newlines=True)
                assert done.returncode == 0, "root ignores modes, and chattr +i failed: " + done.stdout
            try:
                yield folder
            finally:
                if immutable:
                    subprocess.run(["chattr", "-i", str(folder)])
                os.chmod(str(folder), 0o755)
        return context()

    @staticmethod
    def python_for_anyone():
        """A Python interpreter another user may run (this venv's may sit in root's home)."""
        for candidate in (sys.executable, os.path.realpath(sys.executable), "/usr/bin/python3"):
            path = os.path.realpath(candidate)
            parts, ok = path.split(os.sep), True
            for i in range(2, len(parts)):
                mode = os.stat(os.sep.join(parts[:i])).st_mode
                ok = ok and bool(mode & 0o001)
            if ok and os.stat(path).st_mode & 0o001:
                return path
        pytest.fail("no Python interpreter here that user %d may run" % NOBODY)

    @staticmethod
    def env(**extra):
        return user_env(**extra)

    @staticmethod
    def python(*lines):
        return [sys.executable, "-c", "\n".join(lines)]


@pytest.fixture(scope="session")
def user():
    return _User


@pytest.fixture
def om_runner_double(tmp_path):
    """(``run-om`` arguments, environment): the OM runner is the TEST DOUBLE
    tests/export/doubles/om_runner_double.py (it adds its float32 inputs), the OM a stand-in
    ``m.om``, both inputs ``x.npy`` (0..5); the double records its run in ``record.json``."""
    wrapper = tmp_path / "om_runner_double"
    wrapper.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (
        sys.executable, os.path.join(os.path.dirname(HERE), "export", "doubles", "om_runner_double.py")))
    wrapper.chmod(0o755)
    (tmp_path / "m.om").write_bytes(b"stand-in om")
    np.save(str(tmp_path / "x.npy"), np.arange(6, dtype=np.float32))
    env = user_env(TF_GE_CUSTOM_OM_RUNNER=str(wrapper), ASCEND_HOME_PATH=str(tmp_path / "cann"),
                   TF_GE_CUSTOM_TEST_RECORD=str(tmp_path / "record.json"))
    return ["run-om", str(tmp_path / "m.om"), "--input", str(tmp_path / "x.npy"), "--input",
            str(tmp_path / "x.npy")], env
