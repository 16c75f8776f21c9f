"""npu_supported_ops.json: generated from the op definition, shipped, installed, all equal.

The oracle is TF Adapter's rule (docs/ascend-stack.md, "How TF Adapter picks ops";
tf_adapter/util/npu_ops_identifier.cc): an op is
NPU-supported when its type is a key whose value is a JSON object; isGray and isHeavy must
be false for AddCustom.
"""
import json
import os
from pathlib import Path

import pytest

import tf_ge_custom
from tf_ge_custom import _library, op_def, opp

REPO = Path(__file__).resolve().parents[2]
# TF Adapter's entry for each of the package's two first ops (both hints false)
ENTRIES = {"AddCustom": {"isGray": False, "isHeavy": False},
           "LeakyReluCustom": {"isGray": False, "isHeavy": False}}
# the entry of every op op_def.OPS ships, in its order, from its record's hints (any op added
# to the records included); each record keeps both false (test below)
EXPECTED = {op.type_name: {"isGray": op.is_gray, "isHeavy": op.is_heavy} for op in op_def.OPS}


def test_every_record_keeps_both_placement_hints_false():
    assert {name: EXPECTED[name] for name in ENTRIES} == ENTRIES
    assert all(entry == {"isGray": False, "isHeavy": False} for entry in EXPECTED.values()), EXPECTED


def test_generated_document_is_the_one_tf_adapter_needs():
    assert opp.supported_ops_document() == EXPECTED
    assert all(isinstance(value, dict) for value in opp.supported_ops_document().values())


def test_the_second_ops_record_gives_its_own_entry_after_add_customs():
    text = opp.supported_ops_json((op_def.ADD_CUSTOM, op_def.LEAKY_RELU_CUSTOM))
    assert list(json.loads(text)) == ["AddCustom", "LeakyReluCustom"]
    assert json.loads(text) == ENTRIES


def test_shipped_copy_has_not_drifted_from_the_op_definition():
    shipped = REPO / "framework" / "tensorflow" / "npu_supported_ops.json"
    text = shipped.read_text()
    assert json.loads(text) == EXPECTED
    assert text == opp.supported_ops_json(), (
        "framework/tensorflow/npu_supported_ops.json drifted; regenerate it with "
        "python -m tf_ge_custom.opp framework/tensorflow/npu_supported_ops.json")


def test_installed_copy_lists_the_ops_only_where_the_ge_library_was_built():
    # Without the GE library, TF Adapter must not hand AddCustom to GE (which could not run
    # it): the installed JSON is then {} and AddCustom runs on its CPU kernel.
    installed = Path(tf_ge_custom.opp_root()) / "framework" / "tensorflow" / "npu_supported_ops.json"
    built = _library.build_info()["ge"]["built"]
    assert json.loads(installed.read_text()) == (EXPECTED if built else {})
    assert installed.read_text() == opp.supported_ops_json(op_def.OPS if built else ())


def test_which_ops_a_build_lists_follows_its_ge_record():
    assert opp.npu_ops({"ge": {"built": True}}) == (op_def.OPS, None)
    assert opp.npu_ops({"ge": {"built": False, "reason": "no CANN"}}) == (
        (), "the GE library was not built: no CANN")
    assert opp.npu_ops({"ge": {"built": "yes"}})[0] == ()  # only a real true counts
    assert opp.npu_ops({}) == ((), "this build has no GE step record")


def _definition(type_name, gray=False, heavy=False):
    return op_def.ADD_CUSTOM._replace(type_name=type_name, is_gray=gray, is_heavy=heavy)


def test_every_definition_becomes_one_entry_in_definition_order():
    ops = (_definition("ZetaOp", gray=True), _definition("AlphaOp", heavy=True))
    text = opp.supported_ops_json(ops)
    assert list(json.loads(text)) == ["ZetaOp", "AlphaOp"]
    assert json.loads(text) == {"ZetaOp": {"isGray": True, "isHeavy": False},
                                "AlphaOp": {"isGray": False, "isHeavy": True}}
    assert text.endswith("}\n")


def test_a_type_defined_twice_is_refused():
    with pytest.raises(ValueError, match="AddCustom"):
        opp.supported_ops_document((op_def.ADD_CUSTOM, op_def.ADD_CUSTOM))


def test_write_replaces_the_file_whole_or_not_at_all(tmp_path, monkeypatch):
    target = tmp_path / "framework" / "tensorflow" / "npu_supported_ops.json"
    opp.write_supported_ops(str(target))
    assert json.loads(target.read_text()) == EXPECTED
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)

    target.write_text("previous content")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        opp.write_supported_ops(str(target))
    assert target.read_text() == "previous content"
    assert os.listdir(target.parent) == ["npu_supported_ops.json"]  # no temp file left


def test_module_command_writes_the_file(tmp_path):
    target = tmp_path / "out.json"
    assert opp.main([str(target)]) == 0
    assert target.read_text() == opp.supported_ops_json()
    assert opp.main([]) == 2
