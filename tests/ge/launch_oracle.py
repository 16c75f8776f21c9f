"""What the GE library must launch for one node, worked out here from the rules of
docs/kernels.md ("Broadcasting", "The kernels"), not with the library's code: the kernel
variant, which input each kernel operand reads, and the values of the launch's arguments.

    python tests/ge/launch_oracle.py SCENARIO.json      # from tests/ge/fixtures/*.nodes.json

writes the whole-model scenario the GE-in-the-loop program's WholeModel cases read
(``TF_GE_IN_LOOP_MODELS``; ge_ops/ge_in_loop/driver/whole_model_tests.cc): every node of every
node table with its expected launch. Pure Python, no TensorFlow.

The rules, restated:
1. The output shape is the inputs' right-aligned broadcast. Output dimensions of size 1 are
   dropped; neighbours along which each input either varies or broadcasts alike are merged.
   Each input's element stride along a merged dimension is its row-major stride over the
   dimensions it varies along, 0 where it broadcasts.
2. One dimension in which both vary: the flat kernel over n elements (``equal``); one in which
   one input broadcasts: ``scalar``. Otherwise the last two dimensions are a plane of rows and
   columns: ``row`` when the second operand varies along the columns, else ``col`` when the
   first varies along the rows, else ``outer``. The inputs are swapped (addition commutes)
   when that puts the broadcasting operand second: when the first input does not vary along
   the columns, or varies along the columns but not the rows while the second varies along
   the columns.
3. A tiled plane takes the widest tile (1 x 4096, then 16 x 256, then 128 x 32) unless the
   next narrower one needs fewer than 3/4 of the tiles of the one taken so far.
4. The launch frame of a tiled kernel is the merged shape padded with leading 1s to five
   dimensions; each operand's strides along the three outer ones are arguments. The programs
   launched are the blocks (flat: 4096 elements each) or tiles, capped by the caller.
5. LeakyReluCustom (one input, no broadcasting): its flat kernel over the input's elements,
   kernel operand 0 reading input 0, with one more argument: alpha as its IEEE 754 binary32
   bits, the node's own value or, for a node without one, the default 0.2 (as
   ``tf.nn.leaky_relu``'s).
"""
import glob
import json
import os
import struct
import sys

FLAT_BLOCK = 4096
TILES = ((1, 4096), (16, 256), (128, 32))  # widest first
FRAME_RANK = 5
DEFAULT_ALPHA = 0.2  # tf.nn.leaky_relu's default, and LeakyReluCustom's
PYTHON_NAMES = {"AddCustom": "add_custom", "LeakyReluCustom": "leaky_relu_custom"}
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")


def _ceil(a, b):
    return -(-a // b)


def reduce(x, y):
    """(dims, x strides, y strides) of the merged broadcast of shapes x and y (rule 1)."""
    rank = max(len(x), len(y))
    xs = [1] * (rank - len(x)) + list(x)
    ys = [1] * (rank - len(y)) + list(y)
    dims, varies = [], []
    for a, b in zip(xs, ys):
        assert a == b or 1 in (a, b), (x, y)
        extent = max(a, b) if 1 in (a, b) else a
        if extent == 1:
            continue
        flags = (a != 1, b != 1)
        if varies and varies[-1] == flags:
            dims[-1] *= extent
        else:
            dims.append(extent)
            varies.append(flags)
    strides = []
    for i in (0, 1):
        s, running = [0] * len(dims), 1
        for k in reversed(range(len(dims))):
            if varies[k][i]:
                s[k], running = running, running * dims[k]
        strides.append(s)
    return dims, strides[0], strides[1]


def expected_launch(x, y):
    """The launch of one node with input shapes x and y: a dict with ``variant``,
    ``operands`` (the op input each kernel operand reads), ``tiled``, ``n`` (elements),
    ``dims`` and ``strides`` (tiled: 5 extents; a's then b's 3 outer strides) and ``tiles``
    (the programs before any cap)."""
    dims, sx, sy = reduce(x, y)
    n = 1
    for d in dims:
        n *= d
    rank = len(dims)
    assert 0 < rank <= FRAME_RANK and n > 0, (x, y)
    swap = sx[-1] == 0 or (rank >= 2 and sy[-1] != 0 and sx[-2] == 0)
    operands = [1, 0] if swap else [0, 1]
    sa, sb = (sy, sx) if swap else (sx, sy)
    out = {"operands": operands, "n": n}
    if rank == 1:
        variant = "flat" if sb[0] != 0 else "scalar"
        out.update(variant=variant, tiled=False, dims=[], strides=[], tiles=_ceil(n, FLAT_BLOCK))
        return out
    pattern = "row" if sb[-1] != 0 else ("col" if sa[-2] != 0 else "outer")
    rows, cols = dims[-2], dims[-1]
    taken = TILES[0]
    for tile in TILES[1:]:
        if 4 * _ceil(rows, tile[0]) * _ceil(cols, tile[1]) < 3 * _ceil(rows, taken[0]) * _ceil(cols, taken[1]):
            taken = tile
    pad = FRAME_RANK - rank
    frame = [1] * pad + dims
    a_strides, b_strides = [0] * pad + sa, [0] * pad + sb
    outer = 1
    for d in frame[:3]:
        outer *= d
    out.update(variant="%s_%dx%d" % (pattern, taken[0], taken[1]), tiled=True, dims=frame,
               strides=a_strides[:3] + b_strides[:3],
               tiles=outer * _ceil(rows, taken[0]) * _ceil(cols, taken[1]))
    return out


def float32_bits(value):
    """The IEEE 754 binary32 bits of value rounded to float32, as an unsigned integer."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def expected_unary_launch(x, alpha=None):
    """The launch of a LeakyReluCustom node with input shape x and attribute alpha (None: the
    node carries none): rule 5."""
    n = 1
    for d in x:
        n *= d
    assert n > 0, x
    return {"variant": "flat", "operands": [0], "n": n, "tiled": False, "dims": [], "strides": [],
            "tiles": _ceil(n, FLAT_BLOCK),
            "alpha_bits": float32_bits(DEFAULT_ALPHA if alpha is None else alpha)}


def entry_name(variant, dtype, op="AddCustom"):
    # each kernel's own symbol (docs/kernel-manifest.md, "Entry names")
    return "tf_ge_custom_%s_%s_%s" % (PYTHON_NAMES[op], variant, dtype)


def node_tables():
    """{model: node table} of tests/ge/fixtures/*.nodes.json."""
    tables = {}
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*.nodes.json"))):
        with open(path) as f:
            table = json.load(f)
        tables[table["model"]] = table
    return tables


def scenario():
    """The scenario document: every model's nodes with their expected launches."""
    models = []
    for name, table in sorted(node_tables().items()):
        nodes = []
        for node in table["nodes"]:
            op = node.get("op", "AddCustom")
            if op == "LeakyReluCustom":
                launch = expected_unary_launch(node["x"], node.get("alpha"))
            else:
                launch = expected_launch(node["x"], node["y"])
            launch["kernel_name"] = entry_name(launch["variant"], node["dtype"], op)
            nodes.append(dict(node, launch=launch))
        models.append({"name": name, "nodes": nodes})
    return {"models": models}


def write_scenario(path):
    with open(path, "w") as f:
        json.dump(scenario(), f, indent=1, sort_keys=True)
    return path


if __name__ == "__main__":
    write_scenario(sys.argv[1])
