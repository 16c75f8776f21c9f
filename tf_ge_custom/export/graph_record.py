"""What an export records about a frozen graph: its inputs, outputs and op counts.

The record is written beside the frozen graph as ``PREFIX.json``; the ATC step derives
``--input_shape`` from it and ``run-om`` reads input names and dtypes from it. Pure Python
(no TensorFlow), so that the command-line steps that only need the record stay light.
"""
import json
from typing import NamedTuple, Optional, Tuple

RECORD_FORMAT = "tf-ge-custom-export"
RECORD_VERSION = 1
# The op of a kept node whose entry names none ("op"): AddCustom, the package's first op, so
# that AddCustom's records read and write as before a second op shipped.
DEFAULT_OP = "AddCustom"
MAX_RECORD_BYTES = 64 << 20  # a record lists inputs, outputs and the ops' nodes: far below


class TensorInfo(NamedTuple):
    """One graph input (a ``Placeholder`` node) or output (a tensor ``node:index``)."""

    name: str  # inputs: the Placeholder's node name; outputs: the tensor name "node:0"
    dtype: str  # numpy/TensorFlow name: "float32"
    shape: Optional[Tuple[Optional[int], ...]]  # None: unknown rank; a None dim: unknown
    key: str = ""  # the name the source model uses (signature key, Keras input name)

    @property
    def node(self):
        """The node name (``name`` without its ``:index``)."""
        return self.name.split(":")[0]

    @property
    def fully_defined(self):
        return self.shape is not None and all(d is not None for d in self.shape)

    def shape_text(self):
        if self.shape is None:
            return "<unknown rank>"
        return "[%s]" % ", ".join("?" if d is None else str(d) for d in self.shape)

    def to_json(self):
        return {"name": self.name, "dtype": self.dtype, "key": self.key,
                "shape": None if self.shape is None else list(self.shape)}

    @classmethod
    def from_json(cls, d):
        shape = d.get("shape")
        return cls(str(d["name"]), str(d["dtype"]),
                   None if shape is None else tuple(None if s is None else int(s) for s in shape),
                   str(d.get("key", "")))


class GraphRecord(object):
    """Inputs, outputs and op counts of a frozen graph, and where it came from."""

    def __init__(self, inputs, outputs, op_counts, source_kind="", source="",
                 tensorflow_version="", add_custom_nodes=(), source_path="", source_options=None,
                 node_ops=None):
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.op_counts = dict(op_counts)
        self.source_kind = source_kind
        self.source = source
        self.tensorflow_version = tensorflow_version
        # (node name, dtype, (one shape per input)) for every node of the package's ops (the
        # JSON key keeps its first op's name: AddCustom's records read and write as they did)
        self.add_custom_nodes = tuple(add_custom_nodes)
        # node name -> op type, for the nodes of add_custom_nodes that are not AddCustom's
        # (a record of version 1 written before a second op shipped names none)
        self.node_ops = {n: t for n, t in (node_ops or {}).items() if t != DEFAULT_OP}
        # how to load the source model again (run-om compares with it): path + freeze options
        self.source_path = source_path
        self.source_options = dict(source_options or {})

    def op_of(self, node):
        """The op type of the kept node named ``node``."""
        return self.node_ops.get(node, DEFAULT_OP)

    def kernels(self):
        """The (op type, dtype) pairs of the kept nodes, sorted: the kernels an OM needs."""
        return sorted(set((self.op_of(n), d) for n, d, _ in self.add_custom_nodes))

    def input(self, name):
        for t in self.inputs:
            if t.name == name:
                return t
        return None

    def to_json(self):
        return {
            "format": RECORD_FORMAT, "version": RECORD_VERSION,
            "source": {"kind": self.source_kind, "description": self.source,
                       "path": self.source_path, "options": self.source_options},
            "tensorflow": self.tensorflow_version,
            "inputs": [t.to_json() for t in self.inputs],
            "outputs": [t.to_json() for t in self.outputs],
            "op_counts": dict(sorted(self.op_counts.items())),
            "add_custom_nodes": [
                dict({"name": n, "dtype": d,
                      "input_shapes": [None if s is None else list(s) for s in shapes]},
                     **({"op": self.node_ops[n]} if n in self.node_ops else {}))
                for n, d, shapes in self.add_custom_nodes],
        }

    def dumps(self):
        return json.dumps(self.to_json(), indent=2) + "\n"

    @classmethod
    def from_json(cls, d):
        if d.get("format") != RECORD_FORMAT or d.get("version") != RECORD_VERSION:
            raise ValueError("not a %s record of version %d (format %r, version %r)"
                             % (RECORD_FORMAT, RECORD_VERSION, d.get("format"), d.get("version")))
        source = d.get("source") or {}
        nodes = [(n["name"], n["dtype"], tuple(None if s is None else tuple(s) for s in n["input_shapes"]))
                 for n in d.get("add_custom_nodes", [])]
        node_ops = {n["name"]: str(n["op"]) for n in d.get("add_custom_nodes", []) if "op" in n}
        return cls([TensorInfo.from_json(t) for t in d["inputs"]],
                   [TensorInfo.from_json(t) for t in d["outputs"]],
                   d.get("op_counts", {}), source.get("kind", ""), source.get("description", ""),
                   d.get("tensorflow", ""), nodes, source.get("path", ""), source.get("options"),
                   node_ops)

    @classmethod
    def load(cls, path):
        """The record in the file ``path``; :class:`ExportError` for anything else (a
        directory, a FIFO, a huge file, bad JSON, another document)."""
        from tf_ge_custom import _files as files
        from tf_ge_custom.errors import ExportError

        try:
            document = files.load_json(path, MAX_RECORD_BYTES, 64)
        except files.FileProblem as e:
            raise ExportError("cannot read the export record: %s" % e)
        try:
            return cls.from_json(document)
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise ExportError("%s is not a tf-ge-custom export record: %s" % (path, str(e)[:200]))
