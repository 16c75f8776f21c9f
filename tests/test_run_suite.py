"""make test's runner (tests/run_suite.py): its two halves hold every test module exactly once,
and run for real (a small tree of its own, real pytest) it runs both, prints both and fails when
either fails."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNNER = ROOT / "tests" / "run_suite.py"
PYTEST = os.path.join(os.path.dirname(sys.executable), "pytest")


def _runner():
    spec = importlib.util.spec_from_file_location("run_suite_under_test", str(RUNNER))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _every_test_module(root):
    """tests/**/test_*.py by os.walk (not the runner's rglob)."""
    found = []
    for folder, _, files in os.walk(str(root / "tests")):
        found += [os.path.relpath(os.path.join(folder, f), str(root)).replace(os.sep, "/")
                  for f in files if f.startswith("test_") and f.endswith(".py")]
    return sorted(found)


def test_the_halves_hold_every_module_once_and_the_native_builds_users_together():
    runner = _runner()
    beside, main = runner.halves()
    got = runner.test_modules(beside) + runner.test_modules(main)
    assert sorted(got) == _every_test_module(ROOT) and len(got) == len(set(got))
    assert not set(beside) & set(main)
    # tests/ge and tests/kernels build into the same build/ge-tests/: never two processes at once
    assert {"tests/ge", "tests/kernels"} <= set(beside)
    assert len(runner.test_modules(beside)) > 10 and len(runner.test_modules(main)) > 10


def _tree(tmp_path, beside_fails=False, main_fails=False):
    root = tmp_path / "tree"
    runner = _runner()
    for path in runner.BESIDE + ("tests/other",):
        (root / path).mkdir(parents=True)
        name = path.rsplit("/", 1)[1]
        fails = beside_fails if path != "tests/other" else main_fails
        (root / path / ("test_%s.py" % name)).write_text(
            "def test_%s():\n    assert %s\n" % (name, "1 + 1 == 3" if fails and name in ("kernels", "other") else "True"))
    (root / "tests" / "test_top.py").write_text("def test_top():\n    assert True\n")
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")
    shutil.copy(str(RUNNER), str(root / "tests" / "run_suite.py"))
    return root


def _run(root, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TF_GE_CUSTOM_SKIP_LOG")}
    return subprocess.run([sys.executable, "tests/run_suite.py"] + list(args), cwd=str(root), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)


def test_two_halves_run_side_by_side_and_both_are_printed(tmp_path):
    root = _tree(tmp_path)
    proc = _run(root, "--jobs", "2", "--", "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout
    out = proc.stdout
    # the main half: tests/other and tests/test_top.py; the beside half: its named folders
    assert "tests/other tests/test_top.py here" in out, out
    assert "2 passed" in out.split("=== the beside half")[0]
    beside = out.split("=== the beside half")[1]
    assert "%d passed" % len(_runner().BESIDE) in beside
    assert (root / "build" / "test-beside.log").read_text() in beside
    assert "main half:   exit 0" in out and "beside half: exit 0" in out


@pytest.mark.parametrize("which", ["beside", "main"])
def test_a_failure_in_either_half_fails_the_run_and_is_named(tmp_path, which):
    root = _tree(tmp_path, beside_fails=which == "beside", main_fails=which == "main")
    proc = _run(root, "--", "-p", "no:cacheprovider")
    assert proc.returncode == 1, proc.stdout
    label = {"main": "main half:   exit ", "beside": "beside half: exit "}
    other = "main" if which == "beside" else "beside"
    assert label[which] + "1: " in proc.stdout and label[other] + "0: " in proc.stdout, proc.stdout


def test_paths_of_its_own_or_one_job_run_one_pytest_as_given(tmp_path):
    root = _tree(tmp_path, main_fails=True)
    given = _run(root, "--", "-p", "no:cacheprovider", "tests/ge")
    assert given.returncode == 0 and "1 passed" in given.stdout and "beside half" not in given.stdout, given.stdout
    one = _run(root, "--jobs", "1", "--", "-p", "no:cacheprovider")
    assert one.returncode == 1 and "1 failed, %d passed" % (len(_runner().BESIDE) + 1) in one.stdout and "beside half" not in one.stdout, one.stdout
    assert not (root / "build").exists()


def test_a_beside_folder_that_is_gone_is_refused_naming_it(tmp_path):
    root = _tree(tmp_path)
    shutil.rmtree(str(root / "tests" / "kernels"))
    proc = _run(root, "--")
    assert proc.returncode == 2
    assert "error: the beside half names tests/kernels, which does not exist" in proc.stdout, proc.stdout
    bad = _run(root, "--jobs", "3", "--")
    assert bad.returncode == 2 and "--jobs takes 1 or 2, got 3" in bad.stdout, bad.stdout


def test_a_module_in_both_halves_is_refused(tmp_path):
    root = _tree(tmp_path)
    runner = _runner()
    with pytest.raises(runner.PartitionError, match="twice: tests/other/test_other.py"):
        runner.halves(root, runner.BESIDE + ("tests/other/test_other.py",))
