"""Freeze a TF1 checkpoint: meta graph (``.meta``) + checkpoint prefix + output node names.

The TF1 adapter user's usual starting point. The meta graph is imported with devices
cleared, the variables restored from the checkpoint, and the sub-graph that computes the
named outputs frozen (:func:`.inference_graph.session_constants`). The inputs are the
``Placeholder`` nodes that sub-graph needs (or the ones named); the saver, the optimizer
and everything else that the outputs do not need is left out.
"""
import difflib

import tensorflow as tf

from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.freezing import damaged_files, inference_graph
from tf_ge_custom.export.freezing.sources import NEEDS_OUTPUTS
from tf_ge_custom.export.checking.graph_checks import checked
from tf_ge_custom.export.frozen_graph import FrozenGraph


def _tensor_name(name):
    return name if ":" in name else name + ":0"


def _closest(name, names):
    close = difflib.get_close_matches(name, names, n=3)
    return "; similar names: " + ", ".join(close) if close else ""


def _find_tensor(graph, name, what, flag):
    try:
        return graph.get_tensor_by_name(_tensor_name(name))
    except (KeyError, ValueError):
        names = [op.name for op in graph.get_operations()]
        raise ExportError("%s %s is not in the meta graph%s (name nodes with %s)"
                          % (what, name, _closest(name.split(":")[0], names), flag))


def freeze_checkpoint(meta_path, checkpoint, outputs, inputs=None):
    """A :class:`FrozenGraph` of ``outputs`` (node or tensor names) of a TF1 checkpoint."""
    if not outputs:
        raise ExportError(NEEDS_OUTPUTS)
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph)
    try:
        with graph.as_default():
            try:
                saver = tf.compat.v1.train.import_meta_graph(meta_path, clear_devices=True)
            except Exception as e:  # a damaged file or an op this TensorFlow lacks
                damaged = isinstance(e, UnicodeDecodeError) or type(e).__name__ == "DecodeError"
                raise ExportError("cannot import the meta graph %s: %s%s: %s" % (
                    meta_path, "it is not a MetaGraphDef (truncated or damaged?): " if damaged else "",
                    type(e).__name__, damaged_files.reason(e)))
            fetches = [_find_tensor(graph, n, "output", "--outputs") for n in outputs]
            if saver is not None:
                try:
                    saver.restore(session, checkpoint)
                except Exception as e:  # a damaged or missing checkpoint file: name it
                    raise ExportError("cannot restore the checkpoint into %s: checkpoint %s"
                                      % (meta_path, damaged_files.variables_message(checkpoint, e)))
        output_nodes = sorted(set(t.op.name for t in fetches))
        graph_def = graph.as_graph_def()
        needed = inference_graph.needed_by(graph_def, output_nodes)
        if inputs:
            feeds = [_find_tensor(graph, n, "input", "the inputs argument") for n in inputs]
        else:
            feeds = [graph.get_tensor_by_name(n.name + ":0") for n in needed.node if n.op == "Placeholder"]
        input_names = [t.op.name for t in feeds]
        graph_def = inference_graph.session_constants(session, graph_def, output_nodes)
        output_names = [t.name for t in fetches]
        graph_def = inference_graph.for_inference(graph_def, input_names, output_names)
        record = checked(graph_def, [(n, n) for n in input_names], [(n, n) for n in output_names],
                         "checkpoint", "%s (meta graph %s)" % (checkpoint, meta_path))
    except BaseException:
        session.close()
        raise

    def reference(values):
        return session.run(fetches, {t: values[t.op.name] for t in feeds})

    return FrozenGraph(graph_def, record, reference, close=session.close)
