"""Compile at graph build, as real processes: the core's decision (tf_ge_custom_compile_driver,
what CompilableOp::Compile runs) against the installed package's real Python builder, and
against the kernel compiler double (tests/ge/doubles/: the real entry point, lock and rename
with only the build step replaced, or a failing, hanging or crashing builder).

What the double cannot show, and nothing here can: that hivmc accepts the HIVM IR, and that
the npubin runs on an NPU (docs/kernels.md, "What only an Ascend host can check").
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

import tf_ge_custom
from tf_ge_custom import kernel_manifest, op_def
from tf_ge_custom.kernels import cache

DOUBLES = pathlib.Path(__file__).resolve().parent / "doubles"
DOUBLE = DOUBLES / "kernel_compiler_double"
OPP_ROOT = tf_ge_custom.opp_root()
OP = op_def.ADD_CUSTOM
VARIANTS = [v.name for v in OP.kernel.variants]


@pytest.fixture(scope="module")
def driver(native_build):
    return native_build.exe("tf_ge_custom_compile_driver")


def _clean_env(tmp_path, **extra):
    """This process's environment without hivmc and with a cache of the test's own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG")) and k != "ASCEND_HOME_PATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp_path / "cache")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _double_env(tmp_path, mode="build", **extra):
    return _clean_env(tmp_path, TF_GE_CUSTOM_PYTHON=DOUBLE, TF_GE_CUSTOM_DOUBLE_PYTHON=sys.executable,
                      TF_GE_CUSTOM_DOUBLE_MODE=mode,
                      TF_GE_CUSTOM_DOUBLE_COUNT=tmp_path / "builds.txt", **extra)


