"""``tf_ge_custom.testing.opcheck``: it passes for every op of ``op_def.OPS`` (read from the
records), and it fails, naming the check meant to catch it, for a set of injected defects of a
record, a function (what the op computes, its gradient, its refusals, its graph) or a Triton
kernel: at least 95 % of them.

Every defect is injected in this process: a changed copy of the record (``_replace``), a
wrapper of the op's function, a reference off by one ulp, or a copy of the kernel source with
one edit (the interpreter check runs it in its own child process, as it always does). Each
defect runs the checks that cost little (eager, graphs, gradients, refusals, ...) plus the one
meant to catch it; the costly ones (the SavedModel in a fresh process, the Triton interpreter,
XLA) run only where a defect is theirs. Each runs on a subset of the default samples
(``_few_samples``). The ops a defect applies to are chosen by what their
records say (an attribute, broadcasting), never by name.
"""
import functools
import logging
import os
import shutil
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import op_def
from tf_ge_custom.errors import DTypeError
from tf_ge_custom.testing import CHECK_NAMES, default_samples, opcheck

pytestmark = pytest.mark.kind("oracle")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the checks that start a process or compile: run only for the defects that are theirs
COSTLY = ("saved_model", "triton_interpreter", "xla")
CAUGHT_AT_LEAST = 0.95


@pytest.fixture(scope="module")
def triton_interp():
    path = os.environ.get("TF_GE_CUSTOM_TRITON_INTERP") or os.path.join(REPO_ROOT, ".cache", "triton-interp")
    if not os.path.isdir(os.path.join(path, "triton")):
        pytest.fail("PyPI triton for the interpreter is not installed at %s; run `make triton-interp` "
                    "(make test does)" % path)
    return path


# --- every op passes ------------------------------------------------------------------------

@pytest.mark.parametrize("op", op_def.OPS, ids=lambda op: op.type_name)
def test_opcheck_passes_every_check_for_every_op(op, triton_interp):
    report = opcheck(op, triton_interp=triton_interp)
    report.assert_passed()
    assert [r.name for r in report] == list(CHECK_NAMES)
    ran = [r.name for r in report if r.status == "passed"]
    assert len(ran) >= 10, report
    # the checks every op has whatever its record says
    for name in ("record", "host_arg_layout", "shape_function", "eager", "tf_function", "xla",
                 "tf1_session", "saved_model", "dtype_refusals", "triton_interpreter"):
        assert report.result(name).status == "passed", report
    assert (report.result("attr_refusals").status == "passed") == bool(op.attrs), report


def test_a_missing_interpreter_is_reported_as_not_run_not_as_a_pass(tmp_path):
    op = op_def.OPS[0]
    report = opcheck(op, triton_interp=str(tmp_path), skip=[n for n in CHECK_NAMES if n != "triton_interpreter"])
    result = report.result("triton_interpreter")
    assert result.status == "not run" and "make triton-interp" in result.detail, result
    assert not report.passed
    with pytest.raises(AssertionError, match="triton_interpreter"):
        report.assert_passed()


def test_an_unknown_check_name_to_skip_is_refused_naming_the_checks():
    with pytest.raises(ValueError, match="no check named egaer; the checks are record, "):
        opcheck(op_def.OPS[0], skip=["egaer"])


# --- the defects ----------------------------------------------------------------------------

def _with_attr(op):
    return bool(op.attrs) and len(op.inputs) == 1


def _broadcasting(op):
    return op.broadcasts and len(op.inputs) > 1


def _any(op):
    return True


class Defect(NamedTuple):
    name: str
    applies: Callable  # which ops (by record) it is injected into
    catcher: str  # the check that must fail and name it
    inject: Callable  # op -> opcheck keyword arguments (op= and function= at least)


def _function(op):
    return getattr(tf_ge_custom, op.python_name)


def _record(change):
    """A copy of the record with ``change(op)``'s fields, checked with the package's function."""
    return lambda op: {"op": op._replace(**change(op)), "function": _function(op)}


def _wrapped(make):
    """The op's function wrapped by ``make(real, op)`` (a function of ``(*inputs, name=None,
    **attrs)``), its signature kept."""
    def inject(op):
        real = _function(op)
        return {"op": op, "function": functools.wraps(real)(make(real, op))}
    return inject


def _attr(op, **fields):
    return (op.attrs[0]._replace(**fields),) + tuple(op.attrs[1:])


