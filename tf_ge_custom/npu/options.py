"""The NPU options, typed and validated before TensorFlow or TF Adapter ever sees them.

Every option is named exactly as TF Adapter's key, so the adapter's documentation applies
unchanged. TF1 keys are the ``NpuOptimizer`` ``parameter_map`` keys that
tf_adapter/util/npu_attrs.cc reads (``NpuAttrs::SetNpuOptimizerAttr``, plus
``const_input`` from ``GetPassOptions``), each with the ``AttrValue`` field it reads
(``b``/``i``/``s``). The adapter reads a wrongly typed value as its default, ignores unknown
keys, and aborts the whole process (``LOG(FATAL)``) on some values, so everything is
checked here and raises :class:`NpuOptionError` (a ``ValueError``) or
:class:`NpuOptionTypeError` (a ``TypeError``).

``tf2`` is the field under ``npu_device.global_options()``
(tf_adapter_2.x/python/npu_device/configs/*.py) that holds the same setting. Allowed-value
sets come from the TF1 adapter's checks, or from npu_device's option table where the TF1
adapter passes the value to GE unchecked.

Pure Python (no TensorFlow import).
"""
import difflib
import json
import numbers
import os
import re
import warnings
from typing import Callable, NamedTuple, Optional, Tuple

from .. import _files as files
from .. import op_def
from ..errors import NpuOptionError, NpuOptionTypeError

BOOL, INT, STR, JSON = "bool", "int", "str", "json"
# The AttrValue field TF Adapter reads for each kind (JSON options travel as strings).
ATTR_FIELD = {BOOL: "b", INT: "i", STR: "s", JSON: "s"}
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
# JSON-valued options are flat objects (profiling_options); GE parses them recursively.
JSON_MAX_DEPTH = 32


class Option(NamedTuple):
    """One option: its adapter key, Python type, allowed values and where it goes."""

    name: str
    kind: str  # BOOL, INT, STR or JSON (a dict, or a string holding a JSON object)
    choices: Tuple = ()  # allowed values; empty: any value of the kind
    minimum: Optional[int] = None
    maximum: Optional[int] = None
    check: Optional[Callable] = None  # value -> "" when fine, else what is wrong with it
    tf1: bool = True  # an NpuOptimizer parameter_map key (session_config)
    tf2: Optional[str] = None  # dotted field under npu_device.global_options() (open_device)
    deprecated: Optional[str] = None  # replacement key ("" for none): warns when used

    @property
    def attr_field(self):
        return ATTR_FIELD[self.kind]


# --- value checks (each returns "" or what is wrong) --------------------------------


def _readable_writable_dir(value):
    # npu_attrs.cc CheckPath: a folder (mmIsDir), realpath-able, readable and writable.
    if not os.path.isdir(value):
        return "%r is not an existing directory" % value
    if not os.access(os.path.realpath(value), os.R_OK | os.W_OK):
        return "directory %r is not readable and writable by this user" % value
    return ""


# The adapter's checks use std::regex, whose [0-9] and \d are ASCII digits; Python's \d
# also takes other scripts' digits (Arabic-Indic, fullwidth), so the patterns spell [0-9]
# and match the whole string (with "$", a trailing newline would pass too).
_STEP = re.compile(r"([0-9]+)(?:-([0-9]+))?")
_SHAPE_ITEM = re.compile(r"[\s\S]+:((?:[0-9]+|-[0-9]+),)+")
_SIZES = re.compile(r"([0-9]+,)+")


def _dump_step(value):
    # npu_attrs.cc checkDumpStep: at most 100 '|'-separated sets, each "N" or "N-M" (N < M).
    sets = value.split("|") if value else []
    if len(sets) > 100:
        return "at most 100 '|'-separated step sets are allowed, got %d" % len(sets)
    for item in sets:
        match = _STEP.fullmatch(item)
        if not match:
            return ("%r is not a step or a step range (ASCII digits); expected e.g. '0|5|10-20'"
                    % item)
        if match.group(2) is not None and int(match.group(1)) >= int(match.group(2)):
            return "range %r must go from a smaller to a larger step, e.g. '10-20'" % item
    return ""


def _input_shape(value):
    # npu_attrs.cc CheckInputShape: "name:d,d;name:d,d" (dims may be -1).
    for item in value.split(";"):
        if not _SHAPE_ITEM.fullmatch(item + ","):
            return ("%r is not 'name:dim,dim' (ASCII digits); expected e.g. "
                    "'x:-1,2048;y:-1,2048'" % item)
    return ""


