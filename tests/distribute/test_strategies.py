"""add_custom inside tf.distribute strategies: a training step whose gradients are aggregated
across replicas gives the same weights with add_custom as with tf.math.add.

Each run is a fresh process (tests/distribute/training.py): MirroredStrategy over two logical
CPU devices, and MultiWorkerMirroredStrategy with two local worker processes (TF_CONFIG on
localhost ports). The oracle for the aggregation is the same model trained on one device
with the whole global batch per step: the all-reduced update must match it up to the order
of float summation.
"""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

TRAINING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "training.py")
TIMEOUT = 600


def _env(**extra):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _train(mode, out, env=None):
    proc = subprocess.run([sys.executable, TRAINING, mode, str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=env or _env(),
                          cwd=os.path.dirname(str(out)), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return np.load(str(out))


def _initial_weights():
    rng = np.random.RandomState(1)  # as training.initial_weights
    return rng.standard_normal((16, 8)).astype(np.float32) * 0.3


@pytest.fixture(scope="module")
def one_device(tmp_path_factory):
    return _train("single", tmp_path_factory.mktemp("single") / "single.npz")


def _check(run, one_device, replicas, add_custom_ops):
    assert int(run["replicas"]) == replicas
    # the step's graph really holds AddCustom: two adds per replica, and none with tf.math.add
    assert (int(run["add_custom_ops"]), int(run["tf_math_add_ops"])) == (add_custom_ops, 0)
    for key in ("w", "b", "losses"):
        np.testing.assert_array_equal(run["add_custom_" + key], run["tf_math_add_" + key])
        np.testing.assert_allclose(run["add_custom_" + key], one_device["add_custom_" + key], rtol=1e-5, atol=1e-6)
    assert np.max(np.abs(run["add_custom_w"] - _initial_weights())) > 1e-3  # it trained
    assert run["add_custom_losses"][-1] < run["add_custom_losses"][0]


@pytest.mark.slow
def test_mirrored_strategy_on_two_cpu_devices_matches_tf_math_add(tmp_path, one_device):
    _check(_train("mirrored", tmp_path / "mirrored.npz"), one_device, replicas=2, add_custom_ops=4)


def _free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.mark.slow
def test_multi_worker_mirrored_strategy_with_two_worker_processes_matches_tf_math_add(tmp_path, one_device):
    cluster = {"worker": ["localhost:%d" % p for p in _free_ports(2)]}
    workers = []
    for index in range(2):
        env = _env(TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}))
        log = open(str(tmp_path / ("worker%d.log" % index)), "w")
        command = [sys.executable, TRAINING, "worker", str(tmp_path / ("worker%d.npz" % index))]
        workers.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(tmp_path)),
                        log))
    try:
        codes = [proc.wait(timeout=TIMEOUT) for proc, _ in workers]
    finally:
        for proc, log in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
    logs = "\n".join((tmp_path / ("worker%d.log" % i)).read_text()[-3000:] for i in range(2))
    assert codes == [0, 0], logs
    runs = [np.load(str(tmp_path / ("worker%d.npz" % i))) for i in range(2)]
    for run in runs:
        _check(run, one_device, replicas=2, add_custom_ops=2)  # one replica per worker
    for key in ("add_custom_w", "add_custom_b", "add_custom_losses"):
        np.testing.assert_array_equal(runs[0][key], runs[1][key])  # the workers stay in sync


def test_the_docs_table_names_the_runs_training_py_makes():
    """docs/distributed.md's table of what is tested here, against training.py's own modes
    (a run the page shows that the script no longer makes, or the reverse, fails here)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "distributed.md")) as f:
        page = f.read()
    rows = page.split("| run | strategy | replicas | checked |", 1)[1].split("\n\n", 1)[0].strip().splitlines()[1:]
    shown = {r.strip("|").split("|")[0].strip(): r.strip("|").split("|")[1] for r in rows}
    assert shown.keys() == {"mirrored", "multi-worker", "oracle"}, shown
    with open(TRAINING) as f:
        script = f.read()
    modes = {"mirrored": "mirrored", "multi-worker": "worker", "oracle": "single"}
    strategies = {"mirrored": "MirroredStrategy", "multi-worker": "MultiWorkerMirroredStrategy",
                  "oracle": "OneDeviceStrategy"}
    for run, mode in modes.items():
        assert 'mode == "%s"' % mode in script, mode
        assert strategies[run] in shown[run] and strategies[run] in script, run