def _variant(op, **fields):
    return (op.kernel.variants[0]._replace(**fields),) + tuple(op.kernel.variants[1:])


def _kernel(op, **fields):
    return op.kernel._replace(**fields)


def _unwrapped_signature(op):
    real = _function(op)

    def f(*xs, name=None, **attrs):
        return real(*xs, name=name, **attrs)
    return {"op": op, "function": f}


def _float32_next_ulp(y):
    if y.dtype != tf.float32:
        return y
    return tf.bitcast(tf.bitcast(y, tf.int32) + 1, tf.float32)


def _off_by_one_ulp(real, op):
    def f(*xs, name=None, **attrs):
        return _float32_next_ulp(real(*xs, name=name, **attrs))
    return f


def _bfloat16_through_float16(real, op):
    def f(*xs, name=None, **attrs):
        y = real(*xs, name=name, **attrs)
        return tf.cast(tf.cast(y, tf.float16), tf.bfloat16) if y.dtype == tf.bfloat16 else y
    return f


def _signed_zero_lost(real, op):
    def f(*xs, name=None, **attrs):
        y = real(*xs, name=name, **attrs)
        return y + tf.zeros_like(y) if y.dtype.is_floating else y
    return f


def _true_gradients(real, xs, attrs, dy):
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = real(*xs, **attrs)
    return tape.gradient(y, xs, output_gradients=dy)


def _custom_gradient(change):
    """The op with its gradient ``change(true gradients, inputs)``."""
    def make(real, op):
        def f(*xs, name=None, **attrs):
            @tf.custom_gradient
            def inner(*ts):
                def grad(dy):
                    return change(_true_gradients(real, list(ts), attrs, dy), ts)
                return real(*ts, name=name, **attrs), grad
            return inner(*[tf.convert_to_tensor(x) for x in xs])
        return f
    return make


def _no_gradient(real, op):
    def f(*xs, name=None, **attrs):
        return tf.stop_gradient(real(*xs, name=name, **attrs))
    return f


def _gradient_with_curvature(grads, xs):
    # first order unchanged (x - stop_gradient(x) is 0 where x is finite), second order + 1
    return [g + tf.where(tf.math.is_finite(x), x - tf.stop_gradient(x), tf.zeros_like(x))
            for g, x in zip(grads, xs)]


def _accepts_float64(real, op):
    def f(*xs, name=None, **attrs):
        xs = [tf.cast(x, op.dtypes[0]) if tf.convert_to_tensor(x).dtype == tf.float64 else x for x in xs]
        return real(*xs, name=name, **attrs)
    return f


def _dtype_error_as_type_error(real, op):
    def f(*xs, name=None, **attrs):
        try:
            return real(*xs, name=name, **attrs)
        except DTypeError as e:
            raise TypeError(str(e))
    return f


def _other_error_inside_function(real, op):
    def f(*xs, name=None, **attrs):
        try:
            return real(*xs, name=name, **attrs)
        except DTypeError as e:
            if tf.executing_eagerly():
                raise
            raise ValueError(str(e))
    return f


def _string_attr_taken(real, op):
    def f(*xs, name=None, **attrs):
        attrs = dict((k, float(v) if isinstance(v, str) else v) for k, v in attrs.items())
        return real(*xs, name=name, **attrs)
    return f


def _unknown_static_shape(real, op):
    def f(*xs, name=None, **attrs):
        y = real(*xs, name=name, **attrs)
        if tf.executing_eagerly():
            return y
        return tf.compat.v1.placeholder_with_default(y, tf.TensorShape(None))
    return f


def _computed_without_the_op(real, op):
    equivalent = _equivalent(op)

    def f(*xs, name=None, **attrs):
        return equivalent(*xs, **attrs)
    return f


def _name_ignored(real, op):
    def f(*xs, name=None, **attrs):
        return real(*xs, **attrs)
    return f


def _warns_when_traced(real, op):
    def f(*xs, name=None, **attrs):
        if not tf.executing_eagerly():
            warnings.warn("%s: traced" % op.python_name)
        return real(*xs, name=name, **attrs)
    return f


def _logs_when_traced(real, op):
    def f(*xs, name=None, **attrs):
        if not tf.executing_eagerly():
            logging.getLogger("tensorflow").warning("%s: traced", op.python_name)
        return real(*xs, name=name, **attrs)
    return f


