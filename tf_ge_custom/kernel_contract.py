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
MANIFEST_VERSION = 1
MANIFEST_NAME = "manifest.json"

# Launch limits (docs/ascend-stack.md, "Launching the kernel").
MAX_GRID = 65535  # the runtime refuses more blocks in one launch
INDEX_LIMIT = 2 ** 31  # a signed 32-bit element index must stay below this

# The roles of the host-argument slots (docs/kernel-manifest.md, "Host-argument layout").
POINTER_ROLES = ("ffts", "sync_block_lock", "workspace", "input", "output")
ROLES = POINTER_ROLES + ("num_elements", "grid_x", "grid_y", "grid_z")
# Input and output slots carry an "index": one slot per op input / output.
INDEXED_ROLES = ("input", "output")
# Every layout holds each of these exactly once.
SINGLE_ROLES = ("sync_block_lock", "workspace", "num_elements", "grid_x", "grid_y", "grid_z")

# The load magic for aclrtBinaryLoadFromData that triton's mix_mode implies
# (docs/ascend-stack.md, "Kernel metadata"); each value names an ACL_RT_BINARY_MAGIC_<value>.
MAGIC_BY_MIX_MODE = {"aiv": "ELF_VECTOR_CORE", "aic": "ELF_AICORE", "mix": "ELF_AICORE"}
