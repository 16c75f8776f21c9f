"""Oracles read off TF Adapter's public source (hicann/tensorflow), not off our code: the
generated fixture adapter_options.json (tests/npu/generate_adapter_options.py, which names
the commit and files; tests/npu/test_adapter_options.py checks that it is current).

TF1_KEYS: every key TF1's adapter reads from the NpuOptimizer parameter_map, with the
AttrValue field it reads (tf_adapter/util/npu_attrs.cc: ``params.at("key").b()/.i()/.s()``
in ``NpuAttrs::SetNpuOptimizerAttr`` and ``GetPassOptions``).

TF2_FIELDS: every option field of ``npu_device.global_options()``
(tf_adapter_2.x/python/npu_device/configs/npu_config.py and the configs it nests);
TF2_OPTIONS: each field's record (kind, default, the accepted values where the source
lists them).
"""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "adapter_options.json")) as _f:
    FIXTURE = json.load(_f)

SOURCE = FIXTURE["source"]
TF1_KEYS = FIXTURE["tf1_keys"]
TF2_OPTIONS = FIXTURE["tf2_fields"]
TF2_FIELDS = frozenset(TF2_OPTIONS)
