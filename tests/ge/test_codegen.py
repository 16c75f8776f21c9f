"""The GE sources generated from tf_ge_custom/op_def.py restate it exactly.

The REG_OP header (installed into opp/op_graph/include/ and compiled into the GE library)
is parsed back here and compared with the op definition, not with the generator's code.
"""
import pathlib
import re

import pytest

import tf_ge_custom
from tf_ge_custom import kernel_manifest, op_def


def _parse_reg_op(text):
    """{name, inputs: {name: [dtypes]}, outputs: {...}} of a REG_OP(...) ... OP_END_FACTORY_REG."""
    name = re.search(r"REG_OP\((\w+)\)", text).group(1)
    assert re.search(r"\.OP_END_FACTORY_REG\(%s\);" % name, text)
    ports = {"INPUT": {}, "OUTPUT": {}}
    for kind, port, types in re.findall(r"\.(INPUT|OUTPUT)\((\w+), TensorType\(\{([^}]*)\}\)\)", text):
        ports[kind][port] = [t.strip() for t in types.split(",")]
    return name, ports


def test_installed_reg_op_header_matches_the_op_definition():
    opp = pathlib.Path(tf_ge_custom.__file__).parent / "opp"
    for op in op_def.OPS:
        header = opp / "op_graph" / "include" / (op.python_name + ".h")
        name, ports = _parse_reg_op(header.read_text())
        assert name == op.type_name
        expected_types = [op_def.DTYPES[d].ge for d in op.dtypes]
        assert list(ports["INPUT"]) == list(op.inputs)
        assert list(ports["OUTPUT"]) == list(op.outputs)
        for types in list(ports["INPUT"].values()) + list(ports["OUTPUT"].values()):
            assert types == expected_types
        assert '#include "graph/operator_reg.h"' in header.read_text()


def _variant_rows(text):
    """(name, pattern, block, params, binaries, entry names, function) of each variant initializer, parsed."""
    rows = []
    for m in re.finditer(r'\{"(\w+)", Pattern::(\w+), \{([\d, ]+)\}, \{(.*?)\}\}, \{([^}]*)\}, '
                         r'\{([^}]*)\}, "(\w*)"\}', text):
        params = re.findall(r"\{SlotRole::(\w+), (-?\d+), (-?\d+)\}", m.group(4) + "}")
        rows.append((m.group(1), m.group(2), [int(b) for b in m.group(3).split(",")],
                     [(r, int(i), int(d)) for r, i, d in params], re.findall(r'"([^"]*)"', m.group(5)),
                     re.findall(r'"([^"]*)"', m.group(6)), m.group(7)))
    return rows


def _camel(name):
    return "k" + "".join(p.capitalize() for p in name.split("_"))


def test_core_table_matches_the_op_definition(native_build):
    text = (native_build.generated / "op_definitions.inc").read_text()
    starts = sorted(text.index('{"%s", ' % op.type_name) for op in op_def.OPS)
    for op in op_def.OPS:
        start = text.index('{"%s", ' % op.type_name)
        # the op's own row: up to the next op's
        end = min([s for s in starts if s > start] or [len(text)])
        head = text[start:text.index("\n", start)]
        strings = re.findall(r'"([^"]*)"', head)
        numbers = re.findall(r"(?<![\w\"])(\d+)(?=[},])", head)
        expected = [op.type_name] + list(op.inputs) + list(op.outputs)
        for d in op.dtype_records():
            expected += [d.name, d.ge]
        assert strings == expected
        assert [int(n) for n in numbers] == [d.itemsize for d in op.dtype_records()]
        rows = _variant_rows(text[start:end])
        assert len(rows) == len(op.kernel.variants)
        for row, v in zip(rows, op.kernel.variants):
            params = []
            for p in v.params:  # "input:1", "dim:3", "input_stride:0:2", "num_elements"
                role, index, dim = kernel_manifest.param_slot_key(p, op)
                params.append((_camel(role), -1 if index is None else index, -1 if dim is None else dim))
            # the function: every dtype's name under the first entry naming (an outdated set's)
            assert row == (v.name, _camel(v.pattern), list(v.block), params,
                           [op.binary_name(v.name, d) for d in op.dtypes],
                           ["tf_ge_custom_%s_%s_%s" % (op.python_name, v.name, d) for d in op.dtypes],
                           v.function)
        tail = re.search(r"\},\n (true|false), (true|false), \{(.*?)\}\},\n", text[start:end])
        assert tail.group(1) == ("true" if op.commutative else "false")
        assert tail.group(2) == ("true" if op.broadcasts else "false")
        assert _attr_rows(tail.group(3)) == [(a.name, a.type, a.type_record().word_bytes, a.default)
                                             for a in op.attrs]