def _dynamic_dims(value):
    # npu_attrs.cc CheckDynamicDims: ';'-separated lists of non-negative integers.
    for item in value.split(";"):
        if not _SIZES.fullmatch(item + ","):
            return ("%r is not a comma-separated list of sizes (ASCII digits); expected e.g. "
                    "'8,8;16,16'" % item)
    return ""


def _device_list(value):
    # npu_attrs.cc CheckDeviceList.
    if not _SIZES.fullmatch(value + ","):
        return "expected comma-separated device ids (ASCII digits), e.g. '0,1,2,3'"
    return ""


def _json_object_text(value):
    try:
        document = files.parse_json(value, "the value", JSON_MAX_DEPTH)
    except files.FileProblem as e:
        return str(e)
    if not isinstance(document, dict):
        return "expected a JSON object, got a JSON %s" % type(document).__name__
    return ""


def _text_problem(value):
    """Why ``value`` cannot travel to the adapter as text ("" when it can).

    TF1 options go into an ``AttrValue``'s bytes as UTF-8 and TF2 options through pybind11
    (UTF-8 too); the adapter hands them to C APIs that stop at a NUL character.
    """
    if "\0" in value:
        return "contains a NUL character, which the adapter would cut the value at"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return ("is not encodable as UTF-8 (%r at index %d: %s; a path read from a non-UTF-8 "
                "file name?), but the adapter takes UTF-8 text" % (value[e.start:e.end],
                                                                    e.start, e.reason))
    return ""


# --- the table -----------------------------------------------------------------------

_PRECISION_MODES = ("force_fp32", "allow_fp32_to_fp16", "force_fp16", "must_keep_origin_dtype",
                    "allow_mix_precision", "cube_fp16in_fp32out", "allow_mix_precision_fp16",
                    "allow_mix_precision_bf16", "allow_fp32_to_bf16")
_PRECISION_MODES_V2 = ("fp16", "origin", "cube_fp16in_fp32out", "mixed_float16",
                       "mixed_bfloat16", "cube_hif8", "mixed_hif8")
_MIX_PRECISION = ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")
_MIX_PRECISION_V2 = ("mixed_float16", "mixed_bfloat16", "mixed_hif8")
_BRANCHES = "experimental.multi_branches_config."


def _o(name, kind, tf2=None, **fields):
    return Option(name, kind, tf2=tf2, **fields)


