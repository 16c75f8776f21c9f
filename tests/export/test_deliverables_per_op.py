"""The export keeps each kept node's op type (GraphRecord) and checks the OPP root for an
npubin per (op type, dtype) of the graph (toolchain.deliverable_problems), so that a second op
sharing a dtype with AddCustom is not taken as covered by AddCustom's kernels; AddCustom's
records and sentences stay as they were.

Oracles: the fixture OPP root's manifest (AddCustom float32 and int32 kernels, tests/fixtures/
manifests/valid_binaries.json) and the record's JSON read back.
"""
import json

import pytest

from tf_ge_custom.export.cann_tools import toolchain
from tf_ge_custom.export.checking.graph_checks import report
from tf_ge_custom.export.graph_record import GraphRecord, TensorInfo

pytestmark = pytest.mark.kind("plumbing")

NODES = (("add", "float32", ((2, 3), (2, 3))), ("act", "float32", ((2, 3),)))


def _record():
    return GraphRecord([TensorInfo("a", "float32", (2, 3), "a")],
                       [TensorInfo("act:0", "float32", (2, 3), "act:0")], {"AddCustom": 1},
                       add_custom_nodes=NODES,
                       node_ops={"add": "AddCustom", "act": "LeakyReluCustom"})


def test_the_record_keeps_each_nodes_op_type_and_reads_it_back():
    record = _record()
    assert record.kernels() == [("AddCustom", "float32"), ("LeakyReluCustom", "float32")]
    document = json.loads(record.dumps())
    # AddCustom's entries are as before a second op shipped; the other op's names its type
    assert document["add_custom_nodes"] == [
        {"name": "add", "dtype": "float32", "input_shapes": [[2, 3], [2, 3]]},
        {"name": "act", "dtype": "float32", "input_shapes": [[2, 3]], "op": "LeakyReluCustom"}]
    again = GraphRecord.from_json(document)
    assert again.op_of("act") == "LeakyReluCustom" and again.op_of("add") == "AddCustom"
    assert again.kernels() == record.kernels()
    lines = report(record)
    assert "  add                          float32   [2, 3] + [2, 3]" in lines
    assert "  act                          float32   [2, 3]   (LeakyReluCustom)" in lines


def test_an_npubin_of_another_op_with_the_dtype_does_not_count(fake_opp_root):
    problems = toolchain.deliverable_problems(fake_opp_root, "Ascend910B1", _record().kernels())
    assert problems == [
        "no npubin for float32 on Ascend910B1 (the graph's LeakyReluCustom nodes use it): build "
        "it (tf-ge-custom build-kernels --soc Ascend910B1 --dtype float32), then reinstall"]


def test_add_customs_sentences_are_those_it_had(fake_opp_root):
    for kernels in (["float16", "float32", "bfloat16"],
                    [("AddCustom", "float16"), ("AddCustom", "float32"), ("AddCustom", "bfloat16")]):
        assert toolchain.deliverable_problems(fake_opp_root, "Ascend910B1", kernels) == [
            "no npubin for bfloat16, float16 on Ascend910B1 (the graph's AddCustom nodes use it): "
            "build it (tf-ge-custom build-kernels --soc Ascend910B1 --dtype bfloat16,float16), "
            "then reinstall"]
    assert toolchain.deliverable_problems(fake_opp_root, "Ascend910B1", ["float32", "int32"]) == []
