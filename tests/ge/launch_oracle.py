"""What the GE library must launch for one node, worked out here from the rules of
docs/kernels.md ("Broadcasting", "The kernels"), not with the library's code: the kernel
variant, which input each kernel operand reads, and the values of the launch's arguments.

    python tests/ge/launch_oracle.py SCENARIO.json      # from tests/ge/fixtures/*.nodes.json
    python tests/ge/launch_oracle.py OPS.json OP_DEF.py # rule 6: every op of an op_def.py

writes the whole-model scenario the GE-in-the-loop program's WholeModel cases read
(``TF_GE_IN_LOOP_MODELS``; tests/native/ge_in_loop/driver/whole_model_tests.cc): every node of every
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
6. Any op of a table, from its record alone (the generic cases, driver/any_op_tests.cc,
   ``TF_GE_IN_LOOP_OPS``): its one flat variant (pattern ``equal``) over the n elements of
   its inputs, which all have the node's shape. The host arguments are packed as
   triton-ascend packs an entry: ffts, lock and workspace (8 bytes each), then the variant's
   parameters in the record's order (an input or output address: 8 bytes; num_elements: an
   i32; a float attribute: its binary32 bits; an int attribute: an i64), then gridX/Y/Z (4
   bytes each), each at an offset aligned to its own size and the whole rounded up to 8
   bytes. The programs are n over the variant's block, rounded up, capped by the caller; the
   output's bytes are rounded up to GE's 512. A node carries each attribute at a value other
   than its default inside its range, or none (then the defaults).
"""
import glob
import importlib.util
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


# ---- rule 6: any op of a table, from its record ----

# The Triton word of each kind of parameter (rule 6), restated here: the struct code and bytes.
POINTER_BYTES = 8
NUM_ELEMENTS_BYTES = 4  # i32
ATTR_WORDS = {"float": ("<f", 4), "int": ("<q", 8)}  # fp32, i64
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4}
GE_ALIGNMENT = 512  # GE's MallocOutputTensor rounds an output's bytes up to this
# The shapes each dtype of an op runs at: several blocks and a partial one, then one block and
# one element more (every input of the node has the shape).
OP_SHAPES = ([3, 5000], [4097])
# A value other than the default for a node to carry, per attribute type: the first of these
# that differs from the default and lies within the attribute's range (floats exact in binary32).
ATTR_VALUES = {"float": (-0.375, 1.5, 3.0), "int": (-3, 7, 100)}


