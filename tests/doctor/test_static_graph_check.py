"""doctor's "static graphs (sunk / eager)" line: which path a graph with known static shapes
takes on this build (build records and OPP roots made by hand; the kernel manifest is the
shared fixture tests/fixtures/manifests/valid_binaries.json)."""
import pathlib
import sys

from tf_ge_custom import doctor, op_def

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "manifests" / "valid_binaries.json"
# every op of the records, in their order, in words written out here ("A, B and C")
TYPES = [op.type_name for op in op_def.OPS]
EVERY_OP = TYPES[0] if len(TYPES) == 1 else "%s and %s" % (", ".join(TYPES[:-1]), TYPES[-1])


def _context(tmp_path, ge, manifest_text=None):
    root = tmp_path / "opp"
    if manifest_text is not None:
        (root / "kernels" / "Ascend910B1").mkdir(parents=True)
        (root / "kernels" / "Ascend910B1" / "manifest.json").write_text(manifest_text)
    return doctor.Context(root=str(root), build_info={"ge": ge, "kernels": {"python": sys.executable}},
                          environ={"PATH": "/nonexistent"}, shell_custom_opp_path=None)


def test_with_the_ge_library_a_static_graph_is_sunk(tmp_path):
    check = doctor.check_static_graph_path(_context(tmp_path, {"built": True}, FIXTURE.read_text()))
    assert check.status == doctor.OK, check
    assert check.detail.startswith("sunk: GE runs %s as tasks of the model with the "
                                   "launches they declared" % EVERY_OP)
    assert "no copies inserted" in check.detail and "compile_dynamic_mode" in check.detail
    # the fixture's kernels allow 2^30 elements per launch
    assert "a static shape of more than 1073741824 output elements needs several launches and is refused" \
        in check.detail
    assert doctor.check_static_graph_path in doctor.CHECKS


def test_a_kernel_that_cannot_be_declared_warns_naming_it(tmp_path):
    text = FIXTURE.read_text().replace('"mix_mode": "aiv"', '"mix_mode": "mix"', 1).replace(
        '"magic": "ELF_VECTOR_CORE"', '"magic": "ELF_AICORE"', 1)
    check = doctor.check_static_graph_path(_context(tmp_path, {"built": True}, text))
    assert check.status == doctor.WARN, check
    assert "these kernels cannot be declared, so a static graph using them fails to build: Ascend910B1 " \
        "AddCustom flat float32 (mix_mode mix)" in check.detail
    assert "compile_dynamic_mode=True" in check.fix


def test_without_the_ge_library_there_is_no_ge_path(tmp_path):
    check = doctor.check_static_graph_path(_context(tmp_path, {"built": False, "reason": "no CANN toolkit"}))
    assert check.status == doctor.WARN
    assert check.detail == ("no GE path at all (no CANN toolkit): %s run on their CPU kernels in any graph"
                            % op_def.type_names())
    assert op_def.type_names() == EVERY_OP and TYPES[:2] == ["AddCustom", "LeakyReluCustom"]
    check = doctor.check_static_graph_path(_context(tmp_path / "b", None))
    assert "this build has no GE library" in check.detail
