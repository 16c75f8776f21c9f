""".gitignore holds only what this project's own build, targets, commands and tests write in a
clone: each pattern with what writes it, and a line that matches none of them is refused."""
import os

import pytest

pytestmark = pytest.mark.kind("plumbing")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITTEN_BY = {
    "/build/": "setup.py's build (build/lib, build/temp-tf-ge-custom) and the object cache",
    "/dist/": "pip wheel / python -m build",
    "*.egg-info/": "setuptools' metadata",
    "__pycache__/": "Python",
    "*.pyc": "Python",
    "*.so": "the op, XLA and GE libraries an editable build writes into the tree",
    "/tf_ge_custom/_lib/": "an editable build's op and XLA libraries",
    "/tf_ge_custom/opp/": "an editable build's OPP root",
    "/tf_ge_custom/build_info.json": "an editable build's record",
    "/tf-ge-custom-kernels/": "tf-ge-custom build-kernels without --out",
    "/.venv*/": "make demo / make test (.venv), make test-compat (.venv-tf1.15, .venv-tf2.6)",
    "/.cache/": "make triton-interp (.cache/triton-interp)",
    ".pytest_cache/": "pytest",
    ".hypothesis/": "hypothesis, under make test",
}


def test_every_ignored_pattern_is_something_the_project_writes():
    with open(os.path.join(ROOT, ".gitignore")) as f:
        patterns = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    assert len(patterns) == len(set(patterns))
    assert sorted(set(patterns) - set(WRITTEN_BY)) == [], "not written by the project"
    assert sorted(set(WRITTEN_BY) - set(patterns)) == [], "written by the project, not ignored"


def test_what_the_writers_name_is_real():
    with open(os.path.join(ROOT, "tf_ge_custom", "_commands", "build_kernels.py")) as f:
        assert 'DEFAULT_OUT = "tf-ge-custom-kernels"' in f.read()
    with open(os.path.join(ROOT, "Makefile")) as f:
        makefile = f.read()
    assert "TRITON_INTERP ?= .cache/triton-interp" in makefile and "VENV   ?= .venv" in makefile
