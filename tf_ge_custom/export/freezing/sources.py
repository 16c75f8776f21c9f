"""Which kind of model the user handed to the export, decided from the path alone.

Pure Python (no TensorFlow): the command line checks the model path before it pays for
importing TensorFlow.

Accepted:
  SavedModel   a directory holding ``saved_model.pb`` (or ``.pbtxt``), or that file itself
  Keras        a ``.keras``, ``.h5`` or ``.hdf5`` file
  checkpoint   a TF1 meta graph ``NAME.meta`` (checkpoint prefix ``NAME`` unless given), or
               the checkpoint prefix itself when ``PREFIX.meta`` exists
  frozen pb    any other ``.pb`` file: a frozen GraphDef, validated and passed through
  function     (Python API only) a ``tf.function`` or concrete function
"""
import os
from typing import NamedTuple, Optional

from tf_ge_custom.errors import ExportError

SAVED_MODEL = "saved_model"
KERAS = "keras"
CHECKPOINT = "checkpoint"
FROZEN_PB = "frozen_pb"
FUNCTION = "function"

KERAS_SUFFIXES = (".keras", ".h5", ".hdf5")
SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
ACCEPTED = ("a SavedModel directory, a Keras .keras/.h5 file, a TF1 checkpoint's .meta file "
            "(with its checkpoint prefix), or a frozen GraphDef .pb")
# A .meta graph names no outputs (a SavedModel's signature does): the refusal, before TensorFlow
NEEDS_OUTPUTS = "a TF1 checkpoint needs the output node names: --outputs NODE[,NODE...]"


class ModelSource(NamedTuple):
    kind: str
    path: str  # SavedModel: the directory; checkpoint: the .meta file; function: ""
    checkpoint: Optional[str] = None  # checkpoint prefix (kind CHECKPOINT)
    function: object = None  # the tf.function / concrete function (kind FUNCTION)

    def describe(self):
        if self.kind == FUNCTION:
            return "concrete function %s" % getattr(self.function, "name", self.function)
        if self.kind == CHECKPOINT:
            return "TF1 checkpoint %s (meta graph %s)" % (self.checkpoint, self.path)
        return "%s %s" % ({SAVED_MODEL: "SavedModel", KERAS: "Keras model",
                           FROZEN_PB: "frozen graph"}[self.kind], self.path)


def _is_function(obj):
    return hasattr(obj, "get_concrete_function") or (
        hasattr(obj, "structured_input_signature") and hasattr(obj, "graph"))


def _checkpoint_prefix(prefix):
    if not (os.path.isfile(prefix + ".index") or os.path.isfile(prefix)):
        raise ExportError("checkpoint %s not found: expected %s.index (and its .data-* files) "
                          "next to the meta graph; pass the checkpoint prefix with --checkpoint"
                          % (prefix, prefix))
    return prefix


def _require_regular(path):
    """ExportError unless ``path`` is a regular file (a FIFO would block the reader forever)."""
    from tf_ge_custom import _files as files

    try:
        files.regular_file_size(path)
    except files.FileProblem as e:
        raise ExportError("cannot read the model: %s; expected %s" % (e, ACCEPTED))


def classify(model, checkpoint=None):
    """The :class:`ModelSource` for ``model`` (a path or a function); ``ExportError`` if none."""
    if not isinstance(model, (str, bytes, os.PathLike)):
        if _is_function(model):
            return ModelSource(FUNCTION, "", function=model)
        raise ExportError("cannot export a %s: pass %s, or a tf.function / concrete function"
                          % (type(model).__name__, ACCEPTED))
    path = os.fsdecode(os.fspath(model))
    if not os.path.exists(path):
        if os.path.isfile(path + ".meta"):  # a checkpoint prefix
            return ModelSource(CHECKPOINT, path + ".meta", _checkpoint_prefix(checkpoint or path))
        raise ExportError("model not found: %s (expected %s)" % (path, ACCEPTED))
    if os.path.isdir(path):
        for f in SAVED_MODEL_FILES:
            if os.path.lexists(os.path.join(path, f)):
                _require_regular(os.path.join(path, f))
                return ModelSource(SAVED_MODEL, os.path.abspath(path))
        raise ExportError("%s is a directory without saved_model.pb; expected %s" % (path, ACCEPTED))
    _require_regular(path)
    name = os.path.basename(path)
    lowered = name.lower()
    if name in SAVED_MODEL_FILES:
        return ModelSource(SAVED_MODEL, os.path.dirname(os.path.abspath(path)))
    if lowered.endswith(KERAS_SUFFIXES):
        return ModelSource(KERAS, os.path.abspath(path))
    if lowered.endswith(".meta"):
        prefix = checkpoint or path[: -len(".meta")]
        return ModelSource(CHECKPOINT, os.path.abspath(path), os.path.abspath(_checkpoint_prefix(prefix)))
    if lowered.endswith(".pb"):
        return ModelSource(FROZEN_PB, os.path.abspath(path))
    raise ExportError("%s: unknown model file type; expected %s" % (path, ACCEPTED))
