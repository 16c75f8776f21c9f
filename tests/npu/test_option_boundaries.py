"""Each range option of tf_ge_custom/npu/options.py at both sides of each of its bounds.

A bound is accepted, the next value beyond it refused, naming the option: the TF1 path
(npu.session_config, whose value lands in the NpuOptimizer's parameter_map) and, for the
options npu_device has too, the TF2 path (options.convert with api=TF2, what open_device
runs). The bounds are written here from where they come from, not read from the table:

- TF Adapter's tf_adapter/util/npu_attrs.cc: ``checkDumpStep`` (at most 100 '|'-separated
  sets, each ``N`` or ``N-M`` with ``atoi(N) >= atoi(M)`` refused, so ``N-N`` is),
  ``CheckLocalRankId`` ("local rank id should be in [0,7]"), ``session_device_id``
  (negative: LOG(FATAL)), ``input_fusion_size`` (clamped to [0, 32 MiB]: refused here
  instead of silently changed);
- npu_bridge's npu_config.py: ``util.check_positive_integer(iterations_per_loop)``;
- this package's own choice where the adapter reads the value unchecked into a count or an
  index (``task_index``, ``graph_max_parallel_model_num``, ``topo_sorting_mode``): no
  negative index, at least one model;
- every other int option: what an AttrValue's int64 holds.
"""
import pytest

from tf_ge_custom import npu
from tf_ge_custom.errors import NpuOptionError
from tf_ge_custom.npu import options as options_module

pytestmark = pytest.mark.kind("oracle")

MIB = 1024 * 1024
INT64 = (-(2 ** 63), 2 ** 63 - 1)
# name: (smallest accepted, largest accepted); None: the int64 limit
BOUNDS = {
    "iterations_per_loop": (1, None),
    "graph_max_parallel_model_num": (1, None),
    "task_index": (0, None),
    "input_fusion_size": (0, 32 * MIB),
    "topo_sorting_mode": (0, None),
    "session_device_id": (0, None),
    "local_rank_id": (0, 7),
}
INT_OPTIONS = sorted(name for name, o in options_module.OPTIONS.items()
                     if o.kind == options_module.INT and not o.choices)


def _apis(name):
    option = options_module.OPTIONS[name]
    return [api for api, used in ((options_module.TF1, option.tf1), (options_module.TF2, option.tf2)) if used]


def _accepted(name, value):
    for api in _apis(name):
        assert options_module.convert(options_module.OPTIONS[name], value, api) == value
    if options_module.OPTIONS[name].tf1:
        config = npu.session_config(**{name: value})
        (entry,) = [c for c in config.graph_options.rewrite_options.custom_optimizers
                    if c.name == "NpuOptimizer"]
        assert entry.parameter_map[name].i == value


def _refused(name, value, words):
    for api in _apis(name):
        with pytest.raises(NpuOptionError, match=words) as info:
            options_module.convert(options_module.OPTIONS[name], value, api)
        assert name in str(info.value)
    if options_module.OPTIONS[name].tf1:
        with pytest.raises(NpuOptionError, match=name):
            npu.session_config(**{name: value})


def test_the_table_here_names_every_bounded_int_option():
    bounded = {name for name in INT_OPTIONS if options_module.OPTIONS[name].minimum is not None
               or options_module.OPTIONS[name].maximum is not None}
    assert bounded == set(BOUNDS)


@pytest.mark.parametrize("name", INT_OPTIONS)
def test_each_int_option_at_its_bounds(name):
    low, high = BOUNDS.get(name, (None, None))
    if low is None:
        _accepted(name, INT64[0])
        _refused(name, INT64[0] - 1, "64 bits")
    else:
        _accepted(name, low)
        _accepted(name, low + 1)
        _refused(name, low - 1, ">= %d" % low)
    if high is None:
        _accepted(name, INT64[1])
        _refused(name, INT64[1] + 1, "64 bits")
    else:
        _accepted(name, high)
        _accepted(name, high - 1)
        _refused(name, high + 1, "<= %d" % high)


@pytest.mark.parametrize("step", [0, 5, 99, 2 ** 31 - 2])
def test_a_dump_step_range_must_grow(step):
    _refused_step("%d-%d" % (step, step))  # N-N: checkDumpStep's atoi(N) >= atoi(M)
    _refused_step("%d-%d" % (step + 1, step))
    _accepted_step("%d-%d" % (step, step + 1))
    _accepted_step("%d" % step)
    _refused_step("0|%d-%d|7" % (step, step))  # one bad set among good ones


def test_dump_step_takes_at_most_100_sets():
    _accepted_step("|".join(str(i) for i in range(100)))
    _accepted_step("|".join("%d-%d" % (2 * i, 2 * i + 1) for i in range(100)))
    _refused_step("|".join(str(i) for i in range(101)), "at most 100")


def _accepted_step(value):
    for api in _apis("dump_step"):
        assert options_module.convert(options_module.OPTIONS["dump_step"], value, api) == value
    config = npu.session_config(dump_step=value)
    (entry,) = [c for c in config.graph_options.rewrite_options.custom_optimizers
                if c.name == "NpuOptimizer"]
    assert entry.parameter_map["dump_step"].s == value.encode()


def _refused_step(value, words="from a smaller to a larger step"):
    assert _apis("dump_step") == [options_module.TF1, options_module.TF2]
    for api in _apis("dump_step"):
        with pytest.raises(NpuOptionError, match=words):
            options_module.convert(options_module.OPTIONS["dump_step"], value, api)
    with pytest.raises(NpuOptionError, match="dump_step"):
        npu.session_config(dump_step=value)
