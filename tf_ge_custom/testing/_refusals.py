"""What the op's function refuses, and with which of the package's errors: a dtype outside the
record (``DTypeError``), inputs of two dtypes, an attribute of the wrong kind (``InputError``)
or outside its bounds (``AttrError``), shapes that cannot be combined (``ShapeError``); eagerly,
and inside ``tf.function`` with the same error types as eagerly."""
import numpy as np
import tensorflow as tf

from ..errors import AttrError, DTypeError, InputError, ShapeError
from ._report import CheckFailure, NotApplicable

# dtypes a caller may hand an op; those outside the record must be refused
CANDIDATE_DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                    "uint8", "bool", "complex64")


def _inputs(op, dtype, shape=(3,)):
    return [tf.cast(tf.constant(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)), dtype)
            for _ in op.inputs]


def _raises(call, error, what):
    try:
        call()
    except error as e:
        return e
    except Exception as e:
        raise CheckFailure("%s raised %s (%s), expected the package's %s" % (
            what, type(e).__name__, str(e).splitlines()[0][:200], error.__name__))
    raise CheckFailure("%s was accepted; expected a %s" % (what, error.__name__))


def refused_dtype_cases(op):
    """(label, inputs) of each call the record says must raise a DTypeError."""
    cases = [("inputs of dtype %s" % d, _inputs(op, d)) for d in CANDIDATE_DTYPES if d not in op.dtypes]
    if len(op.inputs) > 1:
        other = next(d for d in CANDIDATE_DTYPES if d != op.dtypes[0])
        mixed = _inputs(op, op.dtypes[0])
        mixed[-1] = tf.cast(mixed[-1], other)
        cases.append(("inputs of dtypes %s and %s" % (op.dtypes[0], other), mixed))
    return cases


def dtype_refusals(ctx):
    op, defaults = ctx.op, dict((a.name, a.default) for a in ctx.op.attrs)
    cases = refused_dtype_cases(op)
    for label, inputs in cases:
        e = _raises(lambda: ctx.function(*inputs, **defaults), DTypeError, label)
        if label.startswith("inputs of dtype ") and label.split()[-1] not in str(e):
            raise CheckFailure("%s: the DTypeError does not name the dtype: %s" % (label, e))
    for d in op.dtypes:
        try:
            ctx.function(*_inputs(op, d), **defaults)
        except Exception as e:
            raise CheckFailure("inputs of dtype %s (a record dtype) were refused: %s: %s" % (
                d, type(e).__name__, e))
    return "%d calls refused with a DTypeError; each of the record's %d dtypes accepted" % (
        len(cases), len(op.dtypes))


def refused_attr_cases(op):
    """(label, attrs, error) of each attribute value the record says must be refused."""
    defaults = dict((a.name, a.default) for a in op.attrs)
    cases = []
    for a in op.attrs:
        def set_(value, a=a):
            return dict(defaults, **{a.name: value})
        cases.append(("%s='0.5' (a string)" % a.name, set_("0.5"), InputError))
        cases.append(("%s=a tensor" % a.name, set_(tf.constant(1.0)), InputError))
        cases.append(("%s=None" % a.name, set_(None), InputError))
        if a.type == "int":
            cases.append(("%s=True (a bool)" % a.name, set_(True), InputError))
            cases.append(("%s=1.5 (a float)" % a.name, set_(1.5), InputError))
        if a.minimum is not None:
            below = a.minimum - (1 if a.type == "int" else max(1e-3, abs(a.minimum) * 1e-3))
            cases.append(("%s=%r (below its minimum %r)" % (a.name, below, a.minimum), set_(below), AttrError))
        if a.maximum is not None:
            above = a.maximum + (1 if a.type == "int" else max(1e-3, abs(a.maximum) * 1e-3))
            cases.append(("%s=%r (above its maximum %r)" % (a.name, above, a.maximum), set_(above), AttrError))
        if a.type == "float" and (a.minimum is not None or a.maximum is not None):
            cases.append(("%s=nan (outside its bounds)" % a.name, set_(float("nan")), AttrError))
    return cases


def attr_refusals(ctx):
    op = ctx.op
    if not op.attrs:
        raise NotApplicable("%s has no attribute" % op.type_name)
    cases = refused_attr_cases(op)
    inputs = _inputs(op, op.dtypes[0])
    for label, attrs, error in cases:
        e = _raises(lambda: ctx.function(*inputs, **attrs), error, label)
        name = label.split("=")[0]
        if name not in str(e):
            raise CheckFailure("%s: the %s does not name the attribute %s: %s" % (label, error.__name__, name, e))
    return "%d attribute values refused, each with its error naming the attribute" % len(cases)


def error_cases(op):
    """(label, thunk inputs, attrs, error): calls that must fail the same way eagerly and inside
    tf.function."""
    defaults = dict((a.name, a.default) for a in op.attrs)
    cases = []
    dtype_cases = refused_dtype_cases(op)
    if dtype_cases:
        label, inputs = dtype_cases[0]
        cases.append((label, inputs, defaults, DTypeError))
    if len(op.inputs) > 1:
        shapes = [(3,)] * (len(op.inputs) - 1) + [(4,)]
        inputs = [_inputs(op, op.dtypes[0], sh)[0] for sh in shapes]
        cases.append(("inputs of shapes %s" % ", ".join(str(s) for s in shapes), inputs, defaults, ShapeError))
    for label, attrs, error in refused_attr_cases(op):
        if "tensor" not in label:  # a tensor inside tf.function is a symbolic one: the same refusal
            cases.append((label, _inputs(op, op.dtypes[0]), attrs, error))
            break
    return cases


def error_types_in_function(ctx):
    cases = error_cases(ctx.op)
    if not cases:
        raise NotApplicable("%s refuses nothing its record could name" % ctx.op.type_name)
    for label, inputs, attrs, error in cases:
        eager = _raises(lambda: ctx.function(*inputs, **attrs), error, label + ", eager")
        traced = tf.function(lambda *xs: ctx.function(*xs, **attrs))
        inside = _raises(lambda: traced(*inputs), error, label + ", inside tf.function")
        if type(inside) is not type(eager):
            raise CheckFailure("%s: eagerly a %s, inside tf.function a %s" % (
                label, type(eager).__name__, type(inside).__name__))
    return "%d refusals raise the same error inside tf.function as eagerly (%s)" % (
        len(cases), ", ".join(sorted(set(c[3].__name__ for c in cases))))
