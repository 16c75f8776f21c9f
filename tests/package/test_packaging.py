"""`pip wheel` and `pip install` from a source tree build a working package, also under
pip's build isolation, with the op library compiled against the running TensorFlow."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = {".git", ".venv", "build", "dist", ".pytest_cache", ".hypothesis", "__pycache__", ".cache"}


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(REPO_ROOT, str(src), ignore=lambda d, names: [
        n for n in names if n in SKIP or n.startswith(".venv") or n.endswith(".egg-info")
        or (os.path.basename(d) == "tf_ge_custom" and n in ("_lib", "opp", "build_info.json"))])
    out = base / "out"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          env=_env())
    assert proc.returncode == 0, proc.stdout[-5000:]
    (whl,) = list(out.glob("tf_ge_custom-*.whl"))
    return whl


def test_wheel_is_platform_specific_and_carries_the_op_library(wheel):
    assert "linux" in wheel.name and "py3-none-any" not in wheel.name
    names = zipfile.ZipFile(str(wheel)).namelist()
    assert "tf_ge_custom/_lib/libtf_ge_custom_ops.so" in names
    assert "tf_ge_custom/build_info.json" in names
    # GE dlopens every .so under opp/framework/: the TensorFlow-side library must not be there
    assert not [n for n in names if "/opp/framework/" in n and "libtf_ge_custom_ops" in n]


def test_wheel_records_the_tensorflow_it_was_built_against(wheel):
    import tensorflow as tf

    info = json.loads(zipfile.ZipFile(str(wheel)).read("tf_ge_custom/build_info.json"))
    assert info["tensorflow"]["version"] == tf.__version__


def test_installed_wheel_computes_the_sum(wheel, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                           str(target), str(wheel)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:]
    env = _env()
    env["PYTHONPATH"] = str(target)
    proc = subprocess.run([sys.executable, "-c",
                           "import tf_ge_custom, sys; print(tf_ge_custom.__file__); "
                           "print(tf_ge_custom.add_custom([1, 2], [30, 40]).numpy().tolist())"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, value = proc.stdout.strip().splitlines()[-2:]
    assert where.startswith(str(target)) and value == "[31, 42]"
