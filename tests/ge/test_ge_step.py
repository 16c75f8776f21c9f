"""The setup.py step for the GE side: what it records, that it builds only what ships, and
when it builds the CANN libraries."""
import json
import os
import pathlib

import pytest

import tf_ge_custom
from tf_ge_custom._build import BuildContext, BuildError, first_error, ge_step
from tf_ge_custom import op_def

PACKAGE = pathlib.Path(tf_ge_custom.__file__).parent
SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_cann_toolkit_short_form(fake_toolkit):
    home, reason = ge_step.cann_toolkit({})
    assert home is None and "ASCEND_HOME_PATH is not set" in reason
    full = fake_toolkit("full")
    assert ge_step.cann_toolkit({"ASCEND_HOME_PATH": full}) == (full, None)
    partial = fake_toolkit("partial", version="9.1.0", drop=("lib64/libascendcl.so",))
    home, reason = ge_step.cann_toolkit({"ASCEND_HOME_PATH": partial})
    assert home == partial and "no lib64/libascendcl.so" in reason and "CANN 9.1.0" in reason


def test_installed_build_info_records_the_ge_step():
    info = json.loads((PACKAGE / "build_info.json").read_text())["ge"]
    assert set(info) == {"built", "reason", "ascend_home", "libraries", "headers", "export_tools",
                         "toolkit"}
    for header in info["headers"]:
        assert (PACKAGE / "opp" / header).is_file()
    assert info["headers"] == ["op_graph/include/%s.h" % op.python_name for op in op_def.OPS]
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


def _context(tmp_path, native_build):
    ctx = BuildContext(str(SOURCE_ROOT), str(tmp_path / "pkg"), str(native_build.dir.parent), jobs=2)
    messages = []
    ctx.log = messages.append
    return ctx, messages


def test_step_without_cann_needs_no_cmake_and_says_once_why(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("TF_GE_CUSTOM_REQUIRE_GE", raising=False)

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
    assert info["toolkit"]["decision"] == "skip" and info["toolkit"]["reason"] == info["reason"]
    header = tmp_path / "pkg" / "opp" / "op_graph" / "include" / "add_custom.h"
    assert "REG_OP(AddCustom)" in header.read_text()
    assert not (tmp_path / "pkg" / "opp" / "framework").exists()


def test_step_with_an_old_toolkit_skips_in_one_line(tmp_path, monkeypatch, native_build, fake_toolkit):
    home = fake_toolkit(version="9.1.0", drop=("lib64/libcustom_op_registry_static.a",))
    monkeypatch.setenv("ASCEND_HOME_PATH", home)
    monkeypatch.delenv("TF_GE_CUSTOM_REQUIRE_GE", raising=False)
    ctx, messages = _context(tmp_path, native_build)
    ge_step.run(ctx)
    skipped = [m for m in messages if "skipped" in m]
    assert skipped == ["GE library and TF parser plugin skipped: CANN 9.1.0 at %s cannot host the "
                       "GE library: no lib64/libcustom_op_registry_static.a, the custom-op registry "
                       "an OM loads (since CANN 9.2.0-beta.1); it needs CANN >= 9.2.0-beta.1" % home]
    toolkit = ctx.build_info["ge"]["toolkit"]
    assert (toolkit["version"], toolkit["decision"]) == ("9.1.0", "skip")
    assert [m["feature"] for m in toolkit["missing"]] == ["registry_archive"]


@pytest.mark.parametrize("home", [None, "old"])
def test_require_ge_turns_a_skip_into_a_failure_before_building(tmp_path, monkeypatch, fake_toolkit, home):
    if home is None:
        monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    else:
        monkeypatch.setenv("ASCEND_HOME_PATH", fake_toolkit(version="9.0.1", drop=("lib64/libcustom_op_registry_static.a",)))
    monkeypatch.setenv("TF_GE_CUSTOM_REQUIRE_GE", "1")
    ctx = BuildContext(str(SOURCE_ROOT), str(tmp_path / "pkg"), str(tmp_path / "never-built"), jobs=2)
    with pytest.raises(BuildError) as info:
        ge_step.run(ctx)
    assert str(info.value).startswith("TF_GE_CUSTOM_REQUIRE_GE=1 asks for the GE library, but it cannot be built: ")
    assert ("ASCEND_HOME_PATH is not set" if home is None else "CANN 9.0.1 at ") in str(info.value)
    assert "ge" not in ctx.build_info and not (tmp_path / "never-built").exists()


def test_require_ge_with_a_bad_value_says_what_is_accepted(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_GE_CUSTOM_REQUIRE_GE", "true")
    with pytest.raises(BuildError) as info:
        ge_step.run(BuildContext(str(SOURCE_ROOT), str(tmp_path / "pkg"), str(tmp_path / "t"), jobs=2))
    assert "TF_GE_CUSTOM_REQUIRE_GE must be 0 or 1, found 'true'" in str(info.value)


def test_step_with_a_broken_toolkit_fails_loudly(tmp_path, monkeypatch, native_build, fake_toolkit):
    # A toolkit that passes detection but cannot compile (its headers are stand-ins): the build
    # must stop, not skip, and show the compiler's first error. It reuses the core build, so
    # only the CANN sources are compiled.
    monkeypatch.setenv("ASCEND_HOME_PATH", fake_toolkit())
    monkeypatch.setenv("TF_GE_CUSTOM_REQUIRE_GE", "1")  # a buildable toolkit is not a skip
    ctx, messages = _context(tmp_path, native_build)
    try:
        with pytest.raises(BuildError) as info:
            ge_step.run(ctx)
    finally:  # leave the shared build configured as before
        native_build.build()
    message = str(info.value)
    assert message.startswith("building the GE library against CANN 9.2.0-beta.1 at ")
    first = info.value.first_error
    assert first and "error" in first and message.index(first) < message.index("command failed")
    assert any("against CANN 9.2.0-beta.1 at" in m for m in messages)
    assert "ge" not in ctx.build_info
    assert not (tmp_path / "pkg" / "opp" / "op_graph" / "lib").exists()


def test_first_error_is_the_first_error_line():
    log = ("[ 50%] Building CXX object kernel_op.cc.o\nIn file included from a.h:3,\n"
           "a.h:3:10: fatal error: graph/custom_op.h: No such file\nb.cc:1:1: error: later\n"
           "gmake[2]: *** [x] Error 1\n")
    assert first_error(log) == "a.h:3:10: fatal error: graph/custom_op.h: No such file"
    assert first_error("/usr/bin/ld: cannot find -lgert: No such file or directory\ncollect2: error: ld") == \
        "/usr/bin/ld: cannot find -lgert: No such file or directory"
    assert first_error("-Werror=return-type ok\nall built\n") is None
