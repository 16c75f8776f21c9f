"""``tf.vectorized_map`` over each op of ``op_def.OPS`` vectorizes it (its rule is registered
when the op library loads, ``tf_ge_custom/_vectorize.py``): the traced graph holds the op
and no ``While`` node, and the results equal the op's TensorFlow equivalent (the record's
``equivalent``) under ``vectorized_map``, bit for bit. Inputs are stacked or loop-invariant
in every combination, with the shapes broadcasting allows where the op broadcasts."""
import itertools

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom import _op_meanings
from tf_ge_custom.op_def import OPS

_LOOP = 5


def _inputs(op, stacked, dtype):
    """One array per input, of element shape (3, 4), with the loop's dimension first where
    stacked. Where the op broadcasts, the first input's elements are a row (4,) instead: a
    stacked row needs a dimension inserted after the loop's to broadcast (the rank fix)."""
    rng = np.random.RandomState(len(op.inputs))
    arrays = []
    for i, is_stacked in enumerate(stacked):
        shape = (4,) if op.broadcasts and i == 0 else (3, 4)
        values = rng.uniform(-3, 3, ((_LOOP,) + shape) if is_stacked else shape)
        arrays.append(tf.constant(values.astype(np.float32), dtype=dtype))
    return arrays


def _mapped(function, op, stacked, arrays):
    attrs = dict((a.name, a.default) for a in op.attrs)

    @tf.function
    def run(*tensors):
        looped = tuple(t for t, s in zip(tensors, stacked) if s)
        fixed = iter(t for t, s in zip(tensors, stacked) if not s)
        constant = [next(fixed) if not s else None for s in stacked]

        def body(elements):
            it = iter(elements)
            values = [next(it) if s else c for s, c in zip(stacked, constant)]
            return function(*values, **attrs)
        return tf.vectorized_map(body, looped, fallback_to_while_loop=False)
    return run, run.get_concrete_function(*arrays)


def _cases():
    for op in OPS:
        for stacked in itertools.product((True, False), repeat=len(op.inputs)):
            if any(stacked):
                for dtype in op.dtypes:
                    yield pytest.param(op, stacked, dtype, id="%s-%s-%s" % (
                        op.python_name, "".join("s" if s else "u" for s in stacked), dtype))


@pytest.mark.parametrize("op,stacked,dtype", list(_cases()))
def test_vectorized_map_has_no_loop_and_equals_the_equivalent(assert_same, op, stacked, dtype):
    arrays = _inputs(op, stacked, tf.as_dtype(dtype))
    ours, graph = _mapped(getattr(tf_ge_custom, op.python_name), op, stacked, arrays)
    types = [node.type for node in graph.graph.get_operations()]
    assert "While" not in types and "StatelessWhile" not in types, types
    assert op.type_name in types, types  # (the loop body's own node stays, unused)
    reference, _ = _mapped(_op_meanings.tensorflow_function(op.equivalent), op, stacked, arrays)
    assert_same(ours(*arrays), reference(*arrays))