def _attr_rows(text):
    """(name, type, word bytes, default) of each attribute initializer, parsed."""
    return [(n, t, int(w), float(d) if t == "float" else int(d))
            for n, t, w, d in re.findall(r'\{"(\w+)", "(\w+)", (\d+), ([-+.\w]+)\}', text)]


def _generate_with(tmp_path, extra_ops, records=""):
    """The generator over a copy of op_def.py whose OPS also holds ``extra_ops`` (names of
    its records, or of those the Python text ``records`` adds to it): the files it writes, by
    name."""
    import importlib.util

    root = pathlib.Path(__file__).resolve().parents[2]
    text = (root / "tf_ge_custom" / "op_def.py").read_text()
    # the records named, after those OPS holds already (each once)
    text += records
    text += "\nOPS = tuple(OPS) + tuple(op for op in (%s,) if op not in OPS)\n" % ", ".join(extra_ops)
    (tmp_path / "op_def.py").write_text(text)
    (tmp_path / "kernel_contract.py").write_text(
        (root / "tf_ge_custom" / "kernel_contract.py").read_text())
    spec = importlib.util.spec_from_file_location(
        "_generate_op_sources", str(root / "ge_ops" / "codegen" / "generate_op_sources.py"))
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(str(tmp_path / "op_def.py"), str(tmp_path / "out"))
    return tmp_path / "out"


def test_an_attributed_one_input_op_generates_its_attr_everywhere(tmp_path):
    """LeakyReluCustom (one input, no broadcasting, float attr alpha = 0.2) put into OPS in a
    copy: its REG_OP carries ATTR(alpha, Float, 0.2), its table row one input, broadcasts
    false and the attribute, and its kernel's alpha parameter the attr slot of index 0."""
    out = _generate_with(tmp_path, ["LEAKY_RELU_CUSTOM"])
    header = (out / "op_proto" / "leaky_relu_custom.h").read_text()
    name, ports = _parse_reg_op(header)
    assert name == "LeakyReluCustom"
    assert ports == {"INPUT": {"x": ["DT_FLOAT", "DT_FLOAT16", "DT_BF16"]},
                     "OUTPUT": {"y": ["DT_FLOAT", "DT_FLOAT16", "DT_BF16"]}}
    assert re.findall(r"\.ATTR\((\w+), (\w+), ([^)]*)\)", header) == [("alpha", "Float", "0.2")]
    # AddCustom's header has no attribute
    assert ".ATTR(" not in (out / "op_proto" / "add_custom.h").read_text()
    text = (out / "op_definitions.inc").read_text()
    start = text.index('{"LeakyReluCustom", ')
    assert text[start:].startswith('{"LeakyReluCustom", {"x"}, {"y"}, ')
    rows = _variant_rows(text[start:])
    assert rows[0][:4] == ("flat", "kEqual", [4096],
                           [("kInput", 0, -1), ("kOutput", 0, -1), ("kNumElements", -1, -1),
                            ("kAttr", 0, -1)])
    tail = re.search(r"\},\n (true|false), (true|false), \{(.*?)\}\},\n", text[start:])
    assert tail.groups()[:2] == ("false", "false")
    assert _attr_rows(tail.group(3)) == [("alpha", "float", 4, 0.2)]
    add = re.search(r"\},\n (true|false), (true|false), \{(.*?)\}\},\n", text)
    assert add.groups() == ("true", "true", "")  # AddCustom: commutative, broadcasts, no attrs
    assert "X(AddCustom) X(LeakyReluCustom)" in (out / "ge_ops.inc").read_text()


