"""TF2 on the NPU: open TF Adapter's device (``npu_device``) with validated options."""
import importlib
import numbers
import warnings

from .. import op_def
from ..errors import NpuOptionError, NpuOptionTypeError, NpuPlacementWarning, NpuStackError
from . import options as _options

HOW_TO_GET_NPU_DEVICE = (
    "npu_device is TF Adapter for TensorFlow 2 (tf_adapter_2.x in github.com/hicann/tensorflow): "
    "install the npu_device wheel that matches your CANN and TensorFlow (2.6.5), source "
    "CANN's set_env.sh, then check the stack with `tf-ge-custom doctor`.")


def how_to_get_npu_device(tensorflow_version=None):
    """:data:`HOW_TO_GET_NPU_DEVICE`, or on TensorFlow 1 that npu_device is not for it."""
    if tensorflow_version is None:
        import tensorflow as tf

        tensorflow_version = tf.__version__
    if tensorflow_version.startswith("1."):
        return ("npu_device is TF Adapter for TensorFlow 2 (2.6.5), and this is TensorFlow %s: on "
                "TensorFlow 1 use npu_bridge, with a session from tf_ge_custom.npu.session_config() "
                "(examples/tf1_session.py)." % tensorflow_version)
    return HOW_TO_GET_NPU_DEVICE


def _tf2_value(key, value):
    # npu_device's multi_branches_config spells dynamic_node_type as a string ('0').
    if key == "dynamic_node_type":
        return str(value)
    return value


def apply_options(global_options, values):
    """Set each validated option on ``npu_device.global_options()`` (its nested fields)."""
    for key in sorted(values):
        path = _options.OPTIONS[key].tf2.split(".")
        target = global_options
        for part in path[:-1]:
            target = getattr(target, part)
        value = _tf2_value(key, values[key])
        try:
            setattr(target, path[-1], value)
        except (TypeError, ValueError) as e:
            # npu_device checks its own allowed values (which can be narrower than TF1's).
            raise NpuOptionError(
                "open_device: npu_device refused %s=%r (field %s): %s"
                % (key, value, ".".join(path), e))


def open_device(device_id=None, fallback_to_cpu=False, **options):
    """Open TF Adapter's NPU device with ``options`` and make it the default device.

    Args:
      device_id: the NPU to open; None lets npu_device choose (``ASCEND_DEVICE_ID`` or 0).
      fallback_to_cpu: a bool. When ``npu_device`` cannot be imported or opening the device
        fails, warn once (naming the error) and return None (the program then runs on the
        CPU, the package's ops on their CPU kernels) instead of raising.
      **options: the same typed options as :func:`session_config`, named as TF Adapter's
        keys (``precision_mode_v2="origin"``, ``jit_compile="false"``, ``enable_dump=True,
        dump_path=...``); each goes to its field of ``npu_device.global_options()``
        (``dump_path`` -> ``dump_config.dump_path``, ``profiling_mode`` ->
        ``profiling_config.enable_profiling``). TF1-only keys are refused.

    Returns the device handle of ``npu_device.open(...).as_default()`` (None after a CPU
    fallback). Options are validated before npu_device is imported, so a bad value raises
    the same :class:`NpuOptionError` / :class:`NpuOptionTypeError` everywhere.

    Raises:
      NpuStackError: npu_device cannot be imported, or opening the device fails, and
        ``fallback_to_cpu`` is false (an ``ImportError``); the message says what failed and,
        for a missing npu_device, how to get it.
      NpuOptionTypeError: ``fallback_to_cpu`` is not a bool, ``device_id`` not an int.
    """
    if not isinstance(fallback_to_cpu, bool):
        raise NpuOptionTypeError("open_device: fallback_to_cpu must be a bool (True/False), "
                                 "got %r (%s)" % (fallback_to_cpu, type(fallback_to_cpu).__name__))
    if device_id is not None and (isinstance(device_id, bool) or
                                  not isinstance(device_id, numbers.Integral)):
        raise NpuOptionTypeError("open_device: device_id must be an int or None, got %r (%s)"
                                 % (device_id, type(device_id).__name__))
    if device_id is not None and device_id < 0:
        raise NpuOptionError("open_device: device_id must be >= 0, got %d" % device_id)
    values = _options.validate(options, _options.TF2)
    try:
        npu_device = importlib.import_module("npu_device")
    except ImportError as e:
        return _cannot_open("cannot import npu_device (%s). %s" % (e, how_to_get_npu_device()),
                            fallback_to_cpu, e)
    try:
        # npu_device reads global_options() once, inside open(): set them first.
        apply_options(npu_device.global_options(), values)
        handle = npu_device.open() if device_id is None else npu_device.open(int(device_id))
        return handle.as_default()
    except NpuOptionError:  # the adapter refused a value: the caller's to fix, not a fallback
        raise
    except Exception as e:  # the device did not open: no NPU, a driver or CANN problem
        return _cannot_open("npu_device could not open the NPU device%s: %s: %s" % (
            "" if device_id is None else " %d" % device_id, type(e).__name__, e),
            fallback_to_cpu, e)


def _cannot_open(message, fallback_to_cpu, cause):
    if not fallback_to_cpu:
        error = NpuStackError("open_device: " + message)
        error.__cause__ = cause
        raise error
    warnings.warn(
        "open_device(fallback_to_cpu=True): %s Running on the CPU instead: %s use "
        "their CPU kernels." % (message, op_def.python_names()), NpuPlacementWarning, stacklevel=3)
    return None
