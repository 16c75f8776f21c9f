"""The selftest's verdicts, against hand-computed cases: the ulp bound, the GE library mapping
count in /proc/<pid>/maps, the placement evidence of a TF1 run, NPU_LARGE's size, the SKIP words."""
import numpy as np
import pytest
import tensorflow as tf

from tf_ge_custom.selftest import device, npu_stages
from tf_ge_custom.selftest.host import Host

ONE_ULP_AT_1 = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


@pytest.mark.parametrize("dtype", sorted(ONE_ULP_AT_1))
def test_one_ulp_passes_and_two_fail(dtype):
    t = tf.as_dtype(dtype).as_numpy_dtype
    want = np.array([1.0, -4.0, 0.0], np.float32).astype(t)
    for k, expected in ((0, 0.0), (1, 1.0), (2, 2.0)):
        got = np.array([1.0 + k * ONE_ULP_AT_1[dtype], -4.0, 0.0], np.float32).astype(t)
        assert npu_stages.ulps(got, want, dtype) == expected
    run = device.DeviceRun([np.array([1.0 + ONE_ULP_AT_1[dtype]], np.float32).astype(t)], True, "", "x")
    assert npu_stages.judge(run, [np.array([1.0], np.float32).astype(t)], dtype, ["[1]+[1]"]) == ("", 1.0)
    run = device.DeviceRun([np.array([1.0 + 2 * ONE_ULP_AT_1[dtype]], np.float32).astype(t)], True, "", "x")
    problem, err = npu_stages.judge(run, [np.array([1.0], np.float32).astype(t)], dtype, ["[1]+[1]"])
    assert err == 2.0 and problem == "%s [1]+[1]: result differs from tf.math.add on the CPU by 2 ulp" % dtype


def test_int32_must_be_exact_and_shapes_and_dtypes_must_match():
    want = np.array([[5, -7]], np.int32)
    assert npu_stages.ulps(want.copy(), want, "int32") == 0.0
    run = device.DeviceRun([np.array([[5, -6]], np.int32)], True, "", "x")
    assert npu_stages.judge(run, [want], "int32", ["s"])[0] == \
        "int32 s: result differs from tf.math.add on the CPU by 1 (int32 must be exact)"
    with pytest.raises(ValueError, match=r"shape \[2, 1\], expected \[1, 2\]"):
        npu_stages.ulps(want.reshape(2, 1), want, "int32")
    with pytest.raises(ValueError, match="dtype float32, expected int32"):
        npu_stages.ulps(want.astype(np.float32), want, "int32")
    assert npu_stages.ulps(np.array([np.nan, 1.0], np.float32), np.array([1.0, 1.0], np.float32), "float32") \
        == float("inf")
    assert npu_stages.ulps(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), "float32") == 0.0


def test_a_run_with_fewer_results_than_inputs_fails():
    run = device.DeviceRun([], True, "", "x")
    assert npu_stages.judge(run, [np.zeros(1, np.float32)], "float32", ["a"])[0] == "0 results for 1 inputs"


MAPS = """\
55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 100 /usr/bin/python3.7
7f0000000000-7f0000010000 r--p 00000000 fd:01 2001 /site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so
7f0000010000-7f0000050000 r-xp 00010000 fd:01 2001 /site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so
7f0000050000-7f0000051000 rw-p 00050000 fd:01 2001 /site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so
7f1000000000-7f1000001000 r--p 00000000 fd:01 3003 /site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so.bak
7f2000000000-7f2000001000 rw-p 00000000 00:00 0
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
"""


def test_one_library_mapped_in_several_segments_counts_once():
    assert npu_stages.count_mappings(MAPS) == [
        ("/site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so", "2001")]


def test_a_second_copy_and_a_deleted_file_count_apart():
    text = MAPS + ("7f3000000000-7f3000001000 r-xp 00000000 fd:02 4004 /other/opp/op_graph/lib/linux/aarch64/"
                   "libtf_ge_custom_ge.so (deleted)\n")
    assert npu_stages.count_mappings(text) == [
        ("/other/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so", "4004"),
        ("/site/tf_ge_custom/opp/op_graph/lib/linux/aarch64/libtf_ge_custom_ge.so", "2001")]
    assert npu_stages.count_mappings("") == []


def test_tf1_placement_from_the_partition_graphs_op_types():
    assert device._tf1_placement({"GeOp": 2, "_Retval": 1}) == (
        True, "AddCustom inside 2 GeOp node(s), none left on the host")
    on_npu, evidence = device._tf1_placement({"GeOp": 1, "AddCustom": 1})
    assert on_npu is False and evidence.startswith("1 AddCustom node(s) in the partition graphs: TF Adapter left")
    assert device._tf1_placement({"Add": 1}) == (None, "neither a GeOp nor an AddCustom node in the partition graphs")


def test_large_tensor_size_covers_the_grid_four_times_plus_a_partial_block():
    # no npubins are packaged in this build: block 4096 (op_def) and the SoC's vector cores
    assert npu_stages.large_geometry("Ascend910B3") == (4096 * 40 * 4 + 3, 4096, 40, "the SoC's vector cores")
    assert npu_stages.large_geometry(None) == (4096 * 48 * 4 + 3, 4096, 48, "the most vector cores of any SoC")


