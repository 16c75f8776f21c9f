"""An op library that does not fit the running TensorFlow is refused with a message naming
both versions and the rebuild command, never loaded (no segfault); the package still imports."""
import ctypes.util
import hashlib
import json
import os
import shutil
import subprocess
import sys

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


def test_check_compatible_accepts_the_installed_build_in_its_tensorflow_only():
    # The installed package's own record, against the running TensorFlow's version and C++
    # ABI as TensorFlow reports them (tf.sysconfig): accepted, and the same record refused
    # by a TensorFlow one release away and by the other ABI.
    info = _library.build_info()
    abi = int(tf.sysconfig.CXX11_ABI_FLAG)
    assert info["tensorflow"]["version"] == tf.__version__
    assert _library.check_compatible(tf.__version__, abi, info) is None
    with pytest.raises(OpLibraryError, match="built for TensorFlow %s" % tf.__version__):
        _library.check_compatible(tf.__version__ + "1", abi, info)
    if info["tensorflow"].get("cxx11_abi") is not None:
        with pytest.raises(OpLibraryError, match="_GLIBCXX_USE_CXX11_ABI=%d" % abi):
            _library.check_compatible(tf.__version__, 1 - abi, info)


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


def test_damaged_library_is_refused_before_it_is_loaded(package_copy, python_subprocess):
    library = package_copy / "_lib" / "libtf_ge_custom_ops.so"
    library.write_bytes(b"\x7fELF not really")
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert str(library) in result["error"] and "15 bytes" in result["error"]
    assert "pip install" in result["error"]


def _record_library(package_copy):
    """Make the build record describe whatever the library file now is."""
    library = package_copy / "_lib" / "libtf_ge_custom_ops.so"
    info_path = package_copy / "build_info.json"
    info = json.loads(info_path.read_text())
    data = library.read_bytes()
    info["tensorflow"].update(library_size=len(data),
                              library_sha256=hashlib.sha256(data).hexdigest())
    info_path.write_text(json.dumps(info))


def test_an_unloadable_library_the_record_vouches_for_is_reported_not_crashed(
        package_copy, python_subprocess):
    (package_copy / "_lib" / "libtf_ge_custom_ops.so").write_bytes(b"\x7fELF not really")
    _record_library(package_copy)
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert "could not load" in result["error"]


# --- a hostile trial: damage no entry point may crash on -------------------------

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


