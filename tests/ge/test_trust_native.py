"""The trust rule where the GE library reads the paths (docs/kernels.md, "What the package
trusts"), as real processes: tf_ge_custom_compile_driver runs what CompilableOp::Compile runs
(the package's kernels, the per-user cache, the bundles of TF_GE_CUSTOM_KERNELS, the builder
found from the environment). The builder is the kernel compiler double of tests/ge/doubles/
(the real entry point, lock and rename, with only the build step replaced): these tests assert
what the GE library and the cache's writer decide, never what the double builds.

Another user's cache is a folder chown'ed to ``nobody``: the suite runs as root, as CI does.
"""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom.kernels import cache

pytestmark = pytest.mark.kind("doubles")

DOUBLE = pathlib.Path(__file__).resolve().parent / "doubles" / "kernel_compiler_double"
OPP_ROOT = tf_ge_custom.opp_root()
NOBODY = 65534
SOC, DTYPE = "Ascend910B1", "float32"


@pytest.fixture(scope="module")
def driver(native_build):
    return native_build.exe("tf_ge_custom_compile_driver")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG")) and k != "ASCEND_HOME_PATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env.update(TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache"), TF_GE_CUSTOM_PYTHON=str(DOUBLE),
               TF_GE_CUSTOM_DOUBLE_PYTHON=sys.executable, TF_GE_CUSTOM_DOUBLE_MODE="build",
               TF_GE_CUSTOM_DOUBLE_COUNT=str(tmp_path / "builds.txt"))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _compile(driver, env, cwd=None, umask=None, timeout=300):
    proc = subprocess.run([driver, "--opp-root", OPP_ROOT, "--soc", SOC, "--dtype", DTYPE], env=env,
                          cwd=str(cwd) if cwd else None, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout,
                          preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    assert lines, (proc.returncode, proc.stdout, proc.stderr)
    result = json.loads(lines[-1])
    assert (proc.returncode == 0) == result["ok"], result
    return result


def _builds(tmp_path):
    path = tmp_path / "builds.txt"
    return path.read_text().splitlines() if path.exists() else []


def _entry(tmp_path, env):
    return tmp_path / "cache" / SOC / cache.identity(env).key / "AddCustom" / DTYPE


def _give_away(top, uid, folder_mode, file_mode):
    for folder, dirs, names in os.walk(str(top)):
        for path, mode in [(folder, folder_mode)] + [(os.path.join(folder, n), file_mode) for n in names]:
            os.lchown(path, uid, -1)
            if not os.path.islink(path):
                os.chmod(path, mode)


def _as_root():
    if os.geteuid() != 0:
        pytest.fail("another user's folder is made with chown, which needs root; run the suite as "
                    "root, as CI does")


def test_a_link_at_the_lock_stops_the_graph_builds_compile_and_its_target_is_untouched(driver, tmp_path):
    env = _env(tmp_path)
    key_dir = _entry(tmp_path, env).parent
    key_dir.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (key_dir / (DTYPE + ".lock")).symlink_to(victim)
    result = _compile(driver, env)
    assert victim.read_text() == "the user's own file\n"
    assert not result["ok"] and "is a symbolic link; it is never written through" in result["error"], result
    assert _builds(tmp_path) == []


def test_another_users_cache_is_not_loaded_though_its_checksums_match(driver, tmp_path):
    _as_root()
    env = _env(tmp_path)
    first = _compile(driver, env)  # the writer fills the cache (double build)
    assert first["ok"] and first["origin"] == "compiled", first
    _give_away(tmp_path / "cache", NOBODY, 0o777, 0o666)
    result = _compile(driver, env)
    assert not result["ok"], result
    assert result["error"].startswith("the kernel cache %s is not trusted" % (tmp_path / "cache")), result
    assert "owned by uid 65534 (nobody)" in result["error"]
    assert result["compiles"] == 0 and len(_builds(tmp_path)) == 1  # nothing compiled into it
    _give_away(tmp_path / "cache", 0, 0o700, 0o644)  # the user's again: read as it is
    again = _compile(driver, env)
    assert again["ok"] and again["origin"] == "cache" and again["sha256"] == first["sha256"], again


@pytest.mark.parametrize("target_owner", [0, NOBODY])
def test_an_entry_linking_elsewhere_is_judged_by_the_rule(driver, tmp_path, target_owner):
    _as_root()
    env = _env(tmp_path)
    first = _compile(driver, env)
    entry = _entry(tmp_path, env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    shutil.move(str(entry), str(elsewhere / DTYPE))
    _give_away(elsewhere / DTYPE, target_owner, 0o700, 0o644)
    entry.symlink_to(elsewhere / DTYPE)
    result = _compile(driver, env)
    assert result["ok"], result
    if target_owner == 0:
        assert result["origin"] == "cache" and result["sha256"] == first["sha256"]
        assert len(_builds(tmp_path)) == 1
    else:  # not used: compiled again, the link stepped aside, its target left alone
        assert result["origin"] == "compiled" and len(_builds(tmp_path)) == 2
        assert not os.path.islink(str(entry))
        assert os.stat(str(elsewhere / DTYPE / "manifest.json")).st_uid == NOBODY


def test_a_compile_at_graph_build_makes_a_private_cache_whatever_the_umask(driver, tmp_path):
    env = _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR=tmp_path / "new" / "cache")
    result = _compile(driver, env, umask=0)
    assert result["ok"] and result["origin"] == "compiled", result
    modes = {}
    for folder, dirs, names in os.walk(str(tmp_path / "new")):
        modes[folder] = stat.S_IMODE(os.lstat(folder).st_mode)
        for name in names:
            modes[os.path.join(folder, name)] = stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode)
    entry = tmp_path / "new" / "cache" / SOC / cache.identity(env).key / "AddCustom" / DTYPE
    assert modes.pop(str(entry) + ".lock") == 0o600
    assert str(entry / "manifest.json") in modes
    assert {m for p, m in modes.items() if os.path.isdir(p)} == {0o700}, modes
    assert {m for p, m in modes.items() if not os.path.isdir(p)} == {0o644}, modes


