"""The NPU stages driven by TEST DOUBLES of the device steps (tests/selftest/doubles/).

A host double claims the whole Ascend stack and a device double stands in for TF Adapter, GE,
ACL and CANN's tools, so that each stage's judging (references from tf.math.add on the CPU,
the ulp bound, the placement evidence, the mapping count, the manifest checks) and the
runner's handling of PASS, FAIL, SKIP, a crash and a timeout run for real. Nothing here
says anything about the real stack: that is for an Ascend host (docs/selftest.md).

Every test here is about our process handling: what the stages and the runner decided (the
verdict, the words, the stages run and in what order, the figures our judging computed, the
exit status), never the numbers the double made up (its sums are exact, its inodes invented).
"""
import io
import json
import os
import re
import time

import pytest

pytestmark = pytest.mark.kind("doubles")

from tf_ge_custom import op_def
from tf_ge_custom.selftest import stages, suite

DOUBLE = "selftest_device_double"


def run(tmp_path, selftest_paths, host, only, behaviours="", timeouts=None):
    out = io.StringIO()
    report = tmp_path / "report.json"
    status = suite.selftest(json_path=str(report), keep=str(tmp_path / "kept"), only=only, out=out,
                          device_module=DOUBLE, env=selftest_paths["env"](behaviours), host=host,
                          timeouts=timeouts)
    lines = {}
    for line in out.getvalue().splitlines():
        m = re.match(r"^([A-Z0-9_]+)=(PASS|FAIL|SKIP)(?: \((.*)\))?$", line)
        if m:
            lines[m.group(1)] = (m.group(2), m.group(3) or "")
    return status, lines, json.loads(report.read_text()), out.getvalue()


NPU_STAGES = "TF1_SESSION,TF2_DEVICE,NPU_ADD_STATIC,NPU_ADD_DYNAMIC,NPU_OPS_STATIC,NPU_LARGE,NPU_BROADCAST," \
             "GE_LOAD_ONCE,EXPORT_OM,RUN_OM"


