"""Finding 6, as real processes: on a Python 3.7 host (TF Adapter's), kernels need a second,
newer Python. ``tf-ge-custom setup-builder`` makes it (a Python 3.11 venv here, reusing this
venv's triton-ascend with --with-site-packages instead of downloading it); the GE library's
check takes it; build-kernels on Python 3.7 says what to do, then runs in it.

The Python 3.7 here is pyenv's 3.7.16 reading this package's pure-Python files (their syntax is
3.7's); no TensorFlow 1.15 runs."""
import json
import os
import subprocess
import sys
import sysconfig

import pytest

COMMAND = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
PY37 = os.path.expanduser("~/.pyenv/versions/3.7.16/bin/python3.7")
SITE = sysconfig.get_paths()["purelib"]  # this venv's: the package and triton-ascend
BASE = os.path.join(sys.base_prefix, "bin", "python3")  # a Python 3.11 without triton
pytestmark = pytest.mark.slow  # a bundle build / a venv: tens of seconds


def _env(tmp, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_GE_CUSTOM_", "BISHENG"))}
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp / "cache")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _on_py37(args, env, cwd):
    """``tf-ge-custom ARGS`` run by Python 3.7 over this package's files."""
    code = ("import builtins, sys\n"
            "builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True\n"
            "sys.path.insert(0, %r)\n"
            "from tf_ge_custom import cli\n"
            "sys.exit(cli.main(sys.argv[1:]))\n" % SITE)
    return subprocess.run([PY37, "-c", code] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=str(cwd), timeout=600)


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("builder")
    venv = tmp / "builder"
    proc = subprocess.run([COMMAND, "setup-builder", "--python", BASE, "--venv", str(venv),
                           "--with-site-packages", SITE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(tmp), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return venv, proc.stdout


def test_setup_builder_makes_a_venv_the_ge_librarys_check_takes(builder, tmp_path):
    venv, stdout = builder
    assert "builder venv ready: %s/bin/python (Python 3.11" % venv in stdout
    copy = venv / "lib" / "python3.11" / "site-packages" / "tf_ge_custom"
    assert (copy / "kernels" / "compile_kernel.py").is_file() and not list(copy.rglob("*.so"))
    assert json.loads((copy / "builder_copy.json").read_text())["copied_from"].startswith(SITE)
    # what the GE library runs: its bootstrap with "" (the venv's own copy) and --describe
    from tf_ge_custom import _builder_venv as builder_venv

    described = builder_venv.describe(str(venv / "bin" / "python"), "", environ=_env(tmp_path))
    assert described["ok"] and described["triton_error"] == "" and described["python_version"].startswith("3.11")
    assert described["package"] == str(copy)


def test_a_python_without_triton_is_refused_by_setup_builder(tmp_path):
    proc = subprocess.run([COMMAND, "setup-builder", "--python", BASE, "--venv", str(tmp_path / "b"),
                           "--no-install"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(tmp_path), timeout=600)
    assert proc.returncode == 1
    assert "does not pass the GE library's check: it cannot import triton" in proc.stderr
    # what it made is recorded all the same (python -m venv's every file), and clean takes it all
    record = json.loads((tmp_path / "b" / ".tf-ge-custom-builder").read_text())
    walked = {os.path.relpath(os.path.join(d, n), str(tmp_path / "b"))
              for d, dirs, files in os.walk(str(tmp_path / "b")) for n in dirs + files}
    assert set(record["paths"]) == (walked - {".tf-ge-custom-builder"}) | {""}
    cleaned = subprocess.run([COMMAND, "clean"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, env=_env(tmp_path, TF_GE_CUSTOM_BUILDER=tmp_path / "b"),
                             timeout=600)
    assert cleaned.returncode == 0 and "removed: %s (builder venv, " % (tmp_path / "b") in cleaned.stdout, cleaned
    assert not os.path.lexists(str(tmp_path / "b"))
    old = subprocess.run([COMMAND, "setup-builder", "--python", PY37, "--venv", str(tmp_path / "c")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         env=_env(tmp_path), timeout=600) if os.path.isfile(PY37) else None
    if old is not None:
        assert old.returncode == 1 and "is Python 3.7; triton-ascend needs Python >= 3.9" in old.stderr


def test_build_kernels_on_python37_says_to_run_setup_builder(tmp_path):
    if not os.path.isfile(PY37):
        pytest.skip("TensorFlow 1.15 has no Python 3.7 interpreter here (pyenv 3.7.16 absent)")
    proc = _on_py37(["build-kernels", "--soc", "Ascend910B4-1", "--ir-only", "--out", str(tmp_path / "o")],
                    _env(tmp_path, TF_GE_CUSTOM_BUILDER=tmp_path / "none"), tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "this is Python 3.7, and triton-ascend has no build for Python < 3.9" in proc.stderr
    assert "run `tf-ge-custom setup-builder` once" in proc.stderr and "Traceback" not in proc.stderr


def test_build_kernels_on_python37_runs_in_the_builder_venv(builder, tmp_path):
    if not os.path.isfile(PY37):
        pytest.skip("TensorFlow 1.15 has no Python 3.7 interpreter here (pyenv 3.7.16 absent)")
    venv, _ = builder
    out = tmp_path / "o"
    proc = _on_py37(["build-kernels", "--soc", "Ascend910B4-1", "--dtype", "float32", "--ir-only",
                     "--out", str(out), "--quiet"], _env(tmp_path, TF_GE_CUSTOM_BUILDER=venv), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "build-kernels runs in the builder venv (%s/bin/python)" % venv in proc.stderr
    manifest = json.loads((out / "Ascend910B4" / "manifest.json").read_text())
    assert (manifest["soc"], manifest["architecture"]) == ("Ascend910B4", "dav-2201")


def test_doctor_finds_the_builder_venv(builder, tmp_path):
    venv, _ = builder
    proc = subprocess.run([COMMAND, "doctor", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=_env(tmp_path, TF_GE_CUSTOM_BUILDER=venv),
                          cwd=str(tmp_path), timeout=600)
    shown = json.loads(proc.stdout)["checks"]  # on a CPU host the stack's checks are folded into one
    check = {c["name"]: c for c in shown + [f for c in shown for f in c["data"].get("folded", [])]}["kernel builder"]
    # this venv's own Python imports triton, so it is taken first; the venv is the next candidate
    assert check["status"] == "OK" and check["data"]["python"] == sys.executable
    from tf_ge_custom import doctor

    ctx = doctor.Context(environ=_env(tmp_path, TF_GE_CUSTOM_BUILDER=venv))
    ctx.builder_describe = lambda python, parent, env: (
        {"ok": False, "error": "it cannot import triton (ModuleNotFoundError)"} if python == sys.executable
        else doctor.kernels._describe_builder(python, parent, env))
    result = doctor.check_kernel_builder(ctx)
    assert result.status == "OK" and result.data["python"] == str(venv / "bin" / "python")
