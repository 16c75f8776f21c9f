"""Shared oracles and helpers for the TensorFlow-side tests (exposed as fixtures, since the
tests import the installed package and keep the source tree off sys.path)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _as_comparable(a):
    a = np.asarray(a)
    if a.dtype.name in ("bfloat16", "float16"):
        return a.astype(np.float32)  # exact: both widen losslessly
    return a


def assert_same_tensor(actual, expected):
    """Same dtype, same shape, same values: NaN matches NaN, and -0.0 must stay -0.0.

    The sign of a NaN is not compared: IEEE 754 leaves it unspecified for arithmetic
    results, and tf.math.add itself differs there between kernels (Eigen vs oneDNN).
    """
    if isinstance(actual, tf.Tensor):
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        actual, expected = actual.numpy(), expected.numpy()
    a, e = _as_comparable(actual), _as_comparable(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_array_equal(a, e)
    if a.dtype.kind == "f":
        numbers = ~np.isnan(e)
        np.testing.assert_array_equal(np.signbit(a)[numbers], np.signbit(e)[numbers])


@pytest.fixture
def assert_same():
    return assert_same_tensor


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


def run_python(code, env=None, cwd=None, timeout=300):
    """Run ``code`` in a fresh interpreter (the test venv's), outside the source tree."""
    full_env = dict(os.environ)
    full_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    full_env.pop("PYTHONPATH", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=full_env, cwd=cwd or os.path.expanduser("~"), timeout=timeout)


@pytest.fixture
def python_subprocess(tmp_path):
    def run(code, env=None, timeout=300):
        return run_python(code, env=env, cwd=str(tmp_path), timeout=timeout)
    return run


@pytest.fixture(scope="session")
def fresh_child():
    """run(code, cwd, env=None): ``code`` run in a fresh interpreter with the installed package
    (``env`` added to its environment); returns the JSON of its last ``REPORT `` line."""
    import json

    def run(code, cwd, env=None):
        done = run_python(code, cwd=cwd, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-4000:]
        line = [l for l in done.stdout.splitlines() if l.startswith("REPORT ")][-1]
        return json.loads(line[len("REPORT "):])
    return run
