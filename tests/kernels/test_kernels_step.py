"""setup.py's kernels step: copy verified npubins + manifests into the OPP root, refuse bad ones."""
import os
import shutil
import sys
import zipfile

import pytest

from tf_ge_custom import _build, _library, cli, kernel_manifest
from tf_ge_custom._build import kernels_step

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "manifests")
GOOD = os.path.join(FIXTURES, "valid_binaries")  # binaries of valid_binaries.json (Ascend910B1)


def soc_folder(dst):
    """The valid fixture as build-kernels lays it out: <dst>/manifest.json + npubins."""
    shutil.copytree(GOOD, dst)
    shutil.copy(GOOD + ".json", os.path.join(dst, "manifest.json"))
    return dst


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    monkeypatch.delenv(kernels_step.ENV, raising=False)
    source = tmp_path / "src"
    (source / "kernels" / "prebuilt").mkdir(parents=True)
    return _build.BuildContext(str(source), str(tmp_path / "pkg"), str(tmp_path / "tmp"))


@pytest.fixture
def kernels_dir(tmp_path, monkeypatch):
    """A build-kernels output folder holding the valid fixture for Ascend910B1."""
    out = tmp_path / "built"
    soc_folder(str(out / "Ascend910B1"))
    (out / "Ascend910B1" / "ir").mkdir()
    (out / "Ascend910B1" / "ir" / "add_custom_flat_float32.hivm.mlir").write_text("module {}")
    monkeypatch.setenv(kernels_step.ENV, str(out))
    return out


def test_copies_manifest_and_named_binaries_only(ctx, kernels_dir):
    kernels_step.run(ctx)
    dest = os.path.join(ctx.opp_root, "kernels", "Ascend910B1")
    assert sorted(os.listdir(dest)) == ["add_custom_flat_float32.npubin", "add_custom_flat_int32.npubin",
                                        "add_custom_row_16x256_float32.npubin", "manifest.json"]
    for name in os.listdir(dest):
        with open(os.path.join(dest, name), "rb") as a, \
                open(os.path.join(str(kernels_dir / "Ascend910B1"), name), "rb") as b:
            assert a.read() == b.read()
    assert ctx.build_info["kernels"] == {"source": str(kernels_dir),
                                         "socs": {"Ascend910B1": ["float32", "int32"]},
                                         "python": sys.executable}
    assert kernel_manifest.find_manifests(ctx.opp_root) == {
        "Ascend910B1": os.path.join(dest, "manifest.json")}


def test_refuses_a_binary_changed_after_the_build(ctx, kernels_dir):
    binary = kernels_dir / "Ascend910B1" / "add_custom_flat_int32.npubin"
    data = binary.read_bytes()
    binary.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # its last byte changed
    with pytest.raises(_build.BuildError) as e:
        kernels_step.run(ctx)
    assert "Ascend910B1" in str(e.value) and "[checksum]" in str(e.value)
    assert not os.path.exists(os.path.join(ctx.opp_root, "kernels"))


def test_refuses_an_ir_only_manifest(ctx, kernels_dir):
    shutil.rmtree(str(kernels_dir / "Ascend910B1"))
    (kernels_dir / "Ascend910B1").mkdir()
    shutil.copy(os.path.join(FIXTURES, "valid_ir_only.json"),
                str(kernels_dir / "Ascend910B1" / "manifest.json"))
    with pytest.raises(_build.BuildError, match="IR-only"):
        kernels_step.run(ctx)


def test_refuses_npubins_without_a_manifest(ctx, kernels_dir):
    (kernels_dir / "Ascend910B3").mkdir()
    (kernels_dir / "Ascend910B3" / "add_custom_flat_float32.npubin").write_bytes(b"\x7fELF")
    with pytest.raises(_build.BuildError, match="without a manifest.json in .*Ascend910B3"):
        kernels_step.run(ctx)


def test_an_explicit_folder_that_does_not_exist_fails(ctx, monkeypatch, tmp_path):
    monkeypatch.setenv(kernels_step.ENV, str(tmp_path / "missing"))
    with pytest.raises(_build.BuildError, match="is not a folder"):
        kernels_step.run(ctx)


def test_empty_prebuilt_records_no_kernels_and_removes_stale_ones(ctx):
    stale = os.path.join(ctx.opp_root, "kernels", "Ascend910B4")
    os.makedirs(stale)
    kernels_step.run(ctx)
    assert ctx.build_info["kernels"] == {"source": None, "socs": {}, "python": sys.executable}
    assert not os.path.exists(stale)


def test_installed_package_records_what_its_opp_root_carries():
    info = _library.build_info()
    assert "kernels" in info, "build_info.json has no kernels record: was setup.py's step run?"
    package = os.path.dirname(os.path.abspath(_library.__file__))
    carried = kernel_manifest.find_manifests(os.path.join(package, "opp"))
    assert sorted(info["kernels"]["socs"]) == sorted(carried)
    # The Python the GE library runs to compile a kernel the package lacks (docs/kernels.md).
    assert info["kernels"]["python"] == sys.executable


def test_list_kernels_checks_a_wheel_for_a_soc(tmp_path, capsys, complete_soc_folder):
    wheel = tmp_path / "tf_ge_custom-0-py3-none-any.whl"
    folder = str(complete_soc_folder(tmp_path / "Ascend910B1", ["float32", "int32"]))
    with zipfile.ZipFile(str(wheel), "w") as zf:
        for name in os.listdir(folder):
            zf.write(os.path.join(folder, name), "tf_ge_custom/opp/kernels/Ascend910B1/" + name)
        zf.writestr("tf_ge_custom/__init__.py", "")
        zf.writestr("tf_ge_custom-0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    assert cli.main(["list-kernels", "--wheel", str(wheel), "--soc", "Ascend910B1",
                     "--dtype", "float32,int32"]) == 0
    out = capsys.readouterr().out
    assert "npubins verified" in out and "CANN 8.5.0" in out
    assert cli.main(["list-kernels", "--wheel", str(wheel), "--soc", "Ascend910_9392"]) == 1
    assert "no valid kernels for Ascend910_9392" in capsys.readouterr().err
    assert cli.main(["list-kernels", "--wheel", str(wheel), "--soc", "Ascend910B1",
                     "--dtype", "bfloat16"]) == 1
    assert "lacks dtype(s) bfloat16" in capsys.readouterr().err
