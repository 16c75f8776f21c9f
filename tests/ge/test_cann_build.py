"""On a host with a CANN toolkit: the GE libraries were built and load with every symbol
resolved (GE opens them RTLD_NOW, and one failed dlopen fails GE init: docs/ascend-stack.md,
"Where GE loads custom-op libraries").
Elsewhere (CI) these are skipped: they need a CANN toolkit."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom._build import ge_step

PACKAGE = pathlib.Path(tf_ge_custom.__file__).parent
needs_cann = pytest.mark.needs("cann_toolkit", "the GE libraries are built only against one")


def _ge_info():
    return json.loads((PACKAGE / "build_info.json").read_text())["ge"]


@needs_cann
def test_ge_libraries_are_installed_where_ge_looks():
    info = _ge_info()
    assert info["built"], info["reason"]
    assert sorted(info["libraries"]) == sorted([
        ge_step.ge_library_dir() + "/" + ge_step.GE_LIBRARY,
        "framework/tensorflow/" + ge_step.PARSER_LIBRARY])
    for lib in info["libraries"]:
        assert (PACKAGE / "opp" / lib).is_file()


@needs_cann
@pytest.mark.parametrize("which", [ge_step.GE_LIBRARY, ge_step.PARSER_LIBRARY])
def test_ge_library_loads_with_every_symbol_resolved(which):
    lib = next(PACKAGE.joinpath("opp").rglob(which))
    # In a child process: a library whose static registration misbehaves must not take
    # the test run down with it.
    code = "import ctypes, os, sys; ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_GLOBAL)"
    proc = subprocess.run([sys.executable, "-c", code, str(lib)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:]
