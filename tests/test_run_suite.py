"""make test's runner (tests/run_suite.py): its parts hold every test module exactly once, the
queue is longest first, and run for real (a small tree of its own, real pytest) it runs every
part on two workers, prints each, and fails when any fails."""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNNER = ROOT / "tests" / "run_suite.py"


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


def test_the_parts_hold_every_module_once_and_each_split_is_a_part_of_its_own():
    runner = _runner()
    found = runner.parts()
    got = [m for _, paths in found for m in runner.test_modules(paths)]
    assert sorted(got) == _every_test_module(ROOT) and len(got) == len(set(got))
    names = [name for name, _ in found]
    assert len(names) == len(set(names))
    for name, paths in runner.SPLITS:
        assert (name, list(paths)) in found
        # the folder it was cut from is a part of the modules left, listed by file
        folder = paths[0].rsplit("/", 1)[0]
        (rest,) = [p for n, p in found if n == folder.rsplit("/", 1)[1]]
        assert not set(paths) & set(rest) and all(p.startswith(folder + "/test_") for p in rest), rest
    assert len(found) > 10


def test_the_recorded_times_name_only_parts_there_are():
    runner = _runner()
    times = runner.read_times()
    assert times, "tests/suite_times.json holds no times"
    assert set(times) <= {name for name, _ in runner.parts()}, sorted(times)


def test_the_queue_is_longest_first_and_a_part_without_a_time_starts_first():
    runner = _runner()
    found = [("a", ["tests/a"]), ("b", ["tests/b"]), ("new", ["tests/new"]), ("c", ["tests/c"])]
    order = [name for name, _ in runner.queue(found, {"a": 10.0, "b": 300.0, "c": 20.0})]
    assert order == ["new", "b", "c", "a"]
    assert [name for name, _ in runner.queue(found, {})] == ["a", "b", "new", "c"]


# The small tree: every module the real splits name, one more module beside them, and three
# folders of one module each, plus a module at the top: 7 parts.
REST = ("tests/ge/test_rest.py", "tests/kernels/test_kernels.py", "tests/other/test_other.py",
        "tests/third/test_third.py", "tests/test_top.py")


def _stem(path):
    return path.rsplit("/", 1)[1][len("test_"):-len(".py")]


def _tree(tmp_path, failing=()):
    root = tmp_path / "tree"
    runner = _runner()
    for path in [p for _, paths in runner.SPLITS for p in paths] + list(REST):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        name = _stem(path)
        (root / path).write_text(
            "def test_%s():\n    assert %s\n" % (name, "1 + 1 == 3" if name in failing else "True"))
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")
    shutil.copy(str(RUNNER), str(root / "tests" / "run_suite.py"))
    return root


def _tree_parts():
    """[(name, paths, tests)] of the small tree's parts."""
    runner = _runner()
    splits = [(name, " ".join(paths), len(paths)) for name, paths in runner.SPLITS]
    return splits + [("ge", "tests/ge/test_rest.py", 1), ("kernels", "tests/kernels", 1),
                     ("other", "tests/other", 1), ("third", "tests/third", 1),
                     ("test_top.py", "tests/test_top.py", 1)]


def _run(root, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TF_GE_CUSTOM_SKIP_LOG")}
    return subprocess.run([sys.executable, "tests/run_suite.py"] + list(args), cwd=str(root), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)


def test_every_part_runs_on_two_workers_and_each_is_printed_with_its_times(tmp_path):
    root = _tree(tmp_path)
    proc = _run(root, "--jobs", "2", "--", "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout
    out = proc.stdout
    expected = _tree_parts()
    assert "%d parts on 2 workers" % len(expected) in out, out
    for name, paths, passed in expected:
        # each part's own log, printed whole under a line with its exit status, wall and CPU time
        header = re.search(r"=== part %s \(%s\): exit 0 in \d+ s, CPU \d+ s: .*%d passed.* ===\n"
                           % (re.escape(name), re.escape(paths), passed), out)
        assert header, (name, out)
        log = (root / "build" / "test-parts" / (name + ".log")).read_text()
        assert out[header.end():].startswith(log), name
    recorded = json.loads((root / "build" / "suite-times.json").read_text())["seconds"]
    assert sorted(recorded) == sorted(name for name, _, _ in expected)


@pytest.mark.parametrize("which, part", [("ge_in_loop", "ge-in-loop"), ("rest", "ge"), ("other", "other")])
def test_a_failure_in_any_part_fails_the_run_and_is_named(tmp_path, which, part):
    root = _tree(tmp_path, failing=(which,))
    proc = _run(root, "--", "-p", "no:cacheprovider")
    assert proc.returncode == 1, proc.stdout
    summary = proc.stdout.split("in the order they ended:")[1]
    assert re.search(r"part %s \(.*\): exit 1 in " % re.escape(part), summary), proc.stdout
    assert len(re.findall(r"part \S+ \(.*\): exit 0 in ", summary)) == len(_tree_parts()) - 1, proc.stdout


def test_paths_of_its_own_or_one_job_run_one_pytest_as_given(tmp_path):
    root = _tree(tmp_path, failing=("other",))
    in_ge = sum(1 for _, paths in _runner().SPLITS for _ in paths) + 1
    given = _run(root, "--", "-p", "no:cacheprovider", "tests/ge")
    assert given.returncode == 0 and "%d passed" % in_ge in given.stdout and "parts on" not in given.stdout, given.stdout
    one = _run(root, "--jobs", "1", "--", "-p", "no:cacheprovider")
    assert one.returncode == 1 and "1 failed, %d passed" % (in_ge + 3) in one.stdout, one.stdout
    assert "parts on" not in one.stdout, one.stdout
    assert not (root / "build").exists()


def test_a_split_module_that_is_gone_is_refused_naming_it(tmp_path):
    root = _tree(tmp_path)
    gone = _runner().SPLITS[0][1][-1]
    (root / gone).unlink()
    proc = _run(root, "--")
    assert proc.returncode == 2
    assert "error: the splits name %s, which does not exist" % gone in proc.stdout, proc.stdout
    bad = _run(root, "--jobs", "3", "--")
    assert bad.returncode == 2 and "--jobs takes 1 or 2, got 3" in bad.stdout, bad.stdout


def test_a_module_in_two_parts_is_refused(tmp_path):
    root = _tree(tmp_path)
    runner = _runner()
    twice = runner.SPLITS[0][1][0]
    with pytest.raises(runner.PartitionError, match="twice: %s" % re.escape(twice)):
        runner.parts(root, runner.SPLITS + (("again", (twice,)),))