def _python_inside_graphs(real, op):
    def f(*xs, name=None, **attrs):
        if tf.executing_eagerly():
            return real(*xs, name=name, **attrs)
        xs = [tf.convert_to_tensor(x) for x in xs]
        y = tf.py_function(lambda *ts: real(*ts, **attrs), xs, Tout=xs[0].dtype)
        y.set_shape(real(*xs, **attrs).shape)
        return y
    return f


def _wrong_under_xla(real, op):
    from tensorflow.python.ops import control_flow_util

    def f(*xs, name=None, **attrs):
        y = real(*xs, name=name, **attrs)
        if not tf.executing_eagerly() and control_flow_util.GraphOrParentsInXlaContext(
                tf.compat.v1.get_default_graph()):
            return _float32_next_ulp(y)
        return y
    return f


def _equivalent(op):
    from tf_ge_custom._op_meanings import tensorflow_function

    return tensorflow_function(op.equivalent)


def _reference_off_by_one_ulp(op):
    equivalent = _equivalent(op)
    return {"op": op, "function": _function(op),
            "reference": lambda *xs, **attrs: _float32_next_ulp(equivalent(*xs, **attrs))}


def _kernel_edit(old, new, function_only=False):
    """A copy of the op's kernel source with ``old`` replaced by ``new`` (each occurrence);
    ``function_only``: only in the flat variant's ``def`` line."""
    def inject(op):
        from tf_ge_custom import kernels

        source = os.path.join(os.path.dirname(os.path.abspath(kernels.__file__)), op.kernel.source)
        with open(source) as f:
            text = f.read()
        if function_only:
            start = text.index("def %s(" % op.kernel.variants[0].function)
            end = text.index(":\n", start)
            line = text[start:end]
            assert old in line, "the kernel's def line changed: update this defect (%r not in %r)" % (old, line)
            text = text[:start] + line.replace(old, new) + text[end:]
        else:
            assert old in text, "the kernel source changed: update this defect (%r not in %s)" % (old, source)
            text = text.replace(old, new)
        folder = os.path.join(_KERNEL_COPIES[0], "%s-%d" % (op.python_name, len(os.listdir(_KERNEL_COPIES[0]))))
        os.makedirs(folder)
        with open(os.path.join(folder, op.kernel.source), "w") as f:
            f.write(text)
        return {"op": op, "function": _function(op), "kernel_dir": folder}
    return inject


_KERNEL_COPIES = []  # the folder the kernel copies go to (the module's tmp folder)

