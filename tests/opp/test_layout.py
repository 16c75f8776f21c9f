"""The OPP root inside the installed package, and the setup.py step that makes it.

Oracles: ARCHITECTURE.md's tree (op_graph/include, op_graph/lib/linux/<arch>,
framework/tensorflow/npu_supported_ops.json, kernels/) and interfaces.md's
build_info["opp"] record.
"""
import json
import os
from pathlib import Path

import pytest

import tf_ge_custom
from tf_ge_custom import _library, op_def, opp
from tf_ge_custom._build import BuildContext, opp_step

REPO = Path(__file__).resolve().parents[2]
# every op of the records, in their order (an op added to them included)
TYPES = [op.type_name for op in op_def.OPS]


def _in_words(names):
    """"A", "A and B", "A, B and C", written out here."""
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


def _host_arch_by_hand():
    machine = os.uname().machine
    return {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(machine, machine)


def test_opp_root_is_the_absolute_opp_folder_of_the_installed_package():
    root = tf_ge_custom.opp_root()
    assert os.path.isabs(root)
    assert root == os.path.join(os.path.dirname(os.path.abspath(tf_ge_custom.__file__)), "opp")


def test_installed_tree_has_every_folder_the_later_steps_fill():
    root = Path(tf_ge_custom.opp_root())
    arch = _host_arch_by_hand()
    for folder in ("op_graph/include", "op_graph/lib/linux/" + arch, "kernels",
                   "framework/tensorflow"):
        assert (root / folder).is_dir(), folder
    assert (root / "framework/tensorflow/npu_supported_ops.json").is_file()


def test_no_tensorflow_side_library_under_framework():
    # GE dlopens every .so under <root>/framework/ recursively: the op library lives elsewhere.
    root = Path(tf_ge_custom.opp_root())
    assert not list((root / "framework").rglob("*.so"))
    assert not Path(tf_ge_custom.library_path()).resolve().is_relative_to(root.resolve())


def test_build_records_the_opp_root():
    info = _library.build_info()
    ge = info["ge"]
    assert info["opp"] == {
        "root": "opp", "arch": _host_arch_by_hand(),
        "json": "framework/tensorflow/npu_supported_ops.json",
        # the ops go to the NPU only where the GE library can run them
        "npu_ops": TYPES if ge["built"] else [],
        "npu_ops_missing_because": None if ge["built"] else
        "the GE library was not built: " + ge["reason"]}


@pytest.mark.parametrize("machine, arch", [
    ("x86_64", "x86_64"), ("AMD64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64"),
    ("riscv64", "riscv64"),
])
def test_host_arch_uses_ge_folder_names(machine, arch):
    assert opp.host_arch(machine) == arch
    assert opp.ge_library_dir(arch) == "op_graph/lib/linux/" + arch


GE_BUILT = {"built": True, "reason": "", "libraries": [], "headers": []}
GE_SKIPPED = {"built": False, "reason": "CANN 8.5.0 at /cann cannot host the GE library: ...",
              "libraries": [], "headers": []}


def _run_step(tmp_path, source_root=REPO, ge=None):
    package = tmp_path / "pkg" / "tf_ge_custom"
    ctx = BuildContext(str(source_root), str(package), str(tmp_path / "temp"))
    if ge is not None:  # what the GE step, which runs first, recorded
        ctx.build_info["ge"] = dict(ge)
    opp_step.run(ctx)
    return ctx, package / "opp"


def _installed_json(root):
    return json.loads((root / "framework/tensorflow/npu_supported_ops.json").read_text())


@pytest.mark.parametrize("ge, listed, why", [
    # TF Adapter's entry for every op of the records: both hints false
    (GE_BUILT, {name: {"isGray": False, "isHeavy": False} for name in TYPES}, None),
    (GE_SKIPPED, {}, "the GE library was not built: " + GE_SKIPPED["reason"]),
    (None, {}, "this build has no GE step record"),
])
def test_step_builds_the_skeleton_and_records_it(tmp_path, ge, listed, why):
    ctx, root = _run_step(tmp_path, ge=ge)
    arch = _host_arch_by_hand()
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == sorted([
        "framework/tensorflow/npu_supported_ops.json",
        "kernels/README.txt",
        "op_graph/include/README.txt",
        "op_graph/lib/linux/%s/README.txt" % arch,
    ])
    # TF Adapter hands a listed op to GE: listed only where the GE library can run it
    # (docs/npu.md, "Which ops go to the NPU")
    assert _installed_json(root) == listed
    assert ctx.build_info["opp"] == {"root": "opp", "arch": arch,
                                     "json": "framework/tensorflow/npu_supported_ops.json",
                                     "npu_ops": list(listed), "npu_ops_missing_because": why}


def test_without_the_ge_library_the_build_says_why_the_ops_stay_on_the_cpu(tmp_path, capsys):
    _run_step(tmp_path, ge=GE_SKIPPED)
    err = capsys.readouterr().err
    assert ("npu_supported_ops.json lists no op, so TF Adapter keeps %s "
            "on the CPU kernel: the GE library was not built: CANN 8.5.0 at /cann" % _in_words(TYPES)) in err
    assert TYPES[:2] == ["AddCustom", "LeakyReluCustom"]


def test_step_is_repeatable_and_drops_libraries_an_earlier_build_left(tmp_path):
    _ctx, root = _run_step(tmp_path)
    stale = root / "framework" / "tensorflow" / "libold_parsers.so"
    stale.write_bytes(b"\x7fELF")
    nested = root / "framework" / "deep" / "x.so"
    nested.parent.mkdir()
    nested.write_bytes(b"\x7fELF")
    ours = root / "framework" / "tensorflow" / "libtf_ge_custom_parsers.so"
    ours.write_bytes(b"\x7fELF")  # as the GE step installs it before this step runs
    kept = root / "kernels" / "Ascend910B1" / "manifest.json"
    kept.parent.mkdir()
    kept.write_text("{}")
    _run_step(tmp_path, ge=dict(GE_BUILT, libraries=[
        "framework/tensorflow/libtf_ge_custom_parsers.so"]))
    assert not stale.exists() and not nested.exists()
    assert ours.exists()  # the GE step's own plugin stays
    assert kept.read_text() == "{}"  # other steps' outputs are not the OPP step's to touch


def test_step_warns_when_the_shipped_copy_drifted(tmp_path, capsys):
    source = tmp_path / "src"
    (source / "framework" / "tensorflow").mkdir(parents=True)
    (source / "framework" / "tensorflow" / "npu_supported_ops.json").write_text('{"Old": {}}\n')
    _ctx, root = _run_step(tmp_path, source_root=source)
    assert "differs from the op definition" in capsys.readouterr().err
    # The package still gets the JSON generated from the op definition.
    assert (root / "framework/tensorflow/npu_supported_ops.json").read_text() == opp.supported_ops_json(())
