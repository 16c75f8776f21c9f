"""Write the C++ sources that restate tf_ge_custom/op_def.py and kernel_contract.py, so
nothing in ge_ops/ repeats them.

    generate_op_sources.py --op-def tf_ge_custom/op_def.py --out DIR
                           [--contract tf_ge_custom/kernel_contract.py]

writes into DIR:
  op_proto/<python_name>.h  the GE ``REG_OP`` proto of each op (installed into
                            opp/op_graph/include/, compiled into the GE library)
  op_definitions.inc        the CANN-free core's table of ops (names, dtypes, kernel facts)
  ge_ops.inc                X-macros over op types and GE dtype enumerators for the CANN side
  op_protos.inc             the #include of every op_proto/<python_name>.h (cann/op_proto.cc)
  kernel_contract.h         the manifest format and its field rules, launch limits, slot
                            roles and the mix_mode -> load magic rule (default: kernel_contract.py beside
                            the op definition)

Each file is replaced only when its text changes, whole (tf_ge_custom/_atomic_files.py), so
CMake does not rebuild on every configure. Python 3.7 syntax: setup.py runs this on any host.
"""
import argparse
import importlib.util
import os
import sys


def load_module(path, name):
    # op_def.py and kernel_contract.py are pure Python with no package-relative import: load
    # them by path so that the generator never imports the tf_ge_custom package (and so
    # never TensorFlow).
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_op_def(path):
    return load_module(path, "_tf_ge_custom_op_def")


def default_contract_path(op_def_path):
    return os.path.join(os.path.dirname(os.path.abspath(op_def_path)), "kernel_contract.py")


def c_string(text):
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            raise ValueError("unexpected character %r in an op definition name" % ch)
    return '"%s"' % "".join(out)


HEADER = "// Generated from tf_ge_custom/op_def.py by ge_ops/codegen/generate_op_sources.py. Do not edit.\n"


def op_proto_header(op):
    guard = "TF_GE_CUSTOM_OP_PROTO_%s_H_" % op.python_name.upper()
    types = "TensorType({%s})" % ", ".join(d.ge for d in op.dtype_records())
    lines = [HEADER.rstrip("\n"),
             "// The GE operator prototype of %s, for the file-based TensorFlow parse (atc --framework=3,"
             % op.type_name,
             "// aclgrphParseTensorFlow), which does not generate one from the TF OpDef.",
             "#ifndef %s" % guard, "#define %s" % guard, "",
             '#include "graph/operator_reg.h"', "", "namespace ge {",
             "REG_OP(%s)" % op.type_name]
    for name in op.inputs:
        lines.append("    .INPUT(%s, %s)" % (name, types))
    for name in op.outputs:
        lines.append("    .OUTPUT(%s, %s)" % (name, types))
    for attr in getattr(op, "attrs", ()):
        # ATTR, not REQUIRED_ATTR: a TF node without the attr gets the default, as in TF
        lines.append("    .ATTR(%s, %s, %s)" % (attr.name, attr.type_record().ge,
                                               attr_literal(attr, attr.default)))
    lines += ["    .OP_END_FACTORY_REG(%s);" % op.type_name, "}  // namespace ge", "",
              "#endif  // %s" % guard, ""]
    return "\n".join(lines)


def _attr_row(attr):
    """An AttrDefinition initializer: name, type, word bytes, default, and where the record
    bounds the attribute, its bounds and their words (the TF op's: "in [0.0, 1.0]")."""
    row = [c_string(attr.name), c_string(attr.type), str(attr.type_record().word_bytes),
           attr_literal(attr, attr.default)]
    minimum, maximum = getattr(attr, "minimum", None), getattr(attr, "maximum", None)
    if minimum is not None or maximum is not None:
        if minimum is not None and maximum is not None:
            words = "in [%r, %r]" % (minimum, maximum)
        else:
            words = (">= %r" % (minimum,)) if minimum is not None else ("<= %r" % (maximum,))
        row += [_bool(minimum is not None), attr_literal(attr, 0 if minimum is None else minimum),
                _bool(maximum is not None), attr_literal(attr, 0 if maximum is None else maximum),
                c_string(words)]
    return "{%s}" % ", ".join(row)


def attr_literal(attr, value):
    """``value`` of ``attr`` (an op_def.OpAttr) as a C++ literal: a finite float in the
    notation repr gives (``0.2``), an integer as is."""
    import math

    if attr.type == "float":
        value = float(value)
        if not math.isfinite(value):
            raise ValueError("attribute %s: a default of %r has no C++ literal here; give a "
                             "finite default" % (attr.name, value))
        return repr(value)
    if attr.type == "int":
        value = int(value)
        return str(value) if -2 ** 31 <= value < 2 ** 31 else "INT64_C(%d)" % value
    raise ValueError("attribute %s: unknown type %r" % (attr.name, attr.type))


