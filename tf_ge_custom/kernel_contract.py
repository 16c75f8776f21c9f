"""The constants of the kernel contract, stated once for Python and C++.

The kernel builder, the launch geometry and the Python manifest reader import them from
here; the GE library's C++ core gets them as ``kernel_contract.h``, which
``ge_ops/codegen/generate_op_sources.py`` writes from this file at build time. Change a
value here and both sides follow.

Pure Python without a single import, so that the code generator can load it by path on any
machine (Python 3.7 syntax).
"""

# The kernel manifest (docs/kernel-manifest.md): format name, version, file name.
MANIFEST_FORMAT = "tf-ge-custom-kernel-manifest"
MANIFEST_VERSION = 2
MANIFEST_NAME = "manifest.json"

# How the kernels' entry symbols are named (docs/kernel-manifest.md, "Entry names"), recorded
# in every manifest as "entry_naming" and in the per-user cache key. 1: every dtype's kernel
# of a variant under its @triton.jit function's name (add_kernel, add_tile_kernel, ...), what
# the package wrote before each kernel had a name of its own; 2: one name per (op, variant,
# dtype), tf_ge_custom_<op>_<variant>_<dtype>. A set, bundle or model of another naming is
# not damaged: the GE library treats it as absent (a lookup falls through to the cache or a
# compile) and doctor says to rebuild it.
ENTRY_NAMING = 2
# triton-ascend cuts a kernel's name to 49 characters for the profiler ("CANN runtime limits
# the length of kernel name <= 50"): a longer entry would not be the name it reports.
MAX_ENTRY_NAME = 49
# The suffix under which the runtime also finds an entry (hicann/runtime: a mixed kernel's
# vector or cube half), per triton mix_mode; a built npubin defines the entry or entry+suffix.
ENTRY_SUFFIX_BY_MIX_MODE = {"aiv": "_mix_aiv", "aic": "_mix_aic", "mix": "_mix_aic"}

# The manifest's fields and what each must hold (docs/kernel-manifest.md, "Fields"): the one
# list both readers check a manifest's keys and JSON types against, so that the GE library
# refuses what list-kernels refuses, field by field. Each rule is
#   (object, key, kind, presence, holds)
# object: where the key lives: "manifest" (the top level), "toolchain", "kernel" (each item of
#   "kernels"), "grid", "args", "slot" (each item of the args' "slots");
# kind: "string", "sha256" (a string of 64 lowercase hex digits), "integer" (one that fits
#   in 64 bits, not a boolean), "boolean", "array" or "object";
# presence: "required"; "optional" (may be absent, never null); "nullable" (required, may be
#   null); "ir_only" (required, may be null, but only together with every other "ir_only"
#   key of its object: a kernel without a binary has none of them);
# holds: for an object, or an array of objects, the object name of what it holds, else "".
# Keys an object does not list are refused. The value rules beyond a key's kind (ranges, the
# op table's names, the layout) are each reader's own.
MANIFEST_FIELDS = (
    ("manifest", "format", "string", "required", ""),
    ("manifest", "version", "integer", "required", ""),
    ("manifest", "entry_naming", "integer", "optional", ""),
    ("manifest", "soc", "string", "required", ""),
    ("manifest", "architecture", "string", "optional", ""),
    ("manifest", "vector_core_count", "integer", "required", ""),
    ("manifest", "toolchain", "object", "required", "toolchain"),
    ("manifest", "kernel_source_sha256", "sha256", "required", ""),
    ("manifest", "kernel_sources", "object", "optional", ""),
    ("manifest", "kernels", "array", "required", "kernel"),
    ("toolchain", "triton_ascend", "string", "required", ""),
    ("toolchain", "bishengir", "string", "required", ""),
    ("toolchain", "cann", "string", "nullable", ""),
    ("kernel", "op", "string", "required", ""),
    ("kernel", "variant", "string", "required", ""),
    ("kernel", "dtype", "string", "required", ""),
    ("kernel", "entry", "string", "required", ""),
    ("kernel", "binary", "string", "ir_only", ""),
    ("kernel", "binary_size", "integer", "ir_only", ""),
    ("kernel", "sha256", "sha256", "ir_only", ""),
    ("kernel", "mix_mode", "string", "required", ""),
    ("kernel", "magic", "string", "required", ""),
    ("kernel", "block", "array", "required", ""),
    ("kernel", "grid", "object", "required", "grid"),
    ("kernel", "max_elements_per_launch", "integer", "required", ""),
    ("kernel", "workspace_size", "integer", "required", ""),
    ("kernel", "lock_num", "integer", "required", ""),
    ("kernel", "lock_init_val", "integer", "required", ""),
    ("kernel", "args", "object", "required", "args"),
    ("grid", "max_programs", "integer", "required", ""),
    ("grid", "max_grid", "integer", "required", ""),
    ("args", "size", "integer", "required", ""),
    ("args", "has_ffts", "boolean", "required", ""),
    ("args", "slots", "array", "required", "slot"),
    ("slot", "name", "string", "required", ""),
    ("slot", "role", "string", "required", ""),
    ("slot", "index", "integer", "optional", ""),
    ("slot", "dim", "integer", "optional", ""),
    ("slot", "offset", "integer", "required", ""),
    ("slot", "size", "integer", "required", ""),
)
MANIFEST_FIELD_KINDS = ("string", "sha256", "integer", "boolean", "array", "object")
MANIFEST_FIELD_PRESENCE = ("required", "optional", "nullable", "ir_only")


