"""The package's ops under ``tf.vectorized_map``: one vectorization rule per op, made from its
record and registered when the op library loads (``ops.py``).

``tf.vectorized_map`` rewrites each node of the function it maps by a rule registered for the
node's type (``tensorflow/python/ops/parallel_for/pfor.py``, ``RegisterPFor``). An op without
a rule makes TensorFlow 2.x fall back to a ``while_loop`` (and log a warning), and a
``vectorized_map`` without that fallback refuse the function. Every op of the package is element-wise, so its rule is the op
itself on the stacked inputs (one more leading dimension, the loop's), with the node's
attributes. The inputs of an op that broadcasts (``AddCustom``, as ``AddV2``) get the leading
dimensions broadcasting needs, as TensorFlow's own element-wise rule does
(``expanddim_inputs_for_broadcast``); the loop-invariant inputs of an op that does not
broadcast are stacked to the loop's length, so every input has one shape. The rule of an op
TensorFlow has one for already (registered by an older import) is left as it is.
"""
import importlib

from .op_def import OPS


def _pfor():
    """TensorFlow's vectorizer module, or None where it has none this package can use."""
    # By module path: TensorFlow 1.15's parallel_for package exports a function named pfor,
    # which `from ... import pfor` would return instead of the module.
    try:
        pfor = importlib.import_module("tensorflow.python.ops.parallel_for.pfor")
    except ImportError:  # pragma: no cover - every TensorFlow the package supports has it
        return None
    needed = ("RegisterPFor", "wrap", "_create_op", "_stack", "_pfor_converter_registry")
    return pfor if all(hasattr(pfor, n) for n in needed) else None


def rule(op, pfor):
    """The vectorization rule of ``op`` (an ``op_def.OpDefinition``) for TensorFlow's ``pfor``
    module: called with a ``_PforInput``, returns the op's output, stacked."""
    def vectorize(pfor_input):
        if len(op.inputs) > 1 and op.broadcasts:
            pfor_input.expanddim_inputs_for_broadcast()
            inputs = [x.t for x in pfor_input.inputs]
        else:
            length = pfor_input.pfor.loop_len_vector
            inputs = [x.t if x.is_stacked else pfor._stack(x.t, length).t
                      for x in pfor_input.inputs]
        node = pfor._create_op(pfor_input.op_type, inputs,
                               [t.dtype for t in pfor_input.outputs],
                               attrs=pfor_input.op.node_def.attr)
        return [pfor.wrap(t, True) for t in node.outputs]
    vectorize.__name__ = "_vectorize_%s" % op.python_name
    return vectorize


def register(ops=OPS):
    """Register the rule of each op of ``ops``; return the types registered now."""
    pfor = _pfor()
    if pfor is None:
        return []
    registered = []
    for op in ops:
        if op.type_name not in pfor._pfor_converter_registry:
            pfor.RegisterPFor(op.type_name)(rule(op, pfor))
            registered.append(op.type_name)
    return registered