def _param_slot(contract, param, op=None):
    """``input:1`` / ``dim:3`` / ``input_stride:0:2`` / ``attr:alpha`` -> (role, index, dim),
    -1 when absent; an attr's index is its position in ``op``'s attributes."""
    parts = param.split(":")
    if parts[0] in getattr(contract, "ATTR_ROLES", ()):
        names = [a.name for a in getattr(op, "attrs", ())]
        if len(parts) != 2 or parts[1] not in names:
            raise ValueError("not a kernel parameter role: %r (the op's attributes are %s)"
                             % (param, ", ".join(names) or "none"))
        return parts[0], names.index(parts[1]), -1
    role, numbers = parts[0], [int(p) for p in parts[1:]]
    index = numbers.pop(0) if role in contract.INDEXED_ROLES else -1
    dim = numbers.pop(0) if role in contract.DIM_ROLES else -1
    if role not in contract.ROLES or numbers:
        raise ValueError("not a kernel parameter role: %r" % param)
    return role, index, dim


def op_definitions_inc(module, contract):
    # GE keeps one binary per kernel name in a model: a table whose kernels share an entry
    # name is never generated (op_def.entry_name_problems says which).
    problems = module.entry_name_problems(module.OPS)
    if problems:
        raise ValueError(module.describe_problems(problems))
    lines = [HEADER, "// One initializer per op: see core/include/tf_ge_custom_core/op_definition.h.\n"]
    for op in module.OPS:
        dtypes = ", ".join(
            "{%s, %s, %d}" % (c_string(d.name), c_string(d.ge), d.itemsize)
            for d in op.dtype_records())
        variants = []
        for v in op.kernel.variants:
            if v.pattern not in contract.PATTERNS:
                raise ValueError("variant %s: unknown pattern %r" % (v.name, v.pattern))
            params = ", ".join("{SlotRole::%s, %d, %d}" % ((camel(r),) + (i, k)) for r, i, k in
                               (_param_slot(contract, p, op) for p in v.params))
            variants.append("{%s, Pattern::%s, {%s}, {%s}, {%s}, {%s}, %s}" % (
                c_string(v.name), camel(v.pattern),
                ", ".join(str(b) for b in v.block), params,
                ", ".join(c_string(op.binary_name(v.name, d)) for d in op.dtypes),
                ", ".join(c_string(op.entry_name(v.name, d)) for d in op.dtypes),
                c_string(v.function)))
        attrs = ", ".join(_attr_row(a) for a in getattr(op, "attrs", ()))
        lines.append("{%s, {%s}, {%s}, {%s},\n {%s},\n %s, %s, {%s}},\n" % (
            c_string(op.type_name),
            ", ".join(c_string(n) for n in op.inputs),
            ", ".join(c_string(n) for n in op.outputs),
            dtypes, ",\n  ".join(variants), _bool(op.commutative),
            _bool(getattr(op, "broadcasts", False)), attrs))
    return "".join(lines)


def ge_ops_inc(module):
    ops = " ".join("X(%s)" % op.type_name for op in module.OPS)
    dtypes = " ".join("X(%s, %s)" % (d.ge, c_string(d.name)) for d in module.DTYPES.values())
    return "".join([
        HEADER,
        "// X(OpType) for every op the package ships.\n",
        "#define TF_GE_CUSTOM_FOR_EACH_OP(X) %s\n" % ops,
        "// X(ge::DataType enumerator, dtype name) for every dtype the op definition knows.\n",
        "#define TF_GE_CUSTOM_FOR_EACH_GE_DTYPE(X) %s\n" % dtypes,
    ])


def op_protos_inc(module):
    return "".join([HEADER, "// The REG_OP header of every op the package ships (op_proto/).\n"]
                   + ['#include "%s.h"\n' % op.python_name for op in module.OPS])


def camel(name):
    """``sync_block_lock`` / ``ELF_VECTOR_CORE`` -> ``kSyncBlockLock`` / ``kElfVectorCore``."""
    return "k" + "".join(part.capitalize() for part in name.lower().split("_"))


