"""Our option table (tf_ge_custom/npu/options.py) against TF Adapter's public sources.

The oracle is tests/npu/adapter_options.json, generated from hicann/tensorflow by
tests/npu/generate_adapter_options.py (its commit and files are recorded in it). With a
snapshot of that repository (TF_GE_CUSTOM_TF_ADAPTER_REPO, a git directory) the generator
runs here and the fixture must be exactly what it writes, for the recorded commit and for
the snapshot's HEAD; without one that check skips with "needs the hicann snapshots".
"""
import importlib.util
import json
import os
import types

import pytest

from tf_ge_custom.npu import options as options_module

pytestmark = pytest.mark.kind("oracle")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_VAR = "TF_GE_CUSTOM_TF_ADAPTER_REPO"


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


adapter_keys = _load("adapter_keys", "adapter_keys.py")
generator = _load("generate_adapter_options", "generate_adapter_options.py")

# Values our table accepts that npu_device's NpuConfig does not list: TF1's adapter takes
# them (npu_attrs.cc passes the string on), and open_device reports npu_device's refusal.
TF1_ONLY_VALUES = {
    "graph_slice": {"manual"},
    "dynamic_node_type": {1},
    "op_select_implmode": {"high_precision_for_all", "high_performance_for_all"},
}


def test_the_fixture_is_what_the_generator_writes_from_the_public_sources(needs):
    needs("hicann_snapshots", "regenerates TF Adapter's option list from hicann/tensorflow (%s)" % REPO_VAR)
    repo = os.environ[REPO_VAR]
    with open(os.path.join(HERE, "adapter_options.json")) as f:
        committed = f.read()
    recorded = json.loads(committed)["source"]["commit"]
    assert generator.dumps(generator.generate(repo, recorded)) == committed
    head = generator.generate(repo, "HEAD")
    assert head["tf1_keys"] == adapter_keys.TF1_KEYS and head["tf2_fields"] == adapter_keys.TF2_OPTIONS, (
        "hicann/tensorflow at %s has other options than the fixture (%s): regenerate it with "
        "python tests/npu/generate_adapter_options.py $%s" % (head["source"]["commit"], recorded, REPO_VAR))


def test_the_generator_reads_the_field_letter_and_nested_configs():
    # The generator's parsing rules on a few lines written here (not TF Adapter's text).
    source = ('Status NpuAttrs::SetNpuOptimizerAttr(const X &options, Node *node) {\n'
              '  if (params.count("a") > 0) { a = params.at("a").b(); }\n'
              '  x = params.at("n").i();\n  y = params.at("t").s();\n}\n'
              'void Other() {\n  z = params.at("not_read_here").b();\n}\n')
    assert generator.tf1_keys(source) == {"a": "b", "n": "i", "t": "s"}
    configs = ["class NpuConfig(Base):\n    def __init__(self):\n"
               "        self.mode = OptionValue(1, [0, 1])\n        self.sub = Sub()\n"
               "        self.old = DeprecatedValue([True, False], replacement='mode')\n"
               "        super().__init__()\n",
               "class Sub(Base):\n    def __init__(self):\n        self.path = OptionValue(None, None)\n"]
    assert generator.tf2_fields(configs) == {
        "mode": {"kind": "option", "default": 1, "choices": [0, 1]},
        "old": {"kind": "deprecated", "choices": [True, False], "replacement": "mode"},
        "sub.path": {"kind": "option", "default": None, "choices": None}}


def test_the_fixture_names_its_source():
    source = adapter_keys.SOURCE
    assert source["repository"] == "hicann/tensorflow" and len(source["commit"]) == 40
    assert source["tf1"].startswith("tf_adapter/util/npu_attrs.cc")
    assert "tf_adapter_2.x/python/npu_device/configs/npu_config.py" in source["tf2"]
    assert len(adapter_keys.TF1_KEYS) > 90 and len(adapter_keys.TF2_FIELDS) > 60


def test_our_tf1_keys_are_the_adapters():
    ours = {name for name, o in options_module.OPTIONS.items() if o.tf1}
    assert ours == set(adapter_keys.TF1_KEYS)


# --- each option's type, against what each adapter reads --------------------------------------
# The Python type of the AttrValue field TF1's adapter reads (npu_attrs.cc: .b(), .i(), .s()).
TF1_FIELD_TYPE = {"b": bool, "i": int, "s": str}
SAMPLES = {bool: True, int: 1, str: "x"}
# npu_device fields whose recorded type is not the one we validate, with why that is right
# (npu_device's OptionValue compares a value with its listed ones by ==, then passes it on as text).
TF2_TYPE_DIFFERENCES = {
    # TF1 reads .i(); npu_device lists True/False, and takes 0 and 1 as well (0 == False,
    # 1 == True), passing both on as "0"/"1"
    "enable_small_channel": (bool, int),
    # TF1 reads .i(); npu_device lists "0": open_device hands it str(value)
    "dynamic_node_type": (str, int),
}
# npu_device fields for which the fixture records neither a default nor listed values: no type
# to check them against on the TF2 side (each is a TF1 key too, typed by the field TF1 reads).
TF2_UNTYPED = {
    "aicore_num", "aoe_config_file", "auto_multistream_parallel_mode", "customize_dtypes", "debug_dir",
    "dump_layer", "dump_path", "dump_step", "dynamic_dims", "enable_scope_fusion_passes",
    "experimental_logical_device_id", "experimental_model_deploy_devicelist", "experimental_model_deploy_mode",
    "fusion_switch_file", "graph_compiler_cache_dir", "graph_exec_timeout", "graph_memory_max_size",
    "graph_parallel_option_path", "hcom_multi_mode", "input_shape", "modify_mixlist", "op_compiler_cache_dir",
    "op_debug_config", "op_precision_mode", "optimization_switch", "optypelist_for_implmode",
    "resource_config_path", "stream_max_parallel_num", "variable_memory_max_size",
}


