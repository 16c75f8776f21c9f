"""Finding 1, as real processes through the console script: a board name the runtime reports
(Ascend910B4-1, Ascend910_9361) takes a kernel set of its architecture, and a kernel bundle
built once serves it without a compile.

The bundle's npubins come from the hivmc TEST DOUBLE (tests/ge/doubles/hivmc: it writes the
sha256 of the HIVM IR it is given, no device code): everything around hivmc is real (the
builder's stages, the manifest, the bundle, the readers, the GE library's decision). That an
npubin built for one SoC runs on another of its architecture is checked only on an Ascend host
(docs/kernels.md, "Which kernels a board takes")."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from tf_ge_custom import kernel_manifest, op_def
from tf_ge_custom.kernels import socs

DOUBLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doubles")
COMMAND = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
OP = op_def.ADD_CUSTOM
pytestmark = pytest.mark.slow  # a bundle build / a venv: tens of seconds


def _env(tmp, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG")) and k != "ASCEND_HOME_PATH"}
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp / "cache")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _cli(args, env, cwd, timeout=900):
    return subprocess.run([COMMAND] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=str(cwd), timeout=timeout)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """``build-kernels --bundle DIR --soc Ascend910B4`` on a host whose hivmc is the double."""
    tmp = tmp_path_factory.mktemp("bundle")
    bindir = tmp / "cann-bin"
    bindir.mkdir()
    shutil.copy(os.path.join(DOUBLES, "hivmc"), str(bindir / "hivmc"))
    home = tmp / "ascend-toolkit"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text("Version=8.5.0\nplatform=x86_64\n")
    env = _env(tmp, ASCEND_HOME_PATH=home)
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env["PATH"])
    out = tmp / "bundle"
    proc = _cli(["build-kernels", "--bundle", str(out), "--soc", "Ascend910B4", "--quiet"], env, tmp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


def test_the_bundle_holds_every_variant_and_dtype_and_says_which_boards_it_serves(bundle):
    out, stdout = bundle
    document = json.loads((out / "bundle.json").read_text())
    assert document["socs"] == ["Ascend910B4"] and document["architectures"] == ["dav-2201"]
    # every board of the architecture, aliases included, is served by it
    assert sorted(document["boards"]) == sorted(socs.board_names())
    assert document["boards"]["Ascend910B4-1"] == "Ascend910B4"
    manifest = kernel_manifest.load_manifest(str(out / "Ascend910B4" / "manifest.json"), check_files=True)
    assert manifest.architecture == "dav-2201" and not manifest.ir_only
    assert sorted((k.op, k.variant, k.dtype) for k in manifest.kernels) == sorted(
        (op.type_name, v.name, d) for op in op_def.OPS for v in op.kernel.variants for d in op.dtypes)
    assert "TF_GE_CUSTOM_KERNELS=%s" % out in stdout


def test_list_kernels_serves_a_board_from_the_bundle_and_says_where_it_came_from(bundle, tmp_path):
    out, _ = bundle
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS=out)
    proc = _cli(["list-kernels", "--soc", "Ascend910B4-1", "--dtype", "float16,int32"], env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[dav-2201; from the bundle %s]" % out in proc.stdout
    assert "Ascend910B4-1: the Ascend910B4 kernels (same architecture) from the kernel bundle %s" % out in proc.stdout
    # without the bundle nothing serves it: exit 1, naming it
    bare = _cli(["list-kernels", "--soc", "Ascend910B4-1"], _env(tmp_path), tmp_path)
    assert bare.returncode == 1 and "no valid kernels for Ascend910B4-1" in bare.stderr


def test_doctor_says_which_kernel_set_a_board_takes(bundle, tmp_path):
    out, _ = bundle
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS=out)
    proc = _cli(["doctor", "--soc", "Ascend910_9361", "--json"], env, tmp_path)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    board = checks["kernels for Ascend910_9361"]
    assert board["status"] == "OK", board
    assert board["data"]["served_by"] == "Ascend910B4"
    assert "the kernel bundle %s" % out in board["detail"]
    bad = _cli(["doctor", "--soc", "Ascend910B9"], env, tmp_path)
    assert bad.returncode == 2 and "unsupported SoC 'Ascend910B9'" in bad.stderr
    assert "Ascend910B4-1 (by Ascend910B4)" in bad.stderr and "Traceback" not in bad.stderr


def test_selftest_kernels_stage_passes_for_a_board_served_by_the_bundle(bundle, tmp_path):
    out, _ = bundle
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS=out)
    proc = _cli(["selftest", "--soc", "Ascend910B4-1", "--only", "KERNELS"], env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KERNELS=PASS (Ascend910B4-1: the Ascend910B4 kernels (same architecture) from the kernel bundle" in proc.stdout


def test_the_ge_librarys_decision_takes_the_bundles_set_for_the_board(bundle, tmp_path, native_build):
    """CompilableOp::Compile's core (the compile driver) for SoC Ascend910B4-1, NpuArch 2201:
    the bundle's Ascend910B4 set, no compile; Execute's lookup for the board answers its bytes."""
    out, _ = bundle
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS=out, TF_GE_CUSTOM_PYTHON="/nonexistent/python")
    from tf_ge_custom import opp

    proc = subprocess.run([native_build.exe("tf_ge_custom_compile_driver"), "--opp-root", opp.opp_root(),
                           "--soc", "Ascend910B4-1", "--dtype", "bfloat16", "--npu-arch", "2201"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=300)
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["ok"], result
    assert result["origin"] == "same-architecture" and result["compiles"] == 0
    assert "the Ascend910B4 kernels of the same architecture dav-2201 from the kernel bundle" in result["note"]
    manifest = kernel_manifest.load_manifest(str(out / "Ascend910B4" / "manifest.json"), check_files=True)
    assert result["sha256"] == {v.name: manifest.kernel(OP.type_name, v.name, "bfloat16").sha256
                                for v in OP.kernel.variants}
    # another NpuArch takes nothing of it: it would compile (and here fails naming the Python)
    other = subprocess.run([native_build.exe("tf_ge_custom_compile_driver"), "--opp-root", opp.opp_root(),
                            "--soc", "Ascend910B4-1", "--dtype", "bfloat16", "--npu-arch", "3510"],
                           stdout=subprocess.PIPE, universal_newlines=True, env=env, timeout=300)
    refused = json.loads(other.stdout.splitlines()[-1])
    assert not refused["ok"] and "TF_GE_CUSTOM_PYTHON=/nonexistent/python" in refused["error"]


def test_build_kernels_takes_a_board_name_and_builds_the_soc_serving_it(tmp_path):
    proc = _cli(["build-kernels", "--soc", "Ascend910B4-1", "--dtype", "float32", "--ir-only",
                 "--out", str(tmp_path / "out"), "--quiet"], _env(tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.listdir(str(tmp_path / "out")) == ["Ascend910B4"]
    assert "Ascend910B4-1: a board name, served by the Ascend910B4 kernels (architecture dav-2201)" in proc.stdout
    document = json.loads((tmp_path / "out" / "Ascend910B4" / "manifest.json").read_text())
    assert (document["soc"], document["architecture"], document["vector_core_count"]) == ("Ascend910B4", "dav-2201", 40)


def test_every_board_name_resolves_to_a_buildable_soc_of_its_architecture_and_core_count():
    for name, alias in socs.ALIASES.items():
        served = socs.get(name)
        assert served.name in socs.SOCS and served.vector_cores == alias.vector_cores
        assert "-" not in served.name
    assert socs.resolve("Ascend910B4-1") == "Ascend910B4"
    assert socs.resolve("Ascend910_9361") == "Ascend910_9362"
    assert socs.vector_cores_of("Ascend910B4-1") == 40
    assert {s.architecture for s in socs.SOCS.values()} == {"dav-2201"}
    with pytest.raises(KeyError):
        socs.get("Ascend910B9")
