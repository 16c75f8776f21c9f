"""The one definition of every op this package ships.

What restates an op is generated from the records here when the package is built: the
TensorFlow registrations (``REGISTER_OP`` signature, a CPU kernel per dtype, the XLA kernel's
dtype constraint: ``_build/tf_codegen.py``), the GE side (``REG_OP`` headers, the core's op
table, a GE custom op and a TF parser registration per op:
``ge_ops/codegen/generate_op_sources.py``) and ``npu_supported_ops.json`` (``opp.py``). The
kernel builder, the build steps, ``list-kernels``, ``doctor`` and the export checks loop over
``OPS``; the Triton kernel variants (entries, block shapes, parameters) and the npubin names
come from ``KernelSpec``; every compiled kernel's entry symbol comes from
:meth:`OpDefinition.entry_name`. Adding an op: docs/adding-an-op.md.

Pure Python with no third-party import, so that ``setup.py``, the kernel builder and
``tf-ge-custom doctor`` can read it on any machine (Python 3.7 syntax). It also works when
loaded by path, outside the package (the code generator does that).
"""
import importlib.util
import os
import re
from typing import NamedTuple, Tuple

try:
    from . import kernel_contract as _contract
except ImportError:  # loaded by path (ge_ops/codegen): the contract is the file beside this one
    _spec = importlib.util.spec_from_file_location(
        "_tf_ge_custom_kernel_contract",
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_contract.py"))
    _contract = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_contract)


class DType(NamedTuple):
    """One element type as each layer of the stack spells it."""

    name: str  # TensorFlow / numpy name: "float32"
    tf_attr: str  # spelling inside a REGISTER_OP type list: "float"
    ge: str  # ge::DataType enumerator: "DT_FLOAT"
    triton: str  # Triton signature element type: "fp32"
    itemsize: int  # bytes per element


DTYPES = {
    d.name: d
    for d in (
        DType("float32", "float", "DT_FLOAT", "fp32", 4),
        DType("float16", "half", "DT_FLOAT16", "fp16", 2),
        DType("bfloat16", "bfloat16", "DT_BF16", "bf16", 2),
        DType("int32", "int32", "DT_INT32", "i32", 4),
    )
}


class AttrType(NamedTuple):
    """One kind of op attribute as each layer of the stack spells it."""

    name: str  # the record's spelling, also TensorFlow's REGISTER_OP type: "float"
    ge: str  # REG_OP's ATTR type: "Float"
    triton: str  # the kernel parameter's Triton type: "fp32"
    word_bytes: int  # bytes of the host-argument slot the value becomes
    python: Tuple[type, ...]  # the Python values the package's function accepts


ATTR_TYPES = {
    t.name: t
    for t in (
        AttrType("float", "Float", "fp32", 4, (float, int)),
        AttrType("int", "Int", "i64", 8, (int,)),
    )
}


class OpAttr(NamedTuple):
    """A TensorFlow attribute of an op that reaches every layer: ``REGISTER_OP``'s ``.Attr``,
    ``REG_OP``'s ``ATTR`` (so GE's parser maps it from the TF node), the Python function's
    keyword, and the kernel as a runtime scalar (the ``attr:<name>`` parameter slot)."""

    name: str  # "alpha": TF attr == GE ATTR == Python keyword == kernel parameter
    type: str  # a key of ATTR_TYPES
    default: object  # the value TensorFlow and GE use when a node carries none
    # Inclusive bounds the Python function, the TF op and the GE library refuse outside;
    # None: unbounded on that side (any value of the type, NaN and infinities included for
    # "float": what TensorFlow itself accepts).
    minimum: object = None
    maximum: object = None

    def type_record(self):
        return ATTR_TYPES[self.type]

    def tf_attr_spec(self):
        """The attr line of REGISTER_OP, e.g. ``alpha: float = 0.2``."""
        return "%s: %s = %s" % (self.name, self.type, _tf_literal(self.default))


