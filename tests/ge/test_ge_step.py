"""The setup.py step for the GE side: what it records, that it builds only what ships, and
when it builds the CANN libraries."""
import json
import os
import pathlib

import pytest

import tf_ge_custom
from tf_ge_custom._build import BuildContext, BuildError, ge_step

PACKAGE = pathlib.Path(tf_ge_custom.__file__).parent
SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _fake_toolkit(root, with_headers=True, with_acl=True):
    if with_headers:
        (root / "include" / "graph").mkdir(parents=True)
        (root / "include" / "graph" / "custom_op.h").write_text("// stand-in\n")
    if with_acl:
        (root / "lib64").mkdir(parents=True)
        (root / "lib64" / "libascendcl.so").write_bytes(b"")
    return str(root)


def test_cann_toolkit_detection(tmp_path):
    home, reason = ge_step.cann_toolkit({})
    assert home is None and "ASCEND_HOME_PATH is not set" in reason
    full = _fake_toolkit(tmp_path / "full")
    assert ge_step.cann_toolkit({"ASCEND_HOME_PATH": full}) == (full, None)
    partial = _fake_toolkit(tmp_path / "partial", with_acl=False)
    home, reason = ge_step.cann_toolkit({"ASCEND_HOME_PATH": partial})
    assert home == partial and "libascendcl.so" in reason and "not a CANN toolkit" in reason


def test_installed_build_info_records_the_ge_step():
    info = json.loads((PACKAGE / "build_info.json").read_text())["ge"]
    assert set(info) == {"built", "reason", "ascend_home", "libraries", "headers", "export_tools"}
    for header in info["headers"]:
        assert (PACKAGE / "opp" / header).is_file()
    assert info["headers"] == ["op_graph/include/add_custom.h"]
    if info["built"]:
        assert info["reason"] == ""
        for lib in info["libraries"]:
            assert (PACKAGE / "opp" / lib).is_file()
        for tool in info["export_tools"]:
            assert (PACKAGE / tool).is_file()
    else:
        assert info["libraries"] == [] and info["reason"]
        # Nothing half-built: no GE library where GE would dlopen it.
        assert not list((PACKAGE / "opp").rglob("*.so"))


def test_the_install_ships_no_test_tool():
    # The core's tests and fuzz driver are built by the tests, the manifest tool is gone: an
    # installed package holds nothing executable of ge_ops/ but, with CANN, the two libraries.
    names = {p.name for p in PACKAGE.rglob("*") if p.is_file()}
    assert not names & {"tf_ge_custom_core_tests", "tf_ge_custom_fuzz", "tf_ge_custom_manifest_check"}
    executables = [p for p in PACKAGE.rglob("*") if p.is_file() and os.access(str(p), os.X_OK)
                   and p.suffix not in (".so", ".py")]
    assert executables == []


def test_step_without_cann_needs_no_cmake_and_says_once_why(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)

    def no_cmake():
        raise AssertionError("the GE step ran CMake without a CANN toolkit")
    monkeypatch.setattr(ge_step, "cmake_command", no_cmake)
    ctx = BuildContext(str(SOURCE_ROOT), str(tmp_path / "pkg"), str(tmp_path / "build"), jobs=2)
    messages = []
    ctx.log = messages.append
    ge_step.run(ctx)
    skipped = [m for m in messages if "skipped" in m]
    assert len(skipped) == 1 and "ASCEND_HOME_PATH is not set" in skipped[0]
    info = ctx.build_info["ge"]
    assert info["built"] is False and info["ascend_home"] is None and info["libraries"] == []
    header = tmp_path / "pkg" / "opp" / "op_graph" / "include" / "add_custom.h"
    assert "REG_OP(AddCustom)" in header.read_text()
    assert not (tmp_path / "pkg" / "opp" / "framework").exists()


def test_step_with_a_broken_toolkit_fails_loudly(tmp_path, monkeypatch, native_build):
    # A toolkit that passes detection but cannot compile: the build must stop, not skip.
    # It reuses the tests' core build, so only the CANN sources are compiled (and fail on the
    # stand-in).
    monkeypatch.setenv("ASCEND_HOME_PATH", _fake_toolkit(tmp_path / "cann"))
    ctx = BuildContext(str(SOURCE_ROOT), str(tmp_path / "pkg"), str(native_build.dir.parent), jobs=2)
    messages = []
    ctx.log = messages.append
    try:
        with pytest.raises(BuildError) as info:
            ge_step.run(ctx)
    finally:  # leave the shared build configured as before
        native_build.build()
    assert "command failed" in str(info.value)
    assert any("against CANN at" in m for m in messages)
    assert "ge" not in ctx.build_info
    assert not (tmp_path / "pkg" / "opp" / "op_graph" / "lib").exists()