OPTIONS = {o.name: o for o in (
    # Placement and compilation
    _o("use_off_line", BOOL),
    _o("mix_compile_mode", BOOL),
    _o("compile_dynamic_mode", BOOL, "compile_dynamic_mode"),
    _o("graph_run_mode", INT, "graph_run_mode", choices=(0, 1)),  # > 1: LOG(FATAL)
    _o("jit_compile", STR, "jit_compile", choices=("true", "false", "auto")),
    _o("iterations_per_loop", INT, minimum=1),
    _o("graph_max_parallel_model_num", INT, minimum=1),
    _o("lower_functional_ops", BOOL),
    _o("job", STR),
    _o("task_index", INT, minimum=0),
    _o("soc_config", STR),
    _o("device_type", STR),
    _o("shape_generalization_mode", STR, "shape_generalization_mode",
       choices=("STRICT", "FULL", "ADAPTIVE")),
    _o("graph_compiler_cache_dir", STR, "graph_compiler_cache_dir"),
    _o("op_compiler_cache_mode", STR, "op_compiler_cache_mode",
       choices=("enable", "disable", "force")),
    _o("op_compiler_cache_dir", STR, "op_compiler_cache_dir"),
    _o("oo_level", STR, "oo_level", choices=("O0", "O1", "O2", "O3")),
    _o("oo_constant_folding", BOOL, "oo_constant_folding"),
    _o("optimization_switch", STR, "optimization_switch"),
    _o("export_compile_stat", INT, "export_compile_stat", choices=(0, 1, 2)),
    _o("aicore_num", STR, "aicore_num"),
    _o("enable_scope_fusion_passes", STR, "enable_scope_fusion_passes"),
    _o("fusion_switch_file", STR, "fusion_switch_file"),
    _o("buffer_optimize", STR, choices=("l2_optimize", "off_optimize")),  # else LOG(FATAL)
    _o("enable_small_channel", INT, "enable_small_channel", choices=(0, 1)),
    _o("is_tailing_optimization", BOOL, "is_tailing_optimization"),
    _o("input_fusion_size", INT, "input_fusion_size", minimum=0, maximum=32 * 1024 * 1024),
    _o("input_batch_cpy", BOOL, "input_batch_cpy"),
    _o("all_tensor_not_empty", BOOL, "all_tensor_not_empty"),
    _o("auto_multistream_parallel_mode", STR, "auto_multistream_parallel_mode"),
    _o("stream_max_parallel_num", STR, "stream_max_parallel_num"),
    _o("ac_parallel_enable", STR, "ac_parallel_enable", choices=("0", "1")),
    _o("topo_sorting_mode", INT, "topo_sorting_mode", minimum=0),
    _o("insert_op_file", STR),
    _o("resource_config_path", STR, "experimental.resource_config_path"),
    _o("graph_parallel_option_path", STR, "experimental.graph_parallel_option_path"),
    _o("enable_graph_parallel", BOOL, "experimental.enable_graph_parallel"),
    _o("graph_slice", STR, "experimental.graph_memory_optimize_config.graph_slice",
       choices=("auto", "manual")),
    _o("external_weight", BOOL, "external_weight"),
    _o("frozen_variable", BOOL),
    _o("variable_placement", STR, choices=("Host", "Device")),  # else LOG(FATAL)
    _o("const_input", STR),
    _o("in_out_pair_flag", BOOL),
    _o("in_out_pair", STR),
    _o("experimental_accelerate_train_mode", STR),
    # Precision
    _o("precision_mode", STR, "precision_mode", choices=_PRECISION_MODES),
    _o("precision_mode_v2", STR, "precision_mode_v2", choices=_PRECISION_MODES_V2),
    _o("modify_mixlist", STR, "modify_mixlist"),
    _o("op_precision_mode", STR, "op_precision_mode"),
    _o("customize_dtypes", STR, "customize_dtypes"),
    _o("deterministic", INT, "deterministic", choices=(0, 1)),
    _o("quant_dumpable", STR, "quant_dumpable", choices=("0", "1")),
    # Dynamic shapes: input_shape, dynamic_dims, dynamic_node_type go together (LOG(FATAL))
    _o("input_shape", STR, _BRANCHES + "input_shape", check=_input_shape),
    _o("dynamic_dims", STR, _BRANCHES + "dynamic_dims", check=_dynamic_dims),
    _o("dynamic_node_type", INT, _BRANCHES + "dynamic_node_type", choices=(0, 1)),
    _o("compile_hybrid_mode", INT, choices=(0, 1)),
    # Dump and debugging
    _o("enable_dump", BOOL, "dump_config.enable_dump"),
    _o("dump_path", STR, "dump_config.dump_path", check=_readable_writable_dir),
    _o("dump_step", STR, "dump_config.dump_step", check=_dump_step),
    _o("dump_mode", STR, "dump_config.dump_mode", choices=("input", "output", "all")),
    _o("enable_dump_debug", BOOL, "dump_config.enable_dump_debug"),
    _o("dump_debug_mode", STR, "dump_config.dump_debug_mode",
       choices=("aicore_overflow", "atomic_overflow", "all")),
    _o("dump_data", STR, "dump_config.dump_data", choices=("tensor", "stats")),
    _o("dump_layer", STR, "dump_config.dump_layer"),
    _o("enable_exception_dump", INT, "enable_exception_dump", choices=(0, 1, 2)),
    _o("op_debug_config", STR, "op_debug_config"),
    _o("debug_dir", STR, "debug_dir"),
    # Profiling
    _o("profiling_mode", BOOL, "profiling_config.enable_profiling"),
    _o("profiling_options", JSON, "profiling_config.profiling_options"),
    # Tuning (AOE)
    _o("aoe_mode", STR, "aoe_config.aoe_mode", choices=("1", "2", "4")),
    _o("work_path", STR, "aoe_config.work_path", check=_readable_writable_dir),
    _o("aoe_config_file", STR, "aoe_config.aoe_config_file"),
    _o("distribute_config", STR),
    _o("auto_tune_mode", STR),
    # Memory
    _o("graph_memory_max_size", STR, "graph_memory_max_size"),
    _o("variable_memory_max_size", STR, "variable_memory_max_size"),
    _o("static_memory_policy", INT, "memory_config.static_memory_policy",
       choices=(0, 1, 2, 3, 4)),
    _o("atomic_clean_policy", INT, "memory_config.atomic_clean_policy", choices=(0, 1)),
    _o("variable_use_1g_huge_page", INT, "memory_config.variable_use_1g_huge_page",
       choices=(0, 1, 2)),
    _o("memory_optimization_policy", STR),
    _o("enable_compress_weight", BOOL),
    _o("compress_weight_conf", STR),
    # Devices, collectives and timeouts
    _o("session_device_id", INT, minimum=0),  # negative: LOG(FATAL)
    _o("local_rank_id", INT, minimum=0, maximum=7),
    _o("local_device_list", STR, check=_device_list),
    _o("hcom_parallel", BOOL, "hcom_parallel"),
    _o("hcom_multi_mode", BOOL, "hcom_multi_mode"),
    _o("HCCL_algorithm", STR),
    _o("hccl_timeout", INT),
    _o("op_wait_timeout", INT),
    _o("op_execute_timeout", INT),
    _o("graph_exec_timeout", INT, "graph_exec_timeout"),
    _o("stream_sync_timeout", INT, "stream_sync_timeout"),
    _o("event_sync_timeout", INT, "event_sync_timeout"),
    _o("experimental_logical_device_cluster_deploy_mode", STR,
       "experimental.logical_device_deploy_config.logical_device_cluster_deploy_mode",
       choices=("LB", "SINGLE")),
    _o("experimental_logical_device_id", STR,
       "experimental.logical_device_deploy_config.logical_device_id"),
    _o("experimental_model_deploy_mode", STR,
       "experimental.model_deploy_config.model_deploy_mode"),
    _o("experimental_model_deploy_devicelist", STR,
       "experimental.model_deploy_config.model_deploy_devicelist"),
    # Deprecated by the adapter (it logs a replacement); accepted with a warning
    _o("variable_format_optimize", BOOL, "variable_format_optimize", deprecated=""),
    _o("enable_data_pre_proc", BOOL, deprecated=""),
    _o("op_debug_level", INT, "op_debug_level", choices=(0, 1, 2, 3, 4),
       deprecated="op_debug_config"),
    _o("op_select_implmode", STR, "op_select_implmode",
       choices=("high_precision", "high_performance", "high_precision_for_all",
                "high_performance_for_all"), deprecated="op_precision_mode"),
    _o("optypelist_for_implmode", STR, "optypelist_for_implmode",
       deprecated="op_precision_mode"),
    _o("dynamic_input", BOOL, deprecated=""),
    _o("dynamic_graph_execute_mode", STR, choices=("lazy_recompile", "dynamic_execute"),
       deprecated=""),
    _o("dynamic_inputs_shape_range", STR, deprecated=""),
    # npu_device (TF2) only
    _o("overflow_flag", INT, "overflow_flag", choices=(0, 1), tf1=False),
    _o("execute_times", INT, "execute_times", tf1=False),
    _o("recompute", STR, "experimental.graph_memory_optimize_config.recompute",
       choices=("auto", "manual"), tf1=False),
)}

