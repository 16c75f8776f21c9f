"""The examples of docs/npu.md run as documented on this machine (no NPU stack)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "npu.md"


def examples():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def run_example(code, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)


def test_docs_have_the_tf1_and_tf2_examples():
    assert [("session_config" in e, "open_device" in e) for e in examples()] == [
        (True, False), (False, True)]


@pytest.mark.slow
def test_tf1_example_runs_on_the_cpu_with_one_warning(tmp_path):
    proc = run_example(examples()[0], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("NpuPlacementWarning") == 1


@pytest.mark.slow
def test_tf2_example_says_how_to_get_npu_device(tmp_path):
    proc = run_example(examples()[1], tmp_path)
    assert proc.returncode == 1
    assert "NpuStackError" in proc.stderr and "install the npu_device wheel" in proc.stderr
