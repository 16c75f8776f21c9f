"""The record against what was built from it: the op TensorFlow registered (``REGISTER_OP``:
inputs, outputs, the type attr's dtypes, each attribute's type and default), the Python
function's signature, and the record's own rules (entry names, attribute bounds, variants)."""
import inspect

import numpy as np
import tensorflow as tf

from .. import op_def as _op_def
from ._report import CheckFailure

_TF_ATTR_TYPES = {"float": "float", "int": "int"}


def registered_op_def(type_name):
    """The OpDef TensorFlow registered for ``type_name``, or None."""
    from tensorflow.python.framework import op_def_registry

    if hasattr(op_def_registry, "get"):
        return op_def_registry.get(type_name)
    return op_def_registry.get_registered_ops().get(type_name)  # TensorFlow 1.15


def _attr_default(attr_def):
    kind = attr_def.default_value.WhichOneof("value")
    return getattr(attr_def.default_value, kind) if kind else None


def record(ctx):
    op = ctx.op
    problems = list(_op_def.entry_name_problems([op]))
    registered = registered_op_def(op.type_name)
    if registered is None:
        raise CheckFailure("TensorFlow has no op %s registered (is its op library loaded?)" % op.type_name)
    for what, args, names in (("inputs", registered.input_arg, op.inputs),
                              ("outputs", registered.output_arg, op.outputs)):
        if [a.name for a in args] != list(names):
            problems.append("the record's %s are %s, the registered op's %s" % (
                what, list(names), [a.name for a in args]))
        for a in args:
            if a.type_attr != op.type_attr:
                problems.append("%s %s has type attr %r, the record says %r" % (
                    what[:-1], a.name, a.type_attr, op.type_attr))
    attrs = dict((a.name, a) for a in registered.attr)
    type_attr = attrs.pop(op.type_attr, None)
    if type_attr is None:
        problems.append("the registered op has no type attr %r" % op.type_attr)
    else:
        allowed = [tf.as_dtype(t).name for t in type_attr.allowed_values.list.type]
        if allowed != list(op.dtypes):
            problems.append("the record's dtypes are %s, the registered op's %s" % (list(op.dtypes), allowed))
    if sorted(attrs) != sorted(a.name for a in op.attrs):
        problems.append("the record's attributes are %s, the registered op's %s" % (
            [a.name for a in op.attrs], sorted(attrs)))
    for a in op.attrs:
        got = attrs.get(a.name)
        if got is None:
            continue
        if got.type != _TF_ATTR_TYPES.get(a.type, a.type):
            problems.append("attribute %s is a %s in the record, a %s in the registered op" % (
                a.name, a.type, got.type))
        default = _attr_default(got)
        same = (np.float32(default) == np.float32(a.default) if a.type == "float"
                else default == a.default)
        if not same:
            problems.append("attribute %s defaults to %r in the record, to %r in the registered op" % (
                a.name, a.default, default))
        if (a.minimum is not None and a.default < a.minimum) or (
                a.maximum is not None and a.default > a.maximum):
            problems.append("attribute %s's default %r is outside its bounds" % (a.name, a.default))
    variants = op.kernel.variants
    if not variants or variants[0].name != "flat" or variants[0].pattern != "equal":
        problems.append("the first kernel variant must be \"flat\", of pattern \"equal\"")
    if not op.broadcasts and any(v.pattern != "equal" for v in variants):
        problems.append("the op does not broadcast, yet has variants of patterns %s" % sorted(
            set(v.pattern for v in variants if v.pattern != "equal")))
    if op.equivalent:
        from .._op_meanings import tensorflow_function

        try:
            tensorflow_function(op.equivalent)
        except Exception as e:
            problems.append(str(e))
    if problems:
        raise CheckFailure("; ".join(problems))
    return "the registered op %s has the record's inputs, outputs, %d dtypes and %d attributes" % (
        op.type_name, len(op.dtypes), len(op.attrs))


def signature(ctx):
    op = ctx.op
    try:
        params = list(inspect.signature(ctx.function).parameters.values())
    except (TypeError, ValueError) as e:
        raise CheckFailure("the function's signature cannot be read: %s" % e)
    want = [(n, inspect.Parameter.empty) for n in op.inputs] + [(a.name, a.default) for a in op.attrs] \
        + [("name", None)]
    got = [(p.name, p.default) for p in params]
    if got != want:
        raise CheckFailure("the function's signature is (%s); the record makes it (%s)" % (
            ", ".join(_shown(p) for p in got), ", ".join(_shown(p) for p in want)))
    return "(%s), as the record says" % ", ".join(_shown(p) for p in got)


def _shown(param):
    name, default = param
    return name if default is inspect.Parameter.empty else "%s=%r" % (name, default)


def shape_function(ctx):
    """The registered shape function on real shapes: fully known, each dimension unknown, the
    rank unknown; the output's static shape is the reference's and the result's."""
    checked = 0
    seen = set()
    for s in ctx.samples:
        shapes = tuple(x.shape for x in s.inputs)
        if shapes in seen:
            continue
        seen.add(shapes)
        real = ctx.expected(s).shape if ctx.reference is not None else np.broadcast(*s.inputs).shape
        variants = [("known shapes", shapes), ("unknown dimensions", tuple([None] * len(x) for x in shapes)),
                    ("unknown rank", tuple(None for _ in shapes))]
        for label, static in variants:
            graph = tf.Graph()
            with graph.as_default():
                holders = [tf.compat.v1.placeholder(tf.as_dtype(x.dtype), sh) for x, sh in zip(s.inputs, static)]
                got = ctx.function(*holders, **s.attrs).shape
                want = ctx.reference(*holders, **s.attrs).shape if ctx.reference is not None else None
            if want is not None and _as_list(got) != _as_list(want):
                raise CheckFailure("sample %s, graph with %s %s: static output shape %s, the reference's %s" % (
                    s.name, label, [_as_list(tf.TensorShape(sh)) for sh in static], got, want))
            if not tf.TensorShape(got).is_compatible_with(real):
                raise CheckFailure("sample %s, graph with %s: static output shape %s, but the result has %s" % (
                    s.name, label, got, real))
            if label == "known shapes" and _as_list(got) != list(real):
                raise CheckFailure("sample %s: from known shapes the static output shape is %s, the result's %s" % (
                    s.name, got, real))
            checked += 1
    return "%d graphs: the static output shape is the reference's and the result's" % checked


def _as_list(shape):
    shape = tf.TensorShape(shape)
    return None if shape.rank is None else shape.as_list()
