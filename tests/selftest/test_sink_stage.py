"""The SINK stage's judging, driven by a TEST DOUBLE of its device step
(tests/selftest/doubles/selftest_device_double.py, ``run_sunk``): the results against
tf.math.add on the CPU, and GE's dumped graph read for copy nodes next to AddCustom. The
double writes dumps in the shape of GE's ONNX text dump (``ge_onnx_<n>_graph_<id>_<stage>.pbtxt``);
nothing here says that GE on a device sinks the graph: that is for an Ascend host."""
import importlib
import io
import json
import re
import sys

import pytest

from tf_ge_custom.selftest import npu_stages, suite


@pytest.fixture
def double(monkeypatch, tmp_path, selftest_paths):
    """The device double imported here, run as the SINK stage (its behaviour comes from the
    working directory's name and TF_GE_CUSTOM_SELFTEST_DOUBLE)."""
    monkeypatch.syspath_prepend(selftest_paths["doubles"])
    workdir = tmp_path / "SINK"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    module = importlib.import_module("selftest_device_double")

    class Context(object):
        device = module
        soc = "Ascend910B1"

    Context.workdir = str(workdir)

    def run(behaviour="pass"):
        monkeypatch.setenv("TF_GE_CUSTOM_SELFTEST_DOUBLE", "SINK=%s" % behaviour)
        return npu_stages.sink(Context())

    yield run
    sys.modules.pop("selftest_device_double", None)


def test_the_sunk_graph_passes_when_the_results_are_right_and_no_copy_is_next_to_addcustom(double):
    outcome = double("pass")
    assert outcome.status == "PASS", outcome.detail
    assert outcome.figures["add_custom_nodes"] == 2 and outcome.figures["max_error_ulp"] == 0
    # the built graph, not the earlier dump that has an Identity in front of each AddCustom
    assert outcome.figures["graph"].endswith("ge_onnx_00000012_graph_1_PreRunAfterBuild.pbtxt")
    assert "no copy node next to them" in outcome.detail


def test_copies_next_to_addcustom_fail_naming_them(double):
    outcome = double("copies")
    assert outcome.status == "FAIL"
    assert "GE inserted Identity copy_in, MemcpyAsync copy_out next to AddCustom" in outcome.detail
    assert outcome.figures["copies"] == [["copy_in", "Identity", "AddCustom_0"],
                                         ["copy_out", "MemcpyAsync", "AddCustom_0"]]


def test_no_dump_is_a_failure_that_says_so(double):
    outcome = double("nodump")
    assert outcome.status == "FAIL" and "GE dumped no graph" in outcome.detail


def test_a_wrong_result_fails_before_the_graph_is_read(double):
    outcome = double("wrong")
    assert outcome.status == "FAIL" and "result differs from tf.math.add on the CPU" in outcome.detail


def test_results_left_on_the_host_fail(double):
    outcome = double("host")
    assert outcome.status == "FAIL" and "AddCustom node(s) in the partition graphs" in outcome.detail


def test_the_dump_reader_takes_node_fields_not_nested_ones():
    text = ('graph {\n  node {\n    input: "a:0"\n    input: "b:1"\n    name: "n"\n    op_type: "AddCustom"\n'
            '    attribute {\n      name: "inner"\n      op_type: "Identity"\n    }\n  }\n'
            '  node {\n    input: "n:0"\n    name: "m"\n    op_type: "MemcpyAddrAsync"\n  }\n}\n')
    nodes = npu_stages.dumped_nodes(text)
    assert nodes == [("n", "AddCustom", ["a", "b"]), ("m", "MemcpyAddrAsync", ["n"])]
    assert npu_stages.copies_around(nodes) == [("m", "MemcpyAddrAsync", "n")]
    assert npu_stages.build_graph_file([]) is None


@pytest.mark.slow
def test_the_stage_runs_through_the_selftest_runner(tmp_path, selftest_paths, full_host):
    out = io.StringIO()
    report = tmp_path / "report.json"
    status = suite.selftest(json_path=str(report), keep=str(tmp_path / "kept"), only="SINK", out=out,
                          device_module="selftest_device_double", env=selftest_paths["env"](""), host=full_host())
    text = out.getvalue()
    assert status == 0, text
    assert re.search(r"^SINK=PASS \(float32 \[8, 2048\]\+\[8, 2048\], \[8, 2048\]\+\[2048\] in one static graph",
                     text, re.M), text
    (stage,) = [s for s in json.loads(report.read_text())["stages"] if s["name"] == "SINK"]
    assert stage["figures"]["add_custom_nodes"] == 2
    # without npu_bridge it skips naming it (this host double has npu_device only)
    out = io.StringIO()
    suite.selftest(json_path=None, keep=None, only="SINK", out=out, device_module="selftest_device_double",
                 env=selftest_paths["env"](""), host=full_host(modules={"npu_bridge": False, "npu_device": True}))
    assert re.search(r"^SINK=SKIP \(needs npu_bridge", out.getvalue(), re.M), out.getvalue()
