"""Every ```python block of the README runs as written (in a fresh interpreter).

Blocks that need an Ascend host are fenced as ```python-npu and are not run here.
"""
import os
import re
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "README.md")


def _snippets():
    with open(README) as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_has_snippets():
    assert len(_snippets()) >= 4


@pytest.mark.parametrize("index", range(len(_snippets())))
def test_snippet_runs(index, tmp_path):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", _snippets()[index]], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, _snippets()[index] + "\n" + proc.stderr[-3000:]
