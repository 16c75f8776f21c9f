"""Every command README.md and docs/ show, run as a user runs it (the console script or
``python``, a fresh process, a plain environment), each held to what the text promises on a
host like CI's: no NPU, no CANN toolkit. The commands that need one are run too, and must
refuse the way the text says (exit status 2, naming what is missing), never with a traceback.

``test_every_documented_command_is_run`` reads the code blocks of README.md and docs/*.md and
fails for a command line this file does not run (or name as run elsewhere), so that a command
added to the docs without a test is caught.
"""
import glob
import json
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = re.compile(r"^(tf-ge-custom|python -m tf_ge_custom|python examples/|python -c|make |"
                     r"export ASCEND_CUSTOM_OPP_PATH=\$\(python -c)")

# Command lines (as the docs spell them, comment cut) run by another test file, and which.
RUN_ELSEWHERE = {
    "make demo": "tests/tf/test_demo.py (examples/demo.py, the script make demo runs)",
    "make test": "CI itself (.ci/run runs make test)",
    "make bench": "tests/benchmarks/test_make_bench.py, as make bench BENCH_QUICK=1 only (the full "
                  "run takes hours and is run by hand)",
    "make bench BENCH_QUICK=1": "tests/benchmarks/test_make_bench.py",
    "python examples/tf1_session.py": "tests/examples/test_readme_examples.py",
    "python examples/tf2_npu_device.py": "tests/examples/test_readme_examples.py",
    "python examples/keras_train.py": "tests/examples/test_readme_examples.py",
    "python examples/export_model.py": "tests/examples/test_readme_examples.py",
    "tf-ge-custom export saved_model_dir --to pb --output out/model":
        "tests/user/test_export.py (every model kind)",
    'tf-ge-custom export saved_model_dir --to om --soc Ascend910B1 --output out/model '
    '--input-shape "x:8,2048;y:8,2048" --dry-run':
        "tests/package/test_readme_snippets.py (on a model with an unknown batch, as written)",
    "tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out kernels-out":
        "test_build_kernels_without_cann here, with one SoC (the same code path per SoC and dtype)",
    "tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out DIR":
        "test_build_kernels_without_cann here, with one SoC",
    "tf-ge-custom build-kernels --soc Ascend910B1,Ascend910B4,Ascend910_9392 --dtype all --out kernels-out":
        "test_build_kernels_without_cann here, with one SoC",
    "tf-ge-custom build-kernels --ir-only": "tests/kernels/test_builder.py (the IR build, in-process: "
                                            "minutes); its command-line start: test_build_kernels_without_cann here",
    "tf-ge-custom list-kernels --wheel dist/tf_ge_custom-*.whl --soc Ascend910B1":
        "test_list_kernels_wheel here, on a wheel-shaped zip (no test builds a wheel to list)",
    "tf-ge-custom list-kernels --wheel dist/tf_ge_custom-*.whl --soc Ascend910_9392 --dtype bfloat16":
        "test_list_kernels_wheel here, on a wheel-shaped zip, --soc Ascend910B1 only",
}
# Lines in code blocks that are output shown, or a synopsis, not a command to run.
NOT_COMMANDS = ("tf-ge-custom 0.", "tf-ge-custom selftest [--soc SOC]", '{"format"')


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


RUN_HERE = {}  # command line -> test function name (filled by @runs)


def runs(*commands):
    def mark(function):
        for c in commands:
            RUN_HERE[c] = function.__name__
        return function
    return mark


def test_every_documented_command_is_run():
    missing = [(where, c) for where, c in documented_commands() if c not in RUN_HERE and c not in RUN_ELSEWHERE]
    assert not missing, "documented commands no test runs:\n" + "\n".join("%s: %s" % m for m in missing)


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


@runs("tf-ge-custom doctor", "tf-ge-custom doctor --json")
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


@runs("tf-ge-custom selftest --json selftest.json --keep selftest-logs")
@pytest.mark.slow
def test_selftest_as_the_readme_shows(tf_ge_custom_cmd, user, tmp_path):
    ran = tf_ge_custom_cmd("selftest", "--json", "selftest.json", "--keep", "selftest-logs", cwd=tmp_path,
                           env=_no_cann_env(user, tmp_path), timeout=1200)
    assert ran.status == 0, ran  # SKIPs (no NPU) do not fail the run
    assert re.search(r"^CPU_ADD=PASS", ran.out, re.M) and ran.out.count("=SKIP") >= 3, ran
    assert "SELFTEST=PASS" in ran.out
    document = json.load(open(str(tmp_path / "selftest.json")))
    assert document["status"] == "PASS" and document["format"] == "tf-ge-custom-selftest"
    assert os.path.isdir(str(tmp_path / "selftest-logs"))


