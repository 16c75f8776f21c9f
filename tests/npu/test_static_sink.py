"""session_config(static_sink=True): the settings that give GE a static graph to sink, and
every option that would make it dynamic refused by name.

Oracles: the AttrValue fields TF Adapter reads (adapter_keys.TF1_KEYS, from npu_attrs.cc)
and the adapter's rules as docs/npu.md states them (compile_dynamic_mode makes every input
dynamic; jit_compile other than "true" generalises a changed shape; input_shape/dynamic_dims
are gears of unknown dims).
"""
import subprocess
import sys

import pytest

from tf_ge_custom import npu
from tf_ge_custom.errors import NpuOptionError, NpuOptionTypeError
from tf_ge_custom.npu import options as options_module
from tf_ge_custom.npu import session as session_module


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    monkeypatch.setattr(session_module, "_warned", {"npu_bridge"})


def params(config):
    (entry,) = [c for c in config.graph_options.rewrite_options.custom_optimizers if c.name == "NpuOptimizer"]
    return {k: entry.parameter_map[k] for k in entry.parameter_map}


def test_static_sink_sets_static_shapes_and_recompiling_jit():
    p = params(npu.session_config(static_sink=True, precision_mode_v2="origin"))
    assert p["compile_dynamic_mode"].WhichOneof("value") == "b" and p["compile_dynamic_mode"].b is False
    assert p["jit_compile"].s == b"true"
    assert p["precision_mode_v2"].s == b"origin"
    assert "iterations_per_loop" not in p


def test_static_sink_keeps_iterations_per_loop_and_consistent_given_values():
    p = params(npu.session_config(static_sink=True, iterations_per_loop=100, jit_compile="true",
                                  compile_dynamic_mode=False, mix_compile_mode=False))
    assert p["iterations_per_loop"].i == 100
    assert p["jit_compile"].s == b"true" and p["compile_dynamic_mode"].b is False


def test_without_static_sink_nothing_is_added():
    p = params(npu.session_config(precision_mode_v2="origin"))
    assert set(p) == {"precision_mode_v2"}


@pytest.mark.parametrize("options, named", [
    ({"compile_dynamic_mode": True}, "compile_dynamic_mode=True makes every input dynamic"),
    ({"jit_compile": "false"}, "jit_compile='false'"),
    ({"jit_compile": "auto"}, "jit_compile='auto'"),
    ({"input_shape": "x:-1,2048", "dynamic_dims": "8;16", "dynamic_node_type": 0},
     "input_shape, dynamic_dims, dynamic_node_type give the graph dynamic dimensions"),
])
def test_options_that_make_the_graph_dynamic_are_refused_by_name(options, named):
    with pytest.raises(NpuOptionError) as e:
        npu.session_config(static_sink=True, **options)
    assert named in str(e.value) and "session_config(static_sink=True)" in str(e.value)


def test_a_config_already_dynamic_is_refused_too():
    dynamic = npu.session_config(compile_dynamic_mode=True)
    with pytest.raises(NpuOptionError, match="compile_dynamic_mode=True"):
        npu.session_config(dynamic, static_sink=True)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_static_sink_must_be_a_bool(bad):
    with pytest.raises(NpuOptionTypeError, match="static_sink must be a bool"):
        npu.session_config(static_sink=bad)


def test_bad_types_are_still_reported_first_as_type_errors():
    with pytest.raises(NpuOptionTypeError, match="iterations_per_loop must be an int"):
        npu.session_config(static_sink=True, iterations_per_loop="100")
    with pytest.raises(NpuOptionError, match="iterations_per_loop must be >= 1"):
        npu.session_config(static_sink=True, iterations_per_loop=0)


def test_static_sink_is_pure_on_the_options_table():
    values = options_module.validate({"iterations_per_loop": 10})
    completed = options_module.static_sink(values)
    assert completed == {"iterations_per_loop": 10, "compile_dynamic_mode": False, "jit_compile": "true"}
    assert values == {"iterations_per_loop": 10}  # not modified in place


def test_a_refusal_in_a_fresh_process_is_one_line_without_a_traceback():
    code = ("from tf_ge_custom import npu\n"
            "try:\n    npu.session_config(static_sink=True, compile_dynamic_mode=True)\n"
            "except ValueError as e:\n    print('refused:', e)\n")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("refused: session_config(static_sink=True): compile_dynamic_mode=True")
    assert "Traceback" not in proc.stderr
