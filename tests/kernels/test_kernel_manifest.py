"""The Python manifest validator: the shared fixtures (which the GE library's reader is held
to as well), every refusal kind on documents built here, and tampered binaries."""
import copy
import hashlib
import importlib.util
import json
import os
import shutil

import pytest

from tf_ge_custom import kernel_manifest, op_def
from tf_ge_custom.errors import ManifestError, TfGeCustomError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "manifests")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
_spec = importlib.util.spec_from_file_location(
    "leaky_relu_layout", os.path.join(os.path.dirname(FIXTURES), "leaky_relu_layout.py"))
LEAKY_LAYOUT = importlib.util.module_from_spec(_spec)  # the layout written out by hand
_spec.loader.exec_module(LEAKY_LAYOUT)


def _fixture_text(name):
    with open(os.path.join(FIXTURES, name + ".json")) as f:
        return f.read()


def _k0(doc):
    return doc["kernels"][0]


def _slots0(doc):
    return doc["kernels"][0]["args"]["slots"]


class _Text(object):
    """An edit of the manifest's text, for what a parsed document cannot hold."""

    def __init__(self, edit):
        self.edit = edit


def _ffts_last(doc):
    slots = _slots0(doc)
    ffts = slots.pop(0)
    for s in slots:
        s["offset"] -= 8
    ffts["offset"] = 56
    slots.append(ffts)


def _cols_as_count(doc):
    cols = doc["kernels"][1]["args"]["slots"][10]  # row_16x256's "cols" extent
    del cols["dim"]
    cols["role"] = "num_elements"


