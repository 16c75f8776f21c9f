"""Turn a frozen GraphDef into an inference graph, keeping every node of the package's ops
(``op_def.OPS``: ``AddCustom``, ``LeakyReluCustom``).

Steps: clear device placements and colocation constraints (the graph leaves this machine);
turn ``PlaceholderWithDefault`` nodes that are not model inputs (``is_training`` switches
and the like) into ``Identity`` of their default; run Grappler with the passes below; keep
only what the outputs need.

Grappler's constant folding replaces any node whose inputs are all constants by a
``Const`` holding its value: an op's node fed by constants would vanish from the graph,
and the OM would never run the kernel. Listing the node among the nodes to preserve does not
help (Grappler then keeps the *name*, but as a ``Const``). So each such node's input is
routed through a ``PlaceholderWithDefault`` barrier for the duration of the optimization
(Grappler never folds a placeholder) and the barriers are removed afterwards
(docs/export.md, "Freezing").
"""
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2
from tensorflow.python.grappler import tf_optimizer

from tf_ge_custom.op_def import OPS

# Grappler passes: inline function calls, fold constants, remove the branches a constant
# predicate never takes ("loop": a training-mode dropout behind is_training=False), drop
# Assert/Print/CheckNumerics, trivial Identity/StopGradient nodes, NoOps and redundant control
# edges. Nothing that changes arithmetic (no "arithmetic", "remap" or "layout").
OPTIMIZERS = ("function", "constfold", "loop", "debug_stripper", "pruning", "dependency")
BARRIER_SUFFIX = "/_tf_ge_custom_keep_"
KEPT_OP_TYPES = {op.type_name: op.type_attr for op in OPS}  # op type -> its dtype attr


def _node_name(tensor_name):
    name = tensor_name[1:] if tensor_name.startswith("^") else tensor_name
    return name.split(":")[0]


def strip_placement(graph_def):
    """Clear ``device`` and the ``_class`` colocation attr of every node (in place)."""
    for node in graph_def.node:
        node.device = ""
        if "_class" in node.attr:
            del node.attr["_class"]
    for function in graph_def.library.function:
        for node in function.node_def:
            node.device = ""
            if "_class" in node.attr:
                del node.attr["_class"]
    return graph_def


def defaults_as_identity(graph_def, keep_names):
    """``PlaceholderWithDefault`` nodes not in ``keep_names`` become ``Identity`` (in place)."""
    for node in graph_def.node:
        if node.op == "PlaceholderWithDefault" and node.name not in keep_names:
            dtype = node.attr["dtype"].type
            node.op = "Identity"
            node.attr.clear()
            node.attr["T"].type = dtype
    return graph_def


def add_barriers(graph_def, kept_types=KEPT_OP_TYPES):
    """A copy of ``graph_def`` with a ``PlaceholderWithDefault`` in front of every data input
    of every node whose type is a key of ``kept_types``; returns (graph_def, barrier names)."""
    out = type(graph_def)()
    out.CopyFrom(graph_def)
    barriers = []
    for node in list(out.node):
        if node.op not in kept_types:
            continue
        type_attr = node.attr.get(kept_types[node.op])
        for i, name in enumerate(list(node.input)):
            if name.startswith("^"):
                continue
            barrier = out.node.add()
            barrier.name = "%s%s%d" % (node.name, BARRIER_SUFFIX, i)
            barrier.op = "PlaceholderWithDefault"
            barrier.input.append(name)
            barrier.attr["dtype"].CopyFrom(type_attr)
            barrier.attr["shape"].shape.unknown_rank = True
            node.input[i] = barrier.name
            barriers.append(barrier.name)
    return out, barriers


def remove_barriers(graph_def, barriers):
    """``graph_def`` without the barrier nodes, their consumers wired to what they wrapped."""
    barriers = set(barriers)
    source = {n.name: n.input[0] for n in graph_def.node if n.name in barriers}
    out = type(graph_def)()
    out.CopyFrom(graph_def)
    del out.node[:]
    for node in graph_def.node:
        if node.name in barriers:
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        for i, name in enumerate(copy.input):
            target = _node_name(name)
            if target in source:
                wrapped = source[target]
                copy.input[i] = ("^" + _node_name(wrapped)) if name.startswith("^") else wrapped
    return out


def _consumers(graph_def):
    """``{node name: [(consumer, input index, output port)]}`` of the data edges."""
    edges = {}
    for node in graph_def.node:
        for i, name in enumerate(node.input):
            if name.startswith("^"):
                continue
            source, _, port = name.partition(":")
            edges.setdefault(source, []).append((node, i, int(port or 0)))
    return edges


