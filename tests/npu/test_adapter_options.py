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


def test_our_tf1_keys_and_their_kinds_are_the_adapters():
    letters = {options_module.BOOL: "b", options_module.INT: "i", options_module.STR: "s",
               options_module.JSON: "s"}
    ours = {name: o for name, o in options_module.OPTIONS.items() if o.tf1}
    assert set(ours) == set(adapter_keys.TF1_KEYS)
    wrong = {name: (letters.get(o.kind, o.kind), adapter_keys.TF1_KEYS[name]) for name, o in ours.items()
             if letters.get(o.kind) != adapter_keys.TF1_KEYS[name]}
    assert wrong == {}


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