DEFECTS = (
    # the record
    Defect("a dtype missing from the record's list", _any, "record",
           _record(lambda op: {"dtypes": op.dtypes[:-1]})),
    Defect("a dtype the op has no kernel for added to the record", _any, "record",
           _record(lambda op: {"dtypes": op.dtypes + ("float64",)})),
    Defect("the record's dtypes in another order", _any, "record",
           _record(lambda op: {"dtypes": tuple(reversed(op.dtypes))})),
    Defect("an attribute's default changed in the record", _with_attr, "record",
           _record(lambda op: {"attrs": _attr(op, default=op.attrs[0].default + 0.25)})),
    Defect("an attribute's type changed in the record", _with_attr, "record",
           _record(lambda op: {"attrs": _attr(op, type="int", default=0)})),
    Defect("a lower bound in the record the function does not enforce", _with_attr, "attr_refusals",
           _record(lambda op: {"attrs": _attr(op, minimum=op.attrs[0].default)})),
    Defect("an upper bound in the record the function does not enforce", _with_attr, "attr_refusals",
           _record(lambda op: {"attrs": _attr(op, maximum=op.attrs[0].default)})),
    Defect("an input renamed in the record", _any, "record",
           _record(lambda op: {"inputs": tuple(n + "_in" for n in op.inputs)})),
    Defect("the type attribute renamed in the record", _any, "record",
           _record(lambda op: {"type_attr": op.type_attr + "x"})),
    Defect("the record's equivalent another TensorFlow function", _broadcasting, "eager",
           _record(lambda op: {"equivalent": "tf.math.subtract"})),
    Defect("the record's equivalent no TensorFlow function", _any, "record",
           _record(lambda op: {"equivalent": "tf.math.no_such_function"})),
    Defect("the op said not to broadcast, with broadcasting variants", _broadcasting, "record",
           _record(lambda op: {"broadcasts": False})),
    Defect("an entry name too long for a kernel name", _any, "record",
           _record(lambda op: {"python_name": op.python_name + "_" * 40})),
    Defect("the record's kernel source a file that is not there", _any, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, source="no_such_kernel.py")})),
    Defect("the flat variant's function misnamed in the record", _any, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, variants=_variant(op, function="no_such_kernel"))})),
    Defect("the attribute's slot on the element count's parameter", _with_attr, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, variants=_variant(op, params=tuple(
               sorted(op.kernel.variants[0].params, key=lambda p: p.startswith("num_elements")))))})),
    Defect("an attribute slot naming no attribute", _with_attr, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, variants=_variant(op, params=tuple(
               "attr:beta" if p.startswith("attr:") else p for p in op.kernel.variants[0].params)))})),
    Defect("the element count's slot missing from the record", _any, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, variants=_variant(op, params=tuple(
               p for p in op.kernel.variants[0].params if p != "num_elements")))})),
    Defect("a compile-time parameter misnamed in the record", _any, "host_arg_layout",
           _record(lambda op: {"kernel": _kernel(op, variants=_variant(op, constants=tuple(
               (n + "_X", v) for n, v in op.kernel.variants[0].constants)))})),
    # the function
    Defect("the function's signature not the record's", _any, "signature", _unwrapped_signature),
    # what the op computes
    Defect("float32 results one ulp off", _any, "eager", _wrapped(_off_by_one_ulp)),
    Defect("bfloat16 results rounded through float16", _any, "eager", _wrapped(_bfloat16_through_float16)),
    Defect("-0.0 results returned as +0.0", _any, "eager", _wrapped(_signed_zero_lost)),
    Defect("the reference one ulp off", _any, "eager", _reference_off_by_one_ulp),
    Defect("float32 results one ulp off under XLA only", _any, "xla", _wrapped(_wrong_under_xla)),
    # gradients
    Defect("a zero gradient", _any, "gradient",
           _wrapped(_custom_gradient(lambda grads, xs: [tf.zeros_like(x) for x in xs]))),
    Defect("a gradient 0.1 % off", _any, "gradient",
           _wrapped(_custom_gradient(lambda grads, xs: [g * 1.001 for g in grads]))),
    Defect("no gradient (stopped)", _any, "gradient", _wrapped(_no_gradient)),
    Defect("a gradient twice as large", _any, "numerical_gradient",
           _wrapped(_custom_gradient(lambda grads, xs: [g * 2 for g in grads]))),
    Defect("a wrong second-order gradient", _any, "second_order_gradient",
           _wrapped(_custom_gradient(_gradient_with_curvature))),
    # refusals and errors
    Defect("float64 inputs cast, not refused", _any, "dtype_refusals", _wrapped(_accepts_float64)),
    Defect("a refused dtype raising TypeError, not DTypeError", _any, "dtype_refusals",
           _wrapped(_dtype_error_as_type_error)),
    Defect("another error type inside tf.function than eagerly", _any, "error_types_in_function",
           _wrapped(_other_error_inside_function)),
    Defect("a string attribute value taken", _with_attr, "attr_refusals", _wrapped(_string_attr_taken)),
    # graphs
    Defect("an unknown static output shape", _any, "shape_function", _wrapped(_unknown_static_shape)),
    Defect("computed without the op's node", _any, "tf_function", _wrapped(_computed_without_the_op)),
    Defect("the caller's node name ignored", _any, "tf1_session", _wrapped(_name_ignored)),
    Defect("a warning when traced", _any, "autograph_silence", _wrapped(_warns_when_traced)),
    Defect("a TensorFlow log line when traced", _any, "autograph_silence", _wrapped(_logs_when_traced)),
    Defect("Python (tf.py_function) inside graphs", _any, "vectorized_map", _wrapped(_python_inside_graphs)),
    Defect("the op package's module does not register the op in a fresh process", _any, "saved_model",
           lambda op: {"op": op, "function": _function(op), "imports": ["json"]}),
    # the Triton kernel
    Defect("the kernel's mask one element short", _any, "triton_interpreter",
           _kernel_edit("offsets < n_elements", "offsets < n_elements - 1")),
    Defect("the kernel's grid-stride loop skipping blocks", _any, "triton_interpreter",
           _kernel_edit("num_programs * BLOCK_SIZE)", "2 * num_programs * BLOCK_SIZE)")),
    Defect("the kernel subtracting", _broadcasting, "triton_interpreter", _kernel_edit("x + y", "x - y")),
    Defect("the kernel using the default alpha, not the attribute", _with_attr, "triton_interpreter",
           _kernel_edit("x * alpha)", "x * 0.2)")),
    Defect("the kernel's bfloat16 rounding not to nearest even", _with_attr, "triton_interpreter",
           _kernel_edit("bits + 0x7FFF + ((bits >> 16) & 1)", "bits + 0x8000")),
    Defect("the kernel's attribute parameter before the element count", _with_attr, "host_arg_layout",
           _kernel_edit("n_elements, alpha", "alpha, n_elements", function_only=True)),
    Defect("the kernel's compile-time parameter renamed", _any, "host_arg_layout",
           _kernel_edit("BLOCK_SIZE: tl.constexpr", "BLOCK: tl.constexpr", function_only=True)),
)