def test_selftest_list(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("selftest", "--list", cwd=tmp_path)
    assert ran.status == 0 and "EXPORT_OM" in ran.out and "CPU_ADD" in ran.out, ran


@runs("tf-ge-custom build-kernels --soc Ascend910B1 --cache",
      "tf-ge-custom build-kernels --soc Ascend910B1 --out kernels-out")
@pytest.mark.slow
@pytest.mark.parametrize("args", [["--soc", "Ascend910B1", "--cache"], ["--soc", "Ascend910B1", "--out", "kernels-out"]])
def test_build_kernels_without_cann(tf_ge_custom_cmd, user, tmp_path, args):
    """Without CANN's hivmc: the IR is built, no npubin, nothing written, exit 1 naming hivmc."""
    ran = tf_ge_custom_cmd("build-kernels", *args, cwd=tmp_path, env=user.env(
        HOME=str(tmp_path), TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache")), timeout=600)
    assert ran.status == 1, ran
    assert "hivmc is missing, so no npubin could be built" in ran.err and "nothing was written" in ran.err, ran
    assert not os.path.exists(str(tmp_path / "kernels-out" / "Ascend910B1" / "manifest.json"))


@runs("tf-ge-custom list-kernels --cache --soc Ascend910B1 --dtype float32")
def test_list_kernels_cache(tf_ge_custom_cmd, user, tmp_path):
    ran = tf_ge_custom_cmd("list-kernels", "--cache", "--soc", "Ascend910B1", "--dtype", "float32", cwd=tmp_path,
                           env=user.env(TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path)))
    assert ran.status == 1, ran  # "exit 1 unless cached": an empty cache
    assert "kernel cache: %s" % (tmp_path / "cache") in ran.out, ran


@runs("tf-ge-custom list-kernels --soc Ascend910B1",
      "tf-ge-custom list-kernels --dir kernels-out --soc Ascend910B1 --dtype float32,float16,bfloat16,int32")
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


def test_list_kernels_wheel(tf_ge_custom_cmd, tmp_path):
    """The --wheel form on a wheel-shaped zip (building a real wheel is test_packaging's)."""
    import zipfile

    (tmp_path / "dist").mkdir()
    wheel = tmp_path / "dist" / "tf_ge_custom-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(str(wheel), "w") as zf:
        zf.writestr("tf_ge_custom-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    ran = tf_ge_custom_cmd("list-kernels", "--wheel", str(wheel), "--soc", "Ascend910B1", cwd=tmp_path)
    assert ran.status == 1 and "no precompiled kernels" in ran.out, ran


@runs('tf-ge-custom export saved_model_dir --to om --soc Ascend910B1 --output out/model --input-shape "x:8,2048;y:8,2048"')
@pytest.mark.slow
def test_export_to_om_without_cann(tf_ge_custom_cmd, user, models, tmp_path):
    ran = tf_ge_custom_cmd("export", models["saved_model"], "--to", "om", "--soc", "Ascend910B1", "--output",
                           "out/model", "--input-shape", "x:4,8;y:4,8", cwd=tmp_path, env=_no_cann_env(user, tmp_path))
    assert ran.status == 2 and "atc" in ran.err, ran  # says what to install or source
    assert not os.path.exists(str(tmp_path / "out" / "model.pb"))


@runs("tf-ge-custom run-om out/model.om --input x.npy --input y.npy",
      "tf-ge-custom run-om /tmp/add_model.om --input /tmp/add_model.x.npy --input /tmp/add_model.y.npy")
def test_run_om_without_cann(tf_ge_custom_cmd, user, models, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "model.om").write_bytes(b"not an om")
    ran = tf_ge_custom_cmd("run-om", "out/model.om", "--input", models["x"], "--input", models["y"],
                           cwd=tmp_path, env=_no_cann_env(user, tmp_path))
    assert ran.status == 2, ran
    assert "RUN_OM=PASS" not in ran.out


@runs('export ASCEND_CUSTOM_OPP_PATH=$(python -c "import tf_ge_custom; print(tf_ge_custom.opp_root())")'
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


@runs("python examples/export_model.py --to om --soc Ascend910B1 --output /tmp/add_model")
@pytest.mark.slow
def test_export_model_example_to_om_without_cann(user, tmp_path):
    """docs/export.md's Ascend-host line, here (no CANN): exit 2 naming atc, no OM; the
    output goes to this test's folder instead of /tmp/add_model."""
    ran = user.run(["python", os.path.join(ROOT, "examples", "export_model.py"), "--to", "om", "--soc",
                    "Ascend910B1", "--output", str(tmp_path / "add_model")], tmp_path,
                   env=_no_cann_env(user, tmp_path))
    assert ran.status == 2 and "atc" in ran.text, ran
    assert not os.path.exists(str(tmp_path / "add_model.om"))
