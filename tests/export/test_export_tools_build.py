"""The C++ tools of the offline route (ge_ops/export/): compile-checked against the real
public GE/ACL headers (the suite's ``ge_syntax_check`` fixture: the real compiler is the
oracle), and recorded by the build (installed only with a CANN toolkit)."""
import json
import os
import pathlib
import subprocess

import pytest

import tf_ge_custom

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(tf_ge_custom.__file__).parent
SOURCES = ["ge_ops/export/air_tool.cc", "ge_ops/export/om_runner.cc"]


@pytest.mark.kind("oracle")
def test_export_tool_sources_pass_the_syntax_check(ge_syntax_check):
    proc = ge_syntax_check([SOURCE_ROOT / s for s in SOURCES], ["-Wextra", "-Werror"])
    assert proc.returncode == 0, proc.stdout[-6000:]


@pytest.mark.kind("plumbing")
def test_build_records_the_export_tools():
    info = json.loads((PACKAGE / "build_info.json").read_text())["ge"]
    tools = info["export_tools"]
    if info["built"]:
        assert tools == ["_lib/tf_ge_custom_air_tool", "_lib/tf_ge_custom_om_runner"]
        for tool in tools:
            assert os.access(str(PACKAGE / tool), os.X_OK)
    else:  # no CANN at build time: nothing installed, and the export says how to get them
        assert tools == []
        assert not (PACKAGE / "_lib" / "tf_ge_custom_air_tool").exists()
        assert not (PACKAGE / "_lib" / "tf_ge_custom_om_runner").exists()


@pytest.mark.kind("oracle")
@pytest.mark.needs("cann_toolkit", "the export tools are built and linked only against one")
def test_export_tools_start_with_every_library_resolved():
    for tool in ("tf_ge_custom_air_tool", "tf_ge_custom_om_runner"):
        proc = subprocess.run([str(PACKAGE / "_lib" / tool)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        assert proc.returncode == 2 and "usage:" in proc.stdout, proc.stdout  # ran: printed its usage
