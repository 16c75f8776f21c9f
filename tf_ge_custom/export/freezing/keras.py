"""Freeze a Keras model file (``.keras`` or ``.h5``) through a concrete function.

The model is loaded with the package's layers registered (``tf_ge_custom.layers``) and
called in inference mode (``training=False``: dropout off, batch norm on its moving
statistics) inside a ``tf.function`` whose input signature is the model's inputs; the
placeholders take the Keras input names (made valid node names).
"""
import re

import tensorflow as tf

from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.checking.graph_checks import checked
from tf_ge_custom.export.freezing.function import freeze_concrete_function
from tf_ge_custom.export.frozen_graph import FrozenGraph


def node_name(name, taken):
    """``name`` as a valid, unused TensorFlow node name."""
    name = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name.split(":")[0]) or "input"
    if not re.match(r"[A-Za-z0-9.]", name[0]):
        name = "input" + name
    base, i = name, 1
    while name in taken:
        name = "%s_%d" % (base, i)
        i += 1
    taken.add(name)
    return name


def load_model(path):
    from tf_ge_custom import layers  # noqa: F401  (registers the package's layers for the loader)

    try:
        return tf.keras.models.load_model(path, compile=False)
    except Exception as e:  # Keras raises many types for a bad file; name the file once
        unknown = unknown_class(str(e))
        if unknown:
            raise ExportError(unknown_class_message(path, *unknown))
        from tf_ge_custom.export.freezing import damaged_files

        damaged = damaged_files.keras_member_problem(path)  # which member, not "File not found"
        if damaged:
            raise ExportError("cannot load the Keras model: %s" % damaged)
        raise ExportError("cannot load the Keras model %s: %s: %s" % (path, type(e).__name__,
                                                                    damaged_files.reason(e)))


def unknown_class(message):
    """(class name, its module or None) when Keras's ``message`` says it could not find a
    class the model file names (the user's own layer, not imported), else None."""
    found = re.search(r"Could not locate class '([^']+)'", message) or \
        re.search(r"Unknown (?:layer|object)(?: type)?: '?([A-Za-z_][A-Za-z0-9_.>]*)'?", message)
    if not found:
        return None
    name = found.group(1)
    module = re.search(r"'module': '([^']+)', 'class_name': '%s'" % re.escape(name), message)
    return name, module.group(1) if module and not module.group(1).startswith("keras") else None


def unknown_class_message(path, name, module):
    """One line: what is missing, and the two ways out (``--import`` and a SavedModel)."""
    return ("cannot load the Keras model %s: it uses the class '%s'%s, which is not registered in "
            "this process; pass --import %s (the module that defines and registers it), or export a "
            "SavedModel of the model instead (tf.saved_model.save(model, DIR), then tf-ge-custom "
            "export DIR)" % (path, name, " (module %s)" % module if module else "", module or "MODULE"))


def model_function(model):
    """A concrete function calling ``model`` in inference mode on its declared inputs."""
    try:
        model_inputs = list(model.inputs)
    except (AttributeError, ValueError) as e:
        raise ExportError("the Keras model has no declared inputs (%s): build it on keras.Input "
                          "tensors (a functional model, or a Sequential model with an Input)" % e)
    taken = set()
    specs = [tf.TensorSpec(tuple(t.shape), tf.as_dtype(t.dtype), name=node_name(t.name, taken))
             for t in model_inputs]
    single = len(specs) == 1

    @tf.function(input_signature=specs)
    def serve(*args):
        return model(args[0] if single else list(args), training=False)

    return serve.get_concrete_function(), [s.name for s in specs]


def freeze_keras(path):
    """A :class:`FrozenGraph` of the Keras model saved at ``path``."""
    model = load_model(path)
    fn, names = model_function(model)
    graph_def, inputs, outputs, _ = freeze_concrete_function(fn, "keras", path)
    output_names = list(getattr(model, "output_names", None) or [])
    if len(output_names) == len(outputs):
        outputs = [(tensor, key) for (tensor, _), key in zip(outputs, output_names)]
    record = checked(graph_def, inputs, outputs, "keras", path)

    if not tf.executing_eagerly():  # TensorFlow 1.15: the model's graph, in Keras's session
        session = tf.compat.v1.keras.backend.get_session()
        feeds, fetches = list(model.inputs), list(model.outputs)

        def reference_v1(values):
            return session.run(fetches, {t: values[n] for t, n in zip(feeds, names)})

        return FrozenGraph(graph_def, record, reference_v1)

    def reference(values):
        args = [tf.constant(values[n]) for n in names]
        result = model(args[0] if len(args) == 1 else args, training=False)
        return [tf.convert_to_tensor(t).numpy() for t in tf.nest.flatten(result)]

    return FrozenGraph(graph_def, record, reference)