def _tf_literal(value):
    # REGISTER_OP's parser reads a float default in C's notation; repr gives "0.2", "1e-05".
    return repr(value) if isinstance(value, float) else str(int(value))


class KernelVariant(NamedTuple):
    """One compiled form of an op's kernel: the broadcast pattern it computes and how.

    The GE library reduces the input shapes of a call to the fewest dimensions that
    broadcast alike, picks the variant whose ``pattern`` that reduced shape has (a tiled
    pattern has one variant per block shape; the host picks the shape by the launch's rows
    and columns) and fills the variant's parameters (docs/kernels.md, "Broadcasting").
    """

    name: str  # "flat", "scalar", "row_16x256": the manifest's "variant"
    # The @triton.jit function of the kernel source that computes this variant (one function
    # may serve several variants). The builder compiles it under each dtype's own entry
    # symbol (OpDefinition.entry_name), never under this name.
    function: str
    pattern: str  # one of kernel_contract.PATTERNS
    # Elements one program handles per loop iteration: (BLOCK_SIZE,) for the flat patterns,
    # (BLOCK_ROWS, BLOCK_COLS) for the tiled ones.
    block: Tuple[int, ...]
    # The kernel's compile-time parameters, in order: (name, value).
    constants: Tuple[Tuple[str, object], ...]
    # The kernel's runtime parameters in order, each as the host-argument slot it becomes:
    # "input:<i>" / "output:<i>" (a pointer to kernel operand i), "num_elements",
    # "dim:<k>" (the extent of frame dimension k), "input_stride:<i>:<k>" (operand i's
    # element stride along frame dimension k), "attr:<name>" (the value of the op's attribute
    # <name>, a scalar of its AttrType.triton type).
    params: Tuple[str, ...]

    @property
    def block_elements(self):
        return _contract.block_elements(self.block)


class KernelSpec(NamedTuple):
    """How the NPU kernels of an op are built and named."""

    source: str  # file under kernels/ holding every variant's @triton.jit function
    variants: Tuple[KernelVariant, ...]  # "flat" first: the equal-shape kernel

    def variant(self, name):
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError("no kernel variant %r; the variants are %s"
                       % (name, ", ".join(v.name for v in self.variants)))


# Every kernel entry symbol starts with this. GE keeps one binary per kernel name in a model
# (docs/ge-library.md, "What a sunk graph can hold"), so no two kernels of this package, and
# no kernel of another project (GE's own Triton sample is "add_kernel"), may share a name.
ENTRY_PREFIX = "tf_ge_custom_"
_SYMBOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OpDefinition(NamedTuple):
    """One custom op: names, signature, dtype set and kernel facts."""

    type_name: str  # TF op type == GE REG_OP name == REG_AUTO_MAPPING_OP class == JSON key
    python_name: str  # the Python function: tf_ge_custom.<python_name>
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]
    type_attr: str  # the TF type attr shared by every input and output
    dtypes: Tuple[str, ...]  # keys of DTYPES, in registration order
    kernel: KernelSpec
    # z = f(x, y) == f(y, x): the GE library may hand the inputs to a broadcasting kernel
    # variant in either order (docs/kernels.md, "Broadcasting").
    commutative: bool = False
    # The inputs broadcast against each other as tf.math.add's do (the GE library reduces
    # their shapes and picks a variant by pattern); False: every input and the output have
    # one shape (a unary op, or an n-ary op without broadcasting), and only "equal" variants.
    broadcasts: bool = False
    # The op's attributes, in REGISTER_OP order (OpAttr).
    attrs: Tuple[OpAttr, ...] = ()
    # The TensorFlow function with the op's result, by its public name ("tf.math.square"),
    # called with the inputs, then each attribute as a keyword: the op's Python function puts
    # it in place of the node inside an XLA cluster that has no kernel for it, and the op's
    # gradient is that function's (unless _op_meanings.py writes the op's meaning by hand).
    # "": none (then the op has no gradient, and no XLA path without its own XLA kernel).
    equivalent: str = ""
    # Placement hints written into npu_supported_ops.json: keep both false
    # (docs/ascend-stack.md, "How TF Adapter picks ops").
    is_gray: bool = False
    is_heavy: bool = False

    def dtype_records(self):
        return tuple(DTYPES[name] for name in self.dtypes)

    def entry_name(self, variant, dtype):
        """The entry symbol of the kernel of ``variant`` for ``dtype``, unique per (op,
        variant, dtype): ``tf_ge_custom_<python_name>_<variant>_<dtype>``, e.g.
        ``tf_ge_custom_add_custom_row_16x256_float16``. The builder compiles the variant's
        function under this name; the manifest records it; GE loads and launches by it."""
        return "%s%s_%s_%s" % (ENTRY_PREFIX, self.python_name, variant, dtype)

    def binary_name(self, variant, dtype):
        """File name of the npubin of ``variant`` for ``dtype``:
        ``<python_name>_<variant>_<dtype>.npubin``."""
        return "%s_%s_%s.npubin" % (self.python_name, variant, dtype)

    def attr(self, name):
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError("%s has no attribute %r; its attributes are %s"
                       % (self.type_name, name, ", ".join(a.name for a in self.attrs) or "none"))

    def tf_type_attr_spec(self):
        """The attr line of REGISTER_OP, e.g. ``T: {float, half, bfloat16, int32}``."""
        return "%s: {%s}" % (
            self.type_attr,
            ", ".join(d.tf_attr for d in self.dtype_records()),
        )


