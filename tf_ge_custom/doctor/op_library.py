"""TensorFlow and the op library. Both checks read one child process's findings
(Context.tensorflow, :mod:`.probe`): doctor itself never imports TensorFlow nor maps the op
library."""
import os

from .. import _library, op_def
from ..errors import OpLibraryError
from . import remedies
from .results import FAIL, OK, Check, check, Instruction

def _without_fix(message):
    """An OpLibraryError's message without its closing rebuild advice (doctor prints its own)."""
    for marker in (" Rebuild", " Build and install it:"):
        at = message.find(marker)
        if at > 0:
            return message[:at].rstrip(" .:")
    return message


@check("TensorFlow",
       "the running TensorFlow against the one the op library was built for", own=True)
def check_tensorflow(ctx):
    built = (ctx.build_info.get("tensorflow") or {}).get("version")
    probe = ctx.tensorflow()
    running = probe.get("tensorflow")
    if running is None:
        why = (probe.get("tensorflow_error") or probe.get("crash") or probe.get("failure")
               or "no answer")
        return Check("TensorFlow", FAIL, "cannot import tensorflow: %s" % why,
                     Instruction("install the TensorFlow the package was built for (%s), then "
                                 "rebuild: %s" % (built or "unknown", remedies.REBUILD)))
    if ctx.build_info_error:
        return Check("TensorFlow", FAIL, "TensorFlow %s; %s" % (
            running, _without_fix(ctx.build_info_error)), remedies.REBUILD)
    if built is None:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s; the package records no TensorFlow build (not built?)"
                     % running, remedies.REBUILD)
    if built != running:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s is running but the op library was built for %s"
                     % (running, built), remedies.REBUILD)
    return Check("TensorFlow", OK, "%s, the version the op library was built for" % built)


@check("op library",
       "the build record is readable; the library matches its recorded size and SHA-256, "
       "loads (in a child process: a damaged file crashes the child, not doctor) and "
       "registers every op with the inputs, outputs and dtypes of its definition", own=True)
def check_op_library(ctx):
    name = "op library"
    if ctx.build_info_error:
        return Check(name, FAIL, _without_fix(ctx.build_info_error), remedies.REBUILD)
    probe = ctx.tensorflow()
    for key in ("tensorflow_error", "library_error", "crash", "failure"):
        if probe.get(key):
            detail = _without_fix(probe[key])
            if key == "tensorflow_error":
                detail = "cannot be loaded without TensorFlow (%s)" % detail
            return Check(name, FAIL, detail, remedies.REBUILD)
    problems = []
    for op in op_def.OPS:
        registered = (probe.get("ops") or {}).get(op.type_name)
        if registered is None:
            problems.append("%s is not registered" % op.type_name)
            continue
        inputs, outputs = tuple(registered["inputs"]), tuple(registered["outputs"])
        dtypes = tuple(registered["dtypes"])
        if (inputs, outputs) != (op.inputs, op.outputs) or set(dtypes) != set(op.dtypes):
            problems.append("%s registered as %s -> %s over %s; the op definition says %s -> %s "
                            "over %s" % (op.type_name, inputs, outputs, dtypes, op.inputs,
                                         op.outputs, op.dtypes))
    if problems:
        return Check(name, FAIL, "; ".join(problems), remedies.REBUILD)
    return Check(name, OK, "%s matches its build record, loads and registers %s" % (
        os.path.basename(_library.library_path_unchecked()),
        ", ".join(o.type_name for o in op_def.OPS)))


@check("XLA kernels",
       "the XLA kernel library the build recorded (`jit_compile`): there and undamaged (size"
       " and SHA-256), or the build's reason for having none (then under XLA each op lowers to "
       "its TensorFlow equivalent: `add_custom` to `tf.math.add`)", own=True)
def check_xla_library(ctx):
    """The XLA kernel library (``jit_compile``): the file the build recorded, undamaged."""
    name = "XLA kernels"
    if ctx.build_info_error:
        return Check(name, FAIL, _without_fix(ctx.build_info_error), remedies.REBUILD)
    built = ctx.build_info.get("tensorflow") or {}
    relative = built.get("xla_library")
    if not relative:
        return Check(name, OK, "this build has no XLA kernel library (%s): under "
                     "jit_compile=True %s lower to their TensorFlow equivalents, the same "
                     "numbers" % (built.get("xla_library_missing_because") or "not recorded",
                                  op_def.python_names()))
    path = os.path.join(os.path.dirname(os.path.abspath(_library.__file__)), relative)
    try:
        _library.check_library_file(path, ctx.build_info, key="xla_library")
    except OpLibraryError as e:
        return Check(name, FAIL, _without_fix(str(e)) + "; jit_compile graphs would hold "
                     "their TensorFlow equivalents instead of %s" % op_def.type_names(),
                     remedies.REBUILD)
    kept = [op for op in op_def.OPS if op.type_name in (built.get("xla_ops") or ())]
    lowered = [op for op in op_def.OPS if op not in kept]
    return Check(name, OK, "%s matches its build record: jit_compile graphs keep %s%s" % (
        relative, op_def.type_names(kept) or "no op",
        "; these have no XLA kernel and lower to their TensorFlow equivalents: %s"
        % op_def.python_names(lowered) if lowered else ""))
