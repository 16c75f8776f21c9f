"""A second op is a second definition record (docs/adding-an-op.md): the generators and the
build steps' pure parts, run over an op definition that also holds the synthetic
``ScaledMulCustom`` (tests/conftest.py, ``two_op_source``), produce what that op needs
without any other edit.

Oracles: the op records themselves (names, ports, dtypes, kernel facts) read back from what
each generator wrote, TF Adapter's JSON rule, and doctor's verdicts. No TensorFlow library or
GE library is compiled here (test_cann_sources.py compile-checks the GE sources for two ops).
"""
import copy
import hashlib
import json
import os
import re
import shutil

import pytest

from tf_ge_custom import doctor, kernel_manifest, op_def
from tf_ge_custom._build import BuildContext, ge_step, kernels_step, opp_step, tf_codegen
from tf_ge_custom.errors import KernelBuildError
from tf_ge_custom.kernels import builder

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "manifests")


@pytest.fixture
def two(two_op_source, monkeypatch):
    """(source root, AddCustom, ScaledMulCustom) with tf_ge_custom.op_def.OPS holding both."""
    source, module = two_op_source
    monkeypatch.setattr(op_def, "OPS", module.OPS)
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("TF_GE_CUSTOM_REQUIRE_GE", raising=False)
    add, scaled = module.OPS
    assert (add.type_name, scaled.type_name) == ("AddCustom", "ScaledMulCustom")
    return source, add, scaled


def _build_context(tmp_path, source):
    return BuildContext(str(source), str(tmp_path / "pkg" / "tf_ge_custom"), str(tmp_path / "t"))


def test_the_tensorflow_registrations_cover_both_ops(two, tmp_path):
    _, add, scaled = two
    text = open(tf_codegen.write(str(tmp_path))).read()
    for op, attr, cpp in ((add, "T", ["float", "Eigen::half", "::tensorflow::bfloat16",
                                      "::tensorflow::int32"]),
                          (scaled, "U", ["Eigen::half", "::tensorflow::int32"])):
        block = text.split("#define TF_GE_CUSTOM_REGISTER_OP_%s \\\n" % op.type_name)[1]
        block = block.split("\n#define")[0]
        assert re.findall(r'\.Input\("(\w+): (\w+)"\)', block) == [(n, attr) for n in op.inputs]
        assert re.findall(r'\.Output\("(\w+): (\w+)"\)', block) == [(n, attr) for n in op.outputs]
        kernels = text.split("#define TF_GE_CUSTOM_REGISTER_CPU_KERNELS_%s(KERNEL)" % op.type_name)[1]
        kernels = kernels.split("\n#define")[0]
        assert re.findall(r"TypeConstraint<([^>]+)>", kernels) == cpp
    assert '.Attr("U: {half, int32}")' in text


def test_the_ge_step_writes_and_installs_a_reg_op_header_per_op(two, tmp_path):
    source, add, scaled = two
    ctx = _build_context(tmp_path, source)
    ge_step.run(ctx)  # no CANN here: the generated headers only, as on any host
    headers = ctx.build_info["ge"]["headers"]
    assert headers == ["op_graph/include/add_custom.h", "op_graph/include/scaled_mul_custom.h"]
    text = open(os.path.join(ctx.opp_root, headers[1])).read()
    assert "REG_OP(ScaledMulCustom)" in text and ".OP_END_FACTORY_REG(ScaledMulCustom);" in text
    ports = re.findall(r"\.(INPUT|OUTPUT)\((\w+), TensorType\(\{([^}]*)\}\)\)", text)
    assert ports == [("INPUT", n, "DT_FLOAT16, DT_INT32") for n in scaled.inputs] + [
        ("OUTPUT", "out", "DT_FLOAT16, DT_INT32")]
    generated = os.path.join(ctx.build_temp, "ge", "generated")
    inc = open(os.path.join(generated, "ge_ops.inc")).read()
    assert "#define TF_GE_CUSTOM_FOR_EACH_OP(X) X(AddCustom) X(ScaledMulCustom)\n" in inc
    protos = open(os.path.join(generated, "op_protos.inc")).read()
    assert re.findall(r'#include "(\w+\.h)"', protos) == ["add_custom.h", "scaled_mul_custom.h"]
    table = open(os.path.join(generated, "op_definitions.inc")).read()
    row = table.split('{"ScaledMulCustom"')[1].split("\n{")[0]
    assert row.startswith(', {"a", "b", "scale"}, {"out"}')
    (variant,) = scaled.kernel.variants
    assert '{"flat", Pattern::kEqual, {2048}' in row
    # its kernels' entry names are its own, apart from AddCustom's
    assert '{"tf_ge_custom_scaled_mul_custom_flat_float16", "tf_ge_custom_scaled_mul_custom_flat_int32"}' in row
    assert "{SlotRole::kInput, 2, -1}, {SlotRole::kOutput, 0, -1}" in row
    assert '"%s"' % scaled.binary_name("flat", "int32") in row
    assert "scaled_mul_custom_flat_int32.npubin" == scaled.binary_name("flat", "int32")