# name -> (base fixture, edit of the parsed document or of the text, kind): one defect each,
# for the rules only the Python validator applies (docs/kernel-manifest.md, "Where a reader
# draws the lines"); the shared fixtures cover the others.
REFUSALS = {
    "syntax_not_json": ("valid_ir_only", _Text(lambda t: t[:40]), "syntax"),
    "syntax_top_level_array": ("valid_ir_only", _Text(lambda t: "[]\n"), "syntax"),
    "syntax_nan": ("valid_ir_only", _Text(lambda t: t.replace(
        '"workspace_size": 0', '"workspace_size": NaN', 1)), "syntax"),
    "version_as_string": ("valid_ir_only", lambda d: d.update(version="2"), "version"),
    "version_3": ("valid_ir_only", lambda d: d.update(version=3), "version"),
    "version_other_format": ("valid_ir_only", lambda d: d.update(format="kernel-manifest"), "version"),
    "version_format_not_a_string": ("valid_ir_only", lambda d: d.update(format=5), "version"),
    "version_true": ("valid_ir_only", lambda d: d.update(version=True), "version"),
    "schema_duplicate_key": ("valid_ir_only", _Text(lambda t: t.replace(
        '"soc": "Ascend910B1",', '"soc": "Ascend910B1",\n  "soc": "Ascend910B2",')), "schema"),
    "schema_block_fraction": ("valid_ir_only", _Text(lambda t: t.replace(
        '"block": [\n        4096\n      ]', '"block": [4096.0]', 1)), "schema"),
    "schema_integer_beyond_int64": ("valid_ir_only", _Text(lambda t: t.replace(
        '"workspace_size": 0', '"workspace_size": 18446744073709551616', 1)), "schema"),
    "schema_format_missing": ("valid_ir_only", lambda d: d.pop("format"), "schema"),
    "schema_version_missing": ("valid_ir_only", lambda d: d.pop("version"), "schema"),
    "schema_unknown_top_key": ("valid_ir_only", lambda d: d.update(comment="hi"), "schema"),
    "schema_unknown_kernel_key": ("valid_ir_only", lambda d: _k0(d).update(stream=0), "schema"),
    "schema_unknown_slot_key": ("valid_ir_only", lambda d: _slots0(d)[3].update(align=8), "schema"),
    "schema_missing_kernels": ("valid_ir_only", lambda d: d.pop("kernels"), "schema"),
    "schema_empty_kernels": ("valid_ir_only", lambda d: d.update(kernels=[]), "schema"),
    "schema_missing_toolchain_cann": ("valid_ir_only", lambda d: d["toolchain"].pop("cann"), "schema"),
    "schema_block_string": ("valid_ir_only", lambda d: _k0(d).update(block=["4096"]), "schema"),
    "schema_block_not_a_list": ("valid_ir_only", lambda d: _k0(d).update(block=4096), "schema"),
    "schema_block_of_three": ("valid_ir_only", lambda d: _k0(d).update(block=[1, 16, 256]), "schema"),
    "schema_old_block_size_key": ("valid_ir_only", lambda d: _k0(d).update(block_size=4096), "schema"),
    "schema_variant_missing": ("valid_ir_only", lambda d: _k0(d).pop("variant"), "schema"),
    "schema_duplicate_variant": ("valid_tiled_variants", lambda d: d["kernels"].append(
        copy.deepcopy(_k0(d))), "schema"),
    "schema_boolean_as_integer": ("valid_ir_only", lambda d: _k0(d).update(lock_num=False), "schema"),
    "schema_negative_workspace": ("valid_ir_only", lambda d: _k0(d).update(workspace_size=-1), "schema"),
    "schema_uppercase_sha": ("valid_ir_only", lambda d: d.update(
        kernel_source_sha256=d["kernel_source_sha256"].upper()), "schema"),
    "schema_binary_without_sha": ("valid_binaries", lambda d: _k0(d).update(sha256=None), "schema"),
    "schema_magic_disagrees": ("valid_ir_only", lambda d: _k0(d).update(magic="ELF_AICORE"), "schema"),
    "schema_unknown_mix_mode": ("valid_ir_only", lambda d: _k0(d).update(mix_mode="simt"), "schema"),
    "schema_zero_programs": ("valid_ir_only", lambda d: _k0(d)["grid"].update(max_programs=0), "schema"),
    "schema_duplicate_kernel": ("valid_ir_only", lambda d: d["kernels"].append(copy.deepcopy(_k0(d))),
                                "schema"),
    "schema_launch_not_block_multiple": ("valid_ir_only", lambda d: _k0(d).update(
        max_elements_per_launch=1073741825), "schema"),
    "schema_soc_with_dash": ("valid_ir_only", lambda d: d.update(soc="Ascend-910B1"), "schema"),
    "schema_zero_vector_cores": ("valid_ir_only", lambda d: d.update(vector_core_count=0), "schema"),
    "schema_slot_missing_offset": ("valid_ir_only", lambda d: _slots0(d)[4].pop("offset"), "schema"),
    "schema_index_as_string": ("valid_ir_only", lambda d: _slots0(d)[3].update(index="0"), "schema"),
    "schema_dim_negative": ("valid_tiled_variants", lambda d: d["kernels"][1]["args"]["slots"][6].update(
        dim=-1), "schema"),
    "layout_overlap": ("valid_ir_only", lambda d: _slots0(d)[4].update(offset=24), "layout"),
    "layout_misaligned_pointer": ("valid_ir_only", lambda d: _slots0(d)[3].update(offset=20), "layout"),
    "layout_size_not_rounded": ("valid_ir_only", lambda d: _k0(d)["args"].update(size=60), "layout"),
    "layout_size_too_large": ("valid_ir_only", lambda d: _k0(d)["args"].update(size=72), "layout"),
    "layout_has_ffts_false_with_slot": ("valid_ir_only", lambda d: _k0(d)["args"].update(has_ffts=False),
                                        "layout"),
    "layout_has_ffts_true_without_slot": ("valid_without_ffts", lambda d: _k0(d)["args"].update(
        has_ffts=True), "layout"),
    "layout_ffts_not_first": ("valid_ir_only", _ffts_last, "layout"),
    "layout_unknown_role": ("valid_ir_only", lambda d: _slots0(d)[6].update(role="scalar"), "layout"),
    "layout_index_on_grid": ("valid_ir_only", lambda d: _slots0(d)[7].update(index=0), "layout"),
    "layout_input_without_index": ("valid_ir_only", lambda d: _slots0(d)[3].pop("index"), "layout"),
    "layout_pointer_of_4_bytes": ("valid_ir_only", lambda d: _slots0(d)[5].update(size=4), "layout"),
    "layout_grid_of_8_bytes": ("valid_ir_only", lambda d: (
        _slots0(d)[9].update(size=8, offset=64), _k0(d)["args"].update(size=72)), "layout"),
    "layout_second_workspace": ("valid_ir_only", lambda d: _slots0(d)[1].update(
        role="workspace", name="workspace2"), "layout"),
    "layout_dim_on_a_pointer": ("valid_ir_only", lambda d: _slots0(d)[3].update(dim=0), "layout"),
    "layout_stride_without_dim": ("valid_tiled_variants", lambda d: d["kernels"][1]["args"]["slots"][11].pop(
        "dim"), "layout"),
    "layout_extent_of_8_bytes_overlaps": ("valid_tiled_variants", lambda d: d["kernels"][1]["args"][
        "slots"][6].update(size=8), "layout"),
    "layout_flat_kernel_with_an_extent": ("valid_ir_only", lambda d: _slots0(d)[6].update(
        role="dim", dim=0), "layout"),
    "layout_tiled_kernel_with_a_count": ("valid_tiled_variants", lambda d: _cols_as_count(d), "layout"),
    "mismatch_unknown_op": ("valid_ir_only", lambda d: _k0(d).update(op="MulCustom"), "mismatch"),
    "mismatch_unknown_dtype": ("valid_ir_only", lambda d: _k0(d).update(dtype="float64"), "mismatch"),
    "mismatch_entry": ("valid_ir_only", lambda d: _k0(d).update(entry="add_kernel_v2"), "mismatch"),
    "mismatch_block": ("valid_ir_only", lambda d: _k0(d).update(block=[2048]), "mismatch"),
    "mismatch_entry_of_another_variant": ("valid_tiled_variants", lambda d: _k0(d).update(
        entry="tf_ge_custom_add_custom_flat_float32"), "mismatch"),
    "mismatch_entry_of_another_op": ("valid_ir_only", lambda d: _k0(d).update(
        entry="tf_ge_custom_mul_custom_flat_float32"), "mismatch"),
    "schema_two_variants_one_entry": ("valid_tiled_variants", lambda d: d["kernels"][2].update(
        entry=d["kernels"][1]["entry"]), "schema"),
    "mismatch_binary_name": ("valid_binaries", lambda d: _k0(d).update(
        binary="add_custom_flat_fp32.npubin"), "mismatch"),
    "mismatch_binary_of_another_variant": ("valid_binaries", lambda d: _k0(d).update(
        binary="add_custom_scalar_float32.npubin"), "mismatch"),
}