def load_op_def(path):
    """The op definition module at path (an op_def.py with kernel_contract.py beside it), loaded
    by path as ge_ops/codegen loads it: what the harness's op table was generated from."""
    spec = importlib.util.spec_from_file_location("_tf_ge_custom_oracle_op_def", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat_layout(op):
    """(slots, size) of the flat variant's host arguments (rule 6): each slot a dict with its
    ``param`` ("ffts", "sync_block_lock", "workspace", the record's parameter, "grid_x", ...),
    ``role``, ``index`` (an operand or an attribute's position; -1 otherwise), ``offset`` and
    ``size``."""
    variant = [v for v in op.kernel.variants if v.pattern == "equal"]
    if len(variant) != 1:
        raise ValueError("%s has %d variants of pattern equal; the oracle knows an op by its one "
                         "flat variant" % (op.type_name, len(variant)))
    attrs = [a.name for a in op.attrs]
    entries = [("ffts", "ffts", -1, POINTER_BYTES), ("sync_block_lock", "sync_block_lock", -1, POINTER_BYTES),
               ("workspace", "workspace", -1, POINTER_BYTES)]
    for param in variant[0].params:
        kind, _, rest = param.partition(":")
        if kind in ("input", "output"):
            entries.append((param, kind, int(rest), POINTER_BYTES))
        elif kind == "num_elements":
            entries.append((param, kind, -1, NUM_ELEMENTS_BYTES))
        elif kind == "attr":
            entries.append((param, kind, attrs.index(rest), ATTR_WORDS[op.attrs[attrs.index(rest)].type][1]))
        else:
            raise ValueError("%s's flat variant has the parameter %s; the oracle knows input, output, "
                             "num_elements and attr" % (op.type_name, param))
    entries += [("grid_x", "grid_x", -1, 4), ("grid_y", "grid_y", -1, 4), ("grid_z", "grid_z", -1, 4)]
    slots, offset = [], 0
    for param, role, index, size in entries:
        offset = _ceil(offset, size) * size
        slots.append({"param": param, "role": role, "index": index, "offset": offset, "size": size})
        offset += size
    return slots, _ceil(offset, 8) * 8, variant[0]


def _attr_value(attr):
    for value in ATTR_VALUES[attr.type]:
        if value != attr.default and (attr.minimum is None or value >= attr.minimum) and (
                attr.maximum is None or value <= attr.maximum):
            return value
    raise ValueError("no value for %s other than its default within its range" % attr.name)


def _attr_word(attr, value):
    code, size = ATTR_WORDS[attr.type]
    if attr.type == "float":
        value = float(value)
    return int.from_bytes(struct.pack(code, value), "little"), size


def expected_flat_launch(op, shape, dtype, attrs=None):
    """The launch of a node of op (a record) whose inputs all have ``shape``, of ``dtype``, with
    the attribute values ``attrs`` (a list in the record's order; None: the node carries none):
    rule 6. ``words``: [offset, size, value], value an integer, or "input:<i>" / "output:<i>" /
    "ffts" / "programs" for what the call decides (the addresses, the device's ffts word, the
    programs once capped); ``descs``: per 8-byte word of a declared launch, the input or output
    it holds or "c" (a value)."""
    slots, size, variant = flat_layout(op)
    n = 1
    for d in shape:
        n *= d
    block = 1
    for b in variant.block:
        block *= b
    values = [a.default for a in op.attrs] if attrs is None else list(attrs)
    words, descs = [], []
    for s in slots:
        if s["role"] in ("input", "output"):
            value = "%s:%d" % (s["role"], s["index"])
        elif s["role"] == "ffts":
            value = "ffts"
        elif s["role"] == "num_elements":
            value = n
        elif s["role"] == "attr":
            value = _attr_word(op.attrs[s["index"]], values[s["index"]])[0]
        elif s["role"] == "grid_x":
            value = "programs"
        elif s["role"] in ("grid_y", "grid_z"):
            value = 1
        else:  # the lock and the workspace: none in these kernels
            value = 0
        words.append([s["offset"], s["size"], value])
    pointers = dict((s["offset"], "%s:%d" % (s["role"], s["index"])) for s in slots if s["role"] in ("input", "output"))
    descs = [pointers.get(at, "c") for at in range(0, size, 8)]
    python_name = op.python_name
    return {"shape": list(shape), "dtype": dtype, "n": n, "tiles": _ceil(n, block),
            "output_bytes": _ceil(n * ITEMSIZE[dtype], GE_ALIGNMENT) * GE_ALIGNMENT,
            "attrs": None if attrs is None else [{"type": a.type, "value": v} for a, v in zip(op.attrs, values)],
            "kernel_name": "tf_ge_custom_%s_%s_%s" % (python_name, variant.name, dtype),
            "size": size, "words": words, "descs": descs}


def op_scenario(op_def_path):
    """The generic cases' scenario: for every op of the table at op_def_path, its kernels'
    facts (what the harness writes its kernel set from: the flat variant's parameters as slots
    of a role, an index and a size) and per dtype its launches (rule 6), with the node's
    attributes at other values and, once, without any."""
    module = load_op_def(op_def_path)
    ops = []
    for op in module.OPS:
        slots, size, variant = flat_layout(op)
        cases = []
        for dtype in op.dtypes:
            carried = [_attr_value(a) for a in op.attrs] if op.attrs else None
            cases.append(expected_flat_launch(op, OP_SHAPES[0], dtype, carried))
            cases.append(expected_flat_launch(op, OP_SHAPES[1], dtype, None))
        ops.append({"type": op.type_name, "python_name": op.python_name, "inputs": len(op.inputs),
                    "outputs": len(op.outputs), "dtypes": list(op.dtypes),
                    "refused_dtypes": [d for d in sorted(ITEMSIZE) if d not in op.dtypes],
                    "variant": variant.name, "block": list(variant.block),
                    "params": [dict((k, s[k]) for k in ("param", "role", "index", "size"))
                               for s in slots[3:-3]],
                    "cases": cases})
    return {"op_def": os.path.abspath(op_def_path), "ops": ops}


def write_op_scenario(path, op_def_path):
    with open(path, "w") as f:
        json.dump(op_scenario(op_def_path), f, indent=1, sort_keys=True)
    return path


if __name__ == "__main__":
    if len(sys.argv) == 3:  # SCENARIO.json OP_DEF.py: the generic cases' scenario (rule 6)
        write_op_scenario(sys.argv[1], sys.argv[2])
    else:
        write_scenario(sys.argv[1])
