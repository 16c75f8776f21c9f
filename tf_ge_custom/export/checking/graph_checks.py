"""Checks on a frozen graph before anything is written, and the report of what it holds.

- Every op type is registered in this TensorFlow (``tf_ge_custom`` registers each of its ops:
  ``AddCustom``, ``LeakyReluCustom``); an unknown one is named, with the node that uses it.
- Every node of one of the package's ops has a dtype of that op's definition
  (``tf_ge_custom.op_def``).
- The graph imports into TensorFlow, which runs the registered shape function of every node:
  an ``AddCustom`` whose input shapes its shape function refuses fails here. The rule is
  TensorFlow's own, not restated in Python, so the check follows whatever the op accepts.
- Inputs are ``Placeholder`` nodes, outputs exist, and the graph holds no variable.
"""
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from tf_ge_custom.errors import ExportError
from tf_ge_custom.op_def import OPS, type_names
from tf_ge_custom.export.frozen_graph import describe
from tf_ge_custom.export.graph_record import DEFAULT_OP

VARIABLE_OPS = frozenset(("Variable", "VariableV2", "VarHandleOp", "ReadVariableOp",
                          "AssignVariableOp", "Assign", "VarIsInitializedOp"))


def _registered(op_type):
    if hasattr(op_def_registry, "get"):
        return op_def_registry.get(op_type) is not None
    return op_type in op_def_registry.get_registered_ops()  # TF 1.15


def _all_nodes(graph_def):
    for node in graph_def.node:
        yield "", node
    for function in graph_def.library.function:
        for node in function.node_def:
            yield function.signature.name, node


def problems_before_import(graph_def, inputs, outputs):
    """Problems found in the GraphDef itself, as one line each."""
    problems = []
    functions = set(f.signature.name for f in graph_def.library.function)
    unknown = {}
    for function, node in _all_nodes(graph_def):
        if node.op in functions or _registered(node.op):
            continue
        where = "%s (in function %s)" % (node.name, function) if function else node.name
        unknown.setdefault(node.op, []).append(where)
    for op_type, nodes in sorted(unknown.items()):
        problems.append("op %s is not known to this TensorFlow (node %s); load the library "
                        "that registers it, or export from a graph without it"
                        % (op_type, ", ".join(nodes[:3]) + (" ..." if len(nodes) > 3 else "")))
    variables = [n.name for _, n in _all_nodes(graph_def) if n.op in VARIABLE_OPS]
    if variables:
        problems.append("the graph still holds variables (%s): it is not frozen; export from "
                        "the SavedModel or checkpoint instead" % ", ".join(variables[:3]))
    for op in OPS:
        for function, node in _all_nodes(graph_def):
            if node.op != op.type_name:
                continue
            dtype = tf.as_dtype(node.attr[op.type_attr].type).name if op.type_attr in node.attr else None
            if dtype not in op.dtypes:
                problems.append("%s node %s has dtype %s; %s supports %s"
                                % (op.type_name, node.name, dtype, op.type_name, ", ".join(op.dtypes)))
    by_name = {n.name: n for n in graph_def.node}
    for name in inputs:
        node = by_name.get(name)
        if node is None:
            problems.append("input %s is not a node of the graph" % name)
        elif node.op != "Placeholder":
            problems.append("input %s is a %s node, not a Placeholder" % (name, node.op))
    for name in outputs:
        if name.split(":")[0] not in by_name:
            problems.append("output %s is not a tensor of the graph" % name)
    return problems


def import_checked(graph_def):
    """``graph_def`` imported into a new graph (running every node's shape function)."""
    graph = tf.Graph()
    try:
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
    except (ValueError, TypeError, tf.errors.OpError) as e:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ExportError("TensorFlow refuses the frozen graph (its shape and type inference "
                          "of the registered ops): %s" % text)
    return graph


def checked(graph_def, inputs, outputs, source_kind="", source=""):
    """Check ``graph_def`` and return its :class:`~.graph_record.GraphRecord`.

    ``inputs``: ``[(name, key)]`` placeholders; ``outputs``: ``[(tensor name, key)]``.
    Raises :class:`ExportError` listing every problem found.
    """
    problems = problems_before_import(graph_def, [n for n, _ in inputs], [n for n, _ in outputs])
    if problems:
        raise ExportError("the frozen graph fails its checks:\n  " + "\n  ".join(problems))
    graph = import_checked(graph_def)
    try:
        return describe(graph, graph_def, inputs, outputs, source_kind, source)
    except (KeyError, ValueError) as e:
        raise ExportError("the frozen graph fails its checks: %s" % e)


def report(record):
    """The export report: inputs, outputs, the nodes of the package's ops, op counts (lines of
    text)."""
    lines = ["source: %s %s" % (record.source_kind, record.source),
             "inputs (%d):" % len(record.inputs)]
    for t in record.inputs:
        key = "" if t.key == t.name else "   (%s)" % t.key
        lines.append("  %-28s %-9s %s%s" % (t.name, t.dtype, t.shape_text(), key))
    lines.append("outputs (%d):" % len(record.outputs))
    for t in record.outputs:
        key = "" if t.key == t.name else "   (%s)" % t.key
        lines.append("  %-28s %-9s %s%s" % (t.name, t.dtype, t.shape_text(), key))
    lines.append("%s nodes (%d):" % (type_names(), len(record.add_custom_nodes)))
    lines += [] if record.add_custom_nodes else [
        "  note: none in this model, so it exports as any TensorFlow graph and runs without %s"
        % type_names(conjunction="or")]
    for name, dtype, shapes in record.add_custom_nodes:
        op = record.op_of(name)  # named where it is not AddCustom, whose lines stay as they were
        lines.append("  %-28s %-9s %s%s" % (name, dtype, " + ".join(
            "<unknown rank>" if s is None else "[%s]" % ", ".join("?" if d is None else str(d) for d in s)
            for s in shapes), "" if op == DEFAULT_OP else "   (%s)" % op))
    total = sum(record.op_counts.values())
    lines.append("ops (%d nodes): %s" % (total, ", ".join(
        "%s %d" % (k, v) for k, v in sorted(record.op_counts.items(), key=lambda kv: (-kv[1], kv[0])))))
    return lines