@pytest.mark.parametrize("built", [True, False])
def test_the_json_lists_both_ops_where_the_ge_library_was_built(two, tmp_path, built):
    source, _, _ = two
    ctx = _build_context(tmp_path, source)
    ctx.build_info["ge"] = {"built": built, "reason": "" if built else "no CANN toolkit",
                            "libraries": [], "headers": []}
    opp_step.run(ctx)
    with open(os.path.join(ctx.opp_root, "framework/tensorflow/npu_supported_ops.json")) as f:
        listed = json.load(f)
    expected = {"AddCustom": {"isGray": False, "isHeavy": False},
                "ScaledMulCustom": {"isGray": False, "isHeavy": False}}
    assert listed == (expected if built else {})
    assert ctx.build_info["opp"]["npu_ops"] == (list(expected) if built else [])


def _two_op_manifest(out):
    """valid_binaries (AddCustom float32 and int32) plus a ScaledMulCustom int32 kernel laid
    out for its three inputs, as build-kernels would write them into ``out``/Ascend910B1."""
    soc = out / "Ascend910B1"
    shutil.copytree(os.path.join(FIXTURES, "valid_binaries"), str(soc))
    with open(os.path.join(FIXTURES, "valid_binaries.json")) as f:
        doc = json.load(f)
    k = copy.deepcopy(next(k for k in doc["kernels"]
                           if (k["variant"], k["dtype"]) == ("flat", "int32")))
    slots = k["args"]["slots"]
    last_input = max(i for i, s in enumerate(slots) if s["role"] == "input")
    slots.insert(last_input + 1, {"name": "scale_ptr", "role": "input", "index": 2,
                                  "offset": 0, "size": 8})
    offset = 0
    for s in slots:  # size-aligned, one after the other (docs/kernel-manifest.md)
        offset = (offset + s["size"] - 1) // s["size"] * s["size"]
        s["offset"] = offset
        offset += s["size"]
    binary = b"\x7fELF filler for ScaledMulCustom int32, not a kernel\n"
    (soc / "scaled_mul_custom_flat_int32.npubin").write_bytes(binary)
    k["args"]["size"] = (offset + 7) // 8 * 8
    k.update(op="ScaledMulCustom", entry="tf_ge_custom_scaled_mul_custom_flat_int32", block=[2048],
             binary="scaled_mul_custom_flat_int32.npubin", binary_size=len(binary),
             sha256=hashlib.sha256(binary).hexdigest())
    doc["kernels"].append(k)
    (soc / "manifest.json").write_text(json.dumps(doc, indent=2))
    return soc


def test_the_kernels_step_and_doctor_take_both_ops_kernels(two, tmp_path, monkeypatch):
    source, _, _ = two
    built = tmp_path / "built"
    _two_op_manifest(built)
    monkeypatch.setenv(kernels_step.ENV, str(built))
    ctx = _build_context(tmp_path, source)
    kernels_step.run(ctx)
    dest = os.path.join(ctx.opp_root, "kernels", "Ascend910B1")
    assert "scaled_mul_custom_flat_int32.npubin" in os.listdir(dest)
    m = kernel_manifest.load_manifest(os.path.join(dest, "manifest.json"), check_files=True)
    assert [(k.op, k.variant, k.dtype) for k in m.kernels] == [
        ("AddCustom", "flat", "float32"), ("AddCustom", "flat", "int32"),
        ("AddCustom", "row_16x256", "float32"), ("ScaledMulCustom", "flat", "int32")]
    ctx_doctor = doctor.Context(root=ctx.opp_root, build_info=ctx.build_info, environ={},
                                shell_custom_opp_path=None, find_spec=lambda name: None,
                                which=lambda name, path=None: None, install_dirs=())
    check = doctor.check_kernels(ctx_doctor)
    assert check.status == doctor.WARN  # not every (op, dtype) has an npubin
    assert check.data["socs"]["Ascend910B1"]["missing"] == [
        "AddCustom float16", "AddCustom bfloat16", "ScaledMulCustom float16"]
    assert "ScaledMulCustom int32" in check.data["socs"]["Ascend910B1"]["dtypes"]