def manifest_keys(obj):
    """The keys a manifest object (``"manifest"``, ``"kernel"``, ...) may hold, in order."""
    return tuple(rule[1] for rule in MANIFEST_FIELDS if rule[0] == obj)


# Launch limits (docs/ascend-stack.md, "Launching the kernel").
MAX_GRID = 65535  # the runtime refuses more blocks in one launch
INDEX_LIMIT = 2 ** 31  # a signed 32-bit element index must stay below this

# Broadcasting (docs/kernels.md, "Broadcasting"). The GE library reduces the two input shapes
# to the fewest dimensions that broadcast alike and refuses more than MAX_BROADCAST_RANK of
# them (tf.math.add's own CPU and GPU kernels stop at 5 as well). A kernel variant computes
# one PATTERN over that reduced shape, the tiled patterns over a frame of MAX_BROADCAST_RANK
# dimensions: MAX_BROADCAST_RANK - 2 outer ones, then rows and columns.
MAX_BROADCAST_RANK = 5
PATTERNS = (
    "equal",   # both operands and the output have the same elements: one flat range
    "scalar",  # operand b is one element, added to every element of operand a
    "row",     # a and z full; b varies along the columns only (a bias over the last dims)
    "col",     # a and z full; b varies along the rows only ([N, C] + [N, 1])
    "outer",   # a varies along the columns only, b along the rows only ([1, C] + [R, 1])
)

# The roles of the host-argument slots (docs/kernel-manifest.md, "Host-argument layout").
POINTER_ROLES = ("ffts", "sync_block_lock", "workspace", "input", "output")
# Integer scalars, 4 or 8 bytes: the element count of a flat launch, the extent of one
# dimension of a tiled launch's frame, and one input's element stride along one dimension.
INTEGER_ROLES = ("num_elements", "dim", "input_stride")
# The value of one of the op's attributes (op_def.OpAttr, the kernel parameter "attr:<name>"),
# a scalar of its type's size (op_def.ATTR_TYPES: 4 bytes for a float, as fp32; 8 for an int).
ATTR_ROLES = ("attr",)
ROLES = POINTER_ROLES + INTEGER_ROLES + ATTR_ROLES + ("grid_x", "grid_y", "grid_z")
# Slots of these roles carry an "index": the kernel operand (input / output number), or for
# "attr" the attribute's position in the op's attributes (op_def.OpDefinition.attrs).
INDEXED_ROLES = ("input", "output", "input_stride", "attr")
# Slots of these roles carry a "dim": the dimension of the frame they describe.
DIM_ROLES = ("dim", "input_stride")
# Every layout holds each of these exactly once; the kernel variant's parameters (op_def.py)
# say which of the other roles it holds.
SINGLE_ROLES = ("sync_block_lock", "workspace", "grid_x", "grid_y", "grid_z")

# The load magic for aclrtBinaryLoadFromData that triton's mix_mode implies
# (docs/ascend-stack.md, "Kernel metadata"); each value names an ACL_RT_BINARY_MAGIC_<value>.
MAGIC_BY_MIX_MODE = {"aiv": "ELF_VECTOR_CORE", "aic": "ELF_AICORE", "mix": "ELF_AICORE"}


def block_elements(block):
    """Elements one program handles per loop iteration: the product of a kernel's block shape
    ((BLOCK_SIZE,) or (BLOCK_ROWS, BLOCK_COLS))."""
    n = 1
    for b in block:
        n *= b
    return n
