"""LeakyReluCustom's kernel through triton-ascend's real passes (TTIR -> linalg) and
bishengir-compile (-> HIVM IR) for an A2 and an A3 SoC, every dtype, with the op passed to
the builder explicitly (it is not yet in ``op_def.OPS``; the manifest validator reads OPS when
called, so the tests put it there for the build): the entry signature against a hand-computed
64-byte layout with the attribute as an f32 word, its own entry names, alpha rounded to the
element type before the one multiply, and a set of both ops' kernels recording each op's
source (docs/kernel-manifest.md, ``kernel_sources``)."""
import hashlib
import json
import os
import re

import pytest

from tf_ge_custom import kernel_manifest, op_def
from tf_ge_custom.kernels import builder
from tf_ge_custom.kernels.frontend import kernel_source_path
from tf_ge_custom.op_def import ADD_CUSTOM, LEAKY_RELU_CUSTOM

SOCS = ("Ascend910B1", "Ascend910_9392")
DTYPES = ("float32", "float16", "bfloat16")
MLIR_ELEMENT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
# Hand-computed: (name, role, index, dim, offset, size); i64, ptr x 4, i32 n, f32 alpha, i32 x 3.
LAYOUT = [
    ("ffts_base_address", "ffts", None, None, 0, 8),
    ("sync_block_lock", "sync_block_lock", None, None, 8, 8),
    ("workspace", "workspace", None, None, 16, 8),
    ("x_ptr", "input", 0, None, 24, 8),
    ("y_ptr", "output", 0, None, 32, 8),
    ("n_elements", "num_elements", None, None, 40, 4),
    ("alpha", "attr", 0, None, 44, 4),
    ("gridX", "grid_x", None, None, 48, 4),
    ("gridY", "grid_y", None, None, 52, 4),
    ("gridZ", "grid_z", None, None, 56, 4),
]


@pytest.fixture(scope="module")
def both_ops():
    """op_def.OPS with LeakyReluCustom, for the validators the builder runs."""
    saved = op_def.OPS
    op_def.OPS = (ADD_CUSTOM, LEAKY_RELU_CUSTOM)
    yield
    op_def.OPS = saved


@pytest.fixture(scope="module")
def built(tmp_path_factory, both_ops):
    out = tmp_path_factory.mktemp("ir")
    events = []
    result = builder.build_kernels(list(SOCS), "all", str(out), ir_only=True,
                                   ops=LEAKY_RELU_CUSTOM, progress=events.append)
    return out, result, events


def _hivm(out, soc, dtype, stage="hivm"):
    with open(os.path.join(str(out), soc, "ir", "leaky_relu_custom_flat_%s.%s.mlir"
                           % (dtype, stage))) as f:
        return f.read()


def _entry_param_types(hivm_text, entry):
    head = re.search(r"func\.func @%s\((.*?)\) attributes \{[^\n]*hacc\.entry" % entry, hivm_text)
    assert head, "no hacc.entry %s in the HIVM IR" % entry
    return [re.match(r"\s*(i64|i32|f32|memref<\?x(\w+),)", p).group(1).rstrip(",")
            for p in re.split(r"%arg\d+:", head.group(1))[1:]]


def test_progress_names_every_soc_and_dtype(built):
    _, _, events = built
    assert [(e.soc, e.dtype) for e in events] == [(s, d) for s in SOCS for d in DTYPES]
    assert all(e.variants == ("flat",) for e in events)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soc", SOCS)
def test_the_layout_is_the_emitted_entry_signature_with_alpha_as_f32(built, soc, dtype):
    out, _, _ = built
    entry = "tf_ge_custom_leaky_relu_custom_flat_%s" % dtype  # written out: its own name
    hivm = _hivm(out, soc, dtype)
    assert _entry_param_types(hivm, entry) == (
        ["i64", "memref<?xi8", "memref<?xi8"] + ["memref<?x%s" % MLIR_ELEMENT[dtype]] * 2
        + ["i32", "f32"] + ["i32"] * 3)
    # the only device entry of the file is the kernel's own name
    assert re.findall(r"func\.func (?:public )?@(\w+)\([^\n]*hacc\.entry", hivm) == [entry]
    m = kernel_manifest.load_manifest(os.path.join(str(out), soc, "manifest.json"))
    k = m.kernel("LeakyReluCustom", "flat", dtype)
    assert k.entry == entry
    assert [(s.name, s.role, s.index, s.dim, s.offset, s.size) for s in k.args.slots] == LAYOUT
    assert k.args.size == 64 and k.args.has_ffts
    assert k.block == (4096,) and k.max_elements_per_launch == 2 ** 30
    with open(os.path.join(str(out), soc, "manifest.json")) as f:
        document = json.load(f)
    assert document["kernels"][DTYPES.index(dtype)]["args"]["slots"][6] == {
        "name": "alpha", "role": "attr", "index": 0, "offset": 44, "size": 4}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soc", SOCS)