def kernel_contract_h(contract):
    roles = contract.ROLES
    magics = list(dict.fromkeys(contract.MAGIC_BY_MIX_MODE.values()))
    for name in list(roles) + magics:
        if not name.replace("_", "").isalnum():
            raise ValueError("unexpected character in contract name %r" % name)
    role_rows = "".join(
        "    {SlotRole::%s, %s, %s, %s, %s, %s},\n" % (
            camel(r), c_string(r), _bool(r in contract.POINTER_ROLES),
            _bool(r in contract.SINGLE_ROLES), _bool(r in contract.INDEXED_ROLES),
            _bool(r in contract.DIM_ROLES))
        for r in roles)
    for name in contract.PATTERNS:
        if not name.isalnum():
            raise ValueError("unexpected character in pattern name %r" % name)
    if set(contract.ENTRY_SUFFIX_BY_MIX_MODE) != set(contract.MAGIC_BY_MIX_MODE):
        raise ValueError("ENTRY_SUFFIX_BY_MIX_MODE and MAGIC_BY_MIX_MODE name different mix modes")
    mix_rows = "".join("    {%s, BinaryMagic::%s, %s},\n" % (
        c_string(mode), camel(magic), c_string(contract.ENTRY_SUFFIX_BY_MIX_MODE[mode]))
        for mode, magic in contract.MAGIC_BY_MIX_MODE.items())
    field_rows = "".join(manifest_field_rows(contract))
    return "".join([
        HEADER.replace("op_def.py", "kernel_contract.py"),
        "// The kernel contract shared with the Python side: see that file for each value.\n",
        "#ifndef TF_GE_CUSTOM_KERNEL_CONTRACT_H_\n#define TF_GE_CUSTOM_KERNEL_CONTRACT_H_\n\n",
        "#include <cstdint>\n\nnamespace tf_ge_custom {\nnamespace core {\n\n",
        "constexpr const char *kManifestFormat = %s;\n" % c_string(contract.MANIFEST_FORMAT),
        "constexpr int64_t kManifestVersion = %d;\n" % contract.MANIFEST_VERSION,
        "constexpr const char *kManifestFileName = %s;\n" % c_string(contract.MANIFEST_NAME),
        "constexpr int64_t kEntryNaming = %d;\n" % contract.ENTRY_NAMING,
        "constexpr int64_t kMaxEntryName = %d;\n" % contract.MAX_ENTRY_NAME,
        "constexpr int64_t kMaxGrid = %d;\n" % contract.MAX_GRID,
        "constexpr int64_t kIndexLimit = INT64_C(%d);\n" % contract.INDEX_LIMIT,
        "constexpr int64_t kMaxBroadcastRank = %d;\n\n" % contract.MAX_BROADCAST_RANK,
        "// What a kernel variant computes over the reduced broadcast shape.\n",
        "enum class Pattern { %s };\n" % ", ".join(camel(p) for p in contract.PATTERNS),
        "constexpr const char *kPatternNames[] = {%s};\n\n" % ", ".join(
            c_string(p) for p in contract.PATTERNS),
        "enum class SlotRole { %s };\n" % ", ".join(camel(r) for r in roles),
        "struct SlotRoleInfo {\n  SlotRole role;\n  const char *name;\n"
        "  bool pointer;  // 8 bytes\n  bool single;   // exactly once in every layout\n"
        "  bool indexed;  // carries an \"index\": the kernel operand\n"
        "  bool has_dim;  // carries a \"dim\": the dimension of the launch's frame\n};\n",
        "constexpr SlotRoleInfo kSlotRoles[] = {\n%s};\n\n" % role_rows,
        "// X(enumerator, ACL_RT_BINARY_MAGIC_ suffix) for every load magic.\n",
        "#define TF_GE_CUSTOM_FOR_EACH_BINARY_MAGIC(X) %s\n" % " ".join(
            "X(%s, %s)" % (camel(m), m) for m in magics),
        "enum class BinaryMagic { %s };\n" % ", ".join(camel(m) for m in magics),
        "struct MixModeInfo {\n  const char *mix_mode;\n  BinaryMagic magic;\n"
        "  const char *entry_suffix;  // the runtime also finds the entry under entry + this\n};\n",
        "constexpr MixModeInfo kMixModes[] = {\n%s};\n\n" % mix_rows,
        "// The manifest's keys and JSON kinds (MANIFEST_FIELDS): what both readers refuse.\n",
        "enum class FieldKind { %s };\n" % ", ".join(camel(k) for k in contract.MANIFEST_FIELD_KINDS),
        "enum class FieldPresence { %s };\n" % ", ".join(
            camel(p) for p in contract.MANIFEST_FIELD_PRESENCE),
        "struct ManifestField {\n  const char *object;  // where the key lives\n  const char *key;\n"
        "  FieldKind kind;\n  FieldPresence presence;\n"
        "  const char *holds;  // an object's (or array of objects') object name, else \"\"\n};\n",
        "constexpr ManifestField kManifestFields[] = {\n%s};\n\n" % field_rows,
        "}  // namespace core\n}  // namespace tf_ge_custom\n\n",
        "#endif  // TF_GE_CUSTOM_KERNEL_CONTRACT_H_\n",
    ])