def _flat_variant(name, function, pattern, block_size):
    return KernelVariant(name, function, pattern, (block_size,), (("BLOCK_SIZE", block_size),),
                         ("input:0", "input:1", "output:0", "num_elements"))


def _tiled_variant(pattern, rows, cols):
    # add_tile_kernel's flags: whether operand a varies along the rows (else it is one row
    # broadcast down the tile), whether b varies along the rows (else along the columns)
    a_rows, b_rows = {"row": (True, False), "col": (True, True), "outer": (False, True)}[pattern]
    rank = _contract.MAX_BROADCAST_RANK
    params = (("input:0", "input:1", "output:0")
              + tuple("dim:%d" % k for k in range(rank))
              + tuple("input_stride:%d:%d" % (i, k) for i in (0, 1) for k in range(rank - 2)))
    return KernelVariant("%s_%dx%d" % (pattern, rows, cols), "add_tile_kernel", pattern,
                         (rows, cols),
                         (("A_ROWS", a_rows), ("B_ROWS", b_rows), ("BLOCK_ROWS", rows),
                          ("BLOCK_COLS", cols)),
                         params)


# 3 operands x 4096 elements x 4 bytes, double-buffered, is 96 KiB: half of an A2/A3 vector
# core's 192 KiB unified buffer, leaving room for the compiler's scratch. Every variant
# handles 4096 elements per loop iteration.
_BLOCK = 4096
# The tiles of the broadcasting variants: one row of 4096 for few, long rows, 16 x 256 for
# the common shapes, 128 x 32 for narrow rows (the measurements behind the choice:
# docs/kernels.md, "Broadcasting").
_TILES = ((1, 4096), (16, 256), (128, 32))

ADD_CUSTOM = OpDefinition(
    type_name="AddCustom",
    python_name="add_custom",
    inputs=("x", "y"),
    outputs=("z",),
    type_attr="T",
    dtypes=("float32", "float16", "bfloat16", "int32"),
    kernel=KernelSpec(
        source="add_kernel.py",
        variants=(_flat_variant("flat", "add_kernel", "equal", _BLOCK),
                  _flat_variant("scalar", "add_scalar_kernel", "scalar", _BLOCK))
        + tuple(_tiled_variant(p, r, c) for p in ("row", "col", "outer") for r, c in _TILES),
    ),
    commutative=True,
    broadcasts=True,
    equivalent="tf.math.add",
)