def test_alpha_reaches_the_multiply_rounded_to_the_element_type(built, soc, dtype):
    """TensorFlow's functor multiplies by static_cast<T>(alpha). In the HIVM IR that hivmc
    compiles: float32 multiplies by the f32 argument itself; float16 by the argument
    truncated to f16, in a half multiply; bfloat16 widens x to f32 and multiplies there by
    alpha rounded to bfloat16 on its bits (add 0x7FFF plus the lowest kept bit, keep the top
    16), not by the argument (which the compiler's extf(truncf(alpha)) folding would leave),
    and narrows the product on its bits the same way: no f32 -> bf16 conversion is left
    whose rounding mode would decide a result."""
    hivm = _hivm(built[0], soc, dtype)
    alpha = "%arg6"  # ffts, lock, workspace, x, y, n_elements, then alpha
    assert re.search(r"%s: f32[,)]" % alpha, hivm)
    calls = re.findall(r"func\.call @(vmuls_vs_1d_\w+)\(%\w+, (%\w+),", hivm)
    assert len(calls) == 1
    (function, scalar), = calls
    if dtype == "float32":
        assert (function, scalar) == ("vmuls_vs_1d_float", alpha)
    elif dtype == "float16":
        assert function == "vmuls_vs_1d_half"
        assert re.search(r"%s = arith\.truncf %s : f32 to f16" % (re.escape(scalar), alpha), hivm)
    else:
        assert function == "vmuls_vs_1d_float" and scalar != alpha
        # alpha's bits: + 0x7FFF + lowest kept bit, >> 16, to i16, as bf16 (then widened)
        bits = re.search(r"(%%\w+) = arith\.bitcast %s : f32 to i32" % alpha, hivm).group(1)
        biased = re.search(r"(%%\w+) = arith\.addi %s, %%c32767_i32 : i32" % bits, hivm).group(1)
        assert re.search(r"arith\.shrsi %\w+, %c16_i32 : i32", hivm)
        assert re.search(r"= arith\.addi %s, %%\w+ : i32" % biased, hivm)
        assert re.search(r"arith\.trunci %\w+ : i32 to i16", hivm)
        assert re.search(r"arith\.bitcast %\w+ : i16 to bf16", hivm)
        assert not re.search(r"arith\.truncf [^\n]*to bf16", hivm)
        vector = re.findall(r"func\.call @(v\w+)\(", hivm)
        assert set(c for c in vector if c.startswith("vcast")) == {
            "vcast_bfloat16_t_to_float_1d_with_mode", "vcast_int32_t_to_int16_t_1d_with_overflow"}
        # the product's bits, per element, the same way
        assert re.search(r"func\.call @vadds_vs_1d_int32_t\(%\w+, %c32767_i32,", hivm)
        assert vector.count("vshrs_vs_1d_int32_t") == 2


def test_the_manifest_records_the_kernel_source_of_the_op(built):
    out, _, _ = built
    m = kernel_manifest.load_manifest(os.path.join(str(out), "Ascend910B1", "manifest.json"))
    with open(kernel_source_path(LEAKY_RELU_CUSTOM.kernel), "rb") as f:
        assert m.kernel_source_sha256 == hashlib.sha256(f.read()).hexdigest()
    assert "kernel_sources" not in m.document  # one source file: written as before
    assert m.source_sha256("LeakyReluCustom") == m.kernel_source_sha256


def test_a_set_of_both_ops_records_each_ops_source(tmp_path, both_ops):
    result = builder.build_kernels(["Ascend910B1"], "float16", str(tmp_path), ir_only=True,
                                   ops=(ADD_CUSTOM, LEAKY_RELU_CUSTOM), variants=["flat"])
    m = kernel_manifest.load_manifest(result.manifests["Ascend910B1"])
    digests = {}
    for op in (ADD_CUSTOM, LEAKY_RELU_CUSTOM):
        with open(kernel_source_path(op.kernel), "rb") as f:
            digests[op.type_name] = hashlib.sha256(f.read()).hexdigest()
    assert m.document["kernel_sources"] == digests
    lines = "".join("%s %s\n" % (op, digests[op]) for op in sorted(digests))
    assert m.kernel_source_sha256 == hashlib.sha256(lines.encode()).hexdigest()
    assert [(k.op, k.entry) for k in m.kernels] == [
        ("AddCustom", "tf_ge_custom_add_custom_flat_float16"),
        ("LeakyReluCustom", "tf_ge_custom_leaky_relu_custom_flat_float16")]
    assert m.source_sha256("AddCustom") == digests["AddCustom"]
    # the add kernel's layout is untouched by the other op: 64 bytes, no attr slot
    add = m.kernel("AddCustom", "flat", "float16").args
    assert add.size == 64 and [s.role for s in add.slots].count("attr") == 0
