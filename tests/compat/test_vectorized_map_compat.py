"""``tf.vectorized_map`` over each op of ``op_def.OPS`` on the TensorFlows TF Adapter ships for
(1.15.5 and 2.6.5, Python 3.7, in ``make test-compat``), and on the main suite's TensorFlow.

The package registers a vectorization rule per op when its op library loads
(``tf_ge_custom/_vectorize.py``). Here each op is mapped in a TF1 graph, with an attribute other
than its default, over inputs stacked or loop-invariant in every combination. The graph must
hold the op and no ``While`` node. The oracle is the record's equivalent (``tf.math.add``,
``tf.nn.leaky_relu``) applied once to the whole stacked inputs: an element-wise op mapped over
the leading dimension is the op on the stack. Results are compared bit for bit.
TensorFlow 1.15's ``vectorized_map`` has no ``fallback_to_while_loop`` and no fallback: a
missing rule is an error there. Python 3.7 syntax; ``tf.compat.v1`` for graphs.
"""
import inspect
import itertools

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import _op_meanings
from tf_ge_custom.op_def import OPS

pytestmark = pytest.mark.kind("oracle")

v1 = tf.compat.v1
LOOP, ELEMENT = 5, (3, 4)
UINT = {"float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16, "int32": np.uint32}


def _other_value(attr):
    """A value of ``attr`` other than its default, inside its bounds: a rule that dropped the
    node's attributes would run with the default and give other numbers."""
    step = 0.25 if attr.type == "float" else 1
    for value in (attr.default + step, attr.default - step):
        if ((attr.minimum is None or value >= attr.minimum)
                and (attr.maximum is None or value <= attr.maximum)):
            return value
    raise AssertionError("no value other than the default fits %s's bounds" % attr.name)


def _map(function, tensors, stacked, attrs):
    """``function`` under ``tf.vectorized_map``, over the inputs marked stacked; the others
    are loop-invariant (captured by the body)."""
    looped = tuple(t for t, s in zip(tensors, stacked) if s)

    def body(elements):
        it = iter(elements)
        return function(*[next(it) if s else t for t, s in zip(tensors, stacked)], **attrs)
    keywords = {}
    if "fallback_to_while_loop" in inspect.signature(tf.vectorized_map).parameters:
        keywords["fallback_to_while_loop"] = False
    return tf.vectorized_map(body, looped, **keywords)


def _cases():
    for op in OPS:
        for stacked in itertools.product((True, False), repeat=len(op.inputs)):
            if any(stacked):
                for dtype in op.dtypes:
                    yield pytest.param(op, stacked, dtype, id="%s-%s-%s" % (
                        op.python_name, "".join("s" if s else "u" for s in stacked), dtype))


@pytest.mark.parametrize("op,stacked,dtype", list(_cases()))
def test_vectorized_map_has_no_loop_and_is_the_equivalent_on_the_stack(op, stacked, dtype):
    rng = np.random.RandomState(len(op.inputs) * 7 + len(dtype))
    values = [rng.uniform(-3, 3, ((LOOP,) + ELEMENT) if s else ELEMENT) for s in stacked]
    attrs = dict((a.name, _other_value(a)) for a in op.attrs)
    t = tf.as_dtype(dtype)
    graph = tf.Graph()
    with graph.as_default():
        tensors = [tf.cast(tf.constant(v, tf.float32), t) for v in values]
        ours = _map(getattr(tf_ge_custom, op.python_name), tensors, stacked, attrs)
        whole = [x if s else tf.broadcast_to(x, (LOOP,) + ELEMENT) for x, s in zip(tensors, stacked)]
        theirs = _op_meanings.tensorflow_function(op.equivalent)(*whole, **attrs)
        types = [node.type for node in graph.get_operations()]
        assert "While" not in types and "StatelessWhile" not in types, types
        assert op.type_name in types, types
        u = tf.as_dtype(UINT[dtype])
        with v1.Session(graph=graph) as session:
            got, want = session.run([tf.bitcast(ours, u), tf.bitcast(theirs, u)])
    assert got.shape == (LOOP,) + ELEMENT
    np.testing.assert_array_equal(got, want, err_msg="%s %s %s" % (op.type_name, stacked, dtype))