def test_the_kernel_builder_plans_and_names_the_second_ops_files(two, tmp_path):
    _, add, scaled = two
    assert builder.parse_dtypes("all") == ["float32", "float16", "bfloat16", "int32"]
    assert builder.parse_dtypes("int32,float16") == ["float16", "int32"]
    assert builder.parse_dtypes("float16", scaled) == ["float16"]
    with pytest.raises(ValueError, match="ScaledMulCustom has no dtype 'float32'"):
        builder.parse_dtypes("float32", scaled)
    assert builder.written_by_build("scaled_mul_custom_flat_float16.npubin")
    assert builder.written_by_build("ir/scaled_mul_custom_flat_int32.hivm.mlir")
    assert not builder.written_by_build("scaled_mul_custom_flat_float32.npubin")  # not its dtype
    assert not builder.written_by_build("scaled_mul_custom_row_16x256_int32.npubin")  # no such variant
    soc = tmp_path / "out" / "Ascend910B1"
    (soc / "ir").mkdir(parents=True)
    for name in ("manifest.json", "scaled_mul_custom_flat_int32.npubin",
                 "add_custom_flat_int32.npubin", "notes.txt"):
        (soc / name).write_text("x")
    assert builder.foreign_files(str(soc)) == ["notes.txt"]
    assert builder.foreign_files(str(soc), add) == ["notes.txt",
                                                    "scaled_mul_custom_flat_int32.npubin"]
    # build_kernels takes the second op too: its source must define its entry
    out = tmp_path / "new"
    with pytest.raises(KernelBuildError, match="defines no 'scaled_mul_kernel'"):
        builder.build_kernels(["Ascend910B1"], "all", str(out), ir_only=True)
    assert not out.exists() or os.listdir(str(out)) == []


def test_an_op_whose_kernel_source_is_missing_is_refused_before_any_work(two, tmp_path):
    # each op's kernels come from its own file (KernelSpec.source); a missing one is named
    _, add, scaled = two
    other = scaled._replace(kernel=scaled.kernel._replace(source="scaled_mul_kernel.py"))
    with pytest.raises(ValueError, match="cannot read the kernel source .*scaled_mul_kernel.py "
                                         "of ScaledMulCustom"):
        builder.build_kernels(["Ascend910B1"], "all", str(tmp_path / "out"), ops=(add, other))
    assert not (tmp_path / "out").exists()


def test_doctor_checks_every_op(two, tmp_path):
    source, add, scaled = two
    ctx = _build_context(tmp_path, source)
    ctx.build_info["ge"] = {"built": True, "reason": "", "libraries": [], "headers": []}
    opp_step.run(ctx)
    registered = {"inputs": list(add.inputs), "outputs": list(add.outputs),
                  "dtypes": list(add.dtypes)}
    probe = {"tensorflow": "2.x", "ops": {"AddCustom": registered}}

    def context(**kw):
        return doctor.Context(root=ctx.opp_root, build_info=ctx.build_info, environ=kw.pop(
            "environ", {}), shell_custom_opp_path=None, find_spec=lambda name: None,
            which=lambda name, path=None: None, install_dirs=(),
            tensorflow_probe=lambda: probe, **kw)

    check = doctor.check_op_library(context())
    assert check.status == doctor.FAIL and check.detail == "ScaledMulCustom is not registered"
    probe["ops"]["ScaledMulCustom"] = {"inputs": ["a", "b", "scale"], "outputs": ["out"],
                                       "dtypes": ["int32", "float16"]}
    assert doctor.check_op_library(context()).status == doctor.OK
    placement = doctor.check_npu_placement(context())
    assert placement.data["npu_ops"] == ["AddCustom", "ScaledMulCustom"]
    tf2 = doctor.check_tf2_finds_json(context(environ={"ASCEND_CUSTOM_OPP_PATH": ctx.opp_root}))
    assert tf2.status == doctor.OK and set(tf2.data["ops"]) == {"AddCustom", "ScaledMulCustom"}
    assert "would place ScaledMulCustom on the NPU" in tf2.detail
    assert doctor.check_opp_root(context()).status == doctor.OK