@pytest.mark.slow
def test_process_handling_every_npu_stage_judged_pass_when_the_double_adds_right(tmp_path, selftest_paths,
                                                                                full_host):
    status, lines, report, text = run(tmp_path, selftest_paths, full_host(), NPU_STAGES)
    assert status == 0, text
    assert [n for n in lines if n != "SELFTEST"] == NPU_STAGES.split(",")
    assert all(s == "PASS" for s, _ in lines.values()), text
    by_name = {s["name"]: s for s in report["stages"]}
    assert by_name["TF1_SESSION"]["figures"]["adapter"] == "npu_bridge"
    assert by_name["TF2_DEVICE"]["figures"]["adapter"] == "npu_device"
    assert "max |z - (x + y)| = 0" in lines["TF1_SESSION"][1]
    static = by_name["NPU_ADD_STATIC"]["figures"]
    # our judging covered every dtype of the op (the values are the double's: its sums are exact)
    assert sorted(static["max_error_ulp"]) == ["bfloat16", "float16", "float32", "int32"]
    assert static["shapes"] == ["[8, 2048]+[8, 2048]", "[1]+[1]", "[3, 5, 7]+[3, 5, 7]", "[0, 4]+[0, 4]"]
    assert "compile_dynamic_mode" in lines["NPU_ADD_DYNAMIC"][1]
    # every other op of the package, each of its dtypes judged against its TensorFlow equivalent
    ops = by_name["NPU_OPS_STATIC"]["figures"]
    others = [op for op in op_def.OPS if op.type_name != "AddCustom"]  # LeakyReluCustom, any op added
    assert sorted(ops["max_error_ulp"]) == sorted("%s %s" % (op.type_name, d) for op in others for d in op.dtypes)
    assert [k for k in ops["max_error_ulp"] if k.startswith("LeakyReluCustom ")] == [
        "LeakyReluCustom float32", "LeakyReluCustom float16", "LeakyReluCustom bfloat16"]
    assert ops["shapes"] == ["[4099]", "[0, 3]", "[2, 3, 4, 5, 6]", "[8, 2048]"]
    assert lines["NPU_OPS_STATIC"][1].startswith("LeakyReluCustom (3 dtypes x 4 shapes x 8 attribute cases")
    for op in others[1:]:
        assert ", %s (%d dtypes x 4 shapes x " % (op.type_name, len(op.dtypes)) in lines["NPU_OPS_STATIC"][1]
    assert " via npu_bridge: max error " in lines["NPU_OPS_STATIC"][1]
    # the model EXPORT_OM saved holds every op of the records, in the order model_ops() names
    # them: AddCustom's, then LeakyReluCustom's, then any op added to the records
    chain = "".join(" then %s" % op.python_name for op in others)
    assert chain.startswith(" then leaky_relu_custom")
    assert re.search(r"from a SavedModel with add_custom \[4, 8\] \+ \[4, 8\]%s, [0-9.]+ s$" % re.escape(chain),
                     lines["EXPORT_OM"][1]), lines["EXPORT_OM"][1]
    large = by_name["NPU_LARGE"]["figures"]
    # no npubins are packaged here: block 4096 from op_def, 48 programs from Ascend910B1's vector
    # cores; four passes of the whole grid plus 3 elements
    assert (large["block_size"], large["programs"], large["elements"]) == (4096, 48, 4096 * 48 * 4 + 3)
    assert large["blocks"] == 4 * 48 + 1
    # our count of the mappings the double listed, and the runs our stage made (the path and
    # inode are the double's)
    assert re.search(r"^one mapping of \S+/libtf_ge_custom_ge\.so \(inode \d+\) after 2 sessions x 3 runs",
                     lines["GE_LOAD_ONCE"][1]), lines["GE_LOAD_ONCE"][1]
    assert lines["EXPORT_OM"][1].startswith(str(tmp_path / "kept" / "EXPORT_OM" / "model.om"))
    assert "ASCEND_CUSTOM_OPP_PATH cleared" in lines["RUN_OM"][1]
    assert os.path.isdir(tmp_path / "kept" / "EXPORT_OM" / "saved_model")  # a real SavedModel was written