def _tf2_type(record):
    """The type npu_device's record gives a field: its default's, else that of all its listed
    values (None aside); None when it records neither."""
    if record.get("default") is not None:
        return type(record["default"])
    types = {type(c) for c in record.get("choices") or () if c is not None}
    assert len(types) <= 1, record
    return types.pop() if types else None


def _typed_by_the_sources(name):
    """[(api, Python type, the upstream value to try or None, where the type comes from)]."""
    option = options_module.OPTIONS[name]
    typed = []
    if option.tf1:
        field = adapter_keys.TF1_KEYS[name]
        typed.append((options_module.TF1, TF1_FIELD_TYPE[field], None, "npu_attrs.cc reads .%s()" % field))
    if option.tf2:
        record = adapter_keys.TF2_OPTIONS[option.tf2]
        recorded = _tf2_type(record)
        if name in TF2_TYPE_DIFFERENCES:
            assert recorded is TF2_TYPE_DIFFERENCES[name][0], (name, record)
            recorded = TF2_TYPE_DIFFERENCES[name][1]
        if recorded is not None:
            values = [record.get("default")] + list(record.get("choices") or ())
            sample = next((v for v in values if type(v) is recorded), None)
            typed.append((options_module.TF2, recorded, sample, "npu_device's %s %r" % (option.tf2, record)))
    return typed


@pytest.mark.parametrize("name", sorted(options_module.OPTIONS))
def test_each_option_takes_the_type_the_adapter_reads_and_refuses_the_others(name):
    """TF1 and TF2 options alike: a value of the type TF1's adapter reads (the AttrValue field)
    or npu_device records (its default, or its listed values) is taken, and values of the
    other types are refused as NpuOptionTypeError, through each API."""
    option = options_module.OPTIONS[name]
    typed = _typed_by_the_sources(name)
    assert typed, "%s: neither adapter's source gives it a type" % name
    for api, kind, sample, where in typed:
        value = SAMPLES[kind] if sample is None else sample
        try:
            options_module.convert(option, value, api)
        except options_module.NpuOptionTypeError as e:
            pytest.fail("%s (%s) refuses %r, a %s as %s: %s" % (name, api, value, kind.__name__, where, e))
        except options_module.NpuOptionError:
            pass  # the type was taken; the value itself is not (a folder that does not exist)
        for other in SAMPLES:
            if other is not kind:
                with pytest.raises(options_module.NpuOptionTypeError):
                    options_module.convert(option, SAMPLES[other], api)


def test_the_options_npu_device_gives_no_type_are_the_reviewed_list():
    untyped = {name for name, o in options_module.OPTIONS.items()
               if o.tf2 and _tf2_type(adapter_keys.TF2_OPTIONS[o.tf2]) is None}
    assert untyped == TF2_UNTYPED
    assert all(options_module.OPTIONS[name].tf1 for name in untyped)  # typed by TF1's field


@pytest.mark.parametrize("name", sorted(TF2_TYPE_DIFFERENCES))
def test_where_our_type_is_not_npu_devices_what_reaches_it_is_a_value_it_lists(name):
    from tf_ge_custom.npu import device

    option = options_module.OPTIONS[name]
    record = adapter_keys.TF2_OPTIONS[option.tf2]
    target = types.SimpleNamespace()
    path = option.tf2.split(".")
    holder = target
    for part in path[:-1]:
        setattr(holder, part, types.SimpleNamespace())
        holder = getattr(holder, part)
    for value in option.choices:
        if value in TF1_ONLY_VALUES.get(name, ()):
            continue
        device.apply_options(target, {name: options_module.convert(option, value, options_module.TF2)})
        passed = getattr(holder, path[-1])
        # npu_device's OptionValue setter: ``value in optional`` (==), else TypeError/ValueError
        assert passed in record["choices"], (name, value, passed, record)


def _equal(a, b):
    # npu_device lists 0/1 choices as booleans for some int options, "0"/"1" as text for others.
    if isinstance(a, bool) != isinstance(b, bool):
        return int(a) == int(b) if all(isinstance(v, (bool, int)) for v in (a, b)) else False
    return a == b or str(a) == str(b)


def _same(value, values):
    return any(_equal(value, v) for v in values)


def test_our_accepted_values_cover_npu_devices_and_differ_only_where_listed():
    checked, extra = 0, {}
    for name, option in options_module.OPTIONS.items():
        upstream = adapter_keys.TF2_OPTIONS.get(option.tf2, {}).get("choices") if option.tf2 else None
        if not (option.choices and isinstance(upstream, list)):
            continue
        checked += 1
        missing = [u for u in upstream if u is not None and not _same(u, option.choices)]
        assert missing == [], "%s: npu_device accepts %s, our table does not" % (name, missing)
        more = {c for c in option.choices if not _same(c, upstream)}
        if more:
            extra[name] = more
    assert extra == TF1_ONLY_VALUES
    assert checked >= 25


def test_every_tf2_field_of_our_table_is_an_npu_device_option():
    fields = {o.tf2 for o in options_module.OPTIONS.values() if o.tf2}
    assert fields == set(adapter_keys.TF2_FIELDS)
    deprecated = {f for f, r in adapter_keys.TF2_OPTIONS.items() if r["kind"] == "deprecated"}
    assert deprecated <= fields
