"""The op library build step decides whether to build the XLA kernel library from what the
TensorFlow wheel ships (docs/tensorflow-op.md); each refusal is recorded with its reason.
Here with stand-in wheel layouts; the real build is what test_xla.py and the compat run load."""
import os

import pytest

from tf_ge_custom._build import op_library

XLA_HEADER = os.path.join("tensorflow", "compiler", "tf2xla", "xla_op_kernel.h")


def _wheel(tmp_path, header=True, symbols=(), external=()):
    include, lib = tmp_path / "include", tmp_path / "lib"
    for path in ([XLA_HEADER] if header else []):
        (include / path).parent.mkdir(parents=True)
        (include / path).write_text("")
    for name in symbols:
        (lib / name).parent.mkdir(parents=True, exist_ok=True)
        (lib / name).write_bytes(b"")
    for d in external:
        (include / d).mkdir(parents=True)
    return {"version": "9.9.9", "include": str(include), "lib": str(lib)}


def test_a_wheel_with_headers_and_libtensorflow_cc(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_GE_CUSTOM_XLA", raising=False)
    tf = _wheel(tmp_path, symbols=["libtensorflow_cc.so.2", "python/_pywrap_tensorflow_internal.so"],
                external=["external/highwayhash"])
    flags, symbols = op_library._xla_setup(tf, ["x_xla.cc"])
    assert flags == ["-I" + os.path.join(tf["include"], "external", "highwayhash")]
    assert symbols == os.path.join(tf["lib"], "libtensorflow_cc.so.2")  # preferred


def test_a_wheel_whose_python_extension_exports_the_symbols(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_GE_CUSTOM_XLA", raising=False)
    tf = _wheel(tmp_path, symbols=["python/_pywrap_tensorflow_internal.so"])  # TF 2.6's layout
    assert op_library._xla_setup(tf, ["x_xla.cc"]) == (
        [], os.path.join(tf["lib"], "python", "_pywrap_tensorflow_internal.so"))


@pytest.mark.parametrize("case,expected", [
    ("no_headers", "TensorFlow 9.9.9 ships no tf2xla headers"),
    ("no_library", "TensorFlow 9.9.9 ships none of libtensorflow_cc.so.2"),
    ("opted_out", "TF_GE_CUSTOM_XLA=0 was set for the build"),
    ("no_sources", "no _xla.cc sources"),
])
def test_each_reason_for_no_xla_library(case, expected, tmp_path, monkeypatch):
    monkeypatch.delenv("TF_GE_CUSTOM_XLA", raising=False)
    tf = _wheel(tmp_path, header=case != "no_headers",
                symbols=[] if case == "no_library" else ["libtensorflow_cc.so.2"])
    if case == "opted_out":
        monkeypatch.setenv("TF_GE_CUSTOM_XLA", "0")
    flags, reason = op_library._xla_setup(tf, [] if case == "no_sources" else ["x_xla.cc"])
    assert flags is None and reason.startswith(expected)
