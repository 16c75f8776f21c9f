"""session_config(): the ConfigProto, option by option, and every class of bad value.

Oracles: adapter_keys.TF1_KEYS (the AttrValue field TF Adapter reads for each key, generated
from npu_attrs.cc: adapter_options.json), the values npu_device's NpuConfig lists for an
option (the same fixture) as the valid sample where it lists any, TF Adapter's own
npu_config_proto for the rest of the proto, numpy for the CPU run. Tests of our refusals
(wrong type, outside the set, malformed) check our own messages: table plumbing.
"""
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.kind("oracle")
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

import tf_ge_custom
from tf_ge_custom import npu
from tf_ge_custom.errors import NpuOptionError, NpuOptionTypeError, NpuPlacementWarning
from tf_ge_custom.npu import options as options_module
from tf_ge_custom.npu import session as session_module

spec = importlib.util.spec_from_file_location(
    "adapter_keys", os.path.join(os.path.dirname(__file__), "adapter_keys.py"))
adapter_keys = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adapter_keys)
TF1_KEYS = adapter_keys.TF1_KEYS


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    # The npu_bridge warning is once per process; its own test checks it in a fresh one.
    monkeypatch.setattr(session_module, "_warned", {"npu_bridge"})


def npu_params(config):
    (entry,) = [c for c in config.graph_options.rewrite_options.custom_optimizers
                if c.name == "NpuOptimizer"]
    return entry.parameter_map


def sample(key, tmp_path):
    """A valid value for ``key``, plus the options it needs next to it."""
    special = {
        "dump_path": (str(tmp_path), {}),
        "work_path": (str(tmp_path), {}),
        "dump_step": ("0|5|10-20", {}),
        "input_shape": ("x:-1,2048;y:-1,2048", {"dynamic_dims": "8,8;16,16", "dynamic_node_type": 0}),
        "dynamic_dims": ("8,8;16,16", {"input_shape": "x:-1,2", "dynamic_node_type": 0}),
        "dynamic_node_type": (1, {"input_shape": "x:-1,2", "dynamic_dims": "4"}),
        "compile_hybrid_mode": (1, {"input_shape": "x:-1,2", "dynamic_dims": "4", "dynamic_node_type": 1}),
        "enable_dump": (True, {"dump_path": str(tmp_path)}),
        "enable_dump_debug": (True, {"dump_path": str(tmp_path)}),
        "modify_mixlist": ("/tmp/mixlist.json", {"precision_mode": "allow_mix_precision"}),
        "optypelist_for_implmode": ("Add", {"op_select_implmode": "high_precision"}),
        "local_device_list": ("0,1,2,3", {}),
        "profiling_options": ('{"output": "/tmp/prof", "task_time": "on"}', {}),
    }
    if key in special:
        return special[key]
    option = options_module.OPTIONS[key]
    upstream = adapter_keys.TF2_OPTIONS.get(option.tf2, {}).get("choices") if option.tf2 else None
    if isinstance(upstream, list) and [u for u in upstream if u is not None]:
        # a value npu_device's NpuConfig lists (the public source), in the kind TF1 reads
        value = [u for u in upstream if u is not None][-1]
        return (int(value) if TF1_KEYS[key] == "i" else value if TF1_KEYS[key] == "b" else str(value)), {}
    if option.choices:
        return option.choices[-1], {}
    if TF1_KEYS[key] == "b":
        return True, {}
    if TF1_KEYS[key] == "i":
        return max(3, option.minimum or 0) if option.maximum is None else option.maximum, {}
    return "some-text", {}


def test_every_adapter_key_is_accepted_and_nothing_else():
    tf1 = {name for name, o in npu.OPTIONS.items() if o.tf1}
    assert tf1 == set(TF1_KEYS)


