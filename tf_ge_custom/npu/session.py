"""TF1 sessions on the NPU: a ``ConfigProto`` that routes the graph through TF Adapter.

TF Adapter (``npu_bridge``) acts through a Grappler custom optimizer named
``NpuOptimizer``: its ``parameter_map`` carries the options, and the documented
requirement is ``remapping`` and ``memory_optimization`` OFF (docs/ascend-stack.md, "TF1
session configuration"). The rest of the proto is set as TF Adapter's own helper sets it
(tf_adapter/python/npu_bridge/npu_init.py, ``npu_config_proto``). Without ``npu_bridge``
imported TensorFlow skips the unknown optimizer and the graph runs on the CPU, which is
what a machine without the NPU stack should do.
"""
import importlib
import importlib.util
import sys
import warnings

from .. import op_def
from ..errors import NpuOptionError, NpuOptionTypeError, NpuPlacementWarning
from . import options as _options

OPTIMIZER_NAME = "NpuOptimizer"
_warned = set()


def _attr_value_to_python(key, attr):
    """A parameter_map entry already in a config, as the Python value its option takes."""
    option = _options.OPTIONS.get(key)
    field = attr.WhichOneof("value")
    if option is None or not option.tf1:
        return attr  # validate() reports the key
    if field != option.attr_field:
        raise NpuOptionTypeError(
            "session_config: the given config's NpuOptimizer parameter %s holds an AttrValue "
            "of field %r, but TF Adapter reads field %r (it would silently use the default "
            "instead)" % (key, field, option.attr_field))
    value = getattr(attr, field)
    if field != "s":
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise NpuOptionError("session_config: the given config's NpuOptimizer parameter %s is "
                             "not UTF-8 text: %r" % (key, value))


def _ensure_npu_bridge():
    """Import npu_bridge when it is installed (it registers NpuOptimizer); else warn once."""
    if "npu_bridge" in sys.modules:
        return True
    try:
        spec = importlib.util.find_spec("npu_bridge")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        try:
            importlib.import_module("npu_bridge")
            return True
        except Exception as e:  # a broken installation: say so and run on the CPU
            reason = "npu_bridge is installed but failed to import (%s: %s)" % (type(e).__name__, e)
    else:
        reason = "npu_bridge (TF Adapter for TF1) is not installed"
    if "npu_bridge" not in _warned:
        _warned.add("npu_bridge")
        warnings.warn(
            "%s, so this session runs the whole graph, %s included, on the CPU. "
            "NPU placement needs npu_bridge: install the TF Adapter wheel that matches your "
            "CANN and TensorFlow (npu_bridge ships in it) and source CANN's set_env.sh. "
            "`tf-ge-custom doctor` checks the whole stack." % (reason, op_def.type_names()),
            NpuPlacementWarning, stacklevel=3)
    return False


def session_config(config=None, static_sink=False, **options):
    """A ``tf.compat.v1.ConfigProto`` that runs the session through TF Adapter on the NPU.

    Args:
      config: an existing ``ConfigProto`` to complete (it is copied, not modified), or
        None for a new one. NpuOptimizer parameters already in it are validated and kept
        unless an option of the same name is given here.
      static_sink: True for a static graph GE sinks to the device (each of the package's ops
        then runs as a task of the model, its launch declared when GE builds it: no host call per step and
        no copies around it; docs/npu.md, "Static, sunk graphs"). Sets
        ``compile_dynamic_mode=False`` and ``jit_compile="true"`` unless given, and refuses
        options that would make the graph dynamic (``compile_dynamic_mode=True``, another
        ``jit_compile``, ``input_shape``/``dynamic_dims`` gears). ``iterations_per_loop`` may
        be given with it.
      **options: TF Adapter's ``NpuOptimizer`` keys, typed: e.g. ``use_off_line=True``,
        ``graph_run_mode=0``, ``precision_mode_v2="origin"``, ``enable_dump=True,
        dump_path="/tmp/dump"``, ``profiling_options={"output": "/tmp/prof"}``. ``None``
        means "not set". Every key is listed in :data:`tf_ge_custom.npu.OPTIONS`.

    Returns the new ``ConfigProto``: one ``NpuOptimizer`` custom optimizer with the
    options in its ``parameter_map``, ``remapping`` and ``memory_optimization`` OFF,
    ``allow_soft_placement`` on and XLA auto-clustering off, as TF Adapter's own
    ``npu_config_proto`` makes it.
    When ``npu_bridge`` is installed it is imported here (it must be, for the optimizer to
    exist); without it, one warning says the graph will run on the CPU.

    Raises:
      NpuOptionError: an unknown key, a value outside its allowed set, a ``dump_path`` that
        is not an existing writable directory, options that contradict each other, or with
        ``static_sink`` options that would make the graph dynamic (a ``ValueError``).
      NpuOptionTypeError: an option or ``config`` of the wrong type (a ``TypeError``).
    """
    import tensorflow as tf

    from tensorflow.core.protobuf import rewriter_config_pb2

    if not isinstance(static_sink, bool):
        raise NpuOptionTypeError("session_config: static_sink must be a bool (True/False), got %r (%s)"
                                 % (static_sink, type(static_sink).__name__))
    if config is None:
        result = tf.compat.v1.ConfigProto()
    elif isinstance(config, tf.compat.v1.ConfigProto):
        result = tf.compat.v1.ConfigProto()
        result.CopyFrom(config)
    else:
        raise NpuOptionTypeError(
            "session_config: config must be a tf.compat.v1.ConfigProto or None, got %s"
            % type(config).__name__)

    rewrite = result.graph_options.rewrite_options
    npu_entries = [c for c in rewrite.custom_optimizers if c.name == OPTIMIZER_NAME]
    merged = {}
    for entry in npu_entries:
        for key in entry.parameter_map:
            merged[key] = _attr_value_to_python(key, entry.parameter_map[key])
    merged.update(options)
    values = _options.validate(merged, _options.TF1)
    if static_sink:
        values = _options.static_sink(values, _options.TF1)

    # One NpuOptimizer entry, placed where the first one was (order matters to Grappler).
    if npu_entries:
        keep = npu_entries[0]
        for extra in npu_entries[1:]:
            rewrite.custom_optimizers.remove(extra)
        keep.parameter_map.clear()
    else:
        keep = rewrite.custom_optimizers.add()
        keep.name = OPTIMIZER_NAME
    for key in sorted(values):
        attr = keep.parameter_map[key]
        field = _options.OPTIONS[key].attr_field
        if field == "b":
            attr.b = values[key]
        elif field == "i":
            attr.i = values[key]
        else:
            attr.s = values[key].encode("utf-8")
    # TF Adapter's documented requirement: these Grappler passes rewrite nodes into fused
    # or swapped forms GE cannot take. The adapter's helper writes RewriterConfig.OFF into
    # memory_optimization, whose number (2) is MANUAL in that field's own enum (MemOptType):
    # we write that same, hardware-tested value rather than NO_MEM_OPT.
    rewrite.remapping = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.OFF
    # Also as npu_config_proto: ops without an NPU kernel may stay on the CPU, and XLA's
    # auto-clustering must not take nodes away from TF Adapter.
    result.allow_soft_placement = True
    result.graph_options.optimizer_options.global_jit_level = \
        tf.compat.v1.OptimizerOptions.OFF

    _ensure_npu_bridge()
    return result
