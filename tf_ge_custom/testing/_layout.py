"""A kernel's host-argument layout from its record alone: what ``opcheck`` holds each kernel's
signature and each shipped manifest entry to, and what the tests and doubles use for a set of
any op without the compiler (tests/fixtures/record_layout.py loads this file by path).

The packing rule of docs/kernel-manifest.md ("Host-argument layout"), restated here by hand:
the three leading words (ffts, sync_block_lock, workspace: 8 bytes each), then the variant's
parameters in order (an input or output pointer 8 bytes; a count, extent or stride a signed
32-bit word; an attribute 4 bytes for a float, 8 for an int, each at a multiple of its size),
then the grid's three 32-bit words; the block is the end of the last slot rounded up to 8.
tests/kernels/test_record_layout.py holds it to the hand-computed layouts of AddCustom's and
LeakyReluCustom's kernels. No import: it loads by path anywhere, Python 3.7 syntax."""

LEADING = (("ffts_base_address", "ffts"), ("sync_block_lock", "sync_block_lock"),
           ("workspace", "workspace"))
# an attribute's word, by its type (op_def.ATTR_TYPES): binary32 or int64
ATTR_SIZES = {"float": 4, "int": 8}


def _slot(name, role, offset, size, **fields):
    return dict({"name": name, "role": role, "offset": offset, "size": size}, **fields)


def _param_slot(param, attr_types):
    """(name, role, size, extra fields) of one parameter slot of KernelVariant.params."""
    kind, _, rest = param.partition(":")
    if kind in ("input", "output"):
        return "%s%s_ptr" % (kind, rest), kind, 8, {"index": int(rest)}
    if kind == "num_elements":
        return "n_elements", kind, 4, {}
    if kind == "dim":
        return "d%s" % rest, kind, 4, {"dim": int(rest)}
    if kind == "input_stride":
        operand, dim = rest.split(":")
        return "stride%s_%s" % (operand, dim), kind, 4, {"index": int(operand), "dim": int(dim)}
    if kind == "attr":
        names = [name for name, _ in attr_types]
        if rest not in names:
            raise ValueError("parameter %r names no attribute of the op; its attributes are %s"
                             % (param, ", ".join(names) or "none"))
        index = names.index(rest)
        return rest, kind, ATTR_SIZES[attr_types[index][1]], {"index": index}
    raise ValueError("unknown kernel parameter %r; known: input:<i>, output:<i>, num_elements, "
                     "dim:<k>, input_stride:<i>:<k>, attr:<name>" % param)


def layout(params, attr_types=()):
    """The ``args`` of a manifest entry for a variant with these ``params``
    (KernelVariant.params) of an op with these attributes (``(name, type)`` pairs, in order)."""
    slots, offset = [], 0
    for name, role in LEADING:
        slots.append(_slot(name, role, offset, 8))
        offset += 8
    for param in params:
        name, role, size, fields = _param_slot(param, tuple(attr_types))
        offset = -(-offset // size) * size
        slots.append(_slot(name, role, offset, size, **fields))
        offset += size
    for name, role in (("gridX", "grid_x"), ("gridY", "grid_y"), ("gridZ", "grid_z")):
        slots.append(_slot(name, role, offset, 4))
        offset += 4
    return {"size": -(-offset // 8) * 8, "has_ffts": True, "slots": slots}


def layout_of(op, variant):
    """layout() of ``variant`` (a KernelVariant) of ``op`` (an OpDefinition)."""
    return layout(variant.params, [(a.name, a.type) for a in op.attrs])
