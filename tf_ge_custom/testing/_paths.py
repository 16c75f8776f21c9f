"""The op's results on every path a TensorFlow program takes, against the reference: eager,
``tf.function`` (whose graph must hold the op's node), XLA (``jit_compile=True``) and a TF1
session on placeholders (the node named as the caller names it)."""
import tensorflow as tf

from ._context import call
from ._report import CheckFailure, NotRun


def eager(ctx):
    for s in ctx.samples:
        ctx.compare(call(ctx.function, s), ctx.expected(s), s, "eager")
    return "%d samples equal the reference, eager" % len(ctx.samples)


def _traced(ctx, s, **options):
    return tf.function(lambda *xs: ctx.function(*xs, **s.attrs), **options)


def function(ctx):
    nodes = 0
    for s in ctx.samples:
        inputs = [tf.constant(x) for x in s.inputs]
        traced = _traced(ctx, s)
        types = [o.type for o in traced.get_concrete_function(*inputs).graph.get_operations()]
        if ctx.op.type_name not in types:
            raise CheckFailure("sample %s, tf.function: the traced graph holds no %s node (its "
                               "nodes: %s)" % (s.name, ctx.op.type_name, ", ".join(sorted(set(types)))))
        nodes += 1
        ctx.compare(traced(*inputs), ctx.expected(s), s, "tf.function")
    return "%d samples equal the reference inside tf.function, each graph with its %s node" % (
        nodes, ctx.op.type_name)


def xla(ctx):
    try:
        tf.function(lambda x: x, jit_compile=True)
    except TypeError:
        raise NotRun("this TensorFlow (%s) has no tf.function(jit_compile=True)" % tf.__version__)
    for s in ctx.samples:
        ctx.compare(_traced(ctx, s, jit_compile=True)(*[tf.constant(x) for x in s.inputs]),
                    ctx.expected(s), s, "XLA (tf.function(jit_compile=True))")
    return "%d samples equal the reference under jit_compile=True" % len(ctx.samples)


def tf1_session(ctx):
    for s in ctx.samples:
        graph = tf.Graph()
        with graph.as_default():
            holders = [tf.compat.v1.placeholder(tf.as_dtype(x.dtype), x.shape, name=n)
                       for x, n in zip(s.inputs, ctx.op.inputs)]
            y = ctx.function(*holders, name="opcheck_node", **s.attrs)
            if y.op.type != ctx.op.type_name or y.op.name != "opcheck_node":
                raise CheckFailure("sample %s, TF1 graph: the result comes from a %s node named %s, "
                                   "expected a %s node named opcheck_node" % (
                                       s.name, y.op.type, y.op.name, ctx.op.type_name))
            with tf.compat.v1.Session(graph=graph) as session:
                got = session.run(y, dict(zip(holders, s.inputs)))
        ctx.compare(got, ctx.expected(s), s, "TF1 session")
    return "%d samples equal the reference in a TF1 session, one named %s node each" % (
        len(ctx.samples), ctx.op.type_name)