# y = x if x > 0 else x * alpha, as tf.nn.leaky_relu computes it (alpha cast to the element
# type first, then one multiply in it): one input, no broadcasting, a float attribute.
LEAKY_RELU_CUSTOM = OpDefinition(
    type_name="LeakyReluCustom",
    python_name="leaky_relu_custom",
    inputs=("x",),
    outputs=("y",),
    type_attr="T",
    dtypes=("float32", "float16", "bfloat16"),
    kernel=KernelSpec(
        source="leaky_relu_kernel.py",
        variants=(KernelVariant("flat", "leaky_relu_kernel", "equal", (_BLOCK,),
                                (("BLOCK_SIZE", _BLOCK),),
                                ("input:0", "output:0", "num_elements", "attr:alpha")),),
    ),
    attrs=(OpAttr("alpha", "float", 0.2),),
    equivalent="tf.nn.leaky_relu",
)

# Every op the package ships, in a stable order.
OPS = (ADD_CUSTOM, LEAKY_RELU_CUSTOM)


def in_words(names, conjunction="and"):
    """``names`` as a sentence lists them: "A", "A and B", "A, B and C"."""
    names = list(names)
    if len(names) < 2:
        return "".join(names)
    return "%s %s %s" % (", ".join(names[:-1]), conjunction, names[-1])


def type_names(ops=None, conjunction="and"):
    """The TF/GE types of ``ops`` (every op of ``OPS`` by default) in words, for the messages
    that are about every op: "AddCustom and LeakyReluCustom"."""
    return in_words((op.type_name for op in (OPS if ops is None else ops)), conjunction)


def python_names(ops=None, conjunction="and"):
    """The Python functions of ``ops`` in words: "add_custom and leaky_relu_custom"."""
    return in_words((op.python_name for op in (OPS if ops is None else ops)), conjunction)


def entry_names(ops=None):
    """``[(entry name, op type, variant, dtype)]`` of every kernel the ops define, in
    definition order."""
    return [(op.entry_name(v.name, d), op.type_name, v.name, d)
            for op in (OPS if ops is None else ops) for v in op.kernel.variants for d in op.dtypes]


def describe_problems(problems, shown=3):
    """The first ``shown`` of ``problems`` (sentences), and how many more there are."""
    text = "; ".join(problems[:shown])
    return text + (" (and %d more)" % (len(problems) - shown) if len(problems) > shown else "")


def entry_name_problems(ops=None):
    """Why the ops' kernels cannot all live in one GE model, one sentence each (empty when
    they can): an entry name two kernels share, one that is no symbol of this package, or one
    longer than ``kernel_contract.MAX_ENTRY_NAME`` characters (triton-ascend cuts a kernel's
    name to 49 characters for the profiler, so the name it reports would not be the entry)."""
    problems, first = [], {}
    for name, op, variant, dtype in entry_names(ops):
        what = "%s %s %s" % (op, variant, dtype)
        if not _SYMBOL_RE.match(name) or not name.startswith(ENTRY_PREFIX):
            problems.append("the kernel entry name %r of %s is not a C symbol starting with %r"
                            % (name, what, ENTRY_PREFIX))
        elif len(name) > _contract.MAX_ENTRY_NAME:
            problems.append("the kernel entry name %s of %s has %d characters, more than the %d "
                            "a kernel name may have (triton-ascend cuts longer names)"
                            % (name, what, len(name), _contract.MAX_ENTRY_NAME))
        elif name in first:
            problems.append("the kernels %s and %s share the entry name %s; a GE model keeps one "
                            "binary per kernel name, so one would run the other's code"
                            % (first[name], what, name))
        else:
            first[name] = what
    return problems


def get(type_name):
    """The definition whose TF/GE type is ``type_name``; ``KeyError`` names the known ones."""
    for op in OPS:
        if op.type_name == type_name:
            return op
    raise KeyError(
        "unknown op type %r; this package defines: %s"
        % (type_name, ", ".join(op.type_name for op in OPS))
    )