@pytest.mark.slow
def test_process_handling_each_failure_is_named_and_the_run_goes_on(tmp_path, selftest_paths, full_host):
    behaviours = ("TF1_SESSION=host,NPU_ADD_STATIC=wrong,NPU_ADD_DYNAMIC=skip,NPU_OPS_STATIC=wrong,"
                  "NPU_LARGE=crash,NPU_BROADCAST=hang,GE_LOAD_ONCE=two_copies,COMPILE_AT_BUILD=fail,"
                  "EXPORT_OM=fail")
    host = full_host(modules={"npu_bridge": True, "npu_device": False})
    only = "TF1_SESSION,TF2_DEVICE,KERNELS,NPU_ADD_STATIC,NPU_ADD_DYNAMIC,NPU_OPS_STATIC,NPU_LARGE," \
           "NPU_BROADCAST,COMPILE_AT_BUILD,GE_LOAD_ONCE,EXPORT_OM,RUN_OM"
    started = time.time()
    status, lines, report, text = run(tmp_path, selftest_paths, host, only, behaviours, {"NPU_BROADCAST": 30})
    assert status == 1, text
    expected = {
        "TF1_SESSION": ("FAIL", "1 AddCustom node(s) in the partition graphs (double)"),
        "TF2_DEVICE": ("SKIP", "needs npu_device (TF Adapter for TF2; not importable, this host has npu_bridge)"),
        "KERNELS": ("SKIP", "no packaged npubins for Ascend910B1: kernels for it are compiled at graph build"),
        "NPU_ADD_STATIC": ("FAIL", "float32 [8, 2048]+[8, 2048]: result differs from tf.math.add on the CPU by"),
        "NPU_ADD_DYNAMIC": ("SKIP", "the double was told to skip"),
        "NPU_OPS_STATIC": ("FAIL", "LeakyReluCustom float32 [4099] alpha=0.2: result differs from its "
                                   "TensorFlow equivalent on the CPU by 4 ulp"),
        "NPU_LARGE": ("FAIL", "the stage's process died of SIGABRT"),
        "NPU_BROADCAST": ("FAIL", "did not finish within 30 s: killed with its process group"),
        "COMPILE_AT_BUILD": ("FAIL", "build-kernels --soc Ascend910B1 --cache exited with status 1: compiling "
                                     "add_kernel for Ascend910B1 | error: hivmc not found (double)"),
        "GE_LOAD_ONCE": ("FAIL", "libtf_ge_custom_ge.so mapped as [2, 2] after sessions"),
        "EXPORT_OM": ("FAIL", "ExternalToolError: atc (double) failed: E10001 invalid model"),
        "RUN_OM": ("SKIP", "needs EXPORT_OM to PASS first (EXPORT_OM FAIL)"),
    }
    for name, (want, words) in expected.items():
        got, detail = lines[name]
        assert (got, words in detail) == (want, True), (name, detail)
    assert re.search(r"by \d+(\.\d+)? ulp", lines["NPU_ADD_STATIC"][1])
    assert report["counts"] == {"PASS": 0, "FAIL": 8, "SKIP": 4}
    # the hung stage's grandchild went with its process group
    with open(tmp_path / "kept" / "NPU_BROADCAST" / "grandchild.pid") as f:
        grandchild = int(f.read())
    deadline = time.time() + 10
    while time.time() < deadline and _alive(grandchild):
        time.sleep(0.2)
    assert not _alive(grandchild)
    assert time.time() - started < 600
    broadcast = next(s for s in report["stages"] if s["name"] == "NPU_BROADCAST")
    assert broadcast["figures"] == {"timed_out": True} and broadcast["timeout"] == 30


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] != "Z"  # a zombie has ended
    except (IOError, OSError):
        return False


def test_a_cache_compile_missing_dtypes_fails_naming_them(tmp_path, selftest_paths, full_host):
    status, lines, _, text = run(tmp_path, selftest_paths, full_host(), "COMPILE_AT_BUILD",
                                 "COMPILE_AT_BUILD=partial")
    assert status == 1, text
    got, detail = lines["COMPILE_AT_BUILD"]
    assert got == "FAIL" and "manifest.json has no npubin for float16, bfloat16" in detail, detail


def test_without_compile_at_graph_build_a_soc_without_packaged_kernels_fails(tmp_path, selftest_paths,
                                                                            full_host):
    # a host double whose tf-ge-custom lacks build-kernels --cache (an older package)
    status, lines, report, text = run(tmp_path, selftest_paths, full_host(build_kernels_cache=False), "KERNELS")
    assert status == 1, text
    got, detail = lines["KERNELS"]
    assert got == "FAIL" and re.search(r"^no npubins for Ascend910B1 in .*opp/kernels .*build-kernels --soc "
                                       r"Ascend910B1", detail), detail
    assert report["status"] == "FAIL"


def test_a_cache_compile_that_writes_nothing_fails(tmp_path, selftest_paths, full_host):
    status, lines, _, text = run(tmp_path, selftest_paths, full_host(), "COMPILE_AT_BUILD")
    assert status == 1, text
    assert lines["COMPILE_AT_BUILD"][0] == "FAIL"
    assert "exited 0 but wrote no manifest.json" in lines["COMPILE_AT_BUILD"][1]


def test_the_soc_is_asked_of_the_device_when_not_given(tmp_path, selftest_paths):
    from tf_ge_custom.selftest.suite import detect_soc

    assert detect_soc(str(tmp_path), DOUBLE, selftest_paths["env"]()) == ("Ascend910B1", "")
    name, error = detect_soc(str(tmp_path), DOUBLE, selftest_paths["env"]("DETECT_SOC=skip"))
    assert name is None and "the double was told to skip" in error