def test_a_bounded_attribute_carries_its_range_into_the_core_table(tmp_path):
    """An attribute with op_def bounds: its table row adds them (presence, value, and the
    words the TF op's refusal uses); an unbounded one keeps the four-field row above."""
    records = ("\nBOUNDED = LEAKY_RELU_CUSTOM._replace(type_name='BoundedCustom', "
               "python_name='bounded_custom', attrs=(OpAttr('alpha', 'float', 0.25, 0.0, 1.5), "
               "OpAttr('groups', 'int', 2, 1)))\n")
    out = _generate_with(tmp_path, ["BOUNDED"], records)
    text = (out / "op_definitions.inc").read_text()
    start = text.index('{"BoundedCustom", ')
    tail = re.search(r"\},\n (true|false), (true|false), \{(.*?)\}\},\n", text[start:])
    assert tail.group(3) == ('{"alpha", "float", 4, 0.25, true, 0.0, true, 1.5, "in [0.0, 1.5]"}, '
                             '{"groups", "int", 8, 2, true, 1, false, 0, ">= 1"}')
    from tf_ge_custom._build import tf_codegen
    # the TF op's words for the same bounds
    assert [tf_codegen.range_text(a) for a in (op_def.OpAttr("alpha", "float", 0.25, 0.0, 1.5),
                                               op_def.OpAttr("groups", "int", 2, 1))] == ["in [0.0, 1.5]", ">= 1"]


def test_ge_dtype_table_covers_every_dtype(native_build):
    text = (native_build.generated / "ge_ops.inc").read_text()
    pairs = re.findall(r"X\((DT_\w+), \"(\w+)\"\)", text)
    assert pairs == [(d.ge, d.name) for d in op_def.DTYPES.values()]
    assert re.findall(r"X\((\w+)\)", text.split("FOR_EACH_OP(X)")[1].splitlines()[0]) == [
        op.type_name for op in op_def.OPS]


def test_kernel_contract_header_restates_the_python_contract(native_build):
    """kernel_contract.h, read back: the manifest format, the limits, every slot role with its
    kind, and the mix_mode -> load magic rule are the Python module's values."""
    from tf_ge_custom import kernel_contract as c

    text = (native_build.generated / "kernel_contract.h").read_text()

    def constant(name):
        return re.search(r"constexpr [^=;]*\b%s = (.+);" % name, text).group(1)

    assert constant("kManifestFormat") == '"%s"' % c.MANIFEST_FORMAT
    assert int(constant("kManifestVersion")) == c.MANIFEST_VERSION
    assert constant("kManifestFileName") == '"%s"' % c.MANIFEST_NAME
    assert int(constant("kMaxGrid")) == c.MAX_GRID == 65535
    assert constant("kIndexLimit") == "INT64_C(%d)" % c.INDEX_LIMIT
    assert c.INDEX_LIMIT == 2 ** 31
    assert int(constant("kMaxBroadcastRank")) == c.MAX_BROADCAST_RANK
    assert re.search(r"enum class Pattern \{ ([^}]*) \}", text).group(1).split(", ") == [
        _camel(p) for p in c.PATTERNS]
    assert re.findall(r'"(\w+)"', re.search(r"kPatternNames\[\] = \{([^}]*)\}", text).group(1)) == list(
        c.PATTERNS)
    rows = re.findall(r'\{SlotRole::(\w+), "(\w+)", (true|false), (true|false), (true|false), (true|false)\}',
                      text)
    assert [r[1] for r in rows] == list(c.ROLES)
    for enumerator, role, pointer, single, indexed, has_dim in rows:
        assert enumerator == _camel(role)
        assert (pointer, single, indexed, has_dim) == tuple(
            "true" if role in group else "false"
            for group in (c.POINTER_ROLES, c.SINGLE_ROLES, c.INDEXED_ROLES, c.DIM_ROLES))
    modes = re.findall(r'\{"(\w+)", BinaryMagic::(\w+), "(\w+)"\}', text)
    magic_of = dict(re.findall(r"X\((k\w+), (\w+)\)", text.split("FOR_EACH_BINARY_MAGIC(X)")[1].splitlines()[0]))
    assert {mode: magic_of[e] for mode, e, _ in modes} == c.MAGIC_BY_MIX_MODE
    # the other names the runtime finds an entry under, per mix_mode; the entry naming and the
    # length limit of a kernel name
    assert {mode: suffix for mode, _, suffix in modes} == c.ENTRY_SUFFIX_BY_MIX_MODE
    assert c.ENTRY_SUFFIX_BY_MIX_MODE["aiv"] == "_mix_aiv"
    assert int(constant("kEntryNaming")) == c.ENTRY_NAMING == 2
    assert int(constant("kMaxEntryName")) == c.MAX_ENTRY_NAME == 49


