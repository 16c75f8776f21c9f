"""Make the package's OPP root visible to TF Adapter, GE and ATC: ``ASCEND_CUSTOM_OPP_PATH``.

``import tf_ge_custom`` calls :func:`activate` before TensorFlow is imported. It puts the
OPP root first in ``ASCEND_CUSTOM_OPP_PATH`` exactly once, keeps every other entry in its
order, drops empty entries and never inserts a relative path, nor a path holding ``:`` (the
list's separator: the stack would split it into two bogus entries; it warns once instead,
and ``tf-ge-custom doctor`` FAILs). Set ``TF_GE_CUSTOM_SET_OPP_PATH=0`` to leave the variable
alone.

The stack reads the variable once per process (TF1's adapter when the first session
optimizes a graph, TF2's ``npu_device.open()``, GE at initialisation), so a one-time
warning says when that may already have happened, or when TF1's adapter would ignore the
variable altogether (an old-layout ``ASCEND_OPP_PATH``). Programs that do not import this
package (``atc``) need the variable exported in the shell: ``tf-ge-custom doctor`` prints
the line.

Standard library only: this runs on every ``import tf_ge_custom``.
"""
import os
import sys
import warnings

from . import op_def
from .errors import NpuPlacementWarning
from .opp import opp_root

CUSTOM_OPP_PATH_VAR = "ASCEND_CUSTOM_OPP_PATH"
OPP_PATH_VAR = "ASCEND_OPP_PATH"
OPT_OUT_VAR = "TF_GE_CUSTOM_SET_OPP_PATH"
_OFF = ("0", "false", "no", "off")
# TF1's adapter falls back to this when ASCEND_OPP_PATH is unset
# (tf_adapter/util/npu_ops_identifier.cc, NpuOpsIdentifier constructor).
DEFAULT_OPP_PATH = "/usr/local/Ascend/opp"

# Survives importlib.reload of this module, so that warnings stay one-time and the
# variable's value before the first activation stays known.
try:
    _state  # noqa: F821 (defined by an earlier execution of this module)
except NameError:
    _state = {"original": None, "recorded": False, "warned": set(), "last": None}


class Activation(object):
    """What :func:`activate` found and did (``tf-ge-custom doctor`` reports it)."""

    def __init__(self, root, before, after, changed, skipped_reason):
        self.root = root  # the OPP root it inserts
        self.before = before  # the variable's value before this call (None: unset)
        self.after = after  # its value after this call (None: unset)
        self.changed = changed  # whether this call changed the variable
        self.skipped_reason = skipped_reason  # "" when it ran; else why it did nothing

    def __repr__(self):
        return "Activation(root=%r, before=%r, after=%r, changed=%r, skipped_reason=%r)" % (
            self.root, self.before, self.after, self.changed, self.skipped_reason)


def split_path_list(value):
    """The entries of a ``:``-separated path list, in order (empty entries included)."""
    return value.split(":") if value else []


def _same_directory(entry, root):
    # Only absolute entries can name the root for sure: a relative one depends on the CWD
    # of whichever program reads it, so it is left as the user wrote it.
    if not os.path.isabs(entry):
        return False
    # As the stack resolves them: "/w/link/../opp" is not "/w/opp" when link points
    # elsewhere (normpath would say it is, and the user's entry would be dropped).
    from ._trust import resolve

    try:
        return resolve(entry) == resolve(root) or os.path.samefile(entry, root)
    except (OSError, ValueError):  # one of them missing; a NUL no path can hold
        return False


def separator_problem(root):
    """Why ``root`` cannot be an entry of a ``:``-separated path list ("" when it can)."""
    if ":" in root:
        return ("the OPP root %s contains ':', the separator of ASCEND_CUSTOM_OPP_PATH: TF "
                "Adapter and GE would split it into two entries that do not exist" % root)
    return ""


INSTALL_ELSEWHERE = (
    "install tf-ge-custom where its path has no ':', e.g. into a virtual environment created "
    "under a folder without ':' (python3 -m venv /opt/tf-ge-custom-env), then use that "
    "environment's python")


def with_opp_root(value, root):
    """``value`` (a path list, or None) with ``root`` first, once, and no empty entries.

    Every other entry keeps its place in order; applying it twice gives the same result.
    """
    if not os.path.isabs(root):
        raise ValueError("the OPP root must be an absolute path, got %r" % (root,))
    if separator_problem(root):
        raise ValueError(separator_problem(root))
    others = [e for e in split_path_list(value or "") if e and not _same_directory(e, root)]
    return ":".join([root] + others)


def contains_root(value, root):
    """Whether the path list ``value`` already names ``root``."""
    return any(e and _same_directory(e, root) for e in split_path_list(value or ""))