def _run_copy(package_copy, args, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.update(PYTHONPATH=str(package_copy.parent), TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=str(tmp_path), timeout=300)


@pytest.mark.slow
def test_a_truncated_library_crashes_no_entry_point(package_copy, python_subprocess, tmp_path):
    # A copy truncated to one page: mapped, it kills the process with SIGBUS on first touch.
    library = package_copy / "_lib" / "libtf_ge_custom_ops.so"
    os.truncate(str(library), 4096)
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert str(library) in result["error"] and "4096 bytes" in result["error"]
    for args, status in ((["--help"], 0), (["--version"], 0), (["list-kernels"], 0),
                         (["doctor"], 1), (["doctor", "--json"], 1)):
        proc = _run_copy(package_copy, [SCRIPT] + args, tmp_path)
        assert proc.returncode == status, (args, proc.returncode, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
    report = json.loads(proc.stdout)
    (op_check,) = [c for c in report["checks"] if c["name"] == "op library"]
    assert op_check["status"] == "FAIL" and "4096 bytes" in op_check["detail"]
    assert report["opp_root"].startswith(str(package_copy))


@pytest.mark.slow
def test_doctor_survives_a_library_that_kills_the_loader(package_copy, tmp_path):
    # Damage the checks cannot see (the record vouches for the truncated file): doctor's
    # child process dies of the signal; doctor itself reports it as a FAIL line.
    os.truncate(str(package_copy / "_lib" / "libtf_ge_custom_ops.so"), 4096)
    _record_library(package_copy)
    proc = _run_copy(package_copy, [SCRIPT, "doctor", "--json"], tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    (op_check,) = [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "op library"]
    assert op_check["status"] == "FAIL"
    assert "killed a child process with SIG" in op_check["detail"]


def _foreign_library():
    path = ctypes.util.find_library("m")  # libm: a real shared library, not ours
    assert path, "no libm on this host"
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                   "/usr/lib64", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"):
        if os.path.isfile(os.path.join(folder, path)):
            return os.path.join(folder, path)
    return path


def test_a_foreign_library_is_refused_by_its_checksum(package_copy, python_subprocess):
    shutil.copyfile(_foreign_library(), str(package_copy / "_lib" / "libtf_ge_custom_ops.so"))
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert ("does not match the build record" in result["error"]
            or "bytes, but the build recorded" in result["error"])


def test_a_foreign_library_the_record_vouches_for_is_a_clear_error(package_copy,
                                                                   python_subprocess):
    shutil.copyfile(_foreign_library(), str(package_copy / "_lib" / "libtf_ge_custom_ops.so"))
    _record_library(package_copy)
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert "is not the tf_ge_custom op library" in result["error"]
    assert "add_custom" in result["error"] and "pip install" in result["error"]


def test_a_record_without_size_and_checksum_is_refused(package_copy, python_subprocess):
    info_path = package_copy / "build_info.json"
    info = json.loads(info_path.read_text())
    del info["tensorflow"]["library_sha256"]
    info_path.write_text(json.dumps(info))
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"] and "no size and SHA-256" in result["error"]


# Every shape of a damaged build record, and every kind of non-file in its place: the
# reader's verdict is an OpLibraryError naming the file and what was expected.
def _huge(path):
    path.write_bytes(b"")
    os.truncate(str(path), 2 << 20)  # sparse: 2 MiB without writing them


BAD_RECORDS = [
    ("[1]", "top level"),
    ('{"tensorflow": "2.21.0"}', "'tensorflow' must be an object"),
    ('{"tensorflow": {"version": "2.21.0", "cxx11_abi": "x"}}', "cxx11_abi must be"),
    ('{"tensorflow": {"version": "2.21.0", "cxx11_abi": 7}}', "cxx11_abi must be 0, 1"),
    ('{"tensorflow": {"version": 2.21}}', "version must be a string"),
    ('{"tensorflow": {"version": ""}}', "version is empty"),
    ('{"tensorflow": {"version": "2.21.0", "library_size": -1}}', "negative"),
    ('{"tensorflow": {"version": "2.21.0", "library_sha256": "ABC"}}', "64 lowercase hex"),
    ('{"ge": {"libraries": ["../../etc/x.so"]}}', "relative paths"),
    ('{"ge": {"built": "yes"}}', "built must be a boolean"),
    ('{"kernels": {"socs": {"Ascend910B1": "float32"}}}', "socs must be"),
    ('{"opp": []}', "'opp' must be an object"),
    ('{"tensorflow": {"version": NaN}}', "NaN"),
    ("[" * 100000 + "]" * 100000, "deeper than"),
    ('{"tensorflow": ', "not valid JSON"),
    ("", "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    ("fifo", "FIFO"),
    ("symlink loop", "symlink loop"),
    ("dangling symlink", "dangling symlink"),
    ("directory", "a directory"),
    (_huge, "more than"),
]


@pytest.mark.parametrize("content, words", BAD_RECORDS)
def test_every_damaged_build_record_is_a_named_error(tmp_path, odd_files, content, words):
    path = tmp_path / "build_info.json"
    if callable(content):
        content(path)
    elif content in odd_files.KINDS:
        odd_files.make(content, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(OpLibraryError) as info:
        _library.build_info(str(path))
    message = str(info.value)
    assert str(path) in message and words in message and "pip install" in message


def test_a_missing_record_is_no_record():
    assert _library.build_info("/nonexistent/build_info.json") == {}


@pytest.mark.slow
@pytest.mark.parametrize("content", ["[1]", '{"tensorflow": "2.21.0"}',
                                     '{"tensorflow": {"version": "%s", "cxx11_abi": "x"}}'])
def test_a_damaged_record_is_refused_at_import_and_a_fail_line_in_doctor(
        package_copy, python_subprocess, tmp_path, content):
    import tensorflow as tf

    info_path = package_copy / "build_info.json"
    info_path.write_text(content.replace("%s", tf.__version__))
    result = _probe(python_subprocess, package_copy)
    assert not result["registered"]
    assert str(info_path) in result["error"] and "pip install" in result["error"]
    proc = _run_copy(package_copy, [SCRIPT, "doctor", "--json"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["op library"]["status"] == "FAIL"
    assert str(info_path) in checks["op library"]["detail"]
    assert "please report this as a bug" not in proc.stdout