@pytest.mark.parametrize("key", sorted(TF1_KEYS))
def test_each_option_lands_in_parameter_map_in_the_field_the_adapter_reads(key, tmp_path):
    value, companions = sample(key, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        config = npu.session_config(**dict(companions, **{key: value}))
    attr = npu_params(config)[key]
    field = TF1_KEYS[key]
    assert attr.WhichOneof("value") == field
    expected = value.encode() if field == "s" else value
    assert getattr(attr, field) == expected
    assert set(npu_params(config)) == set(companions) | {key}


def test_the_rest_of_the_proto_is_what_tf_adapter_requires():
    config = npu.session_config()
    rewrite = config.graph_options.rewrite_options
    assert [c.name for c in rewrite.custom_optimizers] == ["NpuOptimizer"]
    assert len(npu_params(config)) == 0
    assert rewrite.remapping == rewriter_config_pb2.RewriterConfig.OFF
    # npu_bridge's npu_config_proto writes RewriterConfig.OFF (2) into memory_optimization.
    assert rewrite.memory_optimization == 2 == rewriter_config_pb2.RewriterConfig.MANUAL
    assert config.allow_soft_placement
    assert config.graph_options.optimizer_options.global_jit_level == -1  # OFF


def test_profiling_options_dict_is_written_as_json():
    wanted = {"output": "/tmp/prof", "training_trace": "on", "aic_metrics": "PipeUtilization"}
    config = npu.session_config(profiling_mode=True, profiling_options=wanted)
    assert json.loads(npu_params(config)["profiling_options"].s.decode()) == wanted


def test_none_means_not_set():
    config = npu.session_config(precision_mode=None, graph_run_mode=0)
    assert set(npu_params(config)) == {"graph_run_mode"}


def test_given_config_is_completed_not_modified():
    base = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=3)
    base.gpu_options.allow_growth = True
    old = base.graph_options.rewrite_options.custom_optimizers.add()
    old.name = "NpuOptimizer"
    old.parameter_map["use_off_line"].b = True
    old.parameter_map["graph_run_mode"].i = 1
    dup = base.graph_options.rewrite_options.custom_optimizers.add()
    dup.name = "NpuOptimizer"
    dup.parameter_map["mix_compile_mode"].b = True
    before = base.SerializeToString()

    config = npu.session_config(base, graph_run_mode=0)
    assert base.SerializeToString() == before
    assert config.inter_op_parallelism_threads == 3 and config.gpu_options.allow_growth
    params = npu_params(config)
    assert params["use_off_line"].b is True
    assert params["graph_run_mode"].i == 0  # the argument wins over the given config
    assert params["mix_compile_mode"].b is True  # the duplicate entry was merged in


def test_bad_entries_already_in_the_given_config_are_refused():
    base = tf.compat.v1.ConfigProto()
    entry = base.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    entry.parameter_map["use_off_line"].s = b"true"  # the adapter would read .b(): default
    with pytest.raises(NpuOptionTypeError, match="use_off_line"):
        npu.session_config(base)
    del entry.parameter_map["use_off_line"]
    entry.parameter_map["use_offline"].b = True
    with pytest.raises(NpuOptionError, match="use_off_line"):
        npu.session_config(base)


def test_config_of_the_wrong_type_is_refused():
    with pytest.raises(TypeError, match="ConfigProto"):
        npu.session_config({"use_off_line": True})


# --- each class of bad value ----------------------------------------------------------


def test_unknown_key_is_refused_with_a_suggestion():
    with pytest.raises(ValueError, match="precision_mode") as info:
        npu.session_config(precission_mode="origin")
    assert isinstance(info.value, NpuOptionError)


@pytest.mark.parametrize("key", sorted(TF1_KEYS))
def test_wrong_type_is_refused_for_every_key(key):
    wrong = {"b": 1, "i": True, "s": 1}[TF1_KEYS[key]]
    with pytest.raises(TypeError, match=key):
        npu.session_config(**{key: wrong})


@pytest.mark.parametrize("key", sorted(k for k, o in options_module.OPTIONS.items()
                                       if o.choices and o.tf1))
def test_value_outside_its_set_is_refused(key):
    bad = {"s": "not-a-choice", "i": 99}[TF1_KEYS[key]]
    with pytest.raises(ValueError, match=key):
        npu.session_config(**{key: bad})


@pytest.mark.parametrize("options, message", [
    ({"graph_run_mode": 2}, "graph_run_mode"),
    ({"graph_run_mode": -1}, "graph_run_mode"),
    ({"jit_compile": "yes"}, "jit_compile"),
    ({"input_fusion_size": 32 * 1024 * 1024 + 1}, "input_fusion_size"),
    ({"local_rank_id": 8}, "local_rank_id"),
    ({"session_device_id": -1}, "session_device_id"),
    ({"iterations_per_loop": 0}, "iterations_per_loop"),
    ({"hccl_timeout": 2 ** 63}, "64 bits"),
    ({"dump_step": "5-3"}, "dump_step"),
    ({"dump_step": "1-2-3"}, "dump_step"),
    ({"dump_step": "a"}, "dump_step"),
    ({"dump_step": "|".join(["1"] * 101)}, "100"),
    ({"input_shape": "x1,2", "dynamic_dims": "1", "dynamic_node_type": 0}, "input_shape"),
    ({"input_shape": "x:1", "dynamic_dims": "1,a", "dynamic_node_type": 0}, "dynamic_dims"),
    ({"local_device_list": "0;1"}, "local_device_list"),
    ({"profiling_options": "{not json"}, "profiling_options"),
    ({"profiling_options": '["a list"]'}, "JSON object"),
])
def test_malformed_values_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        npu.session_config(**options)