def _few_samples(op):
    """The default samples a defect runs on: the first of each dtype, and the first dtype's
    other attribute values. A check that runs every sample fails on any failing one, so a
    defect caught on these is caught on all the default samples too (autograph_silence traces
    the first three samples: its defects show on any trace)."""
    first = op.dtypes[0]
    seen, out = set(), []
    for s in default_samples(op):
        if s.dtype not in seen or (s.dtype == first and s.attrs != out[0].attrs):
            seen.add(s.dtype)
            out.append(s)
    return out


def _cases():
    return [(d, op) for d in DEFECTS for op in op_def.OPS if d.applies(op)]


@pytest.fixture(scope="module")
def defect_reports(tmp_path_factory, triton_interp):
    """``[(defect, op, report)]`` of every defect injected into every op it applies to."""
    _KERNEL_COPIES[:] = [str(tmp_path_factory.mktemp("kernels"))]
    out = []
    for defect, op in _cases():
        kwargs = dict(dict(samples=_few_samples(op)), **defect.inject(op))
        skip = [n for n in COSTLY if n != defect.catcher]
        with warnings.catch_warnings():  # a defect's warning, seen by autograph_silence
            warnings.simplefilter("ignore", UserWarning)
            out.append((defect, op, opcheck(triton_interp=triton_interp, skip=skip, **kwargs)))
    shutil.rmtree(_KERNEL_COPIES[0], ignore_errors=True)
    return out


def test_the_defects_cover_every_kind_of_check_and_each_op():
    catchers = set(d.catcher for d in DEFECTS)
    assert len(_cases()) >= 20
    # every check that can fail for an op of OPS has a defect that must make it fail
    assert catchers == set(CHECK_NAMES), sorted(set(CHECK_NAMES) - catchers)
    for op in op_def.OPS:
        assert any(d.applies(op) for d in DEFECTS), op.type_name


def test_at_least_95_percent_of_the_injected_defects_fail_opcheck(defect_reports):
    missed = ["%s: %s" % (op.type_name, d.name) for d, op, report in defect_reports if report.passed]
    caught = len(defect_reports) - len(missed)
    assert caught >= CAUGHT_AT_LEAST * len(defect_reports), "opcheck passed despite:\n" + "\n".join(missed)


def test_each_failing_report_names_the_check_meant_to_catch_its_defect(defect_reports):
    wrong = []
    for d, op, report in defect_reports:
        if report.passed:
            continue
        failed = [r.name for r in report.failures]
        if d.catcher not in failed:
            wrong.append("%s: %s: failed %s, not %s" % (op.type_name, d.name, failed, d.catcher))
        else:
            with pytest.raises(AssertionError) as raised:
                report.assert_passed()
            assert "  %s [failed]: " % d.catcher in str(raised.value)
    assert not wrong, "\n".join(wrong)


def test_a_wrong_result_names_the_sample_the_path_and_the_first_differing_element(defect_reports):
    for d, op, report in defect_reports:
        if d.name == "float32 results one ulp off":
            detail = report.result("eager").detail
            # the first float32 sample's first element, one ulp above the reference's
            first = next(s for s in default_samples(op) if s.dtype == "float32")
            want = np.asarray(_equivalent(op)(*[tf.constant(v) for v in first.inputs], **first.attrs)).ravel()
            index = next(i for i in range(want.size) if not np.isnan(want[i]))
            got = np.nextafter(want[index], np.float32(np.inf))
            assert detail.startswith("sample %s, eager: first differing element at " % first.name), detail
            assert "got %r, expected %r" % (float(got), float(want[index])) in detail, detail
