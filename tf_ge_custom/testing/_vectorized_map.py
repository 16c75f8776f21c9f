"""The op under ``tf.vectorized_map`` without the while-loop fallback: the op must have its
vectorization rule, and the stacked result must be the reference's on each element."""
import numpy as np
import tensorflow as tf

from ._report import CheckFailure
from ._samples import values


def _cases(op, dtype, rng):
    """(label, stacked inputs, which inputs are stacked) of the op for ``dtype``."""
    if op.broadcasts and len(op.inputs) > 1:
        per = [(6, 40) if i % 2 == 0 else (40,) for i in range(len(op.inputs))]
    else:
        per = [(6, 40) for _ in op.inputs]
    stacked = [values(dtype, (4,) + sh, rng) for sh in per]
    cases = [("every input stacked", stacked, [True] * len(per))]
    if len(op.inputs) > 1:  # the last input loop-invariant
        invariant = stacked[:-1] + [stacked[-1][0]]
        cases.append(("the last input loop-invariant", invariant, [True] * (len(per) - 1) + [False]))
    return cases


def vectorized_map(ctx):
    op = ctx.op
    reference = ctx.need_reference()
    rng = np.random.RandomState(5)
    attr_sets = []
    for s in ctx.samples:
        if s.attrs not in attr_sets:
            attr_sets.append(s.attrs)
    checked = 0
    for dtype in op.dtypes:
        for label, inputs, stacked in _cases(op, dtype, rng):
            for attrs in attr_sets:
                elems = tuple(tf.constant(x) for x, st in zip(inputs, stacked) if st)
                fixed = [tf.constant(x) for x, st in zip(inputs, stacked) if not st]

                def per_element(args, attrs=attrs, fixed=fixed):
                    args, fixed_ = list(args), list(fixed)
                    xs = [args.pop(0) if st else fixed_.pop(0) for st in stacked]
                    return ctx.function(*xs, **attrs)

                try:
                    got = tf.function(lambda e: tf.vectorized_map(
                        per_element, e, fallback_to_while_loop=False))(elems)
                except Exception as e:
                    raise CheckFailure("%s %s attrs %s: tf.vectorized_map without its while-loop fallback "
                                       "failed: %s: %s" % (dtype, label, attrs, type(e).__name__,
                                                           str(e).splitlines()[0][:300]))
                want = np.stack([np.asarray(_np(reference(*[tf.constant(x[i]) if st else tf.constant(x)
                                                            for x, st in zip(inputs, stacked)], **attrs)))
                                 for i in range(4)])
                sample = type("S", (), {"name": "%s %s attrs %s" % (dtype, label, attrs)})
                ctx.compare(got, want, sample, "tf.vectorized_map")
                checked += 1
    return "%d vectorized_map calls (no while-loop fallback) equal the reference per element" % checked


def _np(t):
    from ._compare import as_numpy

    return as_numpy(t)