def test_bool_spelled_for_a_string_option_gets_a_hint():
    with pytest.raises(TypeError, match="'true'"):
        npu.session_config(jit_compile=True)


def test_profiling_dict_that_is_not_json_is_refused():
    with pytest.raises(TypeError, match="profiling_options"):
        npu.session_config(profiling_options={"output": {1, 2}})


def test_dump_path_must_be_an_existing_writable_directory(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="not an existing directory"):
        npu.session_config(enable_dump=True, dump_path=str(tmp_path / "missing"))
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(ValueError, match="not an existing directory"):
        npu.session_config(enable_dump=True, dump_path=str(a_file))
    # Permission bits do not bind root, so the access check itself is replaced here.
    monkeypatch.setattr(options_module.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match="readable and writable"):
        npu.session_config(enable_dump=True, dump_path=str(tmp_path))


def test_dump_needs_a_dump_path():
    for switch in ("enable_dump", "enable_dump_debug"):
        with pytest.raises(ValueError, match="dump_path"):
            npu.session_config(**{switch: True})
    npu.session_config(enable_dump=False)  # off: no path needed


@pytest.mark.parametrize("given", [
    {"input_shape": "x:-1,2"},
    {"dynamic_dims": "4"},
    {"dynamic_node_type": 0},
    {"input_shape": "x:-1,2", "dynamic_dims": "4"},
    {"input_shape": "x:-1,2", "dynamic_node_type": 0},
    {"dynamic_dims": "4", "dynamic_node_type": 0},
])
def test_half_of_input_shape_and_dynamic_dims_is_refused(given):
    with pytest.raises(ValueError, match="go together"):
        npu.session_config(**given)


@pytest.mark.parametrize("options, message", [
    ({"precision_mode": "force_fp32", "precision_mode_v2": "origin"}, "mutually exclusive"),
    ({"compile_hybrid_mode": 1}, "compile_hybrid_mode"),
    ({"compile_hybrid_mode": 1, "input_shape": "x:1", "dynamic_dims": "1",
      "dynamic_node_type": 0}, "dynamic_node_type=1"),
    ({"optypelist_for_implmode": "Add"}, "op_select_implmode"),
    ({"enable_compress_weight": True, "compress_weight_conf": "/c"}, "mutually exclusive"),
    ({"modify_mixlist": "/m.json"}, "mixed precision"),
    ({"modify_mixlist": "/m.json", "precision_mode_v2": "origin"}, "mixed precision"),
])
def test_contradicting_options_are_refused(options, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match=message):
            npu.session_config(**options)


def test_npu_device_only_options_are_refused_for_tf1():
    with pytest.raises(ValueError, match="open_device"):
        npu.session_config(overflow_flag=1)


def test_deprecated_keys_are_accepted_with_a_warning():
    with pytest.warns(DeprecationWarning, match="op_precision_mode"):
        npu.session_config(op_select_implmode="high_precision")


# --- running ---------------------------------------------------------------------------


def test_configured_session_runs_add_custom_on_the_cpu():
    config = npu.session_config(use_off_line=True, precision_mode_v2="origin", graph_run_mode=0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 3])
        y = tf.compat.v1.placeholder(tf.float32, [2, 3])
        z = tf_ge_custom.add_custom(x, y)
    assert [op.type for op in graph.get_operations() if op.type == "AddCustom"] == ["AddCustom"]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    yv = np.full((2, 3), 0.5, np.float32)
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        np.testing.assert_array_equal(session.run(z, {x: xv, y: yv}), xv + yv)


def test_without_npu_bridge_one_warning_says_placement_needs_it(monkeypatch):
    assert importlib.util.find_spec("npu_bridge") is None  # this machine has no TF Adapter
    monkeypatch.setattr(session_module, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        npu.session_config()
        npu.session_config(graph_run_mode=0)
    messages = [str(w.message) for w in caught if issubclass(w.category, NpuPlacementWarning)]
    assert len(messages) == 1
    assert "NPU placement needs npu_bridge" in messages[0]