def test_a_relative_builder_python_is_refused_not_run_from_the_working_folder(driver, tmp_path):
    work = tmp_path / "training-job"
    work.mkdir()
    marker = tmp_path / "ran.txt"
    planted = work / "python3"
    planted.write_text("#!/bin/sh\necho ran > %s\n" % marker)
    planted.chmod(0o755)
    result = _compile(driver, _env(tmp_path, TF_GE_CUSTOM_PYTHON="python3"), cwd=work)
    assert not marker.exists()
    assert result["error"].startswith("TF_GE_CUSTOM_PYTHON=python3 is not an absolute path"), result
    assert "TF_GE_CUSTOM_PYTHON=$(command -v python3)" in result["error"]


def test_a_builder_python_others_may_write_is_not_run(driver, tmp_path):
    marker = tmp_path / "ran.txt"
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text("#!/bin/sh\necho ran > %s\n" % marker)
    python.chmod(0o777)
    result = _compile(driver, _env(tmp_path, TF_GE_CUSTOM_PYTHON=python))
    assert not marker.exists()
    assert result["error"].startswith("TF_GE_CUSTOM_PYTHON=%s is not trusted" % python), result
    assert "writable by group and others (mode 0777)" in result["error"]


@pytest.mark.parametrize("kind, words", [
    ("file", "is a file, not a folder"),
    ("fifo", "is a FIFO (named pipe), not a folder"),
    ("missing", "does not exist"),
    ("relative", "is not an absolute path"),
])
def test_a_bundle_entry_that_is_no_trusted_folder_fails_the_graph_build_by_name(driver, tmp_path, kind, words):
    entry = {"file": tmp_path / "a-file", "fifo": tmp_path / "a-fifo", "missing": tmp_path / "missing",
             "relative": "bundle"}[kind]
    if kind == "file":
        entry.write_text("not a bundle\n")
    elif kind == "fifo":
        os.mkfifo(str(entry))
    work = tmp_path / "work"
    (work / "bundle").mkdir(parents=True)
    result = _compile(driver, _env(tmp_path, TF_GE_CUSTOM_KERNELS="%s:" % entry), cwd=work, timeout=120)
    assert not result["ok"], result
    assert result["error"].startswith("TF_GE_CUSTOM_KERNELS entry %s is refused: " % entry), result
    assert words in result["error"]
    assert _builds(tmp_path) == []  # refused before anything else, nothing compiled


def _dotdot_layout(tmp_path):
    """W/a/link -> ../real/sub: W/a/link/../X is W/real/X for the kernel, W/a/X for normpath
    (a decoy folder there). Returns W."""
    top = tmp_path / "W"
    for folder in ("a", "real", "real/sub"):
        (top / folder).mkdir(parents=True)
    (top / "a" / "link").symlink_to("../real/sub")
    return top


def test_a_cache_named_through_dotdot_after_a_link_is_the_one_the_system_means(driver, tmp_path):
    """The issue's layout: the GE library's compile finds the valid entry in W/real/cache and
    builds nothing; normpath's W/a/cache stays as it was."""
    top = _dotdot_layout(tmp_path)
    (top / "a" / "cache").mkdir()
    first = _compile(driver, _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR=top / "real" / "cache"))
    assert first["ok"] and first["origin"] == "compiled" and len(_builds(tmp_path)) == 1, first
    env = _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR="%s/a/link/../cache" % top)
    again = _compile(driver, env)
    assert again["ok"] and again["origin"] == "cache" and again["sha256"] == first["sha256"], again
    assert len(_builds(tmp_path)) == 1 and os.listdir(str(top / "a" / "cache")) == []


def test_a_bundle_named_through_dotdot_after_a_link_serves_the_graph_build(driver, tmp_path):
    """TF_GE_CUSTOM_KERNELS=W/a/link/../bundle: the GE library reads W/real/bundle (the set the
    cache's writer made, moved there), compiles nothing and names where it read it."""
    top = _dotdot_layout(tmp_path)
    made = _compile(driver, _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR=tmp_path / "made"))
    assert made["ok"], made
    (top / "real" / "bundle").mkdir()
    (top / "a" / "bundle").mkdir()  # normpath's reading: an empty folder
    shutil.move(str(tmp_path / "made" / SOC / cache.identity(_env(tmp_path)).key / "AddCustom" / DTYPE),
                str(top / "real" / "bundle" / SOC))
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS="%s/a/link/../bundle" % top,
               TF_GE_CUSTOM_CACHE_DIR=tmp_path / "empty-cache", TF_GE_CUSTOM_PYTHON="/nonexistent/python")
    result = _compile(driver, env)
    assert result["ok"] and result["compiles"] == 0 and result["sha256"] == made["sha256"], result
    assert "kernel bundle %s" % (top / "real" / "bundle") in result["note"], result
    assert len(_builds(tmp_path)) == 1
