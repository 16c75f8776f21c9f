"""tests/fixtures/record_layout.py lays a kernel's host arguments out from its record alone
(the doubles and fixtures use it for an op without a hand-written layout): it agrees, offset
for offset, with the layouts computed by hand from what the compiler emits for AddCustom's
flat and tiled kernels and LeakyReluCustom's (docs/kernel-manifest.md), and every variant of
every op of the records gets a layout the manifest reader accepts."""
import importlib.util
import json
import os

import pytest

from tf_ge_custom import kernel_manifest, op_def

pytestmark = pytest.mark.kind("oracle")

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


record_layout = _load(os.path.join(FIXTURES, "record_layout.py"), "_record_layout")
generate = _load(os.path.join(FIXTURES, "manifests", "generate.py"), "_manifest_generator")
leaky_layout = _load(os.path.join(FIXTURES, "leaky_relu_layout.py"), "_leaky_relu_layout")


def _unnamed(args):
    """The layout without the slots' names (the names are the compiler's parameter names)."""
    return dict(args, slots=[{k: v for k, v in s.items() if k != "name"} for s in args["slots"]])


def test_the_layout_from_the_record_is_the_hand_computed_one_of_each_shipped_kernel():
    add, leaky = op_def.ADD_CUSTOM, op_def.LEAKY_RELU_CUSTOM
    assert _unnamed(record_layout.layout_of(add, add.kernel.variant("flat"))) == \
        _unnamed(generate.layout_with_ffts())
    assert _unnamed(record_layout.layout_of(add, add.kernel.variant("row_16x256"))) == \
        _unnamed(generate.layout_tiled())
    assert _unnamed(record_layout.layout_of(leaky, leaky.kernel.variant("flat"))) == \
        _unnamed({"size": leaky_layout.SIZE, "has_ffts": True, "slots": leaky_layout.slots()})


def test_an_int_attribute_takes_an_aligned_8_byte_word():
    # (x, y, n, shift): pointers to 40, the count 40..44, the int64 at 48 (a multiple of 8),
    # the grid 56..68 -> 72 bytes
    args = record_layout.layout(("input:0", "output:0", "num_elements", "attr:shift"), [("shift", "int")])
    assert [(s["role"], s["offset"], s["size"]) for s in args["slots"][5:]] == [
        ("num_elements", 40, 4), ("attr", 48, 8), ("grid_x", 56, 4), ("grid_y", 60, 4), ("grid_z", 64, 4)]
    assert args["size"] == 72


def test_a_parameter_the_rule_does_not_know_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown kernel parameter 'scale'; known: input:<i>"):
        record_layout.layout(("input:0", "scale"))
    with pytest.raises(ValueError, match="'attr:beta' names no attribute of the op; its attributes are alpha"):
        record_layout.layout(("attr:beta",), [("alpha", "float")])


@pytest.mark.parametrize("op", op_def.OPS, ids=lambda op: op.type_name)
def test_every_variant_of_every_op_gets_a_layout_the_manifest_reader_accepts(op):
    kernels = []
    for variant in op.kernel.variants:
        args = record_layout.layout_of(op, variant)
        for dtype in op.dtypes:  # IR-only entries: no npubin
            kernels.append(dict(generate.kernel(dtype), op=op.type_name, variant=variant.name,
                                entry=op.entry_name(variant.name, dtype), block=list(variant.block),
                                args=args))
        # each of the variant's parameters has its slot, in order, between the leading words
        # and the grid
        assert [s["role"] for s in args["slots"][3:-3]] == [p.split(":")[0] for p in variant.params]
    manifest = kernel_manifest.validate_document(generate.manifest(kernels))
    assert len(manifest.kernels) == len(op.kernel.variants) * len(op.dtypes)


def _kernel_compiler_double():
    path = os.path.join(os.path.dirname(FIXTURES), "ge", "doubles", "kernel_compiler_double.py")
    return _load(path, "_kernel_compiler_double")


def test_the_kernel_compiler_double_lays_out_an_op_it_was_never_told_of_from_its_record(tmp_path, monkeypatch):
    """A two-input op with an int attribute, in no hand-written table: the double (which GE in
    the loop runs at Compile) writes its set, and the manifest reader, with the op in the
    records, accepts it; each entry's layout is the record's."""
    variant = op_def.KernelVariant("flat", "add_kernel", "equal", (4096,), (("BLOCK_SIZE", 4096),),
                                   ("input:0", "input:1", "output:0", "num_elements", "attr:shift"))
    op = op_def.LEAKY_RELU_CUSTOM._replace(
        type_name="ShiftCustom", python_name="shift_custom", inputs=("x", "y"), dtypes=("int32",),
        attrs=(op_def.OpAttr("shift", "int", 1),), equivalent="",
        kernel=op_def.KernelSpec(source=op_def.ADD_CUSTOM.kernel.source, variants=(variant,)))
    monkeypatch.setattr(op_def, "OPS", tuple(op_def.OPS) + (op,))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_GE_CUSTOM_")}
    _kernel_compiler_double().fake_build(["Ascend910B1"], ["int32"], str(tmp_path), ops=op, env=env)
    manifest = kernel_manifest.load_manifest(str(tmp_path / "Ascend910B1" / "manifest.json"))
    (kernel,) = manifest.kernels
    assert (kernel.op, kernel.variant, kernel.dtype) == ("ShiftCustom", "flat", "int32")
    assert kernel.entry == "tf_ge_custom_shift_custom_flat_int32"
    with open(str(tmp_path / "Ascend910B1" / "manifest.json")) as f:
        (written,) = json.load(f)["kernels"]
    assert written["args"] == record_layout.layout_of(op, variant)
    # x, y, z at 24, 32, 40, the count at 48, the int64 at 56 (a multiple of 8: 4 bytes of padding)
    assert [(s["role"], s["offset"]) for s in written["args"]["slots"][3:8]] == [
        ("input", 24), ("input", 32), ("output", 40), ("num_elements", 48), ("attr", 56)]
