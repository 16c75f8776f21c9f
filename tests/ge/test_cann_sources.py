"""The CANN-facing sources compile against the real public GE/ACL headers.

Runs the workplace's ge-syntax-check tool (../shared/tools/ beside the checkout; g++
-fsyntax-only against the public GE, metadef and ACL headers), through the suite's
``ge_syntax_check`` fixture: a machine without the tool skips with "needs the shared syntax
checker", one without its header cache and without the hicann snapshots to make it with
"needs the hicann snapshots". The oracle is the real compiler over the real public headers.
"""
import importlib.util
import pathlib
import subprocess

import pytest

pytestmark = pytest.mark.kind("oracle")

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
CANN_SOURCES = ["ge_ops/cann/acl_runtime.cc", "ge_ops/cann/kernel_op.cc", "ge_ops/cann/ge_report.cc",
                "ge_ops/cann/custom_ops.cc",
                "ge_ops/cann/op_proto.cc", "ge_ops/parser/tf_parser_plugin.cc"]


def test_cann_sources_pass_the_syntax_check(ge_syntax_check, request):
    # the generated headers come from the native build (minutes): only once nothing skips
    gen = request.getfixturevalue("native_build").generated
    proc = ge_syntax_check(
        [SOURCE_ROOT / s for s in CANN_SOURCES],
        ["-I" + str(SOURCE_ROOT / "ge_ops" / "cann"), "-I" + str(SOURCE_ROOT / "ge_ops" / "core" / "include"),
         "-I" + str(gen), "-I" + str(gen / "op_proto"), "-Wextra", "-Wno-unused-parameter", "-Werror=return-type"])
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert " error" not in proc.stdout


def test_kernel_op_compiles_where_the_toolkit_has_no_ge_context_header(ge_syntax_check, request):
    # DeclareLaunchArgs reads the graph's SoC from ge::GetContext() (ge_ops/cann/ge_context_option.h):
    # with graph/ge_context.h where the toolkit has it, else with the one member declared there.
    gen = request.getfixturevalue("native_build").generated
    proc = ge_syntax_check(
        [SOURCE_ROOT / "ge_ops/cann/kernel_op.cc"],
        ["-DTF_GE_CUSTOM_GE_CONTEXT_HEADER=0", "-I" + str(SOURCE_ROOT / "ge_ops" / "cann"),
         "-I" + str(SOURCE_ROOT / "ge_ops" / "core" / "include"), "-I" + str(gen), "-I" + str(gen / "op_proto"),
         "-Wextra", "-Wno-unused-parameter", "-Werror=return-type"])
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert " error" not in proc.stdout


def test_the_cann_sources_compile_for_a_second_op_without_an_edit(ge_syntax_check, two_op_source, tmp_path):
    # docs/adding-an-op.md: a GE custom-op class, its REG_OP and its parser registration per
    # op come from the generated X-macros and include list, not from a hand-written line.
    source, module = two_op_source
    gen = tmp_path / "generated"
    spec = importlib.util.spec_from_file_location(
        "_codegen_two_ops", str(SOURCE_ROOT / "ge_ops" / "codegen" / "generate_op_sources.py"))
    codegen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codegen)
    codegen.generate(str(source / "tf_ge_custom" / "op_def.py"), str(gen))
    assert (gen / "op_proto" / "scaled_mul_custom.h").is_file()
    sources = ["ge_ops/cann/custom_ops.cc", "ge_ops/cann/op_proto.cc",
               "ge_ops/parser/tf_parser_plugin.cc"]
    proc = ge_syntax_check(
        [SOURCE_ROOT / s for s in sources],
        ["-I" + str(SOURCE_ROOT / "ge_ops" / "cann"), "-I" + str(SOURCE_ROOT / "ge_ops" / "core" / "include"),
         "-I" + str(gen), "-I" + str(gen / "op_proto"), "-Werror=return-type"])
    assert proc.returncode == 0, proc.stdout[-6000:]
