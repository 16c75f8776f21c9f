"""Options from a hostile trial: whatever the value, session_config and open_device
raise the package's option errors, and nothing they accept is text the adapter would misread.

Oracles: TF Adapter's checks are std::regex patterns over ASCII digits (npu_attrs.cc), the
adapter receives UTF-8 text (an AttrValue's bytes; pybind11 for npu_device), and its JSON
parser takes standard JSON only (RFC 8259: no NaN, no Infinity).
"""
import json
import math
import os
import warnings

import pytest

from tf_ge_custom import npu
from tf_ge_custom.errors import NpuOptionError, NpuOptionTypeError, TfGeCustomError
from tf_ge_custom.npu import options as options_module
from tf_ge_custom.npu import session as session_module


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    monkeypatch.setattr(session_module, "_warned", {"npu_bridge"})


def refused(**options):
    """The error session_config raises for ``options`` (it must raise one of ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TfGeCustomError) as info:
            npu.session_config(**options)
    assert isinstance(info.value, (NpuOptionError, NpuOptionTypeError)), type(info.value)
    return str(info.value)


# Digits of other scripts: Python's \d takes them, the adapter's [0-9] does not.
@pytest.mark.parametrize("options", [
    {"dump_step": "\uff11\uff12"},                     # fullwidth 12
    {"dump_step": "0|\u0665-\u0669"},                  # Arabic-Indic 5-9
    {"local_device_list": "\u0660,\u0661"},            # Arabic-Indic 0,1
    {"input_shape": "x:-1,\u0663", "dynamic_dims": "3", "dynamic_node_type": 0},
    {"input_shape": "x:-1,3", "dynamic_dims": "\u0663;\u0664", "dynamic_node_type": 0},
    {"dump_step": "5\n"},                              # "$" alone would accept the newline
    {"local_device_list": "0,1\n"},
])
def test_digit_options_take_ascii_digits_only(options):
    message = refused(**options)
    assert "ASCII digits" in message or "expected" in message


def test_ascii_digit_options_still_pass():
    config = npu.session_config(dump_step="0|5|10-20", local_device_list="0,1",
                                input_shape="x:-1,3", dynamic_dims="3;4", dynamic_node_type=0)
    params = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    assert params["dump_step"].s == b"0|5|10-20" and params["dynamic_dims"].s == b"3;4"


@pytest.mark.parametrize("key", ["job", "soc_config", "op_precision_mode"])
def test_text_that_is_not_utf8_encodable_is_an_option_error(key):
    message = refused(**{key: "worker\udcff"})
    assert key in message and "UTF-8" in message


def test_a_nul_character_is_refused():
    assert "NUL" in refused(job="worker\0ps")


def test_a_dump_path_with_a_non_utf8_name_is_an_option_error(tmp_path):
    folder = os.path.join(os.fsencode(str(tmp_path)), b"dump-\xff")
    os.mkdir(folder)
    name = os.fsdecode(folder)  # "...dump-\udcff": exists, but not UTF-8 text
    assert os.path.isdir(name)
    message = refused(enable_dump=True, dump_path=name)
    assert "dump_path" in message and "UTF-8" in message


def _nested(depth):
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text, words", [
    ('{"a": %s}' % _nested(100000), "deeper"),
    ('{"a": %s}' % _nested(40), "deeper"),
    ('{"output": NaN}', "NaN"),
    ('{"output": Infinity}', "Infinity"),
    ('{"output": -Infinity}', "Infinity"),
    ("[1]", "JSON object"),
    ("{", "not valid JSON"),
])
def test_json_text_options_are_standard_shallow_objects(text, words):
    message = refused(profiling_options=text)
    assert "profiling_options" in message and words in message


@pytest.mark.parametrize("value, words", [
    ({"x": float("nan")}, "standard JSON"),
    ({"x": float("inf")}, "standard JSON"),
    ({"x": [1, {"y": -math.inf}]}, "standard JSON"),
    ({"x": "\udcff"}, "UTF-8"),
])
def test_json_dict_options_are_written_as_standard_json_or_refused(value, words):
    assert words in refused(profiling_options=value)


def test_a_circular_or_very_deep_dict_is_refused():
    loop = {}
    loop["self"] = loop
    assert "profiling_options" in refused(profiling_options=loop)
    deep = current = {}
    for _ in range(5000):
        current["x"] = {}
        current = current["x"]
    assert "profiling_options" in refused(profiling_options=deep)


def test_a_valid_json_option_is_written_compactly():
    config = npu.session_config(profiling_options={"output": "/tmp/prof", "n": 1.5})
    params = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    assert json.loads(params["profiling_options"].s.decode()) == {"output": "/tmp/prof", "n": 1.5}


@pytest.mark.parametrize("value", ["no", "False", "true", 0, 1])
def test_boolean_options_take_booleans_only(value):
    assert "must be a bool" in refused(use_off_line=value)


def test_every_string_option_refuses_unencodable_text():
    # Whatever string option: the same rule, before any option-specific check.
    strings = [o for o in options_module.OPTIONS.values()
               if o.kind == options_module.STR and o.tf1 and not o.choices]
    assert strings
    for option in strings:
        with pytest.raises(NpuOptionError, match="UTF-8"):
            options_module.convert(option, "x\udcff")
