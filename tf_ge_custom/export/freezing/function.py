"""Freeze a concrete function (``tf.function``): the route of TF2 SavedModels and Keras models too.

``convert_variables_to_constants_v2`` folds the captured variables into constants and
inlines every function call; :func:`.inference_graph.for_inference` then cleans the graph.
Input names are the function's placeholders (a ``tf.TensorSpec``'s ``name`` sets them); the
frozen graph's outputs are the function's flattened outputs, in ``tf.nest`` order.
"""
import tensorflow as tf
from tensorflow.python.framework import convert_to_constants

from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.freezing import inference_graph
from tf_ge_custom.export.frozen_graph import FrozenGraph


def concrete_function(function):
    """``function`` as a concrete function (a ``tf.function`` needs an input signature)."""
    if hasattr(function, "structured_input_signature") and hasattr(function, "graph"):
        return function
    try:
        return function.get_concrete_function()
    except (TypeError, ValueError) as e:
        raise ExportError("cannot trace %s without arguments (%s): give the tf.function an "
                          "input_signature, or pass f.get_concrete_function(tf.TensorSpec(...), ...)"
                          % (getattr(function, "__name__", function), e))


def _flat_keys(structure, prefix):
    try:
        from tensorflow.python.util import nest
        return [path for path, _ in nest.flatten_with_joined_string_paths(structure)]
    except (ImportError, AttributeError):  # pragma: no cover - older TensorFlow
        return ["%s%d" % (prefix, i) for i in range(len(tf.nest.flatten(structure)))]


def _input_keys(fn, count):
    specs = tf.nest.flatten(fn.structured_input_signature)
    keys = [getattr(s, "name", None) for s in specs]
    if len(keys) != count:
        return [None] * count
    return keys


def freeze_concrete_function(function, source_kind="function", source="", call=None):
    """Freeze ``function``; returns ``(graph_def, inputs, outputs, reference)``.

    ``inputs``: ``[(placeholder name, key)]``; ``outputs``: ``[(tensor name, key)]``;
    ``reference(feeds)`` calls the *unfrozen* function (or ``call`` when given) on ``feeds``.
    """
    fn = concrete_function(function)
    frozen = convert_to_constants.convert_variables_to_constants_v2(fn)
    graph_def = frozen.graph.as_graph_def()
    names = [t.name.split(":")[0] for t in frozen.inputs]
    keys = _input_keys(fn, len(names))
    inputs = [(n, k or n) for n, k in zip(names, keys)]
    output_keys = _flat_keys(fn.structured_outputs, "output_")
    if len(output_keys) != len(frozen.outputs):
        output_keys = [t.name for t in frozen.outputs]
    outputs = [(t.name, k) for t, k in zip(frozen.outputs, output_keys)]
    if not outputs:
        raise ExportError("%s returns no tensor: nothing to export" % source_kind)
    graph_def = inference_graph.for_inference(graph_def, names, [t for t, _ in outputs])

    def reference(feeds):
        flat = [tf.constant(feeds[name]) for name in names]
        if call is not None:
            return [t.numpy() for t in tf.nest.flatten(call(*flat))]
        args, kwargs = tf.nest.pack_sequence_as(fn.structured_input_signature, flat)
        return [t.numpy() for t in tf.nest.flatten(fn(*args, **kwargs))]

    return graph_def, inputs, outputs, reference


def freeze_function(function):
    """A :class:`FrozenGraph` of a ``tf.function`` / concrete function (Python API)."""
    from tf_ge_custom.export.checking.graph_checks import checked

    graph_def, inputs, outputs, reference = freeze_concrete_function(function)
    name = getattr(function, "name", None) or getattr(function, "__name__", "function")
    return FrozenGraph(graph_def, checked(graph_def, inputs, outputs, "function", str(name)), reference)
