"""Every command README.md and docs/ show, run as a user runs it (the console script or
``python``, a fresh process, a plain environment), each held to what the text promises on a
host like CI's: no NPU, no CANN toolkit. The commands that need one are run too, and must
refuse the way the text says (exit status 2, naming what is missing), never with a traceback.

Each test says which command lines of the docs it runs with ``@pytest.mark.documents(line)``
(here or in any other test file). ``test_every_documented_command_has_a_test_collected_with_its_marker``
reads the code blocks of README.md and docs/*.md and fails for a line no collected test is
marked with, so that a command added to the docs, or a test deleted, is caught; and for a
marker naming a line the docs no longer show.
"""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = re.compile(r"^(tf-ge-custom|python -m tf_ge_custom|python examples/|python -c|make |"
                     r"export ASCEND_CUSTOM_OPP_PATH=\$\(python -c)")

# Lines in code blocks that are output shown, or a synopsis, not a command to run.
NOT_COMMANDS = ("tf-ge-custom 0.", "tf-ge-custom selftest [--soc SOC]", '{"format"',
                # error lines shown (tests/package/test_cli_refusals.py holds them to the code)
                "tf-ge-custom: error: ", "tf-ge-custom export: error: ")


def documented_commands():
    found = []
    for path in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        with open(path) as f:
            text = f.read()
        for block in re.findall(r"^ *```[a-z]*\n(.*?)^ *```", text, re.S | re.M):
            lines = block.splitlines()
            i = 0
            while i < len(lines):
                line = lines[i]
                while line.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line.rstrip()[:-1] + " " + lines[i].strip()
                i += 1
                command = re.sub(r"\s+", " ", line.split("  #")[0].strip())
                command = command[2:] if command.startswith("$ ") else command
                if PROGRAM.match(command) and not command.startswith(NOT_COMMANDS):
                    found.append((os.path.relpath(path, ROOT), command))
    return found


def test_every_documented_command_has_a_test_collected_with_its_marker(documenting_tests):
    """Each command line of the docs has a test marked ``@pytest.mark.documents(line)`` that
    pytest collected (tests/conftest.py ``documenting_tests``), and each such marker names a
    line the docs still show."""
    documented = documented_commands()
    missing = [(where, c) for where, c in documented if c not in documenting_tests]
    assert not missing, (
        "documented commands with no test collected in this run:\n%s\nPut the marker on the "
        "test that runs each one, with the line exactly as above (continuation lines joined, the "
        "'  #' comment cut), e.g.\n    @pytest.mark.documents(%r)\n(a test in the compat run's "
        "own modules, COMPAT_ONLY_MODULES of tests/conftest.py, counts as well)" % (
            "\n".join("  %s: %s" % m for m in missing), missing[0][1]))
    shown = {c for _, c in documented}
    stale = {c: tests for c, tests in documenting_tests.items() if c not in shown}
    assert not stale, ("documents markers naming a line no code block of README.md or docs/*.md "
                       "shows (the docs changed? mark the line as it is spelled now):\n" + "\n".join(
                           "  %r: %s" % (c, ", ".join(t)) for c, t in sorted(stale.items())))


def _make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONPATH")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run(["make", "--no-print-directory"] + list(args), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)


@pytest.mark.documents("make demo")
def test_make_demo(tmp_path):
    """make demo, with the package this suite tests (-o install: installed already, PY: this
    interpreter): the demo's own check against tf.math.add passes."""
    ran = _make("-o", "install", "demo", "PY=" + sys.executable)
    assert ran.returncode == 0, ran.stdout[-4000:]
    lines = ran.stdout.splitlines()
    # its steps: what was installed and the build's one-line GE decision, then the run
    assert lines[0].startswith("==> build: tf-ge-custom installed in "), ran.stdout[:500]
    assert any(re.match(r"    GE library: (built against CANN |skipped \(.+\))", l) for l in lines), lines[:8]
    run = lines.index("==> run: examples/demo.py")
    assert lines[run + 1] == "%s examples/demo.py" % sys.executable, lines[:run + 2]
    assert ran.stdout.rstrip().endswith("result: PASS"), ran.stdout[-4000:]