def _refused_text(name):
    base, edit, _ = REFUSALS[name]
    text = _fixture_text(base)
    if isinstance(edit, _Text):
        return edit.edit(text)
    doc = json.loads(text)
    edit(doc)
    return json.dumps(doc, indent=2)


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_each_rule_refuses_with_its_kind(name):
    with pytest.raises(ManifestError) as e:
        kernel_manifest.parse_manifest(_refused_text(name))
    assert e.value.kind == REFUSALS[name][2]


def _verdict(path, check_files):
    try:
        kernel_manifest.load_manifest(path, check_files=check_files)
    except ManifestError as e:
        return {"valid": False, "kind": e.kind}
    return {"valid": True, "kind": None}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_gets_its_recorded_verdict(name):
    case = EXPECTED[name]
    got = _verdict(os.path.join(FIXTURES, case["path"]), case["check_files"])
    assert got == {"valid": case["valid"], "kind": case["kind"]}


def test_fixtures_and_rules_cover_every_error_kind_and_valid_ones():
    kinds = {case["kind"] for case in EXPECTED.values()}
    assert {None, "checksum", "layout", "version"} <= kinds  # shared with the GE library
    kinds |= {kind for _, _, kind in REFUSALS.values()}
    assert kinds == {None, "syntax", "version", "outdated", "schema", "layout", "mismatch",
                     "checksum"}
    # "io": test_errors_are_value_errors_of_the_package


def test_normalized_form_is_sorted_compact_json_of_the_file():
    path = os.path.join(FIXTURES, EXPECTED["valid_workspace_and_locks"]["path"])
    m = kernel_manifest.load_manifest(path, check_files=False)
    with open(path) as f:
        raw = json.load(f)
    text = m.normalized()
    assert json.loads(text) == raw
    assert " " not in text.replace("ELF_VECTOR_CORE", "")  # no insignificant whitespace
    keys = [k for k in json.loads(text, object_pairs_hook=lambda p: [k for k, _ in p])]
    assert keys == sorted(keys)