TF1 = "session_config"
TF2 = "open_device"


def _kind_name(kind):
    return {BOOL: "a bool (True/False)", INT: "an int", STR: "a str",
            JSON: "a dict or a str holding a JSON object"}[kind]


def _unknown(name, api):
    names = [o.name for o in OPTIONS.values() if (o.tf1 if api == TF1 else o.tf2)]
    close = difflib.get_close_matches(name, names, n=3)
    hint = (" Did you mean %s?" % " or ".join(repr(c) for c in close)) if close else ""
    return NpuOptionError(
        "%s: unknown NPU option %r.%s TF Adapter would ignore it silently; the options are "
        "named exactly as TF Adapter's keys (see tf_ge_custom.npu.OPTIONS)." % (api, name, hint))


_ECHO_MAX = 80  # characters of a refused value a message repeats


def _short(value):
    return "%r... (%d characters)" % (value[:_ECHO_MAX], len(value))


def convert(option, value, api=TF1):
    """``value`` checked against ``option``; returns the value to pass on (JSON: a str).

    A refusal repeats at most the first characters of a long value."""
    try:
        return _convert(option, value, api)
    except (NpuOptionError, NpuOptionTypeError) as e:
        if not isinstance(value, str) or len(value) <= _ECHO_MAX:
            raise
        message = str(e).replace(repr(value), _short(value)).replace(value, _short(value))
        if len(message) > 20 * _ECHO_MAX:  # a long part of the value quoted on its own
            message = message[:10 * _ECHO_MAX] + "... (the value has %d characters)" % len(value)
        raise type(e)(message) from None


