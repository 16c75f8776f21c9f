"""open_device(): options to npu_device.global_options(), then open().as_default().

npu_device cannot run here (it needs CANN and an NPU). ``FakeNpuDevice`` is a test double:
its option tree has exactly the fields of npu_device's NpuConfig (adapter_keys.TF2_FIELDS,
read off npu_config.py), refuses others with ValueError as NpuBaseConfig does, and records
the order of calls. It tests our handling only, not TF Adapter.
"""
import importlib.util
import os
import sys
import types

import pytest

from tf_ge_custom import npu
from tf_ge_custom.errors import NpuOptionError, NpuPlacementWarning, NpuStackError

spec = importlib.util.spec_from_file_location(
    "adapter_keys", os.path.join(os.path.dirname(__file__), "adapter_keys.py"))
adapter_keys = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adapter_keys)


class FakeConfig(object):
    def __init__(self, prefix, log):
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_log", log)
        children = {f[len(prefix):].split(".")[0] for f in adapter_keys.TF2_FIELDS
                    if f.startswith(prefix) and "." in f[len(prefix):]}
        for child in children:
            object.__setattr__(self, child, FakeConfig(prefix + child + ".", log))

    def __setattr__(self, key, value):
        field = self._prefix + key
        if field not in adapter_keys.TF2_FIELDS:
            raise ValueError("%s has no option %s" % (type(self).__name__, key))
        if field.endswith("multi_branches_config.dynamic_node_type") and value not in ["0"]:
            raise ValueError("'%s' not in optional list ['0']" % value)  # as npu_device says
        self._log.append(("set", field, value))


class FakeNpuDevice(types.ModuleType):
    def __init__(self):
        super(FakeNpuDevice, self).__init__("npu_device")
        self.log = []
        self._options = FakeConfig("", self.log)

    def global_options(self):
        return self._options

    def open(self, device_id=None):
        self.log.append(("open", device_id))
        device = self

        class Handle(object):
            def as_default(self):
                device.log.append(("as_default",))
                return self

        return Handle()


@pytest.fixture
def fake_npu_device(monkeypatch):
    fake = FakeNpuDevice()
    monkeypatch.setitem(sys.modules, "npu_device", fake)
    return fake


@pytest.fixture
def no_npu_device(monkeypatch):
    monkeypatch.setitem(sys.modules, "npu_device", None)  # import raises ImportError


def test_every_tf2_field_in_the_table_exists_in_npu_device():
    fields = {o.tf2 for o in npu.OPTIONS.values() if o.tf2}
    assert fields == set(adapter_keys.TF2_FIELDS)


def test_options_go_to_their_nested_fields_before_the_device_opens(fake_npu_device, tmp_path):
    handle = npu.open_device(
        device_id=3, precision_mode_v2="origin", enable_dump=True, dump_path=str(tmp_path),
        profiling_mode=True, profiling_options={"output": "/tmp/p"}, graph_run_mode=0,
        input_shape="x:-1,8", dynamic_dims="2;4", dynamic_node_type=0)
    assert handle is not None
    log = fake_npu_device.log
    assert log[-2:] == [("open", 3), ("as_default",)]
    assert sorted(log[:-2]) == sorted([
        ("set", "precision_mode_v2", "origin"),
        ("set", "dump_config.enable_dump", True),
        ("set", "dump_config.dump_path", str(tmp_path)),
        ("set", "profiling_config.enable_profiling", True),
        ("set", "profiling_config.profiling_options", '{"output":"/tmp/p"}'),
        ("set", "graph_run_mode", 0),
        ("set", "experimental.multi_branches_config.input_shape", "x:-1,8"),
        ("set", "experimental.multi_branches_config.dynamic_dims", "2;4"),
        ("set", "experimental.multi_branches_config.dynamic_node_type", "0"),
    ])


def test_default_device_id_is_npu_devices_choice(fake_npu_device):
    npu.open_device()
    assert fake_npu_device.log == [("open", None), ("as_default",)]


def test_npu_device_refusing_a_value_is_reported_as_an_option_error(fake_npu_device):
    with pytest.raises(NpuOptionError, match="npu_device refused dynamic_node_type"):
        npu.open_device(input_shape="x:-1,8", dynamic_dims="2", dynamic_node_type=1)
    assert ("open", None) not in fake_npu_device.log


def test_tf1_only_keys_are_refused(fake_npu_device):
    with pytest.raises(ValueError, match="session_config"):
        npu.open_device(use_off_line=True)
    assert fake_npu_device.log == []


def test_bad_values_are_refused_before_npu_device_is_touched(fake_npu_device):
    with pytest.raises(ValueError, match="graph_run_mode"):
        npu.open_device(graph_run_mode=2)
    with pytest.raises(TypeError, match="jit_compile"):
        npu.open_device(jit_compile=False)
    assert fake_npu_device.log == []


def test_npu_device_only_options_are_accepted(fake_npu_device):
    npu.open_device(overflow_flag=0, recompute="auto")
    assert ("set", "overflow_flag", 0) in fake_npu_device.log
    assert ("set", "experimental.graph_memory_optimize_config.recompute", "auto") in fake_npu_device.log


def test_without_npu_device_the_error_says_how_to_get_it(no_npu_device):
    with pytest.raises(ImportError) as info:
        npu.open_device(precision_mode_v2="origin")
    assert isinstance(info.value, NpuStackError)
    assert "npu_device" in str(info.value) and "install" in str(info.value)


def test_without_npu_device_bad_options_still_raise_first(no_npu_device):
    with pytest.raises(ValueError, match="precision_mode"):
        npu.open_device(precision_mode="fastest")


def test_cpu_fallback_only_when_asked(no_npu_device):
    with pytest.warns(NpuPlacementWarning, match="Running on the CPU"):
        assert npu.open_device(fallback_to_cpu=True, precision_mode_v2="origin") is None
