"""The Python manifest reader against the shared fixtures and tampered binaries."""
import hashlib
import json
import os
import shutil

import pytest

from tf_ge_custom import kernel_manifest
from tf_ge_custom.errors import ManifestError, TfGeCustomError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "manifests")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)


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


def test_fixtures_cover_every_error_kind_and_valid_ones():
    kinds = {case["kind"] for case in EXPECTED.values()}
    assert kinds == {None, "io", "syntax", "version", "schema", "layout", "mismatch", "checksum"}


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
    k = m.kernel("AddCustom", "int32")
    assert k.magic == "ELF_VECTOR_CORE" and k.args.has_ffts and k.args.size == 64
    assert k.args.slot("input", 1).offset == 32 and k.args.slot("num_elements").size == 4
    with open(m.binary_path(k), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == k.sha256
    assert m.kernel("AddCustom", "float16") is None


@pytest.fixture
def good_copy(tmp_path):
    """valid_binaries.json laid out as in an OPP root: Ascend910B1/manifest.json + npubins."""
    dst = tmp_path / "Ascend910B1"
    shutil.copytree(os.path.join(FIXTURES, "valid_binaries"), str(dst))
    shutil.copy(os.path.join(FIXTURES, "valid_binaries.json"), str(dst / "manifest.json"))
    return dst


def test_one_changed_byte_is_a_checksum_error(good_copy):
    binary = good_copy / "add_kernel_float32.npubin"
    data = bytearray(binary.read_bytes())
    data[len(data) // 2] ^= 0x01
    binary.write_bytes(bytes(data))
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(good_copy / "manifest.json"))
    assert e.value.kind == "checksum" and "float32" in str(e.value)
    # without the file check the document itself is still fine
    kernel_manifest.load_manifest(str(good_copy / "manifest.json"), check_files=False)


def test_a_missing_binary_is_a_checksum_error(good_copy):
    (good_copy / "add_kernel_int32.npubin").unlink()
    with pytest.raises(ManifestError) as e:
        kernel_manifest.load_manifest(str(good_copy / "manifest.json"))
    assert e.value.kind == "checksum" and "missing" in str(e.value)


def test_binaries_of_a_named_json_live_in_the_folder_of_that_name(tmp_path, good_copy):
    os.rename(str(good_copy / "manifest.json"), str(tmp_path / "Ascend910B1.json"))
    m = kernel_manifest.load_manifest(str(tmp_path / "Ascend910B1.json"))
    assert m.directory == str(good_copy)
    (good_copy / "add_kernel_int32.npubin").unlink()
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
