"""The project's kernel variants through triton-ascend's real passes (TTIR -> linalg) and
bishengir-compile (-> HIVM IR) for an A2 and an A3 SoC, every variant x dtype: the manifest's
argument layout must be the entry signature the compiler emitted, and the broadcasting
variants must lower to contiguous block copies with no per-element index arithmetic (the
measurements behind their design: docs/kernels.md, "Broadcasting")."""
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
VARIANTS = tuple(v.name for v in ADD_CUSTOM.kernel.variants)
MLIR_ELEMENT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}
_HEAD = [
    ("ffts_base_address", "ffts", None, None, 0, 8),
    ("sync_block_lock", "sync_block_lock", None, None, 8, 8),
    ("workspace", "workspace", None, None, 16, 8),
]
# Hand-computed packed structs: (name, role, index, dim, offset, size).
# Flat kernels (i64, ptr x 5, i32 n, i32 x 3): 64 bytes.
FLAT_LAYOUT = {
    "flat": _HEAD + [("x_ptr", "input", 0, None, 24, 8), ("y_ptr", "input", 1, None, 32, 8),
                     ("z_ptr", "output", 0, None, 40, 8),
                     ("n_elements", "num_elements", None, None, 48, 4)],
    "scalar": _HEAD + [("a_ptr", "input", 0, None, 24, 8), ("b_ptr", "input", 1, None, 32, 8),
                       ("z_ptr", "output", 0, None, 40, 8),
                       ("n_elements", "num_elements", None, None, 48, 4)],
}
GRID = [("gridX", "grid_x", None, None, 52, 4), ("gridY", "grid_y", None, None, 56, 4),
        ("gridZ", "grid_z", None, None, 60, 4)]
# add_tile_kernel (i64, ptr x 5, i32 x 11, i32 x 3): 104 bytes.
TILED_LAYOUT = (
    _HEAD + [("a_ptr", "input", 0, None, 24, 8), ("b_ptr", "input", 1, None, 32, 8),
             ("z_ptr", "output", 0, None, 40, 8)]
    + [(n, "dim", None, k, 48 + 4 * k, 4) for k, n in enumerate(("d0", "d1", "d2", "rows", "cols"))]
    + [("%s_stride%d" % (o, k), "input_stride", i, k, 68 + 12 * i + 4 * k, 4)
       for i, o in enumerate("ab") for k in range(3)]
    + [("gridX", "grid_x", None, None, 92, 4), ("gridY", "grid_y", None, None, 96, 4),
       ("gridZ", "grid_z", None, None, 100, 4)])


def _entry(variant, dtype):
    # the kernel's own symbol (docs/kernel-manifest.md, "Entry names"), written out here
    return "tf_ge_custom_add_custom_%s_%s" % (variant, dtype)


def _layout(variant):
    return FLAT_LAYOUT[variant] + GRID if variant in FLAT_LAYOUT else TILED_LAYOUT


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("ir")
    events = []
    # this module's op (LeakyReluCustom's kernels: test_leaky_relu_lowering.py)
    result = builder.build_kernels(list(SOCS), "all", str(out), ir_only=True, ops=ADD_CUSTOM,
                                   progress=events.append)
    return out, result, events


def _hivm(out, soc, variant, dtype):
    with open(os.path.join(str(out), soc, "ir", "add_custom_%s_%s.hivm.mlir" % (variant, dtype))) as f:
        return f.read()


def _entry_param_types(hivm_text, entry):
    """The entry's parameter types, read with a pattern of this test's own."""
    head = re.search(r"func\.func @%s\((.*?)\) attributes \{[^\n]*hacc\.entry" % entry, hivm_text)
    assert head, "no hacc.entry %s in the HIVM IR" % entry
    return [re.match(r"\s*(i64|i32|memref<\?x(\w+),)", p).group(1).rstrip(",")
            for p in re.split(r"%arg\d+:", head.group(1))[1:]]


def _loops(text):
    """(header, body, trailing attributes) of every scf.for."""
    found = []
    for m in re.finditer(r"scf\.for %\w+ = %\w+ to %\w+ step %\w+", text):
        start = text.index("{", m.end())
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        found.append((m.group(0), text[start + 1:end], text[end + 1:text.find("\n", end)]))
    return found


