"""Kernel files and commands under a hostile trial.

- every form a manifest or an npubin can take on disk (a folder, a FIFO, a symlink loop,
  a dangling link, far too large, nested 100000 deep, not UTF-8) is the reader's named
  ``ManifestError`` with its kind, never a hang, a RecursionError or "no kernels";
- ``list-kernels --wheel`` takes tf-ge-custom wheels only, and options that would be ignored
  are usage errors (exit 2);
- ``build-kernels`` never deletes what it did not write, and refuses an ``--out`` it cannot
  use before compiling anything.

The fixtures are the shared ones (tests/fixtures/manifests/), laid out on disk here.
"""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from tf_ge_custom import _build, cli, kernel_manifest
from tf_ge_custom._build import kernels_step
from tf_ge_custom.errors import ManifestError
from tf_ge_custom.kernels import builder, toolchain

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "manifests")
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


def soc_folder(dst):
    """valid_binaries.json as build-kernels lays it out: <dst>/manifest.json + npubins."""
    shutil.copytree(os.path.join(FIXTURES, "valid_binaries"), str(dst))
    shutil.copy(os.path.join(FIXTURES, "valid_binaries.json"), os.path.join(str(dst), "manifest.json"))
    return dst


def _sparse(size):
    def make(path):
        path.write_bytes(b"")
        os.truncate(str(path), size)
    return make


def _text(text):
    def make(path):
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return make


DEEP = "[" * 100000 + "]" * 100000


def put(what, path, odd_files):
    """``what``: one of odd_files.KINDS, or a function that writes ``path``."""
    if isinstance(what, str):
        odd_files.make(what, path)
    else:
        what(path)


@pytest.mark.parametrize("make, kind, words", [
    ("directory", "io", "a directory"),
    ("fifo", "io", "FIFO"),
    ("symlink loop", "io", "symlink loop"),
    ("dangling symlink", "io", "dangling symlink"),
    (_sparse((16 << 20) + 1), "io", "more than"),
    (_text(DEEP), "syntax", "deeper than 512"),
    (_text('{"a": %s}' % ("[" * 513 + "]" * 513)), "syntax", "deeper than 512"),
    (_text(b"\xff{}"), "syntax", "UTF-8"),
    (_text('{"format": Infinity}'), "syntax", "Infinity"),
])
def test_a_manifest_in_any_form_is_a_named_error(tmp_path, odd_files, make, kind, words):
    soc = tmp_path / "kernels" / "Ascend910B1"
    soc.mkdir(parents=True)
    path = soc / "manifest.json"
    put(make, path, odd_files)
    assert kernel_manifest.find_manifests_in(str(tmp_path / "kernels")) == {
        "Ascend910B1": str(path)}, "a manifest.json that exists must not be skipped"
    with pytest.raises(ManifestError) as info:
        odd_files.finishes(kernel_manifest.load_manifest, str(path))
    assert info.value.kind == kind and words in str(info.value) and str(path) in str(info.value)


def test_deep_text_is_a_syntax_error_in_the_parser_too():
    with pytest.raises(ManifestError) as info:
        kernel_manifest.parse_manifest(DEEP)
    assert info.value.kind == "syntax"


@pytest.mark.parametrize("kind, words", [
    ("directory", "a directory"), ("fifo", "FIFO"), ("symlink loop", "symlink loop"),
    ("dangling symlink", "dangling symlink")])
def test_an_npubin_in_any_form_is_a_checksum_error(tmp_path, odd_files, kind, words):
    soc = soc_folder(tmp_path / "Ascend910B1")
    binary = soc / "add_custom_flat_int32.npubin"
    binary.unlink()
    odd_files.make(kind, binary)
    with pytest.raises(ManifestError) as info:
        odd_files.finishes(kernel_manifest.load_manifest, str(soc / "manifest.json"))
    assert info.value.kind == "checksum" and words in str(info.value)


def test_a_soc_entry_that_is_a_symlink_loop_is_listed_and_refused(tmp_path, odd_files):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    odd_files.make("symlink loop", kernels / "Ascend910B1")
    (kernels / "README.txt").write_text("notes are not SoCs")
    found = kernel_manifest.find_manifests_in(str(kernels))
    assert list(found) == ["Ascend910B1"]
    with pytest.raises(ManifestError) as info:
        kernel_manifest.load_manifest(found["Ascend910B1"])
    assert info.value.kind == "io"


@pytest.mark.parametrize("make", ["directory", "fifo", "symlink loop",
                                  _text(DEEP)])
