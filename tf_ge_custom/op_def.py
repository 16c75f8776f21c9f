"""The one definition of every op this package ships.

What restates an op is generated from the records here when the package is built: the
TensorFlow registrations (``REGISTER_OP`` signature, a CPU kernel per dtype, the XLA kernel's
dtype constraint: ``_build/tf_codegen.py``), the GE side (``REG_OP`` headers, the core's op
table, a GE custom op and a TF parser registration per op:
``ge_ops/codegen/generate_op_sources.py``) and ``npu_supported_ops.json`` (``opp.py``). The
kernel builder, the build steps, ``list-kernels``, ``doctor`` and the export checks loop over
``OPS``; the Triton kernel's block size and the npubin names come from ``KernelSpec``.
Adding an op: docs/adding-an-op.md.

Pure Python with no third-party import, so that ``setup.py``, the kernel builder and
``tf-ge-custom doctor`` can read it on any machine (Python 3.7 syntax).
"""
from typing import NamedTuple, Tuple


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


class KernelSpec(NamedTuple):
    """How the NPU kernel of an op is built and named."""

    entry: str  # name of the @triton.jit function == symbol in the npubin
    source: str  # file under kernels/ holding that function
    block_size: int  # elements one program handles per loop iteration
    # The kernel's parameters in order, each an op input/output name or "n_elements".
    params: Tuple[str, ...]

    def binary_name(self, dtype):
        """File name of the npubin for ``dtype``: ``<entry>_<dtype>.npubin``."""
        return "%s_%s.npubin" % (self.entry, dtype)


class OpDefinition(NamedTuple):
    """One custom op: names, signature, dtype set and kernel facts."""

    type_name: str  # TF op type == GE REG_OP name == REG_AUTO_MAPPING_OP class == JSON key
    python_name: str  # the Python function: tf_ge_custom.<python_name>
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]
    type_attr: str  # the TF type attr shared by every input and output
    dtypes: Tuple[str, ...]  # keys of DTYPES, in registration order
    kernel: KernelSpec
    # Placement hints written into npu_supported_ops.json: keep both false
    # (docs/ascend-stack.md, "How TF Adapter picks ops").
    is_gray: bool = False
    is_heavy: bool = False

    def dtype_records(self):
        return tuple(DTYPES[name] for name in self.dtypes)

    def tf_type_attr_spec(self):
        """The attr line of REGISTER_OP, e.g. ``T: {float, half, bfloat16, int32}``."""
        return "%s: {%s}" % (
            self.type_attr,
            ", ".join(d.tf_attr for d in self.dtype_records()),
        )


ADD_CUSTOM = OpDefinition(
    type_name="AddCustom",
    python_name="add_custom",
    inputs=("x", "y"),
    outputs=("z",),
    type_attr="T",
    dtypes=("float32", "float16", "bfloat16", "int32"),
    kernel=KernelSpec(
        entry="add_kernel",
        source="add_kernel.py",
        # 3 operands x 4096 x 4 bytes, double-buffered, is 96 KiB: half of an A2/A3
        # vector core's 192 KiB unified buffer, leaving room for the compiler's scratch.
        block_size=4096,
        params=("x", "y", "z", "n_elements"),
    ),
)

# Every op the package ships, in a stable order.
OPS = (ADD_CUSTOM,)


def get(type_name):
    """The definition whose TF/GE type is ``type_name``; ``KeyError`` names the known ones."""
    for op in OPS:
        if op.type_name == type_name:
            return op
    raise KeyError(
        "unknown op type %r; this package defines: %s"
        % (type_name, ", ".join(op.type_name for op in OPS))
    )
