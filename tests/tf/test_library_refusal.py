"""An op library that does not fit the running TensorFlow is refused with a message naming
both versions and the rebuild command, never loaded (no segfault); the package still imports."""
import json
import os
import shutil

import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import OpLibraryError, _library

PROBE = r"""
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tf_ge_custom
from tensorflow.python.framework import op_def_registry
result = {"warnings": [str(w.message) for w in caught],
          "registered": op_def_registry.get("AddCustom") is not None,
          "module": tf_ge_custom.__file__}
try:
    tf_ge_custom.add_custom(1.0, 2.0)
    result["error"] = None
except tf_ge_custom.OpLibraryError as e:
    result["error"] = str(e)
print(json.dumps(result))
"""


def test_check_compatible_names_both_versions_and_the_command():
    with pytest.raises(OpLibraryError) as info:
        _library.check_compatible("2.21.0", 1, {"tensorflow": {"version": "2.6.5"}})
    msg = str(info.value)
    assert "2.6.5" in msg and "2.21.0" in msg and "pip install" in msg


def test_check_compatible_refuses_a_different_cxx11_abi():
    with pytest.raises(OpLibraryError, match="_GLIBCXX_USE_CXX11_ABI=0"):
        _library.check_compatible("2.21.0", 1, {"tensorflow": {"version": "2.21.0", "cxx11_abi": 0}})


def test_check_compatible_refuses_a_library_without_build_record():
    with pytest.raises(OpLibraryError, match="no record"):
        _library.check_compatible("2.21.0", 1, {})


def test_check_compatible_accepts_the_matching_build():
    _library.check_compatible(tf.__version__, 1, {"tensorflow": {"version": tf.__version__, "cxx11_abi": 1}})


@pytest.fixture
def package_copy(tmp_path):
    """A copy of the installed package whose files a test may damage."""
    src = os.path.dirname(tf_ge_custom.__file__)
    dst = tmp_path / "site" / "tf_ge_custom"
    shutil.copytree(src, str(dst))
    return dst


def _probe(python_subprocess, package_copy):
    proc = python_subprocess(PROBE, env={"PYTHONPATH": str(package_copy.parent)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["module"].startswith(str(package_copy))
    return result


def test_library_built_for_another_tensorflow_is_refused(package_copy, python_subprocess):
    info_path = package_copy / "build_info.json"
    info = json.loads(info_path.read_text())
    info["tensorflow"]["version"] = "2.6.5"
    info_path.write_text(json.dumps(info))
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"], "the mismatched library must not be loaded at all"
    for msg in (result["error"], result["warnings"][0]):
        assert "2.6.5" in msg and tf.__version__ in msg and "pip install" in msg


def test_missing_library_is_reported_not_crashed(package_copy, python_subprocess):
    os.remove(str(package_copy / "_lib" / "libtf_ge_custom_ops.so"))
    result = _probe(python_subprocess, package_copy)
    assert "missing" in result["error"] and "pip install" in result["error"]


def test_damaged_library_is_reported_not_crashed(package_copy, python_subprocess):
    (package_copy / "_lib" / "libtf_ge_custom_ops.so").write_bytes(b"\x7fELF not really")
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert "could not load" in result["error"]