def test_progress_reports_every_soc_and_dtype_with_its_variants(built):
    _, _, events = built
    assert [(e.soc, e.dtype) for e in events] == [(s, d) for s in SOCS for d in DTYPES]
    assert [e.done for e in events] == list(range(1, 9)) and events[0].total == 8
    assert all(e.variants == VARIANTS for e in events)
    assert all(e.binary_size is None and "HIVM IR" in e.stages for e in events)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soc", SOCS)
def test_manifest_layout_is_the_emitted_entry_signature(built, soc, dtype, variant):
    out, _, _ = built
    element = MLIR_ELEMENT[dtype]
    integers = 1 if variant in FLAT_LAYOUT else 11
    assert _entry_param_types(_hivm(out, soc, variant, dtype), _entry(variant, dtype)) == (
        ["i64", "memref<?xi8", "memref<?xi8"] + ["memref<?x%s" % element] * 3
        + ["i32"] * (integers + 3))
    m = kernel_manifest.load_manifest(os.path.join(str(out), soc, "manifest.json"))
    args = m.kernel("AddCustom", variant, dtype).args
    assert [(s.name, s.role, s.index, s.dim, s.offset, s.size) for s in args.slots] == _layout(variant)
    assert args.size == (64 if variant in FLAT_LAYOUT else 104)
    assert args.has_ffts  # the ffts slot is emitted on A2 as on A3


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_no_element_pays_an_index_division_or_a_gather(built, dtype, variant):
    """Measured alternatives (docs/kernels.md): an index ``i % C`` or ``i // C`` per element
    lowers to a scalar loop of 4096 single-element loads per block, each with its division;
    a runtime stride on the innermost axis to one 32-byte buffer row per element. Every
    variant here: one loop (over blocks or tiles), its divisions scalar i32 work per tile,
    each operand read by one contiguous block copy per iteration, one store."""
    hivm = _hivm(built[0], "Ascend910B1", variant, dtype)
    loops = _loops(hivm)
    assert len(loops) == 1, [h for h, _, _ in loops]
    # no element read from global memory one at a time (a column's one value may be read
    # from the unified buffer into a register, for a vector-scalar add)
    assert "ExtractedLoadOrStore" not in hivm
    assert not re.search(r"memref\.load [^\n]*address_space<gm>", loops[0][1])
    divisions = re.findall(r"arith\.(?:divsi|remsi|divui|remui) [^\n]*: (\w+)", hivm)
    assert set(divisions) == {"i32"}
    # per program: the block index (2); per tile: the tile's coordinates in the frame
    assert len(divisions) <= (2 if variant in FLAT_LAYOUT else 12)
    body = loops[0][1]
    loads = re.findall(r"func\.call @load_gm_to_ubuf_(\d)d", body)
    stores = re.findall(r"func\.call @store_ubuf_to_gm_(\d)d", body)
    assert len(loads) == (1 if variant == "scalar" else 2) and len(stores) == 1
    pattern, block = ADD_CUSTOM.kernel.variant(variant).pattern, ADD_CUSTOM.kernel.variant(variant).block
    if pattern in ("row", "col") and block[0] > 1:  # the broadcast operand: one row or column
        assert sorted(loads) == ["1", "2"]
    if pattern == "outer" and block[0] > 1:  # both operands: a row and a column
        assert loads == ["1", "1"]


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
    assert [(k.variant, k.dtype) for k in m.kernels] == [(v, d) for d in DTYPES for v in VARIANTS]
    for k in m.kernels:
        assert (k.mix_mode, k.magic) == ("aiv", "ELF_VECTOR_CORE")
        assert k.block == ADD_CUSTOM.kernel.variant(k.variant).block and k.block_elements == 4096
        assert (k.workspace_size, k.lock_num) == (0, 0)
        assert k.max_programs == socs.get(soc).vector_cores == m.vector_core_count
        assert k.max_elements_per_launch == 2 ** 30
    assert all(not m.missing_variants(ADD_CUSTOM, d) for d in DTYPES)
    assert sorted(os.listdir(os.path.dirname(path))) == ["ir", "manifest.json"]
    # the builder returns the typed records the manifest was written from
    assert result.kernels[soc] == m.kernels


