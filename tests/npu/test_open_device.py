"""open_device(): options to npu_device.global_options(), then open().as_default().

npu_device cannot run here (it needs CANN and an NPU). ``FakeNpuDevice`` is a test double:
its option tree has exactly the fields of npu_device's NpuConfig (adapter_keys.TF2_FIELDS,
generated from npu_config.py and the configs it nests), refuses others with ValueError as
NpuBaseConfig does, and records the order of calls. These tests check our process handling
(which fields open_device sets, in what order, what it returns and reports), not TF Adapter.
"""
import importlib.util
import os
import sys
import types

import pytest

pytestmark = pytest.mark.kind("doubles")

from tf_ge_custom import npu
from tf_ge_custom import errors as tf_ge_custom_errors
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
                device.default = type("DefaultDevice", (), {})()  # not the handle itself
                return device.default

        return Handle()


@pytest.fixture
def fake_npu_device(monkeypatch):
    fake = FakeNpuDevice()
    monkeypatch.setitem(sys.modules, "npu_device", fake)
    return fake


@pytest.fixture
def no_npu_device(monkeypatch):
    monkeypatch.setitem(sys.modules, "npu_device", None)  # import raises ImportError


@pytest.mark.kind("oracle")
def test_every_tf2_field_in_the_table_exists_in_npu_device():
    fields = {o.tf2 for o in npu.OPTIONS.values() if o.tf2}
    assert fields == set(adapter_keys.TF2_FIELDS)


def test_options_go_to_their_nested_fields_before_the_device_opens(fake_npu_device, tmp_path):
    handle = npu.open_device(
        device_id=3, precision_mode_v2="origin", enable_dump=True, dump_path=str(tmp_path),
        profiling_mode=True, profiling_options={"output": "/tmp/p"}, graph_run_mode=0,
        input_shape="x:-1,8", dynamic_dims="2;4", dynamic_node_type=0)
    assert handle is fake_npu_device.default  # what open(...).as_default() returned
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


# --- hostile trial: booleans only, and a device that fails to open ---------------


class FailingNpuDevice(FakeNpuDevice):
    """npu_device whose open() fails the way a host without a usable NPU makes it fail."""

    def open(self, device_id=None):
        self.log.append(("open", device_id))
        raise RuntimeError("aclrtSetDevice failed, error code 507033")


@pytest.fixture
def failing_npu_device(monkeypatch):
    fake = FailingNpuDevice()
    monkeypatch.setitem(sys.modules, "npu_device", fake)
    return fake


@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, [], "yes"])
def test_fallback_to_cpu_takes_booleans_only(fake_npu_device, value):
    with pytest.raises(TypeError, match="fallback_to_cpu must be a bool") as info:
        npu.open_device(fallback_to_cpu=value)
    assert isinstance(info.value, tf_ge_custom_errors.NpuOptionTypeError)
    assert fake_npu_device.log == []  # refused before npu_device is touched


@pytest.mark.parametrize("device_id, error", [
    ("0", TypeError), (1.0, TypeError), (True, TypeError), (-1, ValueError)])
def test_device_id_is_a_non_negative_int(fake_npu_device, device_id, error):
    with pytest.raises(error, match="device_id"):
        npu.open_device(device_id=device_id)
    assert fake_npu_device.log == []


def test_a_failing_open_falls_back_with_one_warning_naming_the_error(failing_npu_device):
    with pytest.warns(NpuPlacementWarning) as caught:
        assert npu.open_device(fallback_to_cpu=True, precision_mode_v2="origin") is None
    messages = [str(w.message) for w in caught if issubclass(w.category, NpuPlacementWarning)]
    assert len(messages) == 1
    assert "507033" in messages[0] and "RuntimeError" in messages[0]
    assert "Running on the CPU" in messages[0]
    assert ("open", None) in failing_npu_device.log


def test_a_failing_open_without_fallback_is_a_stack_error(failing_npu_device):
    with pytest.raises(NpuStackError, match="could not open the NPU device 2: RuntimeError") as info:
        npu.open_device(device_id=2)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_an_option_npu_device_refuses_is_not_turned_into_a_fallback(fake_npu_device):
    with pytest.raises(NpuOptionError, match="npu_device refused"):
        npu.open_device(fallback_to_cpu=True, input_shape="x:-1,8", dynamic_dims="2",
                        dynamic_node_type=1)