def _convert(option, value, api=TF1):
    where = "%s: option %s" % (api, option.name)
    kind = option.kind
    if kind == BOOL:
        if not isinstance(value, bool):
            raise NpuOptionTypeError("%s must be %s, got %r (%s)" % (
                where, _kind_name(kind), value, type(value).__name__))
    elif kind == INT:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise NpuOptionTypeError("%s must be %s, got %r (%s)" % (
                where, _kind_name(kind), value, type(value).__name__))
        value = int(value)
        if not _INT64[0] <= value <= _INT64[1]:
            raise NpuOptionError("%s must fit in 64 bits, got %d" % (where, value))
    elif kind == STR:
        if not isinstance(value, str):
            raise NpuOptionTypeError("%s must be %s, got %r (%s)%s" % (
                where, _kind_name(kind), value, type(value).__name__,
                " (TF Adapter spells it as a string: %r)" % str(value).lower()
                if isinstance(value, bool) else ""))
        if _text_problem(value):
            raise NpuOptionError("%s %s" % (where, _text_problem(value)))
    elif kind == JSON:
        if isinstance(value, dict):
            try:
                value = json.dumps(value, separators=(",", ":"), allow_nan=False,
                                   ensure_ascii=False)
            except TypeError as e:
                raise NpuOptionTypeError("%s: the dict cannot be written as JSON: %s" % (where, e))
            except ValueError as e:  # NaN/Infinity, a circular reference
                raise NpuOptionError("%s: the dict cannot be written as standard JSON: %s"
                                     % (where, e))
            except RecursionError:
                raise NpuOptionError("%s: the dict nests too deeply to be written as JSON"
                                     % where)
        elif not isinstance(value, str):
            raise NpuOptionTypeError("%s must be %s, got %r (%s)" % (
                where, _kind_name(kind), value, type(value).__name__))
        problem = _text_problem(value) or _json_object_text(value)
        if problem:
            raise NpuOptionError("%s: %s" % (where, problem))
    if option.choices and value not in option.choices:
        raise NpuOptionError("%s must be one of %s, got %r" % (
            where, ", ".join(repr(c) for c in option.choices), value))
    if option.minimum is not None and value < option.minimum:
        raise NpuOptionError("%s must be >= %d, got %d" % (where, option.minimum, value))
    if option.maximum is not None and value > option.maximum:
        raise NpuOptionError("%s must be <= %d, got %d" % (where, option.maximum, value))
    if option.check is not None:
        problem = option.check(value)
        if problem:
            raise NpuOptionError("%s: %s" % (where, problem))
    return value


def _check_combination(values, api):
    def given(name):
        return values.get(name) is not None

    if given("precision_mode") and given("precision_mode_v2"):
        raise NpuOptionError(
            "%s: precision_mode and precision_mode_v2 are mutually exclusive (TF Adapter "
            "refuses both); pass only one (precision_mode_v2 is the newer spelling)" % api)
    for switch in ("enable_dump", "enable_dump_debug"):
        if values.get(switch) and not given("dump_path"):
            raise NpuOptionError(
                "%s: %s=True needs dump_path, an existing writable directory for the dump "
                "files" % (api, switch))
    trio = ("input_shape", "dynamic_dims", "dynamic_node_type")
    present = [n for n in trio if given(n)]
    if present and len(present) != len(trio):
        raise NpuOptionError(
            "%s: input_shape, dynamic_dims and dynamic_node_type go together (TF Adapter "
            "aborts the process otherwise); got only %s" % (api, ", ".join(present)))
    if values.get("compile_hybrid_mode") == 1 and values.get("dynamic_node_type") != 1:
        raise NpuOptionError(
            "%s: compile_hybrid_mode=1 needs input_shape, dynamic_dims and "
            "dynamic_node_type=1" % api)
    if given("optypelist_for_implmode") and not given("op_select_implmode"):
        raise NpuOptionError(
            "%s: optypelist_for_implmode needs op_select_implmode (TF Adapter aborts the "
            "process otherwise); better, use op_precision_mode" % api)
    if given("enable_compress_weight") and given("compress_weight_conf"):
        raise NpuOptionError(
            "%s: enable_compress_weight and compress_weight_conf are mutually exclusive "
            "(TF Adapter aborts the process otherwise)" % api)
    if given("modify_mixlist") and not (values.get("precision_mode") in _MIX_PRECISION or
                                        values.get("precision_mode_v2") in _MIX_PRECISION_V2):
        raise NpuOptionError(
            "%s: modify_mixlist needs a mixed precision mode: precision_mode in %s or "
            "precision_mode_v2 in %s" % (api, ", ".join(_MIX_PRECISION),
                                         ", ".join(_MIX_PRECISION_V2)))