def test_the_grid_stride_loop_survives_lowering(built):
    out, _, _ = built
    ir_dir = os.path.join(str(out), "Ascend910B1", "ir")
    with open(os.path.join(ir_dir, "add_custom_flat_float32.linalg.mlir")) as f:
        linalg = f.read()
    hivm = _hivm(out, "Ascend910B1", "flat", "float32")
    # for block_start in range(pid * 4096, n, num_programs * 4096)
    loop = re.search(r"scf\.for %\w+ = (%\w+) to (%arg\d+) step (%\w+)\s*: i32", linalg)
    assert loop, "no i32 scf.for loop in the linalg"
    assert re.search(r"%s = arith\.muli %%arg\d+, %%c4096_i32" % re.escape(loop.group(3)), linalg)
    assert re.search(r"scf\.for %\w+ = %\w+ to %arg6 step %\w+\s*: i32", hivm)  # n_elements
    # the tiled kernel's loop: for tile in range(pid, tiles, num_programs)
    tiled = _hivm(out, "Ascend910B1", "row_16x256", "float32")
    assert re.search(r"scf\.for %\w+ = %\w+ to %\w+ step %arg\d+\s*: i32", tiled)


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
    called = re.findall(r"func\.call @(v\w+)\(", _hivm(out, "Ascend910_9392", "flat", dtype))
    assert [c for c in called if c.startswith(("vadd", "vcast"))] == calls


def test_the_tiles_add_with_a_broadcast_operand(built):
    out, _, _ = built
    # row 16 x 256: a (16, 256) tile plus a (1, 256) row of b, in one 2-D vector add
    assert "vadd_2d_float" in _hivm(out, "Ascend910B1", "row_16x256", "float32")
    # col 1 x 4096: a one-row tile plus b's one value: a vector-scalar add
    assert "vadds_vs_1d_float" in _hivm(out, "Ascend910B1", "col_1x4096", "float32")
    # scalar: b read once, added as a scalar
    assert "vadds_vs_1d_float" in _hivm(out, "Ascend910B1", "scalar", "float32")


def test_every_variant_lowers_for_every_soc_and_the_core_table_matches(tmp_path):
    """float32, all ten SoCs: each variant lowers with the hand-computed layout, and the
    vector-core count the compiler states is the table's (the other dtypes: above, on an A2
    and an A3 SoC)."""
    result = builder.build_kernels(list(socs.SOCS), ["float32"], str(tmp_path), ir_only=True)
    for name, soc in socs.SOCS.items():
        with open(os.path.join(str(tmp_path), name, "ir", "add_custom_flat_float32.hivm.mlir")) as f:
            emitted = int(re.search(r'"VECTOR_CORE_COUNT", (\d+) : i32', f.read()).group(1))
        with open(result.manifests[name]) as f:
            recorded = json.load(f)["vector_core_count"]
        assert emitted == soc.vector_cores == recorded, name
        m = kernel_manifest.load_manifest(result.manifests[name])
        for variant in VARIANTS:
            args = m.kernel("AddCustom", variant, "float32").args
            assert [(s.name, s.role, s.index, s.dim, s.offset, s.size) for s in args.slots] == \
                _layout(variant), (name, variant)


@pytest.mark.parametrize("soc", SOCS)
def test_no_kernel_reads_its_ffts_lock_or_workspace_argument(built, soc):
    """The sunk static path declares the ffts word as 0 and the lock and workspace as null
    (ge_ops/core/include/tf_ge_custom_core/declared_launch.h; docs/ge-library.md, "Sunk static
    graphs"): that is right only while no kernel reads those three arguments. Every entry is
    a vector-core (AIV) function whose body never names %arg0..%arg2, and the manifest asks
    for no lock and no workspace."""
    out, _, _ = built
    m = kernel_manifest.load_manifest(os.path.join(str(out), soc, "manifest.json"))
    for dtype in DTYPES:
        for variant in VARIANTS:
            entry = _entry(variant, dtype)
            text = _hivm(out, soc, variant, dtype)
            head = re.search(r"func\.func @%s\((.*?)\) attributes \{([^\n]*hacc\.entry[^\n]*)\{\n" % entry, text)
            assert head, "no hacc.entry %s in %s %s" % (entry, variant, dtype)
            assert "hacc.arg_type<ffts_base_address>" in head.group(1).split("%arg1:")[0]
            assert "func_core_type<AIV>" in head.group(2)
            body = text[head.end():]
            for arg in ("%arg0", "%arg1", "%arg2"):
                assert not re.search(re.escape(arg) + r"\b", body), (
                    "%s %s %s reads %s" % (soc, variant, dtype, arg))
            assert not re.search(r"ffts|sync_block", body)
            k = m.kernel("AddCustom", variant, dtype)
            assert k.mix_mode == "aiv" and k.lock_num == 0 and k.workspace_size == 0