def test_manifest_api_exposes_entries_and_binary_paths():
    path = os.path.join(FIXTURES, EXPECTED["valid_binaries"]["path"])
    m = kernel_manifest.load_manifest(path)
    assert m.soc == "Ascend910B1" and not m.ir_only
    assert m.dtypes() == ["float32", "int32"]
    k = m.kernel("AddCustom", "flat", "int32")
    assert k.magic == "ELF_VECTOR_CORE" and k.args.has_ffts and k.args.size == 64
    assert k.args.slot("input", 1).offset == 32 and k.args.slot("num_elements").size == 4
    with open(m.binary_path(k), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == k.sha256
    assert m.kernel("AddCustom", "flat", "float16") is None
    row = m.kernel("AddCustom", "row_16x256", "float32")
    assert row.block == (16, 256) and row.block_elements == 4096 and row.args.size == 104
    assert row.args.slot("dim", dim=4).offset == 64
    assert row.args.slot("input_stride", 1, 2).offset == 88
    # a dtype is complete only with every variant of the op definition
    assert "scalar" in m.missing_variants(op_def.ADD_CUSTOM, "float32")
    assert "row_16x256" not in m.missing_variants(op_def.ADD_CUSTOM, "float32")
    assert len(m.missing_variants(op_def.ADD_CUSTOM, "int32")) == len(
        op_def.ADD_CUSTOM.kernel.variants) - 1


def test_records_write_the_json_they_were_read_from():
    """The builder writes manifests from KernelEntry records: to_json is the reader's inverse."""
    for name in ("valid_binaries", "valid_tiled_variants", "valid_int64_count"):
        path = os.path.join(FIXTURES, EXPECTED[name]["path"])
        m = kernel_manifest.load_manifest(path, check_files=False)
        with open(path) as f:
            raw = json.load(f)
        rebuilt = kernel_manifest.manifest_document(
            m.soc, m.vector_core_count, m.toolchain, m.kernel_source_sha256, m.kernels)
        assert rebuilt == raw, name


def test_param_slot_keys_follow_the_contract():
    assert kernel_manifest.param_slot_key("input:1") == ("input", 1, None)
    assert kernel_manifest.param_slot_key("num_elements") == ("num_elements", None, None)
    assert kernel_manifest.param_slot_key("dim:4") == ("dim", None, 4)
    assert kernel_manifest.param_slot_key("input_stride:0:2") == ("input_stride", 0, 2)
    for bad in ("grid_w", "dim", "input_stride:1", "num_elements:3"):
        with pytest.raises((ValueError, IndexError)):
            kernel_manifest.param_slot_key(bad)
    # an attribute's slot is indexed by its position in the op's attributes
    leaky = op_def.LEAKY_RELU_CUSTOM
    assert kernel_manifest.param_slot_key("attr:alpha", leaky) == ("attr", 0, None)
    for bad, op in (("attr:alpha", None), ("attr:beta", leaky), ("attr:alpha", op_def.ADD_CUSTOM),
                    ("attr", leaky)):
        with pytest.raises(ValueError):
            kernel_manifest.param_slot_key(bad, op)


_SHA = "ab" * 32


def _leaky_document(dtypes=("float32",)):
    """A LeakyReluCustom set written out by hand: the 64-byte layout with alpha's f32 word
    at offset 44 (tests/fixtures/leaky_relu_layout.py, docs/kernel-manifest.md)."""
    slots = LEAKY_LAYOUT.slots()
    kernels = [{"op": "LeakyReluCustom", "variant": "flat", "dtype": d,
                "entry": "tf_ge_custom_leaky_relu_custom_flat_%s" % d, "binary": None,
                "binary_size": None, "sha256": None, "mix_mode": "aiv", "magic": "ELF_VECTOR_CORE",
                "block": [4096], "grid": {"max_programs": 48, "max_grid": 65535},
                "max_elements_per_launch": 2 ** 30, "workspace_size": 0, "lock_num": 0,
                "lock_init_val": 0, "args": {"size": LEAKY_LAYOUT.SIZE, "has_ffts": True,
                                             "slots": copy.deepcopy(slots)}}
               for d in dtypes]
    return {"format": "tf-ge-custom-kernel-manifest", "version": 2, "entry_naming": 2,
            "soc": "Ascend910B1", "vector_core_count": 48,
            "toolchain": {"triton_ascend": "3.2.0", "bishengir": "1.2.0", "cann": None},
            "kernel_source_sha256": _SHA, "kernels": kernels}


@pytest.fixture
def with_leaky_relu(monkeypatch):
    """op_def.OPS with LeakyReluCustom (the validator reads OPS when called)."""
    monkeypatch.setattr(op_def, "OPS", (op_def.ADD_CUSTOM, op_def.LEAKY_RELU_CUSTOM))


def test_an_attribute_slot_is_read_and_checked(with_leaky_relu):
    m = kernel_manifest.validate_document(_leaky_document(("float32", "bfloat16")))
    alpha = m.kernel("LeakyReluCustom", "flat", "bfloat16").args.slot("attr", 0)
    assert (alpha.name, alpha.offset, alpha.size) == ("alpha", 44, 4)
    assert m.kernels[0].args.to_json() == _leaky_document()["kernels"][0]["args"]

    def refused(edit, kind, text):
        doc = _leaky_document()
        edit(doc["kernels"][0]["args"]["slots"])
        with pytest.raises(ManifestError) as e:
            kernel_manifest.validate_document(doc)
        assert e.value.kind == kind and text in str(e.value), str(e.value)

    # a float attribute is an fp32 word: 8 bytes is not its size
    refused(lambda s: s[6].update(size=8, offset=48) or [x.update(offset=x["offset"] + 8)
                                                         for x in s[7:]],
            "layout", "slot 'alpha' (attr) has size 8; expected 4")
    refused(lambda s: s[6].update(index=1), "layout", "parameter attr:0, found 0")
    refused(lambda s: s[6].pop("index"), "layout", "slots carry an 'index'")
    refused(lambda s: s.pop(6), "layout", "parameter attr:0, found 0")
    # AddCustom's kernels take no attribute
    doc = json.loads(_fixture_text("valid_ir_only"))
    slots = _slots0(doc)
    grid = [x for x in slots if x["role"].startswith("grid")]
    for x in grid:
        x["offset"] += 8
    slots.insert(slots.index(grid[0]), {"name": "alpha", "role": "attr", "index": 0,
                                        "offset": grid[0]["offset"] - 8, "size": 4})
    doc["kernels"][0]["args"]["size"] += 8
    with pytest.raises(ManifestError) as e:
        kernel_manifest.validate_document(doc)
    assert e.value.kind == "layout"


def test_a_set_of_several_sources_records_each_ops(with_leaky_relu):
    add = json.loads(_fixture_text("valid_ir_only"))
    add_sha = add["kernel_source_sha256"]
    leaky = _leaky_document()
    entries = [kernel_manifest.validate_document(d).kernels[0] for d in (add, leaky)]
    sources = {"AddCustom": add_sha, "LeakyReluCustom": _SHA}
    doc = kernel_manifest.manifest_document("Ascend910B1", 48, add["toolchain"], sources, entries)
    lines = "AddCustom %s\nLeakyReluCustom %s\n" % (add_sha, _SHA)
    assert doc["kernel_sources"] == sources
    assert doc["kernel_source_sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert list(doc) == ["format", "version", "entry_naming", "soc", "vector_core_count",
                         "toolchain", "kernel_source_sha256", "kernel_sources", "kernels"]
    m = kernel_manifest.validate_document(doc)
    assert m.source_sha256("LeakyReluCustom") == _SHA and m.source_sha256("AddCustom") == add_sha
    # one distinct source: written as one, exactly as before the field existed
    single = kernel_manifest.manifest_document("Ascend910B1", 48, add["toolchain"],
                                               {"AddCustom": add_sha}, entries[:1])
    assert "kernel_sources" not in single and single["kernel_source_sha256"] == add_sha
    assert single == kernel_manifest.manifest_document("Ascend910B1", 48, add["toolchain"],
                                                       add_sha, entries[:1])
    for edit, text in (
            (lambda d: d.update(kernel_source_sha256=add_sha), "must be their combined digest"),
            (lambda d: d["kernel_sources"].pop("AddCustom"), "combined digest"),
            (lambda d: d["kernel_sources"].update(AddCustom="AB" * 32), "64 lowercase hex"),
            (lambda d: d.update(kernel_sources=[add_sha]), "kernel_sources")):
        bad = copy.deepcopy(doc)
        edit(bad)
        with pytest.raises(ManifestError) as e:
            kernel_manifest.validate_document(bad)
        assert e.value.kind == "schema" and text in str(e.value), str(e.value)
    # naming an op the set holds no kernel of
    bad = copy.deepcopy(doc)
    bad["kernels"] = bad["kernels"][:1]
    with pytest.raises(ManifestError) as e:
        kernel_manifest.validate_document(bad)
    assert e.value.kind == "schema" and "must name exactly the ops" in str(e.value)


@pytest.fixture
def good_copy(tmp_path):
    """valid_binaries.json laid out as in an OPP root: Ascend910B1/manifest.json + npubins."""
    dst = tmp_path / "Ascend910B1"
    shutil.copytree(os.path.join(FIXTURES, "valid_binaries"), str(dst))
    shutil.copy(os.path.join(FIXTURES, "valid_binaries.json"), str(dst / "manifest.json"))
    return dst


def test_one_changed_byte_is_a_checksum_error(good_copy):
    binary = good_copy / "add_custom_flat_float32.npubin"
    data = bytearray(binary.read_bytes())
    data[len(data) // 2] ^= 0x01
    binary.write_bytes(bytes(data))
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(good_copy / "manifest.json"))
    assert e.value.kind == "checksum" and "float32" in str(e.value)
    # without the file check the document itself is still fine
    kernel_manifest.load_manifest(str(good_copy / "manifest.json"), check_files=False)


def test_a_missing_binary_is_a_checksum_error(good_copy):
    (good_copy / "add_custom_flat_int32.npubin").unlink()
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(good_copy / "manifest.json"))
    assert e.value.kind == "checksum" and "missing" in str(e.value)