def opted_out(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get(OPT_OUT_VAR, "").strip().lower() in _OFF


def original_custom_opp_path():
    """``ASCEND_CUSTOM_OPP_PATH`` as this process inherited it (before any activation).

    ``atc`` and other programs started from the shell see this value, not ours.
    """
    if _state["recorded"]:
        return _state["original"]
    return os.environ.get(CUSTOM_OPP_PATH_VAR)


def user_environment(environ=None):
    """A copy of ``environ`` (default: this process's) as the user's shell exported it: the
    variables :func:`activate` set or changed in this process given back their inherited
    values (removed when they were unset).

    For child processes that must see what the user's other programs see (selftest's
    stages, doctor run as a stage), not what ``import tf_ge_custom`` added.
    """
    environ = os.environ if environ is None else environ
    copy = dict(environ)
    last = _state["last"]
    if not _state["recorded"] or last is None or not last.changed:
        return copy
    if environ.get(CUSTOM_OPP_PATH_VAR) == last.after:  # still ours, not changed since
        if _state["original"] is None:
            copy.pop(CUSTOM_OPP_PATH_VAR, None)
        else:
            copy[CUSTOM_OPP_PATH_VAR] = _state["original"]
    return copy


def last_activation():
    """The :class:`Activation` of the latest :func:`activate` call (None before it)."""
    return _state["last"]


def _warn_once(key, message):
    if key in _state["warned"]:
        return
    _state["warned"].add(key)
    warnings.warn(message, NpuPlacementWarning, stacklevel=4)


def _adapter_read_warnings(modules, root):
    """Warnings for adapters that may have read the variable before we set it."""
    if "npu_bridge" in modules:
        # TF1 reads the op list when the first session optimizes a graph (a process-wide
        # singleton: tf_adapter/util/npu_ops_identifier.cc, NpuOpsIdentifier::GetInstance).
        _warn_once("npu_bridge", (
            "npu_bridge was imported before tf_ge_custom. If a TensorFlow session already "
            "ran in this process, TF Adapter has read ASCEND_CUSTOM_OPP_PATH without %s and "
            "%s stay on the CPU until the process restarts. Import tf_ge_custom "
            "first (or export ASCEND_CUSTOM_OPP_PATH=%s before starting Python)."
            % (root, op_def.type_names(), root)))
    device_module = modules.get("npu_device.npu_device")
    opened = getattr(device_module, "_npu_device_instances", None) if device_module else None
    if opened:
        # TF2 reads it once, in npu_device.open() (tf_adapter_2.x/npu_device/core/
        # npu_device.cpp, NpuDevice::LoadCustomSupportedOps).
        _warn_once("npu_device", (
            "an NPU device was opened (npu_device.open) before tf_ge_custom was imported: "
            "it has read ASCEND_CUSTOM_OPP_PATH without %s, so %s run on the CPU "
            "on that device. Import tf_ge_custom before npu_device.open(), or open the "
            "device with tf_ge_custom.npu.open_device()." % (root, op_def.type_names())))


def _layout_warning(environ):
    opp_path = environ.get(OPP_PATH_VAR)
    if opp_path is None:
        return
    if not os.path.isdir(opp_path + "/built-in"):
        # npu_ops_identifier.cc: GetCustomOpPath reads ASCEND_CUSTOM_OPP_PATH only when
        # $ASCEND_OPP_PATH/built-in exists (IsNewOppPathStruct).
        _warn_once("layout:" + opp_path, (
            "ASCEND_OPP_PATH=%s has no built-in/ folder (the old OPP layout, or a wrong "
            "path): TF Adapter for TF1 (npu_bridge) then ignores ASCEND_CUSTOM_OPP_PATH and "
            "%s stay on the CPU in TF1 sessions. Source the set_env.sh of a CANN "
            "whose opp folder has built-in/, or run `tf-ge-custom doctor` for the details."
            % (opp_path, op_def.type_names())))


def activate(root=None, environ=None, modules=None):
    """Put the OPP root first in ``ASCEND_CUSTOM_OPP_PATH`` (idempotent); return an
    :class:`Activation`.

    Does nothing when ``TF_GE_CUSTOM_SET_OPP_PATH=0``, when the OPP root does not exist
    (a source tree that was never built), or when its path contains ``:`` (then it warns
    once, naming the path and the fix). ``environ``/``modules`` default to
    ``os.environ``/``sys.modules`` (tests pass their own).
    """
    root = os.path.abspath(root or opp_root())
    environ = os.environ if environ is None else environ
    modules = sys.modules if modules is None else modules
    before = environ.get(CUSTOM_OPP_PATH_VAR)
    if environ is os.environ and not _state["recorded"]:
        _state["recorded"], _state["original"] = True, before

    skipped = ""
    if opted_out(environ):
        skipped = "%s=%s" % (OPT_OUT_VAR, environ.get(OPT_OUT_VAR))
    elif not os.path.isdir(root):
        skipped = "the OPP root %s does not exist (package not built)" % root
    elif separator_problem(root):
        skipped = separator_problem(root)
        _warn_once("separator:" + root, "%s; ASCEND_CUSTOM_OPP_PATH is left as it is, so "
                   "%s stay on the CPU. Fix: %s." % (skipped, op_def.type_names(), INSTALL_ELSEWHERE))
    if skipped:
        result = Activation(root, before, before, False, skipped)
    else:
        after = with_opp_root(before, root)
        changed = after != before
        if changed:
            environ[CUSTOM_OPP_PATH_VAR] = after  # os.environ also calls putenv for C readers
        if not contains_root(before, root):
            _adapter_read_warnings(modules, root)
        _layout_warning(environ)
        result = Activation(root, before, after, changed, "")
    if environ is os.environ:
        _state["last"] = result
    return result