def test_kernels_stage_wants_every_kernel_variant_of_every_dtype():
    # valid_binaries: flat/float32, row_16x256/float32 and flat/int32 only (hand-written fixture).
    # Execute picks the variant per call from the shapes, so every one of the 11 must be there.
    import os
    import types

    from tf_ge_custom import kernel_manifest
    from tf_ge_custom.selftest import offline_stages

    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "manifests")
    partial = kernel_manifest.load_manifest(os.path.join(fixtures, "valid_binaries.json"), check_files=True)
    assert offline_stages.missing_kernels(partial) == [
        "float16, bfloat16",
        "the kernel variants scalar/float32, row_1x4096/float32, row_128x32/float32, col_1x4096/float32, "
        "col_16x256/float32, col_128x32/float32 and 13 more"]  # 9 of float32 and 10 of int32
    # every op's npubins: AddCustom's as they always read, every other op of the records named
    # with its dtypes (LeakyReluCustom's, and any op added to the records)
    from tf_ge_custom import op_def

    others = "".join("; %s %s" % (op.type_name, ", ".join(op.dtypes)) for op in op_def.OPS
                     if op.type_name != "AddCustom")
    assert others.startswith("; LeakyReluCustom float32, float16, bfloat16")
    assert offline_stages._judge_manifest(os.path.join(fixtures, "valid_ir_only.json"), "Ascend910B1")[0].endswith(
        "has no npubin for float32, float16, bfloat16, int32%s (built IR only, without CANN)" % others)
    variants = ("flat", "scalar", "row_1x4096", "row_16x256", "row_128x32", "col_1x4096", "col_16x256",
                "col_128x32", "outer_1x4096", "outer_16x256", "outer_128x32")
    every = [types.SimpleNamespace(op="AddCustom", variant=v, dtype=d, binary="%s_%s.npubin" % (v, d))
             for v in variants for d in ("float32", "float16", "bfloat16", "int32")]
    assert offline_stages.missing_kernels(types.SimpleNamespace(kernels=every)) == []
    assert offline_stages.missing_kernels(types.SimpleNamespace(kernels=every), op_def.LEAKY_RELU_CUSTOM) == [
        "float32, float16, bfloat16"]
    leaky = [types.SimpleNamespace(op="LeakyReluCustom", variant="flat", dtype=d, binary="l_%s.npubin" % d)
             for d in ("float32", "float16", "bfloat16")]
    assert offline_stages.missing_kernels(types.SimpleNamespace(kernels=every + leaky), op_def.LEAKY_RELU_CUSTOM) == []
    one_short = [k for k in every if (k.variant, k.dtype) != ("outer_128x32", "int32")]
    assert offline_stages.missing_kernels(types.SimpleNamespace(kernels=one_short)) == [
        "the kernel variant outer_128x32/int32"]


def test_skip_words_name_each_missing_piece():
    bare = Host()
    assert bare.missing("npu") == "an Ascend NPU (no /dev/davinci<N>)"
    assert bare.missing("tf_adapter") == "TF Adapter (neither npu_bridge nor npu_device is importable)"
    assert bare.missing("cann") == "a CANN toolkit (ASCEND_HOME_PATH is not set: source <CANN install>/set_env.sh)"
    assert bare.missing("ge_library") == "the GE library (this build has none: no reason recorded)"
    assert Host(ge_reason="CANN 9.1.0 at /x cannot host it; it needs 9.2").missing("ge_library") == \
        "the GE library (this build has none: CANN 9.1.0 at /x cannot host it)"
    assert Host(modules={"npu_device": True}).missing("npu_bridge") == \
        "npu_bridge (TF Adapter for TF1; not importable, this host has npu_device)"
    assert Host(soc_error="pyACL missing").missing("soc") == \
        "the SoC name (pass --soc, e.g. --soc Ascend910B1; the device did not say: pyACL missing)"
    full = Host(modules={"npu_bridge": True}, npu_devices=["/dev/davinci0"], cann_home="/", atc="/bin/atc",
                ge_built=True, om_runner="/x", soc="Ascend910B1", build_kernels_cache=True)
    assert all(full.missing(r) == "" for r in ("tf_adapter", "npu_bridge", "npu", "soc", "cann", "atc",
                                                 "ge_library", "om_runner", "build_kernels_cache"))
    assert full.adapter == "npu_bridge"
    assert Host.from_dict(full.as_dict()).as_dict() == full.as_dict()
    with pytest.raises(KeyError):
        bare.missing("coffee")


def test_adapter_versions_are_read_from_the_installed_distributions_folders(tmp_path):
    from tf_ge_custom.selftest.cpu_stages import _distribution_version

    (tmp_path / "npu_bridge-1.15.0.dist-info").mkdir()
    (tmp_path / "npu_device-0.1-py3.7.egg-info").mkdir()
    (tmp_path / "npu_bridge_tools-9.9.dist-info").mkdir()
    folders = [str(tmp_path / "missing"), str(tmp_path)]
    assert _distribution_version(("npu_bridge", "npu-bridge"), folders) == "1.15.0"
    assert _distribution_version(("npu-device",), folders) == "0.1"
    assert _distribution_version(("tensorflow",), folders) is None
