"""The README's "Examples" commands, run exactly as they stand there, each on the CPU.

The block is read from README.md (the ```bash block under "## Examples"); each line runs with
``bash`` from the repository root, as the README says, with this environment's python first
on PATH, and leaves the root as it found it (a run that keeps files does so in a copy of
examples/). Each must exit 0 and print
its PASS line last; what each checked is then held against numbers computed here, and the
export example must leave nothing behind (no out/, nothing in the temporary folder) unless
``--output`` names where to keep its files.
"""
import glob
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


def _run(command, cwd, **extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(extra_env)
    started = time.time()
    proc = subprocess.run(["bash", "-c", command], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, "%s\n%s\n%s" % (command, proc.stdout, proc.stderr[-3000:])
    return proc.stdout, time.time() - started


def _run_in_root(command, **extra_env):
    """``command`` run from the repository root, which it must leave as it found it."""
    before = sorted(os.listdir(ROOT)), sorted(os.listdir(os.path.join(ROOT, "examples")))
    result = _run(command, ROOT, **extra_env)
    assert (sorted(os.listdir(ROOT)), sorted(os.listdir(os.path.join(ROOT, "examples")))) == before
    return result


@pytest.mark.documents("python examples/tf1_session.py")
@pytest.mark.slow
def test_tf1_session_example():
    out, _ = _run_in_root(COMMANDS[0])
    assert "AddCustom ran on: the host's CPU kernel (8 AddCustom nodes in the partition graphs)" in out
    for dtype in ("float32", "float16", "bfloat16", "int32"):
        assert re.search(r"^  %s\s+x \+ x and x \+ bias\[2048\]: OK$" % dtype, out, re.M), out
    assert out.rstrip().endswith("TF1_SESSION=PASS")


@pytest.mark.documents("python examples/tf2_npu_device.py")
@pytest.mark.slow
def test_tf2_npu_device_example():
    out, _ = _run_in_root(COMMANDS[1])
    assert "cannot import npu_device" in out  # the fallback says why it runs on the CPU
    assert len(re.findall(r"^  \w+\s+\[[38], 2048\] \+ bias\[2048\]: OK$", out, re.M)) == 8, out
    assert "device: CPU (no npu_device); results on /job:localhost/replica:0/task:0/device:CPU:0" in out
    assert out.rstrip().endswith("TF2_DEVICE=PASS")


@pytest.mark.documents("python examples/keras_train.py")
@pytest.mark.slow
def test_keras_example_trains_saves_and_reloads():
    out, _ = _run_in_root(COMMANDS[2])
    losses = [float(v) for v in re.findall(r"^  epoch \d+  loss ([0-9.]+)$", out, re.M)]
    assert len(losses) == 8 and losses[-1] < 0.5 * losses[0], out
    assert "AddCustom layer restored, same predictions" in out
    assert out.rstrip().endswith("KERAS_TRAIN=PASS")


@pytest.mark.documents("python examples/export_model.py")
@pytest.mark.slow
def test_export_example_checks_the_frozen_graph_and_leaves_nothing_behind(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out, _ = _run_in_root(COMMANDS[3], TMPDIR=str(scratch))  # no out/ in the root
    assert re.search(r"^exported: pb=\S+add_model\.pb, record=\S+add_model\.json$", out, re.M), out
    assert "the frozen graph on a [4, 8] batch: same as numpy's (x + y) * w" in out
    assert out.rstrip().endswith("EXPORT_MODEL=PASS")
    assert os.listdir(str(scratch)) == []  # the SavedModel and the export went away


@pytest.mark.slow
def test_export_example_keeps_what_output_names(checkout):
    out, _ = _run("python examples/export_model.py --output out/add_model", checkout)
    prefix = str(checkout / "out" / "add_model")
    assert "exported: pb=%s.pb, record=%s.json" % (prefix, prefix) in out, out
    x, y = np.load(prefix + ".x.npy"), np.load(prefix + ".y.npy")
    assert x.shape == (4, 8) and y.shape == (8,)
    import tensorflow as tf  # the kept graph: one AddCustom node

    graph_def = tf.compat.v1.GraphDef()
    with open(prefix + ".pb", "rb") as f:
        graph_def.ParseFromString(f.read())
    assert sum(node.op == "AddCustom" for node in graph_def.node) == 1
    assert out.rstrip().endswith("EXPORT_MODEL=PASS")


def test_every_example_is_in_the_readme_and_ends_with_its_pass_line():
    """Each example but the demo (`make demo`'s, ending with ``result: PASS``) is listed in the
    README (so the tests above run it) and prints one NAME=PASS line, which its docstring
    names."""
    listed = {c.split()[1] for c in COMMANDS}
    examples = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "examples", "*.py")))
    assert sorted(set(examples) - listed) == ["examples/demo.py"]
    for example in sorted(listed):
        with open(os.path.join(ROOT, example)) as f:
            source = f.read()
        printed = re.findall(r'print\("(\w+)=%s" % \("PASS" if', source)
        assert len(printed) == 1, example
        assert "``%s=PASS``" % printed[0] in " ".join(source.split()), example


@pytest.mark.parametrize("example", [c.split()[1] for c in COMMANDS])
def test_every_example_answers_help_without_running(example):
    out, _ = _run_in_root("python %s --help" % example)
    assert out.startswith("usage: %s [-h]" % os.path.basename(example)), out
    with open(os.path.join(ROOT, example)) as f:
        first_line = f.read().split('"""', 2)[1].splitlines()[0]
    assert " ".join(first_line.split()) in " ".join(out.split())  # its docstring says what it does
    assert "PASS" not in out and "FAIL" not in out  # nothing ran
