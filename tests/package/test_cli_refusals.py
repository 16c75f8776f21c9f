"""Commands that answer at once: a mistaken option is refused before TensorFlow or the kernel
compiler is imported, in one line, with the whole corrected string or a "did you mean".

Oracle for "before the import": test doubles of ``tensorflow`` and ``triton`` first on
``PYTHONPATH`` (packages that only record who imported them, then fail the import, as in
test_cli_startup.py). A refusal that came after the import would find the double (and say
that TensorFlow cannot be imported, or leave a record); these leave no record, so the whole
refusal ran without TensorFlow and without triton. How long a refusal takes is measured by
benchmarks/bench_cli_refusals.py, not here (the time depends on the machine's load).
Every case runs the installed console script in a fresh process.
"""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("doubles")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")

RECORDING_DOUBLE = '''\
import os, traceback
with open(os.environ["DOUBLE_IMPORT_MARK"], "a") as f:
    f.write("%s imported from:\\n" % __name__ + "".join(traceback.format_stack()) + "\\n=====\\n")
raise ImportError("%s test double: the import was recorded" % __name__)
'''


@pytest.fixture
def console(tmp_path):
    """Run the console script with the recording doubles of tensorflow and triton first on
    PYTHONPATH; returns (process, [import records])."""
    fake = tmp_path / "doubles"
    for name in ("tensorflow", "triton"):
        (fake / name).mkdir(parents=True)
        (fake / name / "__init__.py").write_text(RECORDING_DOUBLE)
    mark = tmp_path / "imports.txt"
    work = tmp_path / "work"
    work.mkdir()

    def run(*args, **env):
        full = {k: v for k, v in os.environ.items()
                if not k.startswith(("ASCEND_", "TF_CPP_", "TF_GE_CUSTOM_")) and k != "PYTHONPATH"}
        full.update(PYTHONPATH=str(fake), DOUBLE_IMPORT_MARK=str(mark))
        full.update(env)
        proc = subprocess.run([SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=str(work), env=full, timeout=300)
        imports = mark.read_text().split("\n=====\n")[:-1] if mark.exists() else []
        if mark.exists():
            mark.unlink()
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc, imports

    run.work = work
    return run


def _one_line(proc):
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def model_files(console):
    """Files whose kind the export tells from the path: a frozen .pb, a TF1 checkpoint."""
    work = console.work
    (work / "model.pb").write_bytes(b"\x0a\x00")
    (work / "ckpt.meta").write_bytes(b"")
    (work / "ckpt.index").write_bytes(b"")
    return work


# (arguments, the refusal's exact line)
EXPORT_REFUSALS = [
    (["export", "model.pb", "--to", "om", "--soc", "Ascend910B1", "--output", "out/m",
      "--input-shape", "x:8x2048;y:8,2048"],
     "tf-ge-custom export: error: --input-shape 'x:8x2048;y:8,2048': dim '8x2048' of x is not a size, -1 "
     "or a range LO~HI; did you mean --input-shape \"x:8,2048;y:8,2048\"?"),
    (["export", "model.pb", "--to", "om", "--soc", "Ascend910B1", "--output", "out/m",
      "--dynamic-batch-size", "1,2,x"],
     "tf-ge-custom export: error: --dynamic-batch-size '1,2,x': 'x' is not a batch size; expected batch "
     "sizes like 1,2,4,8 (whole numbers from 1, separated by commas)"),
    (["export", "model.pb", "--to", "om", "--soc", "Ascend910B1", "--output", "out/m",
      "--dynamic-batch-size", "1 2 4"],
     "tf-ge-custom export: error: --dynamic-batch-size '1 2 4': expected batch sizes like 1,2,4,8 (whole "
     "numbers from 1, separated by commas); did you mean --dynamic-batch-size 1,2,4?"),
    (["export", "model.pb", "--to", "om", "--soc", "Ascend910B1", "--output", "out/m",
      "--dynamic-dims", "1,64;4,x"],
     "tf-ge-custom export: error: --dynamic-dims '1,64;4,x': 'x' is not a size; expected ;-separated sets "
     "of sizes (whole numbers from 1), one per -1 dim, like \"1,64;4,128\""),
    (["export", "ckpt.meta", "--output", "out/m"],
     "tf-ge-custom export: error: a TF1 checkpoint needs the output node names: --outputs NODE[,NODE...]"),
    (["export", "model.pb", "--signature", "serving_default", "--output", "out/m"],
     "tf-ge-custom export: error: --signature applies to saved model, not to a frozen pb model"),
    (["export", "model.pb", "--to", "om", "--soc", "Ascend910B", "--output", "out/m"],
     "tf-ge-custom export: error: unsupported SoC 'Ascend910B'; "
     "supported: Ascend910B1, Ascend910B2, Ascend910B3, Ascend910B4, Ascend910_9391, Ascend910_9392, "
     "Ascend910_9381, Ascend910_9382, Ascend910_9372, Ascend910_9362 (the SoCs this package builds kernels for)"),
    (["export", "model.pb", "--output", "out/m", "--rtol", "-1"],
     "tf-ge-custom export: error: --rtol -1.0: give a tolerance, a finite number >= 0 (e.g. 1e-5)"),
    (["export", "model.pb", "--input-shape", "x:8,2048", "--output", "out/m"],
     "tf-ge-custom export: error: --input-shape applies to --to air/om, not to --to pb"),
]


@pytest.mark.parametrize("args, line", EXPORT_REFUSALS, ids=[" ".join(a[4:]) or a[1] for a, _ in EXPORT_REFUSALS])
def test_export_refuses_a_mistaken_option_before_tensorflow_is_imported(console, model_files, args, line):
    from tf_ge_custom.kernels.socs import SOCS

    if "Ascend910B" in args:  # the supported list is the SoC table's
        line = line.split("supported: ")[0] + "supported: %s (the SoCs this package builds kernels for)" % (
            ", ".join(SOCS))
    proc, imports = console(*args)
    assert proc.returncode == 1, proc.stderr
    assert _one_line(proc) == line
    assert imports == [], imports[0]
    assert not (model_files / "out").exists()  # nothing written, not even the output folder


def test_following_the_input_shape_hint_passes_the_check_it_failed(console, model_files):
    args = ["export", "model.pb", "--to", "om", "--soc", "Ascend910B1", "--output", "out/m", "--dry-run"]
    proc, _ = console(*(args + ["--input-shape", "x:[8, 2048], y:8x2048"]))
    hint = _one_line(proc).split('did you mean --input-shape "')[1].split('"')[0]
    assert hint == "x:8,2048;y:8,2048"
    # the hint itself is past the option checks: what stops it now is TensorFlow (the double)
    proc, imports = console(*(args + ["--input-shape", hint]))
    assert proc.returncode == 1 and "--input-shape" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("tf-ge-custom export: error: TensorFlow cannot be imported") and len(imports) == 1
    assert "loading TensorFlow..." in proc.stdout.splitlines()  # said before the import


def test_run_om_refuses_a_mistaken_option_before_it_looks_for_the_runner(console):
    (console.work / "m.om").write_bytes(b"om")
    proc, imports = console("run-om", "m.om", "--input", "x.npy", "--device", "-1")
    assert proc.returncode == 1
    assert _one_line(proc) == "tf-ge-custom run-om: error: --device -1: give an NPU device id, a whole number >= 0"
    proc, imports = console("run-om", "m.om", "--input", "x.npy", "--signature", "serving_default")
    assert proc.returncode == 1 and "pass --compare-with MODEL too" in _one_line(proc)
    (console.work / "model.pb").write_bytes(b"\x0a\x00")
    proc, imports = console("run-om", "m.om", "--compare-with", "model.pb", "--tag", "serve")
    assert _one_line(proc) == "tf-ge-custom run-om: error: --tag applies to saved model, not to a frozen pb model"
    assert imports == []


# (arguments, the usage error's exact line): one line, exit status 2, no usage block
USAGE_ERRORS = [
    (["export", "model.keras", "--ouput", "out/m"],
     "tf-ge-custom export: error: unknown option --ouput (did you mean --output?); see tf-ge-custom export --help"),
    (["export", "model.keras", "--ouput=out/m"],
     "tf-ge-custom export: error: unknown option --ouput (did you mean --output?); see tf-ge-custom export --help"),
    (["export", "model.keras"],
     "tf-ge-custom export: error: the following arguments are required: --output/-o; see tf-ge-custom export --help"),
    (["export", "model.keras", "--output", "m", "--to", "omm"],
     "tf-ge-custom export: error: argument --to: invalid choice 'omm' (did you mean om?); choose from pb, air, om; "
     "see tf-ge-custom export --help"),
    (["exprot", "model.keras"],
     "tf-ge-custom: error: unknown command 'exprot' (did you mean export?); the commands are: doctor, "
     "build-kernels, list-kernels, export, run-om, setup-builder, selftest, clean; see tf-ge-custom --help"),
    (["--vresion"],
     "tf-ge-custom: error: unknown option --vresion (did you mean --version?); see tf-ge-custom --help"),
    (["build-kernels", "--ir-onyl"],
     "tf-ge-custom build-kernels: error: unknown option --ir-onyl (did you mean --ir-only?); "
     "see tf-ge-custom build-kernels --help"),
    (["run-om", "m.om", "--compare-wiht", "x"],
     "tf-ge-custom run-om: error: unknown option --compare-wiht (did you mean --compare-with?); "
     "see tf-ge-custom run-om --help"),
    (["list-kernels", "stray"],
     "tf-ge-custom list-kernels: error: unexpected argument 'stray'; see tf-ge-custom list-kernels --help"),
]


@pytest.mark.parametrize("args, line", USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_a_usage_error_is_one_line_with_did_you_mean_and_where_the_help_is(console, args, line):
    from tf_ge_custom import _commands

    proc, imports = console(*args)
    assert proc.returncode == 2
    assert _one_line(proc) == line
    assert "usage:" not in proc.stdout + proc.stderr
    assert imports == []
    if args[0] == "exprot":  # the list is the registry's
        assert ", ".join(_commands.NAMES) in line


def test_help_is_still_argparse_s_whole_usage(console):
    proc, _ = console("export", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: tf-ge-custom export ")
    assert "--input-shape SHAPES" in proc.stdout and proc.stderr == ""


def _env_path_without(tool):
    """PATH without any folder holding ``tool`` (this host has no CANN: hivmc is on none)."""
    folders = [d for d in os.environ.get("PATH", "").split(os.pathsep)
               if d and not os.path.exists(os.path.join(d, tool))]
    return os.pathsep.join(folders)


def test_build_kernels_without_hivmc_is_refused_before_the_first_step_naming_ir_only(console):
    proc, imports = console("build-kernels", "--soc", "Ascend910B1", "--out", "out",
                            PATH=_env_path_without("hivmc"))
    assert proc.returncode == 1, proc.stderr
    line = _one_line(proc)  # no progress line: nothing was compiled
    assert line.startswith("tf-ge-custom build-kernels: error: hivmc is missing, so nothing was compiled: ")
    assert "pass --ir-only" in line and "BISHENG_INSTALL_PATH" in line
    assert imports == []  # refused before triton (the compiler's front end) was imported
    assert not (console.work / "out").exists()


def test_build_kernels_without_bishengir_and_hivmc_names_both_tools(console):
    # the ascendnpu-ir wheel's bishengir-compile hidden too: a double of its package that fails
    hidden = console.work.parent / "doubles" / "ascendnpuir"
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('ascendnpuir test double: not installed')\n")
    path = os.pathsep.join(d for d in _env_path_without("hivmc").split(os.pathsep)
                           if not os.path.exists(os.path.join(d, "bishengir-compile")))
    proc, imports = console("build-kernels", "--soc", "Ascend910B1", "--out", "out", PATH=path)
    assert proc.returncode == 1
    line = _one_line(proc)
    assert line.startswith("tf-ge-custom build-kernels: error: bishengir-compile and hivmc are missing, so "
                           "nothing was compiled: bishengir-compile lowers linalg to HIVM IR: install ascendnpu-ir")
    assert line.endswith("pass --ir-only") and imports == []


def test_build_kernels_ir_only_needs_no_hivmc_but_bishengir(console):
    hidden = console.work.parent / "doubles" / "ascendnpuir"
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('ascendnpuir test double: not installed')\n")
    path = os.pathsep.join(d for d in _env_path_without("hivmc").split(os.pathsep)
                           if not os.path.exists(os.path.join(d, "bishengir-compile")))
    proc, imports = console("build-kernels", "--ir-only", "--soc", "Ascend910B1", "--out", "out", PATH=path)
    assert proc.returncode == 1
    line = _one_line(proc)
    assert line.startswith("tf-ge-custom build-kernels: error: bishengir-compile is missing")
    assert "hivmc" not in line and "--ir-only" not in line and imports == []


def test_export_says_it_loads_tensorflow_and_fills_a_long_load_with_heartbeats(console, model_files):
    """A slow TensorFlow double (it sleeps 6 s, then fails its import): the export says
    "loading TensorFlow..." before the import and "still loading TensorFlow (5 s)" during it."""
    slow = model_files.parent / "doubles" / "tensorflow" / "__init__.py"
    slow.write_text("import time\ntime.sleep(6)\n" + RECORDING_DOUBLE)
    proc, imports = console("export", "model.pb", "--output", "out/m")
    assert proc.returncode == 1 and len(imports) == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == "loading TensorFlow..."
    assert "still loading TensorFlow (5 s)" in lines[1:], lines
    assert proc.stderr.startswith("tf-ge-custom export: error: TensorFlow cannot be imported")