def _run(driver, env, *args, timeout=600):
    proc = subprocess.run([driver] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    assert lines, "no result from the driver (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr)
    result = json.loads(lines[-1])
    assert (proc.returncode == 0) == result["ok"], (proc.returncode, result)
    return result


def _compile(driver, env, soc, dtype, *more):
    return _run(driver, env, "--opp-root", OPP_ROOT, "--soc", soc, "--dtype", dtype, *more)


def _builds(tmp_path):
    path = tmp_path / "builds.txt"
    return path.read_text().splitlines() if path.exists() else []


def _key(env):
    return cache.identity(env).key


def _entry_shas(entry, soc, dtype):
    """variant -> sha256 of the npubin the cache entry's manifest names for it (every
    variant: load_entry refuses an entry lacking one)."""
    manifest = cache.load_entry(str(entry), soc, dtype)
    return {v: manifest.kernel(OP.type_name, v, dtype).sha256 for v in VARIANTS}


def test_the_package_under_test_carries_no_npubins():
    """Every SoC is a miss for the installed package here: what the tests below rely on."""
    assert kernel_manifest.find_manifests(OPP_ROOT) == {}


def test_describe_runs_the_real_builder_without_tensorflow(driver, tmp_path):
    env = _clean_env(tmp_path)
    command = _run(driver, env, "--opp-root", OPP_ROOT, "--print-describe-command", "1")
    assert command["python_from"] == "beside the package"  # finding 2: before the build record
    started = time.time()
    proc = subprocess.run(command["argv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=str(tmp_path), timeout=300)
    seconds = time.time() - started
    line = [l for l in proc.stdout.splitlines() if l.startswith("TF_GE_CUSTOM_COMPILE ")][-1]
    described = json.loads(line[len("TF_GE_CUSTOM_COMPILE "):])
    assert proc.returncode == 0 and described["ok"], proc.stderr
    assert described["tensorflow_imported"] is False
    assert described["cache_dir"] == str(tmp_path / "cache")
    assert described["cache_dir_from"] == "TF_GE_CUSTOM_CACHE_DIR"
    assert described["key"] == _key(env)
    assert described["package"] == os.path.dirname(tf_ge_custom.__file__)
    assert "hivmc" in described["missing"]
    print("describe took %.2f s" % seconds)
    located = _run(driver, env, "--opp-root", OPP_ROOT, "--describe-only", "1")
    assert (located["cache_dir"], located["key"]) == (str(tmp_path / "cache"), _key(env))


def test_a_source_tree_in_the_working_directory_does_not_shadow_the_package(driver, tmp_path):
    """GE may run in a checkout of this repository: the bootstrap replaces sys.path[0]."""
    shadow = tmp_path / "work" / "tf_ge_custom"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('the source tree was imported')\n")
    env = _clean_env(tmp_path)
    command = _run(driver, env, "--opp-root", OPP_ROOT, "--print-describe-command", "1")
    proc = subprocess.run(command["argv"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env, cwd=str(shadow.parent), timeout=300)
    assert proc.returncode == 0, proc.stdout
    assert '"ok": true' in proc.stdout


@pytest.mark.slow
def test_the_real_builder_refuses_before_its_first_stage_naming_hivmc(driver, tmp_path):
    env = _clean_env(tmp_path)
    started = time.time()
    result = _compile(driver, env, "Ascend910B1", "float32")
    seconds = time.time() - started
    error = result["error"]
    assert "\n" not in error
    assert error.startswith("cannot compile the AddCustom kernels for SoC Ascend910B1, dtype float32: "
                            "hivmc is missing (hivmc comes with the CANN toolkit")
    # finding 2: the Python beside the package (bin/python3.X of this venv), not the record's
    assert "builder: %s/python" % os.path.dirname(sys.executable) in error
    assert ", from beside the package)" in error
    key_dir = tmp_path / "cache" / "Ascend910B1" / _key(env) / OP.type_name
    log = key_dir / ("float32.%s.log" % error.split("float32.")[1].split(".log")[0])
    assert str(log) in error
    text = log.read_text()
    # The builder checked its tools before the first stage: no stage ran (no progress line).
    assert not re.search(r"\[1/1\] Ascend910B1", text), text
    assert not (key_dir / "float32").exists()
    assert sorted(p.name for p in key_dir.iterdir()) == sorted([log.name, "float32.lock"])
    assert result["compiles"] == 1
    print("compile through the GE library's path to the hivmc refusal: %.1f s in all" % seconds)


@pytest.mark.slow
def test_the_real_builder_with_a_hivmc_double_fills_the_cache_the_core_then_reads(driver, tmp_path):
    """Everything real but hivmc (doubled: it writes a stand-in npubin from the HIVM IR it gets):
    the GE library's command line, the builder's stages, the cache protocol, the core's reader."""
    bindir = tmp_path / "cann-bin"
    bindir.mkdir()
    shutil.copy(str(DOUBLES / "hivmc"), str(bindir / "hivmc"))
    home = tmp_path / "ascend-toolkit"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text("Version=8.5.0\nplatform=x86_64\n")
    env = _clean_env(tmp_path, ASCEND_HOME_PATH=home)
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env["PATH"])
    started = time.time()
    first = _compile(driver, env, "Ascend910_9392", "int32")
    seconds = time.time() - started
    assert first["ok"] and first["origin"] == "compiled", first
    key = _key(env)
    assert key.endswith("-cann_8.5.0-entry_naming_2")
    entry = tmp_path / "cache" / "Ascend910_9392" / key / OP.type_name / "int32"
    manifest = cache.load_entry(str(entry), "Ascend910_9392", "int32")
    assert manifest.toolchain["cann"] == "8.5.0"
    assert _entry_shas(entry, "Ascend910_9392", "int32") == first["sha256"]
    import hashlib

    for variant in OP.kernel.variants:
        kernel = manifest.kernel(OP.type_name, variant.name, "int32")
        stem = os.path.splitext(OP.binary_name(variant.name, "int32"))[0]
        hivm = (entry / "ir" / (stem + ".hivm.mlir")).read_bytes()
        # the double's ELF object, defining the entry, around the sha of exactly that IR
        assert b"hivmc-double:" + hashlib.sha256(hivm).hexdigest().encode() in \
            (entry / kernel.binary).read_bytes()
        # the layout read from that HIVM IR: 6 pointers, then n (flat) or 5 extents and
        # 2 x 3 strides (tiled), then the grid; hand-computed in tests/fixtures/manifests
        assert (kernel.args.size, kernel.args.has_ffts) == \
            ((64 if len(variant.block) == 1 else 104), True), variant.name
    again = _compile(driver, env, "Ascend910_9392", "int32")
    assert again["origin"] == "cache" and again["sha256"] == first["sha256"]
    print("first graph build's compile (real builder, hivmc doubled): %.1f s" % seconds)


def test_a_compile_fills_the_cache_once_and_the_next_process_reads_it(driver, tmp_path):
    env = _double_env(tmp_path)
    first = _compile(driver, env, "Ascend910_9392", "float16")
    assert first["ok"] and first["origin"] == "compiled" and first["compiles"] == 1
    entry = tmp_path / "cache" / "Ascend910_9392" / _key(env) / OP.type_name / "float16"
    assert _entry_shas(entry, "Ascend910_9392", "float16") == first["sha256"]
    assert sorted(first["sha256"]) == sorted(VARIANTS)
    assert not list(entry.parent.glob("*.log"))  # a successful compile keeps no log
    second = _compile(driver, env, "Ascend910_9392", "float16")
    assert second["origin"] == "cache" and second["compiles"] == 0
    assert second["sha256"] == first["sha256"]
    assert len(_builds(tmp_path)) == 1


def test_a_cache_entry_lacking_a_variant_is_rebuilt_not_used(driver, tmp_path):
    """An entry whose manifest misses one variant (a build of an older package, a hand edit)
    is no kernel set: the GE library compiles again and the builder replaces the entry."""
    env = _double_env(tmp_path)
    first = _compile(driver, env, "Ascend910B1", "int32")
    entry = tmp_path / "cache" / "Ascend910B1" / _key(env) / OP.type_name / "int32"
    document = json.loads((entry / "manifest.json").read_text())
    dropped = [k for k in document["kernels"] if k["variant"] == "col_16x256"]
    document["kernels"] = [k for k in document["kernels"] if k["variant"] != "col_16x256"]
    (entry / "manifest.json").write_text(json.dumps(document))
    (entry / dropped[0]["binary"]).unlink()
    with pytest.raises(kernel_manifest.ManifestError, match="col_16x256"):
        cache.load_entry(str(entry), "Ascend910B1", "int32")
    second = _compile(driver, env, "Ascend910B1", "int32")
    assert second["origin"] == "compiled" and second["compiles"] == 1
    assert second["sha256"] == first["sha256"] == _entry_shas(entry, "Ascend910B1", "int32")
    assert len(_builds(tmp_path)) == 2


def test_eight_threads_of_one_process_compile_once(driver, tmp_path):
    env = _double_env(tmp_path, TF_GE_CUSTOM_DOUBLE_SLEEP="0.5")
    result = _compile(driver, env, "Ascend910B3", "int32", "--threads", "8")
    assert result["ok"] and result["compiles"] == 1
    assert len(_builds(tmp_path)) == 1


def test_two_racing_processes_build_once_and_no_reader_sees_half_an_entry(driver, tmp_path):
    env = _double_env(tmp_path, TF_GE_CUSTOM_DOUBLE_SLEEP="1.5")
    entry = tmp_path / "cache" / "Ascend910B2" / _key(env) / OP.type_name / "bfloat16"
    seen, stop = [], threading.Event()

    def reader():
        # Polls the entry the whole time: whenever its manifest is there, all of it is.
        while not stop.is_set():
            if (entry / "manifest.json").exists():
                cache.load_entry(str(entry), "Ascend910B2", "bfloat16")  # raises if partial
                seen.append(True)
            time.sleep(0.01)

    watcher = threading.Thread(target=reader)
    watcher.start()
    procs = [subprocess.Popen([driver, "--opp-root", OPP_ROOT, "--soc", "Ascend910B2", "--dtype", "bfloat16"],
                              stdout=subprocess.PIPE, universal_newlines=True, env=env) for _ in range(2)]
    outputs = [json.loads(p.communicate(timeout=300)[0].splitlines()[-1]) for p in procs]
    stop.set()
    watcher.join()
    assert all(o["ok"] for o in outputs), outputs
    assert outputs[0]["sha256"] == outputs[1]["sha256"]
    assert len(_builds(tmp_path)) == 1, _builds(tmp_path)
    assert seen  # the reader did look at the finished entry
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".tmp-")]


def test_a_failed_compile_is_one_line_naming_soc_tool_and_log_tail(driver, tmp_path):
    env = _double_env(tmp_path, mode="fail")
    result = _compile(driver, env, "Ascend910B4", "int32")
    error = result["error"]
    assert "\n" not in error
    assert error.startswith("cannot compile the AddCustom kernels for SoC Ascend910B4, dtype int32: hivmc is "
                            "missing (double: source the CANN toolkit's set_env.sh)")
    assert "ends: [1/1] (double) compiling --soc Ascend910B4 --dtype int32" in error
    assert "error: hivmc is missing, so no npubin could be built (double)" in error
    log = error.split("the log ")[1].split(" ends: ")[0]
    assert "TF_GE_CUSTOM_COMPILE" in pathlib.Path(log).read_text()  # the full output is there


def test_a_hanging_compile_is_stopped_with_what_it_started(driver, tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    env = _double_env(tmp_path, mode="hang", TF_GE_CUSTOM_COMPILE_TIMEOUT=3,
                      TF_GE_CUSTOM_DOUBLE_PIDFILE=pidfile)
    started = time.time()
    result = _compile(driver, env, "Ascend910_9382", "float32")
    seconds = time.time() - started
    assert "the compile took longer than 3 s and was stopped (TF_GE_CUSTOM_COMPILE_TIMEOUT sets the limit)" \
        in result["error"]
    assert "compiling (double: hanging until killed)" in result["error"]
    assert seconds < 60
    grandchild = int(pidfile.read_text())
    for _ in range(100):
        if not _running(grandchild):
            break
        time.sleep(0.05)
    assert not _running(grandchild)


def _running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (IOError, OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_crashing_compile_is_said_without_a_result(driver, tmp_path):
    result = _compile(driver, _double_env(tmp_path, mode="crash"), "Ascend910_9391", "float16")
    assert "the builder stopped (killed by signal 9: Killed) without printing a result" in result["error"]


def test_an_om_carries_the_compiled_kernel_and_runs_without_cache_or_package(driver, tmp_path):
    """Serialize after Compile, then an OM's Deserialize + Execute's lookup with nothing else."""
    env = _double_env(tmp_path)
    bundle = tmp_path / "model_kernels.bin"
    built = _compile(driver, env, "Ascend910_9362", "bfloat16", "--save-bundle", str(bundle))
    shutil.rmtree(str(tmp_path / "cache"))
    restored = _run(driver, _clean_env(tmp_path), "--from-bundle", str(bundle), "--soc", "Ascend910_9362",
                    "--dtype", "bfloat16")
    assert restored["origin"] == "package"  # the model's own kernels
    assert restored["sha256"] == built["sha256"]
    other = _run(driver, _clean_env(tmp_path), "--from-bundle", str(bundle), "--soc", "Ascend910_9362",
                 "--dtype", "float32")
    assert not other["ok"] and "float32" in other["error"]


def test_no_python_to_run_is_said(driver, tmp_path):
    env = _clean_env(tmp_path, TF_GE_CUSTOM_PYTHON=tmp_path / "no-python")
    result = _compile(driver, env, "Ascend910B1", "float32")
    assert result["error"].startswith("TF_GE_CUSTOM_PYTHON=%s is not an executable file" % (tmp_path / "no-python"))


def test_an_unwritable_cache_is_said(driver, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    env = _double_env(tmp_path, TF_GE_CUSTOM_CACHE_DIR=blocker / "cache")
    result = _compile(driver, env, "Ascend910B1", "float32")
    assert "%s exists and is not a folder; set TF_GE_CUSTOM_CACHE_DIR to a writable folder" % blocker \
        in result["error"]
    assert _builds(tmp_path) == []


# --- Finding 3: a timeout or crash is retried at the next graph build; lines reach GE's log --

def test_a_crash_is_tried_again_at_the_next_graph_build_a_bounded_number_of_times(driver, tmp_path):
    """Four graph builds in one process (--repeat 4), a builder that crashes each time: the first
    three each run it, the fourth gives up without running it (before: one run, remembered)."""
    env = _double_env(tmp_path, mode="crash")
    result = _compile(driver, env, "Ascend910_9391", "float16", "--repeat", "4")
    attempts = result["attempts"]
    assert len(attempts) == 4 and result["compiles"] == 3
    assert all("killed by signal 9" in a for a in attempts)
    assert "gave up after 3 tries in this process" in attempts[3]
    assert "gave up" not in attempts[2]


def test_a_definite_refusal_is_remembered_for_the_process(driver, tmp_path):
    result = _compile(driver, _double_env(tmp_path, mode="fail"), "Ascend910B4", "int32", "--repeat", "3")
    assert result["compiles"] == 1 and len(set(result["attempts"])) == 1
    assert "hivmc is missing" in result["attempts"][0]


def test_the_builders_lines_reach_the_log_sink_while_it_runs(driver, tmp_path):
    """The GE library hands each output line of the compile to GE's log as it arrives (here the
    driver's sink collects them): the double's progress lines, each prefixed with SoC and dtype."""
    result = _compile(driver, _double_env(tmp_path, mode="fail"), "Ascend910B4", "int32")
    assert any(line.startswith("Ascend910B4 int32: [1/1] (double) compiling --soc Ascend910B4 --dtype int32")
               for line in result["progress"]), result["progress"]
    assert "Ascend910B4 int32: error: hivmc is missing, so no npubin could be built (double)" in result["progress"]
    assert not any(line.split(": ", 1)[1].startswith("TF_GE_CUSTOM_COMPILE") for line in result["progress"])


# --- Findings 2 and 6: the builder's Python is checked; Python 3.7 needs the builder venv --

PY37 = os.path.expanduser("~/.pyenv/versions/3.7.16/bin/python3.7")


def test_a_python_without_triton_is_refused_naming_it_and_the_setup_builder_fix(driver, tmp_path):
    """A Python 3.7 (TF Adapter's) as the recorded or configured builder: it imports the package
    (3.7 syntax) but not triton, so the GE library refuses it and says what to do."""
    if not os.path.isfile(PY37):
        pytest.skip("TensorFlow 1.15 has no Python 3.7 interpreter here (pyenv 3.7.16 absent)")
    env = _clean_env(tmp_path, TF_GE_CUSTOM_PYTHON=PY37, TF_GE_CUSTOM_BUILDER=tmp_path / "builder")
    located = _run(driver, env, "--opp-root", OPP_ROOT, "--describe-only", "1")
    error = located["error"]
    assert "no Python can run the kernel builder (each must import tf_ge_custom and triton): " \
           "%s (from TF_GE_CUSTOM_PYTHON): it cannot import triton" % PY37 in error
    assert "triton-ascend has no build for Python < 3.9" in error
    assert "run `tf-ge-custom setup-builder` once" in error and str(tmp_path / "builder" / "bin" / "python") in error


def test_beside_the_package_comes_before_a_recorded_python_without_triton(driver, tmp_path):
    """Finding 2: the build record names this venv's Python here, but the Python beside the
    package is asked first and, importing triton, is the one taken."""
    command = _run(driver, _clean_env(tmp_path), "--opp-root", OPP_ROOT, "--print-describe-command", "1")
    assert command["python_from"] == "beside the package"
    assert os.path.dirname(command["argv"][0]) == os.path.dirname(sys.executable)
