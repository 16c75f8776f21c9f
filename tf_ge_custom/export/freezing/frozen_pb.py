"""An already frozen GraphDef (``.pb``): validated and passed through unchanged.

Inputs are its ``Placeholder`` nodes; outputs are the ones named (``--outputs``) or else
every node that nothing consumes (output 0 of each, constants and no-ops aside). The file is
written out byte for byte as it came; the checks are the same as for any frozen graph.
"""
import tensorflow as tf

from tf_ge_custom import _files as files
from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.checking.graph_checks import checked
from tf_ge_custom.export.frozen_graph import FrozenGraph

MAX_GRAPH_BYTES = (1 << 31) - 1
_NOT_OUTPUTS = frozenset(("Placeholder", "Const", "NoOp", "Assert", "PlaceholderWithDefault"))


def read_graph_def(path):
    """``(GraphDef, bytes)`` of the binary GraphDef at ``path``."""
    try:  # a regular file only, at most what a GraphDef can be (protobuf's 2 GiB)
        data = files.read_bytes(path, MAX_GRAPH_BYTES)
    except files.FileProblem as e:
        raise ExportError("cannot read the frozen graph: %s" % e)
    graph_def = tf.compat.v1.GraphDef()
    try:
        graph_def.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError
        raise ExportError("%s is not a binary GraphDef (frozen .pb): %s" % (path, e))
    if not graph_def.node:
        raise ExportError("%s holds no graph nodes: not a frozen GraphDef" % path)
    return graph_def, data


def sink_outputs(graph_def):
    """Output 0 of every node that no other node consumes (constants and no-ops aside)."""
    consumed = set()
    for node in graph_def.node:
        for name in node.input:
            consumed.add(name.lstrip("^").split(":")[0])
    return [n.name + ":0" for n in graph_def.node if n.name not in consumed and n.op not in _NOT_OUTPUTS]


def freeze_pb(path, outputs=None):
    """A :class:`FrozenGraph` of the frozen GraphDef at ``path`` (its bytes kept as they are)."""
    graph_def, data = read_graph_def(path)
    output_names = [n if ":" in n else n + ":0" for n in (outputs or sink_outputs(graph_def))]
    if not output_names:
        raise ExportError("%s has no node that could be an output; name them with --outputs" % path)
    input_names = [n.name for n in graph_def.node if n.op == "Placeholder"]
    record = checked(graph_def, [(n, n) for n in input_names], [(n, n) for n in output_names],
                     "frozen_pb", path)
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    session = tf.compat.v1.Session(graph=graph)
    fetches = [graph.get_tensor_by_name(n) for n in output_names]

    def reference(values):
        return session.run(fetches, {graph.get_tensor_by_name(n + ":0"): values[n] for n in input_names})

    return FrozenGraph(graph_def, record, reference, close=session.close, original_bytes=data)