def manifest_field_rows(contract):
    """One C++ initializer per rule of ``contract.MANIFEST_FIELDS``, each checked first."""
    objects = set(rule[0] for rule in contract.MANIFEST_FIELDS)
    rows = []
    for rule in contract.MANIFEST_FIELDS:
        if len(rule) != 5:
            raise ValueError("a MANIFEST_FIELDS rule is (object, key, kind, presence, holds), found %r"
                             % (rule,))
        obj, key, kind, presence, holds = rule
        for name in (obj, key) + ((holds,) if holds else ()):
            if not name.replace("_", "").isalnum():
                raise ValueError("unexpected character in manifest field name %r" % name)
        if kind not in contract.MANIFEST_FIELD_KINDS:
            raise ValueError("manifest field %s.%s: kind %r is none of %s"
                             % (obj, key, kind, ", ".join(contract.MANIFEST_FIELD_KINDS)))
        if presence not in contract.MANIFEST_FIELD_PRESENCE:
            raise ValueError("manifest field %s.%s: presence %r is none of %s"
                             % (obj, key, presence, ", ".join(contract.MANIFEST_FIELD_PRESENCE)))
        if holds and (kind not in ("object", "array") or holds not in objects):
            raise ValueError("manifest field %s.%s holds %r: only an object or array may hold one "
                             "of the objects the rules name" % (obj, key, holds))
        rows.append("    {%s, %s, FieldKind::%s, FieldPresence::%s, %s},\n" % (
            c_string(obj), c_string(key), camel(kind), camel(presence), c_string(holds)))
    return rows


def _bool(value):
    return "true" if value else "false"


# The package's one atomic writer (tf_ge_custom/_atomic_files.py), loaded by path like the
# op definition: write_text_if_changed replaces a file whole, and only when its text changes.
_ATOMIC_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                             "tf_ge_custom", "_atomic_files.py")


def write_if_changed(path, text):
    atomic_files = load_module(_ATOMIC_FILES, "_tf_ge_custom_atomic_files")
    return atomic_files.write_text_if_changed(path, text)


def check_attrs_have_defaults(module):
    """Refuse, in one line, an op attribute GE would take as REQUIRED_ATTR (one marked
    ``required``, or one without a default). Where a node lacks a required IR attribute GE
    keeps none of the node's attributes (hicann/ge bg_ir_attrs.cc, GetAllIrAttrs), so the op
    would run on the record's defaults without a word; every attribute is an ``ATTR`` with its
    default instead, as TensorFlow gives it."""
    for op in module.OPS:
        for attr in getattr(op, "attrs", ()):
            if getattr(attr, "required", False) or attr.default is None:
                raise ValueError(
                    "op %s: attribute %s has no default (a REQUIRED_ATTR); GE drops every attribute "
                    "of a node that lacks a required one, so the op would silently run on defaults: "
                    "give %s a default in tf_ge_custom/op_def.py (OpAttr(name, type, default))"
                    % (op.type_name, attr.name, attr.name))


def generate(op_def_path, out_dir, contract_path=None):
    module = load_op_def(op_def_path)
    check_attrs_have_defaults(module)
    contract = load_module(contract_path or default_contract_path(op_def_path),
                           "_tf_ge_custom_kernel_contract")
    files = {os.path.join(out_dir, "op_definitions.inc"): op_definitions_inc(module, contract),
             os.path.join(out_dir, "ge_ops.inc"): ge_ops_inc(module),
             os.path.join(out_dir, "op_protos.inc"): op_protos_inc(module),
             os.path.join(out_dir, "kernel_contract.h"): kernel_contract_h(contract)}
    for op in module.OPS:
        files[os.path.join(out_dir, "op_proto", op.python_name + ".h")] = op_proto_header(op)
    for path, text in sorted(files.items()):
        write_if_changed(path, text)
    return sorted(files)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op-def", required=True, help="path of tf_ge_custom/op_def.py")
    parser.add_argument("--contract", help="path of tf_ge_custom/kernel_contract.py "
                        "(default: beside --op-def)")
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args(argv)
    for path in generate(args.op_def, args.out, args.contract):
        sys.stdout.write(path + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
