"""``opcheck``: every check of an op, in order, each reported on its own."""
import shutil
import tempfile
import time

from .. import op_def as _op_def
from . import (_autograph, _gradients, _host_args, _paths, _record, _refusals, _saved_model,
               _triton, _vectorized_map)
from ._context import Context
from ._report import (CheckFailure, CheckResult, FAILED, NOT_APPLICABLE, NOT_RUN, NotApplicable,
                      NotRun, OpCheckReport, PASSED, SKIPPED)
from ._samples import as_samples, default_samples

# (name, function) of every check, in the order they run
CHECKS = (
    ("record", _record.record),
    ("signature", _record.signature),
    ("host_arg_layout", _host_args.host_arg_layout),
    ("shape_function", _record.shape_function),
    ("eager", _paths.eager),
    ("tf_function", _paths.function),
    ("xla", _paths.xla),
    ("tf1_session", _paths.tf1_session),
    ("saved_model", _saved_model.saved_model),
    ("gradient", _gradients.gradient),
    ("numerical_gradient", _gradients.numerical_gradient),
    ("second_order_gradient", _gradients.second_order_gradient),
    ("dtype_refusals", _refusals.dtype_refusals),
    ("attr_refusals", _refusals.attr_refusals),
    ("error_types_in_function", _refusals.error_types_in_function),
    ("vectorized_map", _vectorized_map.vectorized_map),
    ("autograph_silence", _autograph.autograph_silence),
    ("triton_interpreter", _triton.triton_interpreter),
)
CHECK_NAMES = tuple(name for name, _ in CHECKS)


def _resolve(op):
    if isinstance(op, _op_def.OpDefinition):
        return op
    if isinstance(op, str):
        return _op_def.get(op)
    raise TypeError("opcheck: op must be an op_def.OpDefinition or an op type name (%s), got a %s"
                    % (", ".join(o.type_name for o in _op_def.OPS), type(op).__name__))


def _function_of(op):
    import tf_ge_custom

    function = getattr(tf_ge_custom, op.python_name, None)
    if function is None:
        raise ValueError("opcheck: tf_ge_custom has no function %s for %s; pass function= (your op "
                         "package's function)" % (op.python_name, op.type_name))
    return function


def _reference_of(op):
    if not op.equivalent:
        return None
    from .._op_meanings import tensorflow_function
    from ..errors import OpLibraryError

    try:
        equivalent = tensorflow_function(op.equivalent)
    except OpLibraryError:  # the record check says so; the checks that need a reference do not run
        return None
    return lambda *inputs, **attrs: equivalent(*inputs, **attrs)


def opcheck(op, samples=None, function=None, reference=None, skip=(), imports=None,
            triton_interp=None, kernel_dir=None, tolerance=0.0):
    """Check the op ``op`` (an ``op_def.OpDefinition``, or its type name) layer by layer;
    return an :class:`OpCheckReport` with one result per check (docs/testing-your-op.md).

    ``samples``: the calls to check (``Sample``s, tuples of inputs, or ``(inputs, attrs)``
    pairs); default: derived from the record. ``function``: the op's Python function; default
    ``tf_ge_custom.<python_name>``. ``reference``: what the results must equal, called as the
    function is; default: the record's ``equivalent``. ``skip``: names of checks not to run.
    ``imports``: the modules a fresh process imports to register the op (default
    ``tf_ge_custom``). ``triton_interp``: the folder of PyPI triton for the kernel check.
    ``kernel_dir``: where the kernel source lies (default: the package's kernels).
    ``tolerance``: relative difference allowed in results (default 0: bit for bit)."""
    op = _resolve(op)
    unknown = [s for s in skip if s not in CHECK_NAMES]
    if unknown:
        raise ValueError("opcheck: no check named %s; the checks are %s" % (
            ", ".join(unknown), ", ".join(CHECK_NAMES)))
    function = function if function is not None else _function_of(op)
    reference = reference if reference is not None else _reference_of(op)
    samples = default_samples(op) if samples is None else as_samples(op, samples)
    if not samples:
        raise ValueError("opcheck: no samples to check %s with" % op.type_name)
    imports = tuple(imports) if imports else ("tf_ge_custom",)
    workdir = tempfile.mkdtemp(prefix="opcheck-%s-" % op.python_name)
    report = OpCheckReport(op.type_name)
    ctx = Context(op, function, reference, samples, tolerance, imports, triton_interp, kernel_dir, workdir)
    try:
        for name, check in CHECKS:
            if name in skip:
                report.append(CheckResult(name, SKIPPED, "skipped by the caller"))
                continue
            report.append(_run(name, check, ctx))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _run(name, check, ctx):
    started = time.time()
    try:
        status, detail = PASSED, check(ctx)
    except CheckFailure as e:
        status, detail = FAILED, str(e)
    except NotRun as e:
        status, detail = NOT_RUN, str(e)
    except NotApplicable as e:
        status, detail = NOT_APPLICABLE, str(e)
    except Exception as e:  # the op raised where the check expected a result
        status, detail = FAILED, "raised %s: %s" % (type(e).__name__, str(e).strip()[:600])
    return CheckResult(name, status, detail, time.time() - started)