def test_binaries_of_a_named_json_live_in_the_folder_of_that_name(tmp_path, good_copy):
    os.rename(str(good_copy / "manifest.json"), str(tmp_path / "Ascend910B1.json"))
    m = kernel_manifest.load_manifest(str(tmp_path / "Ascend910B1.json"))
    assert m.directory == str(good_copy)
    (good_copy / "add_custom_flat_int32.npubin").unlink()
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(tmp_path / "Ascend910B1.json"))
    assert e.value.kind == "checksum"


def test_errors_are_value_errors_of_the_package(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{")
    with pytest.raises(ValueError) as e:
        kernel_manifest.load_manifest(str(bad))
    assert isinstance(e.value, TfGeCustomError) and e.value.kind == "syntax"
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(tmp_path / "absent.json"))
    assert e.value.kind == "io" and "cannot read" in str(e.value)


def test_find_manifests_lists_each_soc_folder(tmp_path, good_copy):
    opp = tmp_path / "opp"
    (opp / "kernels").mkdir(parents=True)
    shutil.move(str(good_copy), str(opp / "kernels" / "Ascend910B1"))
    (opp / "kernels" / "Ascend910B4").mkdir()  # a folder without a manifest is not listed
    found = kernel_manifest.find_manifests(str(opp))
    assert found == {"Ascend910B1": str(opp / "kernels" / "Ascend910B1" / "manifest.json")}
    assert kernel_manifest.find_manifests(str(tmp_path / "nowhere")) == {}


def test_the_entry_naming_is_the_field_or_what_the_entries_show():
    """A manifest says its entry naming (the builder writes 2); one written before the field
    is read by its entries: every kernel under its @triton.jit function's name is the first
    naming (an earlier release's set: outdated, not damaged), the current names naming 2,
    anything else naming 2 too, so that its entries are checked one by one (damage)."""
    def doc(name):
        with open(os.path.join(FIXTURES, EXPECTED[name]["path"])) as f:
            return json.load(f)

    built = kernel_manifest.manifest_document("Ascend910B1", 48, {}, "0" * 64, [])
    assert built["entry_naming"] == 2 == kernel_manifest.kernel_contract.ENTRY_NAMING
    assert kernel_manifest.entry_naming_of(doc("valid_binaries")) == 2
    assert kernel_manifest.entry_naming_of(doc("valid_without_entry_naming")) == 2
    assert kernel_manifest.entry_naming_of(doc("outdated_entry_naming_1")) == 1
    assert kernel_manifest.entry_naming_of(doc("outdated_entry_naming_of_a_newer_release")) == 3
    assert kernel_manifest.entry_naming_of(doc("mismatch_entry_shared_by_every_dtype")) == 2
    assert kernel_manifest.entry_naming_of(dict(doc("valid_ir_only"), entry_naming=True)) is None
    old = doc("outdated_entry_naming_1")
    with pytest.raises(ManifestError) as e:
        kernel_manifest.parse_manifest(json.dumps(old))
    assert e.value.kind == "outdated"
    assert "built under entry naming 1" in str(e.value) and "tf-ge-custom build-kernels" in str(e.value)