# Appended to a copy of tf_ge_custom/op_def.py: AddCustom with every variant of a dtype under
# one entry name, the defect GE's kernel store would turn into one node running another's code.
_COLLIDING = '''

class _OneNamePerDtype(OpDefinition):
    def entry_name(self, variant, dtype):
        return "tf_ge_custom_%s_%s" % (self.python_name, dtype)


OPS = (_OneNamePerDtype(*ADD_CUSTOM),)
'''


@pytest.mark.parametrize("attr", ["OpAttr('alpha', 'float', None)", "_Required('alpha', 'float', 0.2)"])
def test_the_generator_refuses_an_attribute_without_a_default_in_one_line(tmp_path, attr):
    """An attribute GE would take as REQUIRED_ATTR (no default, or one a record marks
    required): GE drops every attribute of a node lacking it, so the generator refuses."""
    records = ("\nclass _Required(OpAttr):\n    required = True\n\n"
               "REQUIRED = LEAKY_RELU_CUSTOM._replace(type_name='RequiredCustom', "
               "python_name='required_custom', attrs=(%s,))\n" % attr)
    with pytest.raises(ValueError) as e:
        _generate_with(tmp_path, ["REQUIRED"], records)
    message = str(e.value)
    assert message.startswith("op RequiredCustom: attribute alpha has no default (a REQUIRED_ATTR); ")
    assert "give alpha a default in tf_ge_custom/op_def.py" in message
    assert "\n" not in message
    assert not (tmp_path / "out" / "op_proto" / "required_custom.h").exists()


def test_the_generator_refuses_a_table_whose_kernels_share_an_entry_name(tmp_path):
    import importlib.util
    import pytest

    root = pathlib.Path(__file__).resolve().parents[2]
    for name in ("op_def.py", "kernel_contract.py"):
        (tmp_path / name).write_text((root / "tf_ge_custom" / name).read_text()
                                     + (_COLLIDING if name == "op_def.py" else ""))
    spec = importlib.util.spec_from_file_location(
        "_generate_op_sources", str(root / "ge_ops" / "codegen" / "generate_op_sources.py"))
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with pytest.raises(ValueError) as e:
        generator.generate(str(tmp_path / "op_def.py"), str(tmp_path / "out"))
    assert "AddCustom flat float32 and AddCustom scalar float32 share the entry name " \
        "tf_ge_custom_add_custom_float32" in str(e.value)
    assert not (tmp_path / "out" / "op_definitions.inc").exists()
    # the unchanged definition generates, naming each kernel apart
    (tmp_path / "op_def.py").write_text((root / "tf_ge_custom" / "op_def.py").read_text())
    generator.generate(str(tmp_path / "op_def.py"), str(tmp_path / "out"))
    text = (tmp_path / "out" / "op_definitions.inc").read_text()
    assert len(set(re.findall(r'"(tf_ge_custom_add_custom_\w+)"', text))) == 44
