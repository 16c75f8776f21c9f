"""Every ```python block of the README and of docs/ runs as written (in a fresh interpreter).

Blocks that need an Ascend host or a CANN toolkit are fenced as ```python-npu / ```python-cann
and are not run here. docs/npu.md's two examples are run, with what each must print, by
tests/doctor/test_docs.py (its TF2 example exits 1 on purpose without npu_device).
"""
import glob
import os
import re
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
    """The README's five-minute tour: the one-liner, eager/tf.function, Keras, TF1, TF2."""
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
def test_snippet_runs(page, index, code, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, "%s block %d:\n%s\n%s" % (page, index, code, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
