"""The whole-model scenario of GE in the loop: its node tables and its oracle.

tests/ge/fixtures/*.nodes.json are the AddCustom nodes of ResNet50, MobileNetV2 and a
mixed-precision Transformer encoder block, as TensorFlow reads them from the frozen graphs the
package's own export writes (tests/ge/whole_models.py). GE in the loop drives every node of
them through GE's code (ge_ops/ge_in_loop/driver/whole_model_tests.cc, run for each tag and
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
MODELS = ("mobilenet_v2", "resnet50", "transformer_encoder")


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
    TensorFlow's shape inference on the frozen graph): every table unchanged."""
    proc = subprocess.run([sys.executable, str(HERE / "whole_models.py"), str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for model in MODELS:
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
            assert n["launch"]["kernel_name"] == "tf_ge_custom_add_custom_%s_%s" % (
                n["launch"]["variant"], n["dtype"])
    encoder = {(n["launch"]["variant"], n["dtype"]) for n in models["transformer_encoder"]}
    assert len(encoder) >= 6 and len({v for v, _ in encoder}) >= 5
    print("scenario: " + "; ".join(
        "%s %d nodes, variants %s, dtypes %s" % (
            name, len(nodes), sorted({n["launch"]["variant"] for n in nodes}),
            sorted({n["dtype"] for n in nodes})) for name, nodes in sorted(models.items())))
