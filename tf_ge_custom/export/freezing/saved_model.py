"""Freeze a SavedModel (TF2 ``tf.saved_model.save`` or TF1 ``SavedModelBuilder``).

The meta graph is chosen by its tag set and the function by its signature key; both are
read from ``saved_model.pb`` first, so that a wrong one is named with the ones there are.
A TF2 SavedModel (one with an object graph) on TensorFlow 2 is loaded with
``tf.saved_model.load`` and its signature frozen as a concrete function; a TF1 SavedModel,
or any SavedModel on TensorFlow 1.15, is loaded into a ``tf.compat.v1.Session`` and its
variables replaced by constants (:func:`.inference_graph.session_constants`).
"""
import os

import tensorflow as tf
from tensorflow.python.saved_model import loader_impl

from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.freezing import damaged_files, inference_graph
from tf_ge_custom.export.checking.graph_checks import checked
from tf_ge_custom.export.freezing.function import freeze_concrete_function
from tf_ge_custom.export.frozen_graph import FrozenGraph

DEFAULT_SIGNATURE = "serving_default"
KERAS_METADATA = "keras_metadata.pb"  # what Keras 2 writes into the SavedModels it saves
DEFAULT_TAG = "serve"


def _meta_graphs(path):
    try:
        return list(loader_impl.parse_saved_model(path).meta_graphs)
    except (IOError, OSError, ValueError) as e:
        raise ExportError("cannot read the SavedModel at %s: %s" % (path, e))


def choose_meta_graph(meta_graphs, tags, path):
    """The meta graph whose tag set is ``tags`` (default: the only one, or ``serve``)."""
    tag_sets = [sorted(m.meta_info_def.tags) for m in meta_graphs]
    if tags:
        wanted = sorted(tags)
        for meta, tag_set in zip(meta_graphs, tag_sets):
            if tag_set == wanted:
                return meta
        raise ExportError("SavedModel %s has no meta graph tagged %s; its tag sets are: %s (choose "
                          "with --tag)" % (path, ",".join(wanted), "; ".join(",".join(t) for t in tag_sets)))
    if len(meta_graphs) == 1:
        return meta_graphs[0]
    for meta, tag_set in zip(meta_graphs, tag_sets):
        if tag_set == [DEFAULT_TAG]:
            return meta
    raise ExportError("SavedModel %s has %d meta graphs (tag sets: %s): choose one with --tag"
                      % (path, len(meta_graphs), "; ".join(",".join(t) for t in tag_sets)))


def choose_signature(meta_graph, signature, path):
    """The signature key to export (default: ``serving_default``, or the only one)."""
    keys = sorted(k for k in meta_graph.signature_def if not k.startswith("__"))
    if signature:
        if signature not in keys:
            raise ExportError("SavedModel %s has no signature %r; its signatures are: %s (choose "
                              "with --signature)" % (path, signature, ", ".join(keys) or "(none)"))
        return signature
    if DEFAULT_SIGNATURE in keys:
        return DEFAULT_SIGNATURE
    if len(keys) == 1:
        return keys[0]
    raise ExportError("SavedModel %s has no signature %r and %s: choose one with --signature"
                      % (path, DEFAULT_SIGNATURE, "no other" if not keys else "several: " + ", ".join(keys)))


def _load_problem(path, error):
    """What a failed load of the SavedModel ``path`` says, in one line naming its files."""
    why = damaged_files.reason(error)
    variables = os.path.join(path, "variables", "variables")
    if damaged_files.checkpoint_files(variables) or "variables" in why:
        return "cannot read the variables of the SavedModel %s: checkpoint %s" % (
            path, damaged_files.variables_message(variables, error))
    return "cannot load the SavedModel %s: %s: %s" % (path, type(error).__name__, why)


def _is_tf2_saved_model(meta_graph):
    return len(meta_graph.object_graph_def.nodes) > 0 and tf.__version__[:2] != "1."


def freeze_saved_model(path, signature=None, tags=None):
    """A :class:`FrozenGraph` of signature ``signature`` of the SavedModel at ``path``."""
    meta = choose_meta_graph(_meta_graphs(path), tags, path)
    tags = list(meta.meta_info_def.tags)
    key = choose_signature(meta, signature, path)
    source = "%s [%s, signature %s]" % (path, ",".join(sorted(tags)), key)
    if _is_tf2_saved_model(meta):
        if os.path.isfile(os.path.join(path, KERAS_METADATA)):
            # A Keras SavedModel: Keras registers how to revive its objects (optimizers,
            # layers, the package's layers) when it is imported, so before the load; else
            # TensorFlow 2.6 revives the optimizer as a bare object and fails ("add_slot").
            from tf_ge_custom import layers  # noqa: F401
        try:
            loaded = tf.saved_model.load(path, tags=tags)
        except Exception as e:  # a damaged or missing variables file, mostly: name it
            raise ExportError(_load_problem(path, e))
        graph_def, inputs, outputs, reference = freeze_concrete_function(
            loaded.signatures[key], "saved_model", source)
        record = checked(graph_def, inputs, outputs, "saved_model", source)

        def reference_of_loaded(values, _loaded=loaded):  # keeps the variables alive
            return reference(values)

        return FrozenGraph(graph_def, record, reference_of_loaded)
    return _freeze_v1(path, tags, key, source)


def _freeze_v1(path, tags, key, source):
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph)
    try:
        with graph.as_default():
            # the loader class tf.compat.v1.saved_model.load wraps (which is deprecated)
            try:
                meta = loader_impl.SavedModelLoader(path).load(session, tags)
            except Exception as e:  # a damaged or missing variables file, mostly: name it
                raise ExportError(_load_problem(path, e))
        signature = meta.signature_def[key]
        inputs = [(info.name.split(":")[0], k) for k, info in sorted(signature.inputs.items())]
        outputs = [(info.name, k) for k, info in sorted(signature.outputs.items())]
        feeds = [graph.get_tensor_by_name(info.name) for _, info in sorted(signature.inputs.items())]
        fetches = [graph.get_tensor_by_name(name) for name, _ in outputs]
        graph_def = inference_graph.session_constants(
            session, graph.as_graph_def(), sorted(set(n.split(":")[0] for n, _ in outputs)))
        graph_def = inference_graph.for_inference(graph_def, [n for n, _ in inputs], [n for n, _ in outputs])
        record = checked(graph_def, inputs, outputs, "saved_model", source)
    except BaseException:
        session.close()
        raise

    def reference(values):
        return session.run(fetches, {t: values[name] for t, (name, _) in zip(feeds, inputs)})

    return FrozenGraph(graph_def, record, reference, close=session.close)