@pytest.mark.documents("make test")
def test_make_test_runs_the_whole_suite_then_the_compat_run(request, compat_only_modules):
    """What make test runs, from make's dry run (CI runs it for real: .ci/run): the suite's
    runner with no pytest paths of its own, so the whole of tests/ in its parts
    (tests/test_run_suite.py holds the parts to every module); then make test-compat, whose
    pytest runs tests/compat/ and the compat-only modules the main suite does not collect."""
    ran = _make("-n", "-o", "install", "-o", "triton-interp", "test", "PYTEST_ARGS=")
    assert ran.returncode == 0, ran.stdout[-4000:]
    lines = ran.stdout.splitlines()
    main = [l for l in lines if l.startswith("TF_GE_CUSTOM_TRITON_INTERP=")]
    assert len(main) == 1 and main[0].split()[1:] == [".venv/bin/python", "tests/run_suite.py", "--"], lines
    one = _make("-n", "-o", "install", "-o", "triton-interp", "test", "PYTEST_ARGS=", "TEST_JOBS=1")
    assert [l.split()[1:] for l in one.stdout.splitlines() if l.startswith("TF_GE_CUSTOM_TRITON_INTERP=")] == [
        [".venv/bin/python", "tests/run_suite.py", "--jobs", "1", "--"]], one.stdout
    assert request.config.getini("testpaths") == ["tests"]
    compat = [l.split("/bin/pytest", 1)[1].split(";")[0].split() for l in lines
              if "/bin/pytest " in l and not l.startswith("TF_GE_CUSTOM_TRITON_INTERP=")]
    assert compat == [["tests/compat/test_*.py"] + list(compat_only_modules)], lines


def _no_cann_env(user, tmp_path):
    return user.env(PATH=os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin",
                    HOME=str(tmp_path))


# --- the commands --------------------------------------------------------------------

@pytest.mark.parametrize("launcher", ["script", "python -m"])
def test_help_and_version(tf_ge_custom_cmd, tmp_path, launcher):
    import tf_ge_custom

    ran = tf_ge_custom_cmd("--help", cwd=tmp_path, launcher=launcher)
    assert ran.status == 0 and "export" in ran.out and "doctor" in ran.out, ran
    ran = tf_ge_custom_cmd("--version", cwd=tmp_path, launcher=launcher)
    assert ran.status == 0, ran
    assert ran.out.startswith("tf-ge-custom %s (op library built for TensorFlow " % tf_ge_custom.__version__), ran


@pytest.mark.documents("tf-ge-custom doctor", "tf-ge-custom doctor --json")
@pytest.mark.parametrize("launcher", ["script", "python -m"])
def test_doctor(tf_ge_custom_cmd, user, tmp_path, launcher):
    env = _no_cann_env(user, tmp_path)
    ran = tf_ge_custom_cmd("doctor", cwd=tmp_path, env=env, launcher=launcher)
    assert ran.status == 0, ran  # no FAIL on a CPU host with a good installation
    assert re.search(r"^OK\s+op library\s+libtf_ge_custom_ops.so matches its build record", ran.out, re.M), ran
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=tmp_path, env=env, launcher=launcher)
    document = json.loads(ran.out)
    assert document["status"] in ("OK", "WARN") and ran.status == 0, ran
    statuses = {c["name"]: c["status"] for c in document["checks"]}
    assert statuses["op library"] == "OK" and statuses["TensorFlow"] == "OK", statuses


