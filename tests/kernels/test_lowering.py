"""The project's kernel source through triton-ascend's real passes (TTIR -> linalg) and
bishengir-compile (-> HIVM IR) for A2 and A3 SoCs: the manifest's argument layout must be
the entry signature the compiler emitted."""
import hashlib
import json
import os
import re

import pytest

from tf_ge_custom import kernel_manifest
from tf_ge_custom.kernels import builder, socs
from tf_ge_custom.kernels.frontend import kernel_source_path
from tf_ge_custom.op_def import ADD_CUSTOM

SOCS = ("Ascend910B1", "Ascend910_9392")
DTYPES = ADD_CUSTOM.dtypes
MLIR_ELEMENT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}
# Hand-computed packed struct for (i64, ptr, ptr, ptr, ptr, ptr, i32, i32, i32, i32):
# (name, role, index, offset, size)
HAND_LAYOUT = [
    ("ffts_base_address", "ffts", None, 0, 8),
    ("sync_block_lock", "sync_block_lock", None, 8, 8),
    ("workspace", "workspace", None, 16, 8),
    ("x_ptr", "input", 0, 24, 8),
    ("y_ptr", "input", 1, 32, 8),
    ("z_ptr", "output", 0, 40, 8),
    ("n_elements", "num_elements", None, 48, 4),
    ("gridX", "grid_x", None, 52, 4),
    ("gridY", "grid_y", None, 56, 4),
    ("gridZ", "grid_z", None, 60, 4),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("ir")
    events = []
    result = builder.build_kernels(list(SOCS), "all", str(out), ir_only=True,
                                   progress=events.append)
    return out, result, events


def _entry_param_types(hivm_text):
    """The entry's parameter types, read with a pattern of this test's own."""
    head = re.search(r"func\.func @add_kernel\((.*?)\) attributes \{[^\n]*hacc\.entry", hivm_text)
    assert head, "no hacc.entry add_kernel in the HIVM IR"
    return [re.match(r"\s*(i64|i32|memref<\?x(\w+),)", p).group(1).rstrip(",")
            for p in re.split(r"%arg\d+:", head.group(1))[1:]]


def test_progress_reports_every_soc_and_dtype_in_order(built):
    _, _, events = built
    assert [(e.soc, e.dtype) for e in events] == [(s, d) for s in SOCS for d in DTYPES]
    assert [e.done for e in events] == list(range(1, 9)) and events[0].total == 8
    assert all(e.binary_size is None and "HIVM IR" in e.stages for e in events)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soc", SOCS)
def test_manifest_layout_is_the_emitted_entry_signature(built, soc, dtype):
    out, _, _ = built
    with open(os.path.join(str(out), soc, "ir", "add_kernel_%s.hivm.mlir" % dtype)) as f:
        hivm = f.read()
    element = MLIR_ELEMENT[dtype]
    assert _entry_param_types(hivm) == (
        ["i64", "memref<?xi8", "memref<?xi8"] + ["memref<?x%s" % element] * 3 + ["i32"] * 4)
    m = kernel_manifest.load_manifest(os.path.join(str(out), soc, "manifest.json"))
    args = m.kernel("AddCustom", dtype).args
    assert [(s.name, s.role, s.index, s.offset, s.size) for s in args.slots] == HAND_LAYOUT
    assert args.size == 64 and args.has_ffts  # the ffts slot is emitted on A2 as on A3


@pytest.mark.parametrize("soc", SOCS)
def test_ir_only_manifest_records_toolchain_and_no_binaries(built, soc):
    out, result, _ = built
    path = result.manifests[soc]
    m = kernel_manifest.load_manifest(path)
    assert m.ir_only and m.toolchain["cann"] is None
    assert m.toolchain["triton_ascend"] == "3.2.0" and m.toolchain["bishengir"] == "1.2.0"
    with open(kernel_source_path(ADD_CUSTOM.kernel), "rb") as f:
        assert m.kernel_source_sha256 == hashlib.sha256(f.read()).hexdigest()
    assert m.dtypes() == list(DTYPES)
    for k in m.kernels:
        assert (k.mix_mode, k.magic, k.block_size) == ("aiv", "ELF_VECTOR_CORE", 4096)
        assert (k.workspace_size, k.lock_num) == (0, 0)
        assert k.max_programs == socs.get(soc).vector_cores == m.vector_core_count
        assert k.max_elements_per_launch == 2 ** 30
    assert sorted(os.listdir(os.path.dirname(path))) == ["ir", "manifest.json"]


def test_the_grid_stride_loop_survives_lowering(built):
    out, _, _ = built
    ir_dir = os.path.join(str(out), "Ascend910B1", "ir")
    with open(os.path.join(ir_dir, "add_kernel_float32.linalg.mlir")) as f:
        linalg = f.read()
    with open(os.path.join(ir_dir, "add_kernel_float32.hivm.mlir")) as f:
        hivm = f.read()
    # for block_start in range(pid * 4096, n, num_programs * 4096)
    loop = re.search(r"scf\.for %\w+ = (%\w+) to (%arg\d+) step (%\w+)\s*: i32", linalg)
    assert loop, "no i32 scf.for loop in the linalg"
    assert re.search(r"%s = arith\.muli %%arg\d+, %%c4096_i32" % re.escape(loop.group(3)), linalg)
    assert re.search(r"scf\.for %\w+ = %\w+ to %arg6 step %\w+\s*: i32", hivm)  # n_elements


@pytest.mark.parametrize("dtype, calls", [
    ("float32", ["vadd_1d_float"]),
    ("float16", ["vadd_1d_half"]),
    ("int32", ["vadd_1d_int32_t"]),
    # bf16: both operands widened to f32, added there, the sum narrowed back
    ("bfloat16", ["vcast_bfloat16_t_to_float_1d_with_mode"] * 2
     + ["vadd_1d_float", "vcast_float_to_bfloat16_t_1d_with_mode"]),
])
def test_each_dtype_lowers_to_its_vector_add(built, dtype, calls):
    out, _, _ = built
    with open(os.path.join(str(out), "Ascend910_9392", "ir",
                           "add_kernel_%s.hivm.mlir" % dtype)) as f:
        hivm = f.read()
    called = re.findall(r"func\.call @(v\w+)\(", hivm)
    assert [c for c in called if c.startswith(("vadd", "vcast"))] == calls


def test_vector_core_table_matches_the_compiler_for_every_soc(tmp_path):
    result = builder.build_kernels(list(socs.SOCS), ["float32"], str(tmp_path), ir_only=True)
    for name, soc in socs.SOCS.items():
        with open(os.path.join(str(tmp_path), name, "ir", "add_kernel_float32.hivm.mlir")) as f:
            emitted = int(re.search(r'"VECTOR_CORE_COUNT", (\d+) : i32', f.read()).group(1))
        with open(result.manifests[name]) as f:
            recorded = json.load(f)["vector_core_count"]
        assert emitted == soc.vector_cores == recorded, name
