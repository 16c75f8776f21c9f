"""The whole-model scenario of GE in the loop: its node tables and its oracle.

tests/ge/fixtures/*.nodes.json are the AddCustom nodes of ResNet50, MobileNetV2 and a
mixed-precision Transformer encoder block, and the AddCustom and LeakyReluCustom nodes of a
Darknet-53 stage, as TensorFlow reads them from the frozen graphs the package's own export
writes (tests/ge/whole_models.py; the Darknet stage's worked out by hand until the package
ships LeakyReluCustom). GE in the loop drives every node of
them through GE's code (tests/native/ge_in_loop/driver/whole_model_tests.cc, run for each tag and
under the sanitizers by test_ge_in_loop.py) against the launches tests/ge/launch_oracle.py works
out. Here: the tables are regenerated from the models and must be unchanged, they hold what the
scenario is about, and the oracle's rules give the launches worked out by hand for shapes of
docs/kernels.md and of these models.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
MODELS = ("darknet_stage", "mobilenet_v2", "resnet50", "transformer_encoder")


def _load(name):
    spec = importlib.util.spec_from_file_location("_tf_ge_custom_" + name, str(HERE / (name + ".py")))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracle = _load("launch_oracle")


def _table(model):
    with open(str(FIXTURES / (model + ".nodes.json"))) as f:
        return json.load(f)


@pytest.mark.slow
def test_the_node_tables_are_what_the_models_export_to(tmp_path):
    """Regenerated in a fresh process (Keras models with random weights, the package's export,
    TensorFlow's shape inference on the frozen graph): every table unchanged. A model of an op
    the package does not ship yet is left out, and only that one: the Darknet stage while
    op_def.OPS lacks LeakyReluCustom (its table is then the one worked out by hand below)."""
    from tf_ge_custom import op_def

    models = _load("whole_models")
    assert sorted(models.MODELS) == sorted(MODELS)
    pending = sorted(m for m in MODELS if models.unshipped_ops(m))
    shipped = set(op.type_name for op in op_def.OPS)
    assert pending == ([] if "LeakyReluCustom" in shipped else ["darknet_stage"])
    proc = subprocess.run([sys.executable, str(HERE / "whole_models.py"), str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for model in MODELS:
        if model in pending:
            assert "%s: left out" % model in proc.stdout
            assert not (tmp_path / (model + ".nodes.json")).exists()
            continue
        with open(str(tmp_path / (model + ".nodes.json"))) as f:
            assert json.load(f) == _table(model), model
        assert (tmp_path / (model + ".pb")).stat().st_size > 0


def test_the_tables_hold_residual_adds_and_mixed_precision():
    resnet, mobilenet, encoder = (_table(m)["nodes"] for m in ("resnet50", "mobilenet_v2",
                                                                "transformer_encoder"))
    # ResNet50: 3 + 4 + 6 + 3 bottleneck blocks, one residual add each, float32
    assert len(resnet) == 16 and {n["dtype"] for n in resnet} == {"float32"}
    assert sorted(n["x"][1:] for n in resnet)[0] == [7, 7, 2048]
    # MobileNetV2: the 10 inverted-residual blocks with a shortcut, float16 under mixed_float16
    assert len(mobilenet) == 10 and {n["dtype"] for n in mobilenet} == {"float16"}
    assert all(n["x"] == n["y"] == n["z"] for n in resnet + mobilenet)
    shapes = {(n["dtype"], tuple(n["x"]), tuple(n["y"])) for n in encoder}
    assert ("float16", (8, 128, 512), (512,)) in shapes          # [B, T, D] + [D]
    assert ("float16", (8, 128, 512), (128, 512)) in shapes      # position table
    assert ("float32", (8, 8, 128, 128), (8, 1, 1, 128)) in shapes  # attention mask
    assert ("float32", (8, 512, 8, 16), (512, 1, 1)) in shapes   # NCHW bias
    assert ("float32", (8, 128, 1), ()) in shapes                # layer norm eps
    assert ("int32", (128,), ()) in shapes                       # positions + 1
    assert {n["dtype"] for n in encoder} == {"float16", "float32", "int32"}


def _float32(value):
    import struct
    return struct.unpack("<f", struct.pack("<f", value))[0]


def test_the_darknet_table_is_the_stage_worked_out_by_hand():
    """whole_models.darknet_stage, batch 8, 52 x 52, 128 channels, 2 blocks, worked out by hand:
    per block a 1x1 convolution to 64 channels and a 3x3 one back to 128 ("SAME": 52 x 52
    kept), each followed by its bias ([8, 52, 52, C] + [C]) and a leaky ReLU at alpha 0.1
    (float32's 0.1 as TensorFlow keeps the attribute), then the residual add; heads: float32
    without alpha (the default, stripped as a SavedModel strips it), bfloat16 at -0.5."""
    table = _table("darknet_stage")
    assert table["batch"] == 8
    nodes = {n["name"]: n for n in table["nodes"]}
    assert [n["name"] for n in table["nodes"]] == sorted(nodes)  # sorted by name
    expected = {}
    full = [8, 52, 52, 128]
    for block in (0, 1):
        for conv, channels in ((1, 64), (3, 128)):
            shape = [8, 52, 52, channels]
            name = "block%d_conv%d" % (block, conv)
            expected[name + "_bias"] = {"op": "AddCustom", "dtype": "float16", "x": shape, "y": [channels],
                                        "z": shape}
            expected[name + "_leaky"] = {"op": "LeakyReluCustom", "dtype": "float16", "x": shape, "z": shape,
                                         "alpha": _float32(0.1)}
        expected["block%d_residual" % block] = {"op": "AddCustom", "dtype": "float16", "x": full, "y": full,
                                                "z": full}
    expected["head_float32"] = {"op": "LeakyReluCustom", "dtype": "float32", "x": full, "z": full}
    expected["head_bfloat16"] = {"op": "LeakyReluCustom", "dtype": "bfloat16", "x": full, "z": full,
                                 "alpha": -0.5}
    assert {name: dict((k, v) for k, v in n.items() if k != "name") for name, n in nodes.items()} == expected
    assert nodes["block0_conv1_leaky"]["alpha"] == 0.10000000149011612
    # both ops, every dtype LeakyReluCustom has, its three kinds of alpha
    assert {n["dtype"] for n in nodes.values() if n["op"] == "LeakyReluCustom"} == {"float16", "float32", "bfloat16"}


def test_the_oracle_gives_leaky_relus_launch_and_alpha_word_worked_out_by_hand():
    # [8, 52, 52, 128]: 2768896 elements, 676 blocks of 4096. alpha's binary32 bits by hand:
    # 0.1 = 1.6 x 2^-4: exponent 123 (0x7B), mantissa round(0.6 x 2^23) = 0x4CCCCD -> 0x3DCCCCCD;
    # -0.5: sign 1, exponent 126, mantissa 0 -> 0xBF000000; the default 0.2 = 1.6 x 2^-3 ->
    # 0x3E4CCCCD.
    got = oracle.expected_unary_launch([8, 52, 52, 128], _float32(0.1))
    assert got == {"variant": "flat", "operands": [0], "n": 2768896, "tiled": False, "dims": [],
                   "strides": [], "tiles": 676, "alpha_bits": 0x3DCCCCCD}
    assert oracle.expected_unary_launch([4097], -0.5)["alpha_bits"] == 0xBF000000
    assert oracle.expected_unary_launch([4097], None)["tiles"] == 2
    assert oracle.expected_unary_launch([4097], None)["alpha_bits"] == 0x3E4CCCCD
    # the oracle's default is the record's (what the GE library's op table carries) and TF's
    from tf_ge_custom import op_def
    assert oracle.DEFAULT_ALPHA == op_def.LEAKY_RELU_CUSTOM.attr("alpha").default
    import inspect
    import tensorflow as tf
    assert inspect.signature(tf.nn.leaky_relu).parameters["alpha"].default == oracle.DEFAULT_ALPHA


# (x, y) -> the launch worked out by hand: variant, operands, and n or (extents, a's and b's
# outer strides), and the programs before a cap.
HAND_WORKED = [
    # docs/kernels.md: [8, 64, 56, 56] + [1, 64, 1, 1] is (8, 64, 3136) with strides
    # (200704, 3136, 1) and (0, 1, 0): a column pattern; 64 x 3136 takes 1x4096 (64 tiles; 16x256
    # needs 4*13 = 52, not under 48), 8 * 64 tiles
    (([8, 64, 56, 56], [1, 64, 1, 1]), ("col_1x4096", [0, 1], [1, 1, 8, 64, 3136],
                                        [0, 0, 200704, 0, 0, 0], 512)),
    # [8192, 1024] + [1024]: one plane; 1x4096 8192 tiles, 16x256 512*4 = 2048 (taken),
    # 128x32 64*32 = 2048 (not under 3/4 of 2048)
    (([8192, 1024], [1024]), ("row_16x256", [0, 1], [1, 1, 1, 8192, 1024], [0] * 6, 2048)),
    # the bias in the other order runs the row kernel with y as operand a
    (([1024], [8192, 1024]), ("row_16x256", [1, 0], [1, 1, 1, 8192, 1024], [0] * 6, 2048)),
    # [1, C] + [R, 1]: a varies along the columns only, b along the rows only
    (([1, 256], [16, 1]), ("outer_16x256", [0, 1], [1, 1, 1, 16, 256], [0] * 6, 1)),
    # the encoder's mask: (8, 8*128, 128), y strides (128, 0, 1): rows of 128 columns
    (([8, 8, 128, 128], [8, 1, 1, 128]), ("row_128x32", [0, 1], [1, 1, 8, 1024, 128],
                                          [0, 0, 131072, 0, 0, 128], 8 * 8 * 4)),
    # the NCHW patch grid bias: (8, 512, 128), y strides (0, 1, 0)
    (([8, 512, 8, 16], [512, 1, 1]), ("col_128x32", [0, 1], [1, 1, 8, 512, 128],
                                      [0, 0, 65536, 0, 0, 0], 8 * 4 * 4)),
]


@pytest.mark.parametrize("shapes,expected", HAND_WORKED)
def test_the_oracle_gives_the_launches_worked_out_by_hand(shapes, expected):
    variant, operands, dims, strides, tiles = expected
    got = oracle.expected_launch(*shapes)
    assert (got["variant"], got["operands"], got["dims"], got["strides"], got["tiles"]) == (
        variant, operands, dims, strides, tiles)


def test_the_oracle_on_the_flat_and_scalar_forms():
    assert oracle.expected_launch([8, 56, 56, 256], [8, 56, 56, 256]) == {
        "variant": "flat", "operands": [0, 1], "n": 6422528, "tiled": False, "dims": [],
        "strides": [], "tiles": 1568}
    scalar = oracle.expected_launch([8, 128, 1], [])
    assert (scalar["variant"], scalar["operands"], scalar["n"], scalar["tiles"]) == ("scalar", [0, 1], 1024, 1)
    swapped = oracle.expected_launch([], [5000])
    assert (swapped["variant"], swapped["operands"], swapped["tiles"]) == ("scalar", [1, 0], 2)


def test_the_scenario_names_each_kernel_by_variant_and_dtype(tmp_path):
    path = oracle.write_scenario(str(tmp_path / "scenario.json"))
    with open(path) as f:
        models = {m["name"]: m["nodes"] for m in json.load(f)["models"]}
    assert sorted(models) == sorted(MODELS)
    for nodes in models.values():
        for n in nodes:
            python_name = {"AddCustom": "add_custom", "LeakyReluCustom": "leaky_relu_custom"}[n.get("op", "AddCustom")]
            assert n["launch"]["kernel_name"] == "tf_ge_custom_%s_%s_%s" % (
                python_name, n["launch"]["variant"], n["dtype"])
    encoder = {(n["launch"]["variant"], n["dtype"]) for n in models["transformer_encoder"]}
    assert len(encoder) >= 6 and len({v for v, _ in encoder}) >= 5
    # the Darknet stage: each LeakyReluCustom node its alpha word (the default where it has none)
    darknet = {n["name"]: n["launch"] for n in models["darknet_stage"]}
    assert darknet["block1_conv3_leaky"]["alpha_bits"] == 0x3DCCCCCD
    assert darknet["head_float32"]["alpha_bits"] == 0x3E4CCCCD
    assert darknet["head_bfloat16"]["alpha_bits"] == 0xBF000000
    assert darknet["block0_conv1_bias"]["variant"] == "row_128x32" and "alpha_bits" not in darknet["block0_residual"]
    print("scenario: " + "; ".join(
        "%s %d nodes, variants %s, dtypes %s" % (
            name, len(nodes), sorted({n["launch"]["variant"] for n in nodes}),
            sorted({n["dtype"] for n in nodes})) for name, nodes in sorted(models.items())))


# ---- rule 6: any op of a table, from its record (the generic cases, driver/any_op_tests.cc) ----

def _record(params, attrs=(), block=4096, inputs=("x",)):
    from tf_ge_custom import op_def
    return op_def.OpDefinition(
        type_name="SomeCustom", python_name="some_custom", inputs=inputs, outputs=("y",), type_attr="T",
        dtypes=("float16",), kernel=op_def.KernelSpec(source="some_kernel.py", variants=(
            op_def.KernelVariant("flat", "some_kernel", "equal", (block,), (("BLOCK_SIZE", block),), params),)),
        attrs=attrs)


def _offsets(op):
    slots, size, _ = oracle.flat_layout(op)
    return [(s["role"], s["offset"], s["size"]) for s in slots], size


def test_the_oracle_lays_out_the_flat_variants_of_the_shipped_ops_as_docs_kernel_manifest_does():
    from tf_ge_custom import op_def
    # docs/kernel-manifest.md's 64 bytes of add_kernel: ffts 0, lock 8, workspace 16, x 24,
    # y 32, z 40, n_elements 48, gridX 52, gridY 56, gridZ 60
    assert _offsets(op_def.ADD_CUSTOM) == ([
        ("ffts", 0, 8), ("sync_block_lock", 8, 8), ("workspace", 16, 8), ("input", 24, 8), ("input", 32, 8),
        ("output", 40, 8), ("num_elements", 48, 4), ("grid_x", 52, 4), ("grid_y", 56, 4), ("grid_z", 60, 4)], 64)
    # LeakyReluCustom's: x 24, y 32, n_elements 40, alpha 44 (fp32), the grid from 48, 60 bytes
    # padded to 64 (test_support.cc's LeakyReluArgsJson, written out by hand)
    assert _offsets(op_def.LEAKY_RELU_CUSTOM) == ([
        ("ffts", 0, 8), ("sync_block_lock", 8, 8), ("workspace", 16, 8), ("input", 24, 8), ("output", 32, 8),
        ("num_elements", 40, 4), ("attr", 44, 4), ("grid_x", 48, 4), ("grid_y", 52, 4), ("grid_z", 56, 4)], 64)


def test_the_oracle_aligns_each_word_to_its_size_and_pads_the_struct_to_8_bytes():
    from tf_ge_custom import op_def
    # y = x * x: 24 x, 32 y, 40 n, 44..52 the grid: 56 bytes, no padding
    square = _record(("input:0", "output:0", "num_elements"))
    assert _offsets(square) == ([
        ("ffts", 0, 8), ("sync_block_lock", 8, 8), ("workspace", 16, 8), ("input", 24, 8), ("output", 32, 8),
        ("num_elements", 40, 4), ("grid_x", 44, 4), ("grid_y", 48, 4), ("grid_z", 52, 4)], 56)
    # an int attribute (i64) after the count: 4 bytes of padding before it at 48, the grid at
    # 56..64, 68 bytes padded to 72
    counted = _record(("input:0", "output:0", "num_elements", "attr:k"), (op_def.OpAttr("k", "int", 3),))
    assert _offsets(counted)[0][5:] == [("num_elements", 40, 4), ("attr", 48, 8), ("grid_x", 56, 4),
                                        ("grid_y", 60, 4), ("grid_z", 64, 4)]
    assert _offsets(counted)[1] == 72
    # a pointer after a float attribute moves to the next 8 bytes
    late = _record(("num_elements", "attr:a", "input:0", "output:0"), (op_def.OpAttr("a", "float", 1.0),))
    assert [(r, o) for r, o, _ in _offsets(late)[0][3:6]] == [("num_elements", 24), ("attr", 28), ("input", 32)]


def test_the_oracle_gives_any_ops_words_and_declared_words_worked_out_by_hand():
    from tf_ge_custom import op_def
    op = _record(("input:0", "input:1", "output:0", "num_elements", "attr:a", "attr:k"),
                 (op_def.OpAttr("a", "float", 0.5), op_def.OpAttr("k", "int", 2, minimum=0)),
                 block=2048, inputs=("x", "w"))
    # [3, 5000]: 15000 elements in blocks of 2048 -> 8 programs; float16: 30000 bytes, GE's 512 -> 30208
    got = oracle.expected_flat_launch(op, [3, 5000], "float16", [-0.375, 7])
    # -0.375 = -1.5 x 2^-2: sign 1, exponent 125, mantissa 0x400000 -> 0xBEC00000; k 7
    assert got["words"] == [[0, 8, "ffts"], [8, 8, 0], [16, 8, 0], [24, 8, "input:0"], [32, 8, "input:1"],
                            [40, 8, "output:0"], [48, 4, 15000], [52, 4, 0xBEC00000], [56, 8, 7],
                            [64, 4, "programs"], [68, 4, 1], [72, 4, 1]]
    assert (got["size"], got["n"], got["tiles"], got["output_bytes"]) == (80, 15000, 8, 30208)
    assert got["descs"] == ["c", "c", "c", "input:0", "input:1", "output:0", "c", "c", "c", "c"]
    assert got["kernel_name"] == "tf_ge_custom_some_custom_flat_float16"
    assert got["attrs"] == [{"type": "float", "value": -0.375}, {"type": "int", "value": 7}]
    # without attributes on the node: the defaults, 0.5 = 0x3F000000 and 2
    plain = oracle.expected_flat_launch(op, [4097], "float16")
    assert plain["attrs"] is None and plain["words"][7:9] == [[52, 4, 0x3F000000], [56, 8, 2]]
    assert plain["tiles"] == 3
    # a negative int as its 64-bit two's complement
    assert oracle.expected_flat_launch(op, [1], "float16", [1.0, -3])["words"][8] == [56, 8, 2 ** 64 - 3]


def test_the_op_table_scenario_covers_every_op_and_dtype_of_its_op_def(tmp_path):
    from tf_ge_custom import op_def
    path = oracle.write_op_scenario(str(tmp_path / "ops.json"), op_def.__file__)
    with open(path) as f:
        ops = json.load(f)["ops"]
    assert [o["type"] for o in ops] == [o.type_name for o in op_def.OPS]
    for o, record in zip(ops, op_def.OPS):
        assert sorted({c["dtype"] for c in o["cases"]}) == sorted(record.dtypes)
        assert sorted(o["dtypes"] + o["refused_dtypes"]) == sorted(op_def.DTYPES)
        # each dtype once with the node's attributes (when the op has any) and once without
        assert len(o["cases"]) == 2 * len(record.dtypes)
        carried = [c["attrs"] for c in o["cases"] if c["attrs"] is not None]
        assert len(carried) == (len(record.dtypes) if record.attrs else 0)
        for attrs in carried:  # never the default: the node's own value must reach the word
            assert all(a["value"] != d.default for a, d in zip(attrs, record.attrs))