@pytest.mark.documents("tf-ge-custom selftest --json selftest.json --keep selftest-logs")
@pytest.mark.slow
def test_selftest_as_the_readme_shows_twice_in_a_row(tf_ge_custom_cmd, user, tmp_path):
    """The README's line, run twice in one folder (a user reruns it after a fix): the second run
    takes over the folder the first one wrote, and says only what was proven."""
    for attempt in (1, 2):
        ran = tf_ge_custom_cmd("selftest", "--json", "selftest.json", "--keep", "selftest-logs", cwd=tmp_path,
                               env=_no_cann_env(user, tmp_path), timeout=1200)
        assert ran.status == 0, (attempt, ran)  # SKIPs (no NPU) do not fail the run
        assert re.search(r"^CPU_ADD=PASS", ran.out, re.M) and ran.out.count("=SKIP") >= 3, ran
        summary = [l for l in ran.out.splitlines() if l.startswith("SELFTEST=")]
        assert summary and summary[0].startswith("SELFTEST=PASS (") and summary[0].endswith(
            "; CPU only: %d NPU stages skipped, nothing ran on an NPU)" % ran.out.count("=SKIP")), ran
        document = json.load(open(str(tmp_path / "selftest.json")))
        assert document["status"] == "PASS" and document["format"] == "tf-ge-custom-selftest"
        assert os.path.isfile(str(tmp_path / "selftest-logs" / "CPU_ADD.log"))
        if attempt == 1:
            first_log = os.stat(str(tmp_path / "selftest-logs" / "CPU_ADD.log")).st_mtime
    assert os.stat(str(tmp_path / "selftest-logs" / "CPU_ADD.log")).st_mtime > first_log  # this run's log