def constant_switches_as_identity(graph_def):
    """A ``Switch`` on a constant predicate whose dead output nobody reads becomes ``Identity``
    of its data input (in place). Grappler removes the dead branch but keeps such a Switch
    (TensorFlow 1.15 does); it is a plain pass-through that ATC need not see."""
    nodes = {n.name: n for n in graph_def.node}
    edges = _consumers(graph_def)
    for node in graph_def.node:
        if node.op != "Switch" or len(node.input) < 2:
            continue
        predicate = nodes.get(_node_name(node.input[1]))
        if predicate is None or predicate.op != "Const":
            continue
        live = 1 if tf.make_ndarray(predicate.attr["value"].tensor).item() else 0
        users = edges.get(node.name, [])
        if any(port != live for _, _, port in users):
            continue
        for consumer, i, _ in users:
            consumer.input[i] = node.name
        data, controls = node.input[0], [n for n in node.input[2:] if n.startswith("^")]
        del node.input[:]
        node.input.extend([data] + controls)
        node.op = "Identity"
        for attr in list(node.attr):
            if attr != "T":
                del node.attr[attr]
    return graph_def


def run_grappler(graph_def, preserve, optimizers=OPTIMIZERS):
    """Grappler's ``optimizers`` over ``graph_def``; nodes named in ``preserve`` keep their
    names (Grappler may still replace them by constants: see the module docstring)."""
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(graph_def)
    fetch = meta.collection_def["train_op"].node_list.value
    for name in preserve:
        fetch.append(name)
    config = config_pb2.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.min_graph_nodes = -1  # optimize small graphs too
    for name in optimizers:
        rewrite.optimizers.append(name)
    return tf_optimizer.OptimizeGraph(config, meta)


def for_inference(graph_def, input_names, output_names, keep_kept_ops=True):
    """The inference graph of a frozen ``graph_def`` (see the module docstring).

    ``input_names``: Placeholder node names; ``output_names``: tensor names (``node:0``).
    ``keep_kept_ops=False`` skips the barriers (only the tests use it, to show why they exist).
    """
    work = type(graph_def)()
    work.CopyFrom(graph_def)
    strip_placement(work)
    defaults_as_identity(work, set(input_names))
    barriers = []
    if keep_kept_ops:
        work, barriers = add_barriers(work)
    preserve = list(input_names) + [_node_name(n) for n in output_names]
    # Twice: the first run lowers function calls and tf.cond (If -> Switch/Merge) and folds
    # the predicates; only the second sees a Switch on a folded constant and drops its dead
    # branch (seen with TensorFlow 2.21; the second run is cheap).
    for _ in range(2):
        work = run_grappler(work, preserve)
    if barriers:
        work = remove_barriers(work, barriers)
    constant_switches_as_identity(work)
    return needed_by(work, preserve)


def session_constants(session, graph_def, output_nodes):
    """``graph_def`` with the variables ``output_nodes`` need replaced by constants holding
    their values in ``session``, and only what those outputs need kept.

    TensorFlow 2 has a converter for session graphs that is not deprecated
    (``convert_to_constants.convert_variables_to_constants_from_session_graph``; it calls the
    deprecated ``extract_sub_graph`` inside, whose notice is TensorFlow's business, silenced);
    TensorFlow 1.15 has only ``graph_util.convert_variables_to_constants``, used there alone.
    """
    import contextlib

    from tensorflow.python.framework import convert_to_constants
    from tensorflow.python.util import deprecation

    convert = getattr(convert_to_constants, "convert_variables_to_constants_from_session_graph", None)
    silence = getattr(deprecation, "silence", contextlib.nullcontext)
    with silence():
        if convert is not None:
            return needed_by(convert(session, graph_def, list(output_nodes)), output_nodes)
        return tf.compat.v1.graph_util.convert_variables_to_constants(session, graph_def, list(output_nodes))


def needed_by(graph_def, names):
    """A copy of ``graph_def`` with only the nodes ``names`` need, through data and control
    inputs, in their order (the function library and versions kept). What TensorFlow's
    deprecated ``graph_util.extract_sub_graph`` does, without its deprecation warning."""
    nodes = {n.name: n for n in graph_def.node}
    missing = [n for n in names if n not in nodes]
    if missing:
        raise ValueError("%s not in the graph" % ", ".join(missing))
    needed, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo.extend(_node_name(i) for i in nodes[name].input)
    out = type(graph_def)()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in needed)
    return out