def test_list_kernels_reports_a_damaged_manifest_and_fails(tmp_path, capsys, odd_files, make):
    soc = tmp_path / "out" / "Ascend910B1"
    soc.mkdir(parents=True)
    put(make, soc / "manifest.json", odd_files)
    assert odd_files.finishes(cli.main, ["list-kernels", "--dir", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "Ascend910B1" in out and "INVALID" in out and "no precompiled kernels" not in out


def test_list_kernels_survives_a_100000_deep_manifest_as_a_command(tmp_path):
    soc = tmp_path / "out" / "Ascend910B1"
    soc.mkdir(parents=True)
    (soc / "manifest.json").write_text(DEEP)
    proc = subprocess.run([SCRIPT, "list-kernels", "--dir", str(tmp_path / "out")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "INVALID: [syntax]" in proc.stdout


@pytest.fixture
def build_ctx(tmp_path, monkeypatch):
    source = tmp_path / "src"
    (source / "kernels" / "prebuilt").mkdir(parents=True)
    monkeypatch.setenv(kernels_step.ENV, str(tmp_path / "built"))
    (tmp_path / "built").mkdir()
    return _build.BuildContext(str(source), str(tmp_path / "pkg"), str(tmp_path / "tmp"))


@pytest.mark.parametrize("make", ["directory", "fifo", "symlink loop",
                                  _text(DEEP)])
def test_the_package_build_refuses_a_damaged_manifest(tmp_path, build_ctx, odd_files, make):
    soc = tmp_path / "built" / "Ascend910B1"
    soc.mkdir()
    put(make, soc / "manifest.json", odd_files)
    with pytest.raises(_build.BuildError) as info:
        odd_files.finishes(kernels_step.run, build_ctx)
    assert "Ascend910B1" in str(info.value)


# --- list-kernels: wheels only, no ignored options --------------------------------------


def _wheel(path, dist_info=True, members=()):
    with zipfile.ZipFile(str(path), "w") as zf:
        if dist_info:
            zf.writestr("tf_ge_custom-0.1.0.dist-info/WHEEL",
                        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n")
        for name, data in members:
            zf.writestr(name, data)
    return path


@pytest.mark.parametrize("name, make, words", [
    ("empty.zip", lambda p: _wheel(p, dist_info=False), "not a wheel"),
    ("tf_ge_custom-0.1.0-py3-none-any.whl", lambda p: _wheel(p, dist_info=False),
     "no tf_ge_custom-*.dist-info/WHEEL"),
    ("tf_ge_custom-0.1.0-py3-none-any.whl", lambda p: p.write_bytes(b"PK not a zip"),
     "not a readable zip"),
    ("tf_ge_custom-0.1.0-py3-none-any.whl", "directory", "not a regular file"),
    ("tf_ge_custom-0.1.0-py3-none-any.whl", lambda p: None, "does not exist"),
    ("other_pkg-1.0-py3-none-any.whl", _wheel, "not a tf-ge-custom wheel"),
    ("tf_ge_custom-0.1.0-py3-none-any.whl",
     lambda p: _wheel(p, members=[("tf_ge_custom/opp/kernels/../../../evil", b"x")]),
     "unsafe path"),
])
def test_list_kernels_takes_tf_ge_custom_wheels_only(tmp_path, capsys, odd_files, name, make,
                                                     words):
    path = tmp_path / name
    put(make, path, odd_files)
    assert cli.main(["list-kernels", "--wheel", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tf-ge-custom list-kernels: error: --wheel") and words in err
    assert not (tmp_path.parent / "evil").exists()


def test_list_kernels_reads_a_real_wheel_layout(tmp_path, capsys, complete_soc_folder):
    soc = complete_soc_folder(tmp_path / "Ascend910B1", ["float32", "int32"])
    wheel = _wheel(tmp_path / "tf_ge_custom-0.1.0-cp311-cp311-linux_x86_64.whl", members=[
        ("tf_ge_custom/opp/kernels/Ascend910B1/" + n, (soc / n).read_bytes())
        for n in os.listdir(str(soc))])
    assert cli.main(["list-kernels", "--wheel", str(wheel), "--soc", "Ascend910B1",
                     "--dtype", "float32,int32"]) == 0
    assert "npubins verified" in capsys.readouterr().out


@pytest.mark.parametrize("args, words", [
    (["--dtype", "float32"], "--dtype needs --soc"),
    (["--soc", "Ascend910B1", "--dtype", "float64"], "unknown dtype(s) 'float64'"),
    (["--soc", "Ascend910B1", "--dtype", ""], "empty"),
    (["--soc", " "], "--soc is empty"),
    (["--dir", "{file}"], "is not a folder"),
    (["--dir", "{tmp}/absent"], "does not exist"),
])
def test_list_kernels_refuses_options_it_would_ignore(tmp_path, capsys, args, words):
    (tmp_path / "file").write_text("")
    args = [a.format(file=tmp_path / "file", tmp=tmp_path) for a in args]
    assert cli.main(["list-kernels"] + args) == 2
    assert words in capsys.readouterr().err


# --- build-kernels: never delete what it did not write -----------------------------------


def _build_ir(out, *extra):
    return cli.main(["build-kernels", "--ir-only", "--soc", "Ascend910B1", "--dtype", "float32",
                     "--out", str(out), "--quiet"] + list(extra))


def test_a_file_the_user_put_in_a_soc_folder_is_not_deleted(tmp_path, capsys):
    out = tmp_path / "out"
    assert _build_ir(out) == 0
    notes = out / "Ascend910B1" / "my notes.txt"
    notes.write_text("mine")
    (out / "Ascend910B1" / "ir" / "extra.mlir").write_text("mine too")
    before = sorted(os.listdir(str(out / "Ascend910B1")))
    capsys.readouterr()
    assert _build_ir(out) == 2
    err = capsys.readouterr().err
    assert "my notes.txt" in err and "ir/extra.mlir" in err and "--force" in err
    assert notes.read_text() == "mine" and sorted(os.listdir(str(out / "Ascend910B1"))) == before


def test_force_replaces_the_folder_whole(tmp_path):
    out = tmp_path / "out"
    assert _build_ir(out) == 0
    (out / "Ascend910B1" / "my notes.txt").write_text("mine")
    assert _build_ir(out, "--force") == 0
    assert sorted(os.listdir(str(out / "Ascend910B1"))) == ["ir", "manifest.json"]
    kernel_manifest.load_manifest(str(out / "Ascend910B1" / "manifest.json"))


def test_a_rebuild_over_its_own_output_needs_no_force(tmp_path):
    out = tmp_path / "out"
    assert _build_ir(out) == 0
    first = (out / "Ascend910B1" / "manifest.json").read_bytes()
    assert _build_ir(out) == 0
    assert (out / "Ascend910B1" / "manifest.json").read_bytes() == first
    assert sorted(os.listdir(str(out))) == ["Ascend910B1"]  # no staging or old folder left


def test_which_names_a_build_writes():
    assert builder.written_by_build("manifest.json")
    assert builder.written_by_build("add_custom_flat_bfloat16.npubin")
    assert builder.written_by_build("ir/add_custom_flat_int32.linalg.mlir")
    for name in ("notes.txt", "add_custom_flat_float64.npubin", "ir/add_custom_flat_int32.llvm.mlir",
                 "ir/x/add_kernel_int32.ttir.mlir", "manifest.json.bak"):
        assert not builder.written_by_build(name), name


@pytest.mark.parametrize("setup, words, status", [
    (lambda t: (t / "a file").write_text("x") and t / "a file", "exists and is not a folder", 2),
    (lambda t: (t / "f").write_text("x") and t / "f" / "sub", "is not a folder", 2),
    (lambda t: t / "soc-is-file", "exists and is not a folder this build wrote", 2),
    (lambda t: "/proc/tf-ge-custom-test/out", "cannot", 1),
])
def test_an_out_it_cannot_use_is_a_clear_error_before_compiling(tmp_path, capsys, setup,
                                                                 words, status):
    out = setup(tmp_path)
    if str(out).endswith("soc-is-file"):
        out.mkdir()
        (out / "Ascend910B1").write_text("a file where the SoC folder goes")
    assert cli.main(["build-kernels", "--ir-only", "--soc", "Ascend910B1", "--out", str(out)]
                    ) == status
    err = capsys.readouterr().err
    assert err.startswith("tf-ge-custom build-kernels: error:") and words in err


def test_the_api_refuses_a_foreign_folder_before_compiling(tmp_path, monkeypatch):
    out = tmp_path / "out"
    (out / "Ascend910B1").mkdir(parents=True)
    (out / "Ascend910B1" / "keep.bin").write_bytes(b"x")
    monkeypatch.setattr(builder.frontend, "load_kernel",
                        lambda *a: pytest.fail("compiled before refusing"))
    with pytest.raises(ValueError, match="keep.bin"):
        builder.build_kernels(["Ascend910B1"], ["float32"], str(out), ir_only=True)
    with pytest.raises(ValueError, match="max_programs"):
        builder.build_kernels(["Ascend910B1"], ["float32"], str(out), ir_only=True,
                              max_programs="8")


def test_cann_version_files_that_are_fifos_or_binary_do_not_block_the_build(tmp_path,
                                                                           odd_files):
    home = tmp_path / "cann"
    (home / "compiler").mkdir(parents=True)
    odd_files.make("fifo", home / "compiler" / "version.info")
    (home / "version.info").write_bytes(b"Version=\xff\xfe\n")
    (home / "ascend_toolkit_install.info").write_text("version=8.5.0\n")
    assert odd_files.finishes(toolchain.cann_version, {"ASCEND_HOME_PATH": str(home)}) == "8.5.0"


def test_list_kernels_counts_a_dtype_only_with_every_variant(tmp_path, capsys):
    # valid_binaries carries flat float32 and int32 and row_16x256 float32: a valid manifest,
    # but no dtype has every variant the GE library may need.
    soc_folder(tmp_path / "out" / "Ascend910B1")
    assert cli.main(["list-kernels", "--dir", str(tmp_path / "out")]) == 0
    assert "float32 int32" in capsys.readouterr().out
    assert cli.main(["list-kernels", "--dir", str(tmp_path / "out"), "--soc", "Ascend910B1",
                     "--dtype", "float32"]) == 1
    err = capsys.readouterr().err
    assert "lacks kernel variant(s) scalar, row_1x4096, row_128x32" in err and "float32" in err
