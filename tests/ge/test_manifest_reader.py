"""The C++ manifest and JSON readers (the tool the GE build ships) against Python's json
module, and, once both exist, against the Python manifest reader over the shared fixtures."""
import json
import pathlib
import subprocess

import pytest

from hypothesis import given, settings, strategies as st

import tf_ge_custom

PACKAGE = pathlib.Path(tf_ge_custom.__file__).parent
TOOL = PACKAGE / json.loads((PACKAGE / "build_info.json").read_text())["ge"]["manifest_tool"]
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "manifests"


def run_tool(*args):
    proc = subprocess.run([str(TOOL)] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    lines = proc.stdout.splitlines()
    assert proc.returncode in (0, 1) and len(lines) == 1, (proc.returncode, proc.stdout, proc.stderr)
    result = json.loads(lines[0])
    assert set(result) == {"valid", "kind", "normalized"}
    assert proc.returncode == (0 if result["valid"] else 1)
    return result


def python_normalized(text):
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


# JSON values without floats (Python prints repr(float); no manifest field holds one).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_json_reader_normalizes_like_python(tmp_path_factory, value, indent, ascii_only):
    path = tmp_path_factory.mktemp("json") / "doc.json"
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = run_tool("--json", path)
    assert result["valid"], text
    assert result["normalized"] == python_normalized(text)


def test_json_reader_refuses_what_python_refuses(tmp_path):
    for i, text in enumerate(["", "{", "[1,]", "01", "1.", "{'a': 1}", '"\\x"', "[1] 2", "nan"]):
        path = tmp_path / ("bad%d.json" % i)
        path.write_text(text)
        try:
            json.loads(text)
            python_valid = True
        except ValueError:
            python_valid = False
        assert not python_valid
        result = run_tool("--json", path)
        assert result == {"valid": False, "kind": "syntax", "normalized": None}, text


def _manifest(soc, binary, has_ffts=True):
    """A valid manifest written here in Python (independent of the C++ test data)."""
    import hashlib
    from tf_ge_custom import op_def
    op = op_def.ADD_CUSTOM
    base = 8 if has_ffts else 0
    slots = [{"name": "ffts_base_address", "role": "ffts", "offset": 0, "size": 8}] if has_ffts else []
    slots += [
        {"name": "sync_block_lock", "role": "sync_block_lock", "offset": base, "size": 8},
        {"name": "workspace", "role": "workspace", "offset": base + 8, "size": 8},
        {"name": "x_ptr", "role": "input", "index": 0, "offset": base + 16, "size": 8},
        {"name": "y_ptr", "role": "input", "index": 1, "offset": base + 24, "size": 8},
        {"name": "output_ptr", "role": "output", "index": 0, "offset": base + 32, "size": 8},
        {"name": "n_elements", "role": "num_elements", "offset": base + 40, "size": 4},
        {"name": "gridX", "role": "grid_x", "offset": base + 44, "size": 4},
        {"name": "gridY", "role": "grid_y", "offset": base + 48, "size": 4},
        {"name": "gridZ", "role": "grid_z", "offset": base + 52, "size": 4},
    ]
    return {
        "format": "tf-ge-custom-kernel-manifest", "version": 1, "soc": soc, "vector_core_count": 48,
        "toolchain": {"triton_ascend": "3.2.0", "bishengir": "1.2.0", "cann": None},
        "kernel_source_sha256": hashlib.sha256(b"kernel source").hexdigest(),
        "kernels": [{
            "op": op.type_name, "dtype": "bfloat16", "entry": op.kernel.entry,
            "binary": op.kernel.binary_name("bfloat16"), "binary_size": len(binary),
            "sha256": hashlib.sha256(binary).hexdigest(), "mix_mode": "aiv", "magic": "ELF_VECTOR_CORE",
            "block_size": op.kernel.block_size, "grid": {"max_programs": 48, "max_grid": 65535},
            "max_elements_per_launch": 2 ** 30, "workspace_size": 0, "lock_num": 0, "lock_init_val": 0,
            "args": {"size": base + 56, "has_ffts": has_ffts, "slots": slots},
        }],
    }


def test_manifest_reader_on_an_opp_layout(tmp_path):
    binary = bytes(range(256)) * 3
    folder = tmp_path / "kernels" / "Ascend910_9392"
    folder.mkdir(parents=True)
    doc = _manifest("Ascend910_9392", binary, has_ffts=False)
    text = json.dumps(doc, indent=2)
    (folder / "manifest.json").write_text(text)
    (folder / "add_kernel_bfloat16.npubin").write_bytes(binary)
    result = run_tool(folder / "manifest.json", "--check-files")
    assert result == {"valid": True, "kind": None, "normalized": python_normalized(text)}
    (folder / "add_kernel_bfloat16.npubin").write_bytes(binary[:-1] + b"\0")
    assert run_tool(folder / "manifest.json", "--check-files")["kind"] == "checksum"
    assert run_tool(folder / "manifest.json")["valid"]
    other = tmp_path / "kernels" / "Ascend910B1"
    other.mkdir()
    (other / "manifest.json").write_text(text)  # soc says Ascend910_9392
    assert run_tool(other / "manifest.json")["kind"] == "mismatch"


def _python_reader():
    from tf_ge_custom import kernel_manifest

    return kernel_manifest


def _fixtures():
    return sorted(json.loads((FIXTURES / "expected.json").read_text()).items())


def test_the_shared_fixtures_exist():
    assert len(_fixtures()) >= 20


@pytest.mark.parametrize("name,want", _fixtures(), ids=[n for n, _ in _fixtures()])
def test_cpp_and_python_readers_agree_on_every_fixture(name, want):
    """Both readers give the same verdict, error kind and normalized dump for each fixture,
    and that verdict is the one expected.json records."""
    reader = _python_reader()
    path = FIXTURES / want["path"]
    args = [path] + (["--check-files"] if want.get("check_files") else [])
    cpp = run_tool(*args)
    try:
        manifest = reader.load_manifest(str(path), check_files=bool(want.get("check_files")))
        py = {"valid": True, "kind": None, "normalized": manifest.normalized()}
    except reader.ManifestError as e:
        py = {"valid": False, "kind": e.kind, "normalized": None}
    assert (py["valid"], py["kind"]) == (want["valid"], want["kind"])
    assert cpp == py
