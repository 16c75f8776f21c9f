"""A frozen graph ready to write: the GraphDef, its record, and the source model to compare with.

:class:`FrozenGraph` is what every freezing route returns. ``reference_outputs(feeds)``
runs the *source* model (SavedModel signature, Keras model, TF1 session, concrete function
or the original ``.pb``) on the same inputs, so that verification and ``run-om
--compare-with`` have an oracle that is not the frozen graph itself.
"""
import collections

import numpy as np
import tensorflow as tf

from tf_ge_custom.errors import ExportError
from tf_ge_custom.op_def import OPS
from tf_ge_custom.export.graph_record import GraphRecord, TensorInfo

_TYPE_ATTR = {op.type_name: op.type_attr for op in OPS}  # the ops every export must keep


def shape_of(tensor_shape):
    """A TensorShape as a tuple with None for unknown dims, or None for unknown rank."""
    shape = tf.TensorShape(tensor_shape)
    if shape.rank is None:
        return None
    return tuple(shape.as_list())


def describe(graph, graph_def, inputs, outputs, source_kind="", source=""):
    """The :class:`GraphRecord` of ``graph_def`` (already imported into ``graph``).

    ``inputs``: ``[(placeholder node name, key)]``; ``outputs``: ``[(tensor name, key)]``.
    Dtypes and shapes are those TensorFlow's shape inference gives in ``graph``.
    """
    input_infos = []
    for name, key in inputs:
        t = graph.get_operation_by_name(name).outputs[0]
        input_infos.append(TensorInfo(name, t.dtype.name, shape_of(t.shape), key or name))
    output_infos = []
    for name, key in outputs:
        t = graph.get_tensor_by_name(name)
        output_infos.append(TensorInfo(name, t.dtype.name, shape_of(t.shape), key or name))
    counts = collections.Counter(n.op for n in graph_def.node)
    kept, node_ops = [], {}
    for op in graph.get_operations():
        if op.type in _TYPE_ATTR:
            kept.append((op.name, op.get_attr(_TYPE_ATTR[op.type]).name,
                         tuple(shape_of(i.shape) for i in op.inputs)))
            node_ops[op.name] = op.type
    return GraphRecord(input_infos, output_infos, counts, source_kind, source, tf.__version__, kept,
                       node_ops=node_ops)


class FrozenGraph(object):
    """A frozen GraphDef, its :class:`GraphRecord` and the source model's outputs on demand."""

    def __init__(self, graph_def, record, reference, close=None, original_bytes=None):
        self.graph_def = graph_def
        self.record = record
        self._reference = reference
        self._close = close
        self._original_bytes = original_bytes  # a passed-through .pb is written unchanged

    def serialized(self):
        """The bytes of the ``.pb`` to write."""
        if self._original_bytes is not None:
            return self._original_bytes
        return self.graph_def.SerializeToString(deterministic=True)

    def reference_outputs(self, feeds):
        """The source model's outputs for ``feeds`` (``{input name: array}``), in output order."""
        try:
            values = self._reference(feeds)
        except Exception as e:  # TensorFlow raises many types for inputs a model refuses
            raise ExportError("the source model (%s) cannot run on the given inputs: %s: %s"
                              % (self.record.source, type(e).__name__, str(e).strip().splitlines()[0]
                                 if str(e).strip() else ""))
        return [np.asarray(v) for v in values]

    def close(self):
        if self._close is not None:
            self._close()
            self._close = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