def validate(options, api=TF1, warn_deprecated=True):
    """Check every option (keys, types, values, combinations); return ``{key: value}``.

    ``None`` values mean "not set" and are dropped. ``api`` is :data:`TF1`
    (``session_config``: parameter_map keys) or :data:`TF2` (``open_device``: options
    npu_device has). Raises :class:`NpuOptionError` / :class:`NpuOptionTypeError`.
    """
    if api not in (TF1, TF2):
        raise ValueError("api must be %r or %r" % (TF1, TF2))
    values = {}
    for name, value in options.items():
        option = OPTIONS.get(name)
        if option is None:
            raise _unknown(name, api)
        if api == TF1 and not option.tf1:
            raise NpuOptionError(
                "%s: %s is an npu_device (TF2) option; TF1's NpuOptimizer has no such key. "
                "Pass it to tf_ge_custom.npu.open_device()." % (api, name))
        if api == TF2 and option.tf2 is None:
            raise NpuOptionError(
                "%s: %s is a TF1 NpuOptimizer key that npu_device (TF2) does not have. "
                "Pass it to tf_ge_custom.npu.session_config() in a TF1 program." % (api, name))
        if value is None:
            continue
        values[name] = convert(option, value, api)
        if option.deprecated is not None and warn_deprecated:
            warnings.warn(
                "NPU option %s is deprecated by TF Adapter%s" % (
                    name, "; use %s" % option.deprecated if option.deprecated else ""),
                DeprecationWarning, stacklevel=3)
    _check_combination(values, api)
    return values


# --- static, sunk graphs (docs/npu.md, "Static, sunk graphs") -------------------------------
# What session_config(static_sink=True) sets unless given: every input shape starts static
# (compile_dynamic_mode off) and a changed shape recompiles a static graph (jit_compile
# "true") instead of generalising it to a dynamic one, which GE would run through Execute.
STATIC_SINK_DEFAULTS = {"compile_dynamic_mode": False, "jit_compile": "true"}
# Options that make some dimension unknown (dynamic gears) and so the graph dynamic.
_DYNAMIC_SHAPE_OPTIONS = ("input_shape", "dynamic_dims", "dynamic_node_type", "compile_hybrid_mode")


def static_sink(values, api=TF1):
    """``values`` (validated options) completed for a static graph GE sinks to the device.

    Adds :data:`STATIC_SINK_DEFAULTS` for what is not given; raises :class:`NpuOptionError`
    naming the option when a given one would make the graph dynamic (``compile_dynamic_mode``
    True, ``jit_compile`` other than "true", dynamic gears). ``iterations_per_loop`` is kept:
    above 1 it sinks that many steps per ``session.run`` (the training loop must use TF
    Adapter's loop helpers for it, docs/npu.md).
    """
    where = "%s(static_sink=True)" % api
    if values.get("compile_dynamic_mode") is True:
        raise NpuOptionError(
            "%s: compile_dynamic_mode=True makes every input dynamic, so GE runs %s through "
            "Execute on the host at every step instead of sinking the graph; drop it or pass "
            "static_sink=False" % (where, op_def.type_names()))
    jit = values.get("jit_compile")
    if jit is not None and jit != "true":
        raise NpuOptionError(
            "%s: jit_compile=%r lets TF Adapter generalise a changed input shape to a dynamic graph "
            "(run through Execute); a static, sunk graph needs jit_compile='true' (recompile on a new "
            "shape)" % (where, jit))
    given = [name for name in _DYNAMIC_SHAPE_OPTIONS if values.get(name) is not None]
    if given:
        raise NpuOptionError(
            "%s: %s give the graph dynamic dimensions (gears); a static, sunk graph has fixed "
            "shapes: drop %s or pass static_sink=False" % (where, ", ".join(given),
                                                          "it" if len(given) == 1 else "them"))
    completed = dict(STATIC_SINK_DEFAULTS)
    completed.update(values)
    return completed
