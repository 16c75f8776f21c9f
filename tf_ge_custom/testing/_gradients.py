"""The op's gradients: against the reference's (first order, every float sample, with one
upstream gradient for both), against numerical ones (TensorFlow's gradient checker, at points
away from any kink), and the second order where the reference has one."""
import numpy as np
import tensorflow as tf

from ._context import random_like
from ._report import CheckFailure, NotApplicable, NotRun


def _gradients(function, inputs, attrs, dy):
    with tf.GradientTape() as tape:
        for x in inputs:
            tape.watch(x)
        y = function(*inputs, **attrs)
    return tape.gradient(y, inputs, output_gradients=dy)


def _zeros_if_none(grads, inputs):
    return [tf.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _float_samples(ctx):
    samples = [s for s in ctx.float_samples() if all(x.size for x in s.inputs)]
    if not samples:
        raise NotApplicable("%s has no float dtype to differentiate" % ctx.op.type_name)
    return samples


def _reference_or_none(ctx):
    if ctx.reference is None:
        raise NotRun("no reference to compare gradients with (the record names no equivalent)")
    return ctx.reference


def gradient(ctx):
    reference = _reference_or_none(ctx)
    samples = _float_samples(ctx)
    for i, s in enumerate(samples):
        inputs = [tf.constant(x) for x in s.inputs]
        dy = random_like(ctx.expected(s).shape, inputs[0].dtype, i)
        want = _zeros_if_none(_gradients(reference, inputs, s.attrs, dy), inputs)
        try:
            got = _gradients(ctx.function, inputs, s.attrs, dy)
        except LookupError as e:
            raise CheckFailure("sample %s: the op has no gradient (%s), its reference has" % (s.name, e))
        if any(g is None for g in got) and not all(np.all(w.numpy() == 0) for g, w in zip(got, want) if g is None):
            raise CheckFailure("sample %s: the op's gradient is None for an input the reference's is not" % s.name)
        for name, g, w in zip(ctx.op.inputs, _zeros_if_none(got, inputs), want):
            ctx.compare(g, w, s, "gradient with respect to %s" % name)
    return "%d float samples: the tape's gradients equal the reference's" % len(samples)


def _smooth_inputs(ctx, dtype, shapes, seed):
    rng = np.random.RandomState(seed)
    out = []
    for shape in shapes:
        x = rng.uniform(0.25, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        out.append(tf.constant(np.asarray(x, np.float32).astype(tf.as_dtype(dtype).as_numpy_dtype)))
    return out


def _gradient_shapes(op):
    if op.broadcasts and len(op.inputs) > 1:
        return [tuple((3, 4) if i % 2 == 0 else (4,) for i in range(len(op.inputs)))]
    return [tuple((3, 4) for _ in op.inputs)]


def numerical_gradient(ctx):
    op = ctx.op
    floats = [d for d in ("float32", "float16", "bfloat16") if d in op.dtypes]
    if not floats:
        raise NotApplicable("%s has no float dtype to differentiate" % op.type_name)
    dtype = floats[0]
    tolerance = {"float32": 2e-2, "float16": 0.2, "bfloat16": 0.5}[dtype]
    attr_sets = [dict((a.name, a.default) for a in op.attrs)]
    for s in ctx.samples:  # the samples' other attribute values too
        if s.attrs not in attr_sets:
            attr_sets.append(s.attrs)
    checked = 0
    for shapes in _gradient_shapes(op):
        for k, attrs in enumerate(attr_sets):
            inputs = _smooth_inputs(ctx, dtype, shapes, k)
            try:
                theoretical, numerical = tf.test.compute_gradient(
                    lambda *xs: ctx.function(*xs, **attrs), inputs, delta=1e-2 if dtype == "float32" else 1e-1)
            except LookupError as e:
                if ctx.reference is None:
                    raise NotApplicable("the op has no gradient (its record names no equivalent)")
                raise CheckFailure("the op has no gradient: %s" % e)
            for name, t, n in zip(op.inputs, theoretical, numerical):
                t, n = np.asarray(t, np.float64), np.asarray(n, np.float64)
                error = np.abs(t - n) - tolerance * (1 + np.abs(n))
                if np.any(error > 0):
                    index = tuple(int(i) for i in np.argwhere(error > 0)[0])
                    raise CheckFailure(
                        "%s %s attrs %s, gradient with respect to %s: the Jacobian differs from the "
                        "numerical one first at %s: %r, numerically %r" % (
                            dtype, " and ".join(str(sh) for sh in shapes), attrs, name, index,
                            t[index], n[index]))
            checked += 1
    return "%d %s calls: the Jacobians agree with TensorFlow's numerical ones" % (checked, dtype)


def _second_order(function, inputs, attrs, dy):
    with tf.GradientTape(persistent=True) as outer:
        for x in inputs:
            outer.watch(x)
        grads = _zeros_if_none(_gradients(function, inputs, attrs, dy), inputs)
        total = tf.add_n([tf.reduce_sum(tf.cast(g, tf.float32)) for g in grads])
    return _zeros_if_none(outer.gradient(total, inputs), inputs)


def second_order_gradient(ctx):
    reference = _reference_or_none(ctx)
    samples = _float_samples(ctx)
    for i, s in enumerate(samples):
        inputs = [tf.constant(x) for x in s.inputs]
        dy = random_like(ctx.expected(s).shape, inputs[0].dtype, i)
        try:
            want = _second_order(reference, inputs, s.attrs, dy)
        except LookupError as e:
            raise NotApplicable("the reference has no second-order gradient (%s)" % e)
        try:
            got = _second_order(ctx.function, inputs, s.attrs, dy)
        except LookupError as e:
            raise CheckFailure("sample %s: the op has no second-order gradient (%s), its reference has"
                               % (s.name, e))
        for name, g, w in zip(ctx.op.inputs, got, want):
            ctx.compare(g, w, s, "second-order gradient with respect to %s" % name)
    return "%d float samples: the second-order gradients equal the reference's" % len(samples)
