"""doctor's "kernel cache" line: where the GE library would compile a kernel the package lacks,
whether it could, and what the cache holds (temp folders and environments made by hand; the
hivmc on PATH is the stand-in of tests/ge/doubles/)."""
import importlib.util
import json
import os
import pathlib
import shutil
import sys

from tf_ge_custom import doctor, op_def
from tf_ge_custom.kernels import cache

DOUBLES = pathlib.Path(__file__).resolve().parents[1] / "ge" / "doubles"


def _context(environ, build_info=None):
    return doctor.Context(root=str(pathlib.Path(environ.get("HOME", "/")) / "opp"),
                          build_info=build_info or {"kernels": {"python": sys.executable}},
                          environ=environ, shell_custom_opp_path=None)


def _environ(tmp_path, hivmc=True, **extra):
    path = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
            if p and not os.path.isfile(os.path.join(p, "hivmc"))]
    environ = {"HOME": str(tmp_path / "home"), "PATH": os.pathsep.join(path)}
    if hivmc:
        bindir = tmp_path / "cann-bin"
        bindir.mkdir(exist_ok=True)
        shutil.copy(str(DOUBLES / "hivmc"), str(bindir / "hivmc"))
        home = tmp_path / "toolkit"
        (home / "compiler").mkdir(parents=True, exist_ok=True)
        (home / "compiler" / "version.info").write_text("Version=8.5.0\n")
        environ["PATH"] = str(bindir) + os.pathsep + environ["PATH"]
        environ["ASCEND_HOME_PATH"] = str(home)
    environ.update({k: str(v) for k, v in extra.items()})
    return environ


def test_a_complete_toolchain_and_a_writable_home_are_ok(tmp_path):
    environ = _environ(tmp_path)
    check = doctor.check_kernel_cache(_context(environ))
    assert check.status == doctor.OK, check
    where = str(tmp_path / "home" / ".cache" / "tf-ge-custom" / "kernels")
    assert check.detail.startswith("%s (from HOME), key %s: empty" % (where, cache.identity(environ).key))
    assert "build-kernels --soc <SoC> --cache" in check.detail
    assert check.data["path"] == where and check.data["missing"] == []


def test_a_missing_tool_warns_with_what_to_do(tmp_path):
    check = doctor.check_kernel_cache(_context(_environ(tmp_path, hivmc=False)))
    assert check.status == doctor.WARN
    assert "could not compile it: hivmc is missing" in check.detail
    assert "source its set_env.sh" in check.fix and check.data["missing"] == ["hivmc"]


def test_an_unwritable_or_unusable_cache_warns(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    check = doctor.check_kernel_cache(_context(_environ(tmp_path, TF_GE_CUSTOM_CACHE_DIR=blocker / "k")))
    assert check.status == doctor.WARN and "is not writable by this user" in check.detail
    assert "TF_GE_CUSTOM_CACHE_DIR" in check.fix
    relative = doctor.check_kernel_cache(_context(_environ(tmp_path, TF_GE_CUSTOM_CACHE_DIR="rel/k")))
    assert relative.status == doctor.WARN and "not an absolute path" in relative.detail


def test_a_python_that_is_not_there_warns(tmp_path):
    environ = _environ(tmp_path, TF_GE_CUSTOM_PYTHON=tmp_path / "gone" / "python3")
    check = doctor.check_kernel_cache(_context(environ))
    assert check.status == doctor.WARN
    assert "TF_GE_CUSTOM_PYTHON=%s is not an executable file" % (tmp_path / "gone" / "python3") in check.detail


def test_entries_are_counted_and_damaged_ones_named(tmp_path):
    environ = _environ(tmp_path, TF_GE_CUSTOM_CACHE_DIR=tmp_path / "k")
    spec = importlib.util.spec_from_file_location("kernel_compiler_double",
                                                  str(DOUBLES / "kernel_compiler_double.py"))
    double = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(double)
    env = dict(environ, TF_GE_CUSTOM_DOUBLE_COUNT=str(tmp_path / "n"))
    good = cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build)
    bad = cache.ensure("Ascend910B1", "int32", env=env, build=double.fake_build)
    (pathlib.Path(bad.path) / op_def.ADD_CUSTOM.binary_name("row_1x4096", "int32")).write_bytes(b"x")
    # an entry lacking one variant (an older package's build) is no kernel set either
    partial = cache.ensure("Ascend910B1", "bfloat16", env=env, build=double.fake_build)
    manifest = pathlib.Path(partial.path) / "manifest.json"
    document = json.loads(manifest.read_text())
    document["kernels"] = [k for k in document["kernels"] if k["variant"] != "outer_1x4096"]
    manifest.write_text(json.dumps(document))
    check = doctor.check_kernel_cache(_context(environ))
    assert check.status == doctor.WARN
    assert "1 kernel set(s) of this toolchain (Ascend910B1 float32)" in check.detail
    assert "2 entries fail verification (%s, %s)" % (partial.path, bad.path) in check.detail
    assert check.data["invalid"] == [partial.path, bad.path] and len(check.data["entries"]) == 3
    assert good.path not in check.data["invalid"]


def test_the_check_is_part_of_doctor():
    assert doctor.check_kernel_cache in doctor.CHECKS
