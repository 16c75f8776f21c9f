"""Every ```python block of the README and of docs/ runs as written (in a fresh interpreter),
from the repository root, where the README's readers paste them: the root's source tree
hands over to the installed package there (tf_ge_custom/_checkout.py), and a block leaves
nothing behind in the root.

Blocks that need an Ascend host or a CANN toolkit are fenced as ```python-npu / ```python-cann
and are not run here. docs/npu.md's two examples are run, with what each must print, by
tests/doctor/test_docs.py (its TF2 example exits 1 on purpose without npu_device).

The README's `tf-ge-custom export` lines run as written, through the installed command, on a
SavedModel at `saved_model_dir` whose batch dimension is unknown (as most models' is): the OM
line needs its `--input-shape`, and without it the command says so.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
RUN_ELSEWHERE = {"docs/npu.md": "tests/doctor/test_docs.py"}


def _pages():
    pages = [README] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [p for p in pages if os.path.relpath(p, ROOT) not in RUN_ELSEWHERE]


def _blocks(path):
    with open(path) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), flags=re.S | re.M)


def _snippets():
    return [(os.path.relpath(page, ROOT), i, code) for page in _pages()
            for i, code in enumerate(_blocks(page))]


def test_the_readme_has_its_tour():
    """The README's tour: the one-liner, eager/tf.function, Keras, TF1, TF2."""
    blocks = _blocks(README)
    assert len(blocks) >= 5
    assert any("session_config" in b for b in blocks) and any("open_device" in b for b in blocks)
    assert any("tf_ge_custom.layers" in b for b in blocks)


def test_every_python_block_in_docs_is_run_somewhere():
    """A page whose blocks this file skips must name the test that runs them."""
    for page, test in RUN_ELSEWHERE.items():
        assert _blocks(os.path.join(ROOT, page)), page
        assert os.path.isfile(os.path.join(ROOT, test)), test


@pytest.mark.parametrize("page,index,code", _snippets(),
                         ids=["%s#%d" % (p, i) for p, i, _ in _snippets()])
def test_snippet_runs_from_the_repository_root(page, index, code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.pop("PYTHONPATH", None)
    before = sorted(os.listdir(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, "%s block %d:\n%s\n%s" % (page, index, code, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert sorted(os.listdir(ROOT)) == before


# --- the tour's export lines, through the installed command ------------------------------------

SAVED_MODEL = r"""
import sys
import tensorflow as tf
import tf_ge_custom

class Model(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 2048], tf.float32, name="x"),
                                  tf.TensorSpec([None, 2048], tf.float32, name="y")])
    def serve(self, x, y):
        return {"z": tf_ge_custom.add_custom(x, y)}

model = Model()
tf.saved_model.save(model, sys.argv[1], signatures={"serving_default": model.serve})
"""


def readme_export_lines():
    """The README's `tf-ge-custom export` lines, continuation lines joined, comments cut."""
    with open(README) as f:
        blocks = re.findall(r"^```bash\n(.*?)^```", f.read(), flags=re.S | re.M)
    lines = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("tf-ge-custom export "):
                lines.append(line.split("  #")[0].strip())
    return lines


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory):
    """A folder with the README's `saved_model_dir`: a SavedModel whose batch is unknown."""
    where = tmp_path_factory.mktemp("user")
    proc = subprocess.run([sys.executable, "-c", SAVED_MODEL, str(where / "saved_model_dir")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(where),
                          universal_newlines=True, env=_user_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return where


def _user_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.pop("PYTHONPATH", None)
    # the installed console script, as a user's shell finds it
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _bash(line, cwd):
    return subprocess.run(["bash", "-c", line], cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=_user_env(),
                          timeout=600)


def test_the_readme_shows_the_pb_and_the_om_export():
    lines = readme_export_lines()
    assert [l.split("--to ")[1].split()[0] for l in lines] == ["pb", "om"]
    assert "--input-shape" in lines[1] and "--dry-run" in lines[1]


@pytest.mark.slow
def test_the_readme_pb_export_line_runs(user_folder):
    proc = _bash(readme_export_lines()[0], user_folder)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (user_folder / "out" / "model.pb").is_file()


@pytest.mark.documents('tf-ge-custom export saved_model_dir --to om --soc Ascend910B1 --output out/model '
                        '--input-shape "x:8,2048;y:8,2048" --dry-run')
@pytest.mark.slow
def test_the_readme_om_line_works_on_a_model_with_an_unknown_batch(user_folder):
    line = readme_export_lines()[1]
    shapes = re.search(r'--input-shape "([^"]+)"', line).group(1)
    proc = _bash(line, user_folder)
    assert proc.returncode == 0, proc.stdout[-3000:]
    # the planned atc command line (shell-quoted): ATC gets every input's fixed shape
    atc = [shlex.split(l.split(":", 1)[1]) for l in proc.stdout.splitlines()
           if l.startswith("would run:") and " atc " in l]
    assert atc and "--input_shape=%s" % shapes in atc[-1], proc.stdout[-3000:]
    # without --input-shape the same line is refused, naming the option
    refused = _bash(line.replace('--input-shape "%s"' % shapes, ""), user_folder)
    assert refused.returncode == 1, refused.stdout[-3000:]
    assert "--input-shape" in refused.stdout
