"""The README's "Examples" commands, run exactly as they stand there, each on the CPU.

The block is read from README.md (the ```bash block under "## Examples"); each line runs with
``bash`` from a copy of the repository's examples/ (the commands are relative to the
repository root and one writes out/), with this environment's python first on PATH. Each
must exit 0 and print its PASS line; what each checked is then held against numbers
computed here.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_example_commands():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    section = text.split("\n## Examples\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```bash\n(.*?)^```", section, re.S | re.M).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


COMMANDS = readme_example_commands()


def test_the_readme_shows_the_four_examples():
    assert [c.split()[1] for c in COMMANDS] == ["examples/tf1_session.py", "examples/tf2_npu_device.py",
                                                "examples/keras_train.py", "examples/export_model.py"]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    where = tmp_path_factory.mktemp("checkout")
    shutil.copytree(os.path.join(ROOT, "examples"), str(where / "examples"))
    return where


def _run(command, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    started = time.time()
    proc = subprocess.run(["bash", "-c", command], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, "%s\n%s\n%s" % (command, proc.stdout, proc.stderr[-3000:])
    return proc.stdout, time.time() - started


@pytest.mark.documents("python examples/tf1_session.py")
@pytest.mark.slow
def test_tf1_session_example(checkout):
    out, _ = _run(COMMANDS[0], checkout)
    assert "AddCustom ran on: the host's CPU kernel (8 AddCustom nodes in the partition graphs)" in out
    for dtype in ("float32", "float16", "bfloat16", "int32"):
        assert re.search(r"^  %s\s+x \+ x and x \+ bias\[2048\]: OK$" % dtype, out, re.M), out
    assert out.rstrip().endswith("TF1_SESSION=PASS")


@pytest.mark.documents("python examples/tf2_npu_device.py")
@pytest.mark.slow
def test_tf2_npu_device_example(checkout):
    out, _ = _run(COMMANDS[1], checkout)
    assert "cannot import npu_device" in out  # the fallback says why it runs on the CPU
    assert len(re.findall(r"^  \w+\s+\[[38], 2048\] \+ bias\[2048\]: OK$", out, re.M)) == 8, out
    assert "device: CPU (no npu_device); results on /job:localhost/replica:0/task:0/device:CPU:0" in out
    assert out.rstrip().endswith("TF2_DEVICE=PASS")


@pytest.mark.documents("python examples/keras_train.py")
@pytest.mark.slow
def test_keras_example_trains_saves_and_reloads(checkout):
    out, _ = _run(COMMANDS[2], checkout)
    losses = [float(v) for v in re.findall(r"^  epoch \d+  loss ([0-9.]+)$", out, re.M)]
    assert len(losses) == 8 and losses[-1] < 0.5 * losses[0], out
    assert "AddCustom layer restored, same predictions" in out
    assert out.rstrip().endswith("KERAS_TRAIN=PASS")


@pytest.mark.documents("python examples/export_model.py --output out/add_model")
@pytest.mark.slow
def test_export_example_writes_a_verified_frozen_graph(checkout):
    out, _ = _run(COMMANDS[3], checkout)
    prefix = str(checkout / "out" / "add_model")
    assert "exported: pb=%s.pb, record=%s.json" % (prefix, prefix) in out, out
    x, y = np.load(prefix + ".x.npy"), np.load(prefix + ".y.npy")
    assert x.shape == (4, 8) and y.shape == (8,)