def test_selftest_list(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("selftest", "--list", cwd=tmp_path)
    assert ran.status == 0 and "EXPORT_OM" in ran.out and "CPU_ADD" in ran.out, ran


@pytest.mark.documents("tf-ge-custom build-kernels --soc Ascend910B1 --cache",
                        "tf-ge-custom build-kernels --soc Ascend910B1 --out kernels-out",
                        # the same code path per SoC and dtype: run here with one SoC
                        "tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out kernels-out",
                        "tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out DIR")
@pytest.mark.slow
@pytest.mark.parametrize("args", [["--soc", "Ascend910B1", "--cache"], ["--soc", "Ascend910B1", "--out", "kernels-out"]])
def test_build_kernels_without_cann(tf_ge_custom_cmd, user, tmp_path, args):
    """Without CANN's hivmc: refused before the first stage, nothing compiled or written, exit 1
    naming hivmc and --ir-only."""
    ran = tf_ge_custom_cmd("build-kernels", *args, cwd=tmp_path, env=user.env(
        HOME=str(tmp_path), TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache")), timeout=600)
    assert ran.status == 1, ran
    assert "hivmc is missing, so nothing was compiled" in ran.err and "pass --ir-only" in ran.err, ran
    assert "[1/" not in ran.err, ran  # no stage ran
    assert not os.path.exists(str(tmp_path / "kernels-out"))


@pytest.mark.documents("tf-ge-custom list-kernels --cache --soc Ascend910B1 --dtype float32")
def test_list_kernels_cache(tf_ge_custom_cmd, user, tmp_path):
    ran = tf_ge_custom_cmd("list-kernels", "--cache", "--soc", "Ascend910B1", "--dtype", "float32", cwd=tmp_path,
                           env=user.env(TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path)))
    assert ran.status == 1, ran  # "exit 1 unless cached": an empty cache
    assert "kernel cache: %s" % (tmp_path / "cache") in ran.out, ran


def test_list_kernels_installed_and_dir(tf_ge_custom_cmd, tmp_path):
    import tf_ge_custom

    ran = tf_ge_custom_cmd("list-kernels", cwd=tmp_path)
    assert ran.status == 0, ran
    ran = tf_ge_custom_cmd("list-kernels", "--soc", "Ascend910B1", cwd=tmp_path)
    kernels = os.path.join(tf_ge_custom.opp_root(), "kernels", "Ascend910B1", "manifest.json")
    assert ran.status == (0 if os.path.isfile(kernels) else 1), ran
    (tmp_path / "kernels-out").mkdir()
    ran = tf_ge_custom_cmd("list-kernels", "--dir", "kernels-out", "--soc", "Ascend910B1", "--dtype",
                           "float32,float16,bfloat16,int32", cwd=tmp_path)
    assert ran.status == 1 and "kernels-out: no precompiled kernels" in ran.out, ran


@pytest.mark.documents("tf-ge-custom list-kernels --wheel dist/tf_ge_custom-*.whl --soc Ascend910B1")
def test_list_kernels_wheel(tf_ge_custom_cmd, tmp_path):
    """The --wheel form on a wheel-shaped zip (building a real wheel is test_packaging's)."""
    import zipfile

    (tmp_path / "dist").mkdir()
    wheel = tmp_path / "dist" / "tf_ge_custom-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(str(wheel), "w") as zf:
        zf.writestr("tf_ge_custom-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    ran = tf_ge_custom_cmd("list-kernels", "--wheel", str(wheel), "--soc", "Ascend910B1", cwd=tmp_path)
    assert ran.status == 1 and "no precompiled kernels" in ran.out, ran


@pytest.mark.documents('tf-ge-custom export saved_model_dir --to om --soc Ascend910B1 --output out/model --input-shape "x:8,2048;y:8,2048"')
@pytest.mark.slow
def test_export_to_om_without_cann(tf_ge_custom_cmd, user, models, tmp_path):
    ran = tf_ge_custom_cmd("export", models["saved_model"], "--to", "om", "--soc", "Ascend910B1", "--output",
                           "out/model", "--input-shape", "x:4,8;y:4,8", cwd=tmp_path, env=_no_cann_env(user, tmp_path))
    assert ran.status == 2 and "atc" in ran.err, ran  # says what to install or source
    assert not os.path.exists(str(tmp_path / "out" / "model.pb"))


@pytest.mark.documents("tf-ge-custom run-om out/model.om --input x.npy --input y.npy",
                        "tf-ge-custom run-om /tmp/add_model.om --input /tmp/add_model.x.npy --input /tmp/add_model.y.npy")
def test_run_om_without_cann(tf_ge_custom_cmd, user, models, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "model.om").write_bytes(b"not an om")
    ran = tf_ge_custom_cmd("run-om", "out/model.om", "--input", models["x"], "--input", models["y"],
                           cwd=tmp_path, env=_no_cann_env(user, tmp_path))
    assert ran.status == 2, ran
    assert "RUN_OM=PASS" not in ran.out


@pytest.mark.documents('export ASCEND_CUSTOM_OPP_PATH=$(python -c "import tf_ge_custom; print(tf_ge_custom.opp_root())")'
                        '${ASCEND_CUSTOM_OPP_PATH:+:$ASCEND_CUSTOM_OPP_PATH}')
def test_the_opp_path_line_of_docs_npu(user, tmp_path):
    import tf_ge_custom

    line = [c for _, c in documented_commands() if c.startswith("export ASCEND_CUSTOM_OPP_PATH=")][0]
    ran = user.run(["bash", "-c", line + '; printf "%s" "$ASCEND_CUSTOM_OPP_PATH"'], tmp_path,
                   env=user.env(ASCEND_CUSTOM_OPP_PATH="/other/opp"))
    assert ran.status == 0 and ran.out == tf_ge_custom.opp_root() + ":/other/opp", ran


def test_python_m_tf_ge_custom_opp_of_docs_adding_an_op(user, tmp_path):
    """docs/adding-an-op.md: ``python -m tf_ge_custom.opp FILE`` writes npu_supported_ops.json."""
    target = tmp_path / "npu_supported_ops.json"
    ran = user.run([sys.executable, "-m", "tf_ge_custom.opp", str(target)], tmp_path)
    assert ran.status == 0, ran
    assert "AddCustom" in json.load(open(str(target)))


@pytest.mark.documents("python examples/export_model.py --to om --soc Ascend910B1 --output /tmp/add_model")
@pytest.mark.slow
def test_export_model_example_to_om_without_cann(user, tmp_path):
    """docs/export.md's Ascend-host line, here (no CANN): exit 2 naming atc, no OM; the
    output goes to this test's folder instead of /tmp/add_model."""
    ran = user.run(["python", os.path.join(ROOT, "examples", "export_model.py"), "--to", "om", "--soc",
                    "Ascend910B1", "--output", str(tmp_path / "add_model")], tmp_path,
                   env=_no_cann_env(user, tmp_path))
    assert ran.status == 2 and "atc" in ran.text, ran
    assert not os.path.exists(str(tmp_path / "add_model.om"))
