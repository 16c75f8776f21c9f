"""``freeze(model, ...)``: any supported model to a checked :class:`~.frozen_graph.FrozenGraph`.

One entry point over the freezing routes, chosen by :func:`.sources.classify`. Options that
do not apply to the model's kind are refused, not ignored.
"""
from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.freezing import sources


def freeze(model, signature=None, tags=None, outputs=None, checkpoint=None, inputs=None):
    """Freeze ``model`` (a path, or a ``tf.function`` / concrete function).

    Args:
      model: SavedModel directory, Keras ``.keras``/``.h5`` file, TF1 ``.meta`` file (or
        checkpoint prefix), frozen ``.pb``, or a function.
      signature, tags: SavedModel signature key and meta-graph tag set.
      outputs: output node/tensor names (TF1 checkpoint: required; frozen ``.pb``: optional).
      checkpoint: TF1 checkpoint prefix (default: the ``.meta`` path without ``.meta``).
      inputs: TF1 checkpoint only: the input placeholders (default: those the outputs need).

    Returns a :class:`FrozenGraph`: close it (or use ``with``) to release its session.
    Raises :class:`~tf_ge_custom.errors.ExportError` with what was wrong and what is accepted.
    """
    source = sources.classify(model, checkpoint)
    refuse_unused(source.kind, signature=signature, tags=tags, outputs=outputs, inputs=inputs,
                   checkpoint=checkpoint)
    from tf_ge_custom import _tensorflow

    _tensorflow.require()
    # Before any graph is read: a process started as the command line has none of the ops yet.
    from tf_ge_custom._library import ensure_loaded
    ensure_loaded()
    frozen = _freeze(source, signature, tags, outputs, inputs)
    if source.kind != sources.FUNCTION:  # a file: run-om can load it again to compare
        frozen.record.source_path = source.path
        frozen.record.source_options = {k: v for k, v in (
            ("signature", signature), ("tags", list(tags) if tags else None),
            ("outputs", list(outputs) if outputs else None), ("checkpoint", source.checkpoint),
            ("inputs", list(inputs) if inputs else None)) if v}
    return frozen


def _freeze(source, signature, tags, outputs, inputs):
    if source.kind == sources.SAVED_MODEL:
        from tf_ge_custom.export.freezing.saved_model import freeze_saved_model
        return freeze_saved_model(source.path, signature, tags)
    if source.kind == sources.KERAS:
        from tf_ge_custom.export.freezing.keras import freeze_keras
        return freeze_keras(source.path)
    if source.kind == sources.CHECKPOINT:
        from tf_ge_custom.export.freezing.checkpoint import freeze_checkpoint
        return freeze_checkpoint(source.path, source.checkpoint, outputs, inputs)
    if source.kind == sources.FROZEN_PB:
        from tf_ge_custom.export.freezing.frozen_pb import freeze_pb
        return freeze_pb(source.path, outputs)
    from tf_ge_custom.export.freezing.function import freeze_function
    return freeze_function(source.function)


_APPLIES = {
    "signature": (sources.SAVED_MODEL,),
    "tags": (sources.SAVED_MODEL,),
    "outputs": (sources.CHECKPOINT, sources.FROZEN_PB),
    "inputs": (sources.CHECKPOINT,),
    "checkpoint": (sources.CHECKPOINT,),
}
_FLAGS = {"signature": "--signature", "tags": "--tag", "outputs": "--outputs",
          "inputs": "inputs", "checkpoint": "--checkpoint"}


def refuse_unused(kind, **given):
    """ExportError for an option given that does not apply to a model of ``kind``."""
    for name, value in sorted(given.items()):
        if value and kind not in _APPLIES[name]:
            raise ExportError("%s applies to %s, not to a %s model" % (
                _FLAGS[name], " and ".join(k.replace("_", " ") for k in _APPLIES[name]),
                kind.replace("_", " ")))
