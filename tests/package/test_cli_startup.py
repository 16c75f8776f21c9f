"""The command line starts without TensorFlow unless a command needs the op.

Oracle: a stand-in ``tensorflow`` package first on ``PYTHONPATH`` (a test double that only
records who imported it, then fails the import) shows whether, and from where, a command
imports TensorFlow. The real TensorFlow prints log lines on import, so a command that does
not import it leaves stderr empty. Start-up times are measured by
benchmarks/bench_cli_startup.py, not here.
"""
import os
import subprocess
import sys

import pytest

import tf_ge_custom

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")

FAKE_TENSORFLOW = '''\
import os, traceback
with open(os.environ["FAKE_TF_MARK"], "a") as f:
    f.write("".join(traceback.format_stack()) + "\\n=====\\n")
raise ImportError("tensorflow test double: the import was recorded")
'''


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ASCEND_", "TF_CPP_")) and k != "PYTHONPATH"}
    env.update(extra)
    return env


@pytest.fixture
def recording_tensorflow(tmp_path):
    fake = tmp_path / "fake"
    (fake / "tensorflow").mkdir(parents=True)
    (fake / "tensorflow" / "__init__.py").write_text(FAKE_TENSORFLOW)
    mark = tmp_path / "tensorflow-imports.txt"

    def run(*args):
        proc = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=str(tmp_path), timeout=300,
                              env=_env(PYTHONPATH=str(fake), FAKE_TF_MARK=str(mark)))
        imports = mark.read_text().split("\n=====\n")[:-1] if mark.exists() else []
        if mark.exists():
            mark.unlink()
        return proc, imports

    return run


@pytest.mark.parametrize("args, status", [
    (["--help"], 0),
    (["--version"], 0),
    ([], 2),
    (["list-kernels"], 0),
    (["list-kernels", "--dir", "."], 0),
    (["list-kernels", "--help"], 0),
    (["build-kernels", "--help"], 0),
    (["build-kernels", "--soc", "Ascend999", "--out", "out"], 2),
    (["doctor", "--help"], 0),
])
def test_commands_that_do_not_need_the_op_do_not_import_tensorflow(recording_tensorflow,
                                                                   args, status):
    proc, imports = recording_tensorflow(SCRIPT, *args)
    assert proc.returncode == status, proc.stderr[-3000:]
    assert imports == [], "imported TensorFlow from:\n" + (imports[0] if imports else "")


def test_python_dash_m_starts_without_tensorflow_too(recording_tensorflow):
    proc, imports = recording_tensorflow(sys.executable, "-m", "tf_ge_custom", "--version")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("tf-ge-custom %s" % tf_ge_custom.__version__)
    if sys.version_info >= (3, 10):  # sys.orig_argv tells `python -m tf_ge_custom` apart
        assert imports == []


# Python 3.7-3.9 have no sys.orig_argv: runpy's own start of `python -m MODULE`, with it gone
RUNPY_WITHOUT_ORIG_ARGV = ("import runpy, sys\n"
                           "if hasattr(sys, 'orig_argv'): del sys.orig_argv\n"
                           "sys.argv = ['-m'] + sys.argv[1:]\n"
                           "runpy._run_module_as_main(%r)\n")


@pytest.mark.parametrize("module, imports_tensorflow", [("tf_ge_custom", False),
                                                        ("tf_ge_custom.opp", True)])
def test_python_dash_m_without_orig_argv_is_told_apart_by_the_module_runpy_starts(
        recording_tensorflow, module, imports_tensorflow):
    proc, imports = recording_tensorflow(sys.executable, "-c", RUNPY_WITHOUT_ORIG_ARGV % module,
                                         "--version")
    if imports_tensorflow:  # another module of the package: an ordinary import of it
        assert len(imports) == 1 and "tf_ge_custom/__init__.py" in imports[0], imports
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("tf-ge-custom %s" % tf_ge_custom.__version__)
    assert imports == [], "imported TensorFlow from:\n" + imports[0]


def test_doctor_imports_tensorflow_only_in_its_child_process(recording_tensorflow):
    proc, imports = recording_tensorflow(SCRIPT, "doctor")
    assert proc.returncode == 1  # TensorFlow cannot be imported here: a FAIL, not a crash
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(imports) == 1, "one child process should have tried to import TensorFlow"
    # the import came from the probe program, not from doctor's own process
    assert 'File "<string>"' in imports[0] and os.sep + "doctor" + os.sep not in imports[0], imports[0]
    lines = proc.stdout.splitlines()
    assert any(line.startswith("FAIL  TensorFlow") and "test double" in line for line in lines)
    assert any(line.startswith("FAIL  op library") and "without TensorFlow" in line
               for line in lines)


def test_help_prints_no_tensorflow_log_lines():
    proc = subprocess.run([SCRIPT, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, env=_env())
    assert proc.returncode == 0 and proc.stderr == ""
    for name in ("doctor", "build-kernels", "list-kernels"):
        assert name in proc.stdout


def test_version_names_the_package_and_the_tensorflow_it_was_built_for():
    import tensorflow as tf

    proc = subprocess.run([SCRIPT, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, env=_env())
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == "tf-ge-custom %s (op library built for TensorFlow %s)\n" % (
        tf_ge_custom.__version__, tf.__version__)


def test_unknown_top_level_options_are_usage_errors():
    proc = subprocess.run([SCRIPT, "--bogus"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, env=_env())
    assert proc.returncode == 2
    assert proc.stderr == "tf-ge-custom: error: unknown option --bogus; see tf-ge-custom --help\n"


def test_add_custom_still_works_when_the_package_was_imported_as_the_command(tmp_path):
    # The command's deferred import keeps add_custom available: it loads on first use.
    code = ("import sys; sys.argv = ['/x/bin/tf-ge-custom']\n"
            "import tf_ge_custom\n"
            "assert 'tensorflow' not in sys.modules, 'imported TensorFlow at import'\n"
            "print(tf_ge_custom.add_custom([1, 2], [30, 40]).numpy().tolist())\n")
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          cwd=str(tmp_path), env=_env(TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[31, 42]"


@pytest.mark.parametrize("argv, orig_argv, expected", [
    (["/venv/bin/tf-ge-custom", "doctor"], None, True),
    (["/venv/bin/python"], None, False),
    (["-m"], ["python", "-m", "tf_ge_custom", "doctor"], True),
    (["-m"], ["python", "-mtf_ge_custom"], True),
    (["-m"], ["python", "-X", "importtime", "-m", "tf_ge_custom"], True),
    (["-m"], ["python", "-c", "-m", "tf_ge_custom"], False),
    (["-m"], ["python", "-m", "tf_ge_custom.opp", "x.json"], False),
    (["-m"], ["python", "-m", "other_tool"], False),
    (["-c"], ["python", "-c", "import tf_ge_custom"], False),
    ([], None, False),
])
def test_what_counts_as_the_command(argv, orig_argv, expected):
    assert tf_ge_custom._started_as_command(argv, orig_argv or []) is expected
