"""What `make demo` and `make test` plan, asked of make itself (``make -n``) in a copy of the
checkout: the demo installs requirements/demo.lock and never dev.lock; with its stamps newer
than everything they depend on, a second `make demo` plans no set-up and no build, only the
demo; a changed, new or removed source plans the build alone, a changed lock the set-up and
the build, a changed build variable the build.

The stamps are made here with ``touch`` in the order make would leave them, so that no
TensorFlow is installed; the real runs are `make demo` from a fresh clone (docs/install.md)."""
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAMPS = (".created", ".demo-deps", ".build-inputs", ".installed")
BUILD_VARIABLES = ("ASCEND_HOME_PATH", "CXX", "TF_GE_CUSTOM_XLA", "TF_GE_CUSTOM_KERNELS_DIR",
                   "TF_GE_CUSTOM_REQUIRE_GE", "TF_GE_CUSTOM_PYTHON", "TF_GE_CUSTOM_BUILD_CACHE",
                   "TF_GE_CUSTOM_BUILD_JOBS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in BUILD_VARIABLES}
    env.update(extra)
    return env


@pytest.fixture
def checkout(tmp_path):
    """The checkout's files (tracked or new, as they are now) in a git repository of their
    own, without .venv or anything ignored."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], stdout=subprocess.PIPE,
                           check=True).stdout.decode().split("\0")
    where = tmp_path / "checkout"
    for relative in files:
        if relative and os.path.isfile(os.path.join(ROOT, relative)):
            (where / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.join(ROOT, relative), str(where / relative))
    subprocess.run(["git", "init", "-q"], cwd=str(where), check=True)
    subprocess.run(["git", "add", "-A"], cwd=str(where), check=True)
    return where


def plan(where, target="demo", **env):
    proc = subprocess.run(["make", "-n", target], cwd=str(where), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=_env(**env))
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


def made(where, **env):
    """Lay the stamps as a finished `make demo` leaves them: each newer than what it reads,
    all in the past (a file written now is newer than every one of them)."""
    old = time.time() - 1000
    for folder, _dirs, names in os.walk(str(where)):
        for name in names:
            os.utime(os.path.join(folder, name), (old, old))
    venv = where / ".venv"
    venv.mkdir(exist_ok=True)
    (venv / ".created").write_text("")
    plan(where, **env)  # make records the build variables and sources in .venv/.build-inputs
    for i, stamp in enumerate(STAMPS):
        path = venv / stamp
        if not path.exists():
            path.write_text("")
        then = old + 100 + i
        os.utime(str(path), (then, then))


def touch(path):
    now = time.time()
    os.utime(str(path), (now, now))


def test_a_fresh_checkout_plans_the_demo_lock_the_build_and_the_demo(checkout):
    out = plan(checkout)
    assert "-r requirements/demo.lock" in out
    assert "dev.lock" not in out and "triton-interp" not in out and "pytest" not in out
    assert "make_report.py pip install --no-deps --force-reinstall --no-build-isolation ." in out
    assert out.rstrip().splitlines()[-1].endswith("examples/demo.py")


def test_make_test_plans_dev_lock_on_top_of_the_demo_lock(checkout):
    out = plan(checkout, "test")
    demo, dev = out.index("-r requirements/demo.lock"), out.index("-r requirements/dev.lock")
    assert demo < dev
    assert "tests/run_suite.py" in out and out.index("tests/run_suite.py") > dev


def test_a_second_demo_with_nothing_changed_plans_only_the_demo(checkout):
    made(checkout)
    out = plan(checkout)
    assert "pip install" not in out and "-m venv" not in out, out
    assert "examples/demo.py" in out


def test_a_changed_source_plans_the_build_but_not_the_set_up(checkout):
    made(checkout)
    touch(checkout / "tf_ops" / "add_custom_kernels.cc")
    out = plan(checkout)
    assert "pip install --no-deps --force-reinstall --no-build-isolation ." in out
    assert "requirements/demo.lock" not in out and "-m venv" not in out


def test_a_new_untracked_source_plans_the_build(checkout):
    made(checkout)
    new = checkout / "tf_ops" / "another_op.cc"
    new.write_text("// a new translation unit\n")
    touch(new)
    assert "--no-build-isolation ." in plan(checkout)


def test_a_removed_source_plans_the_build(checkout):
    made(checkout)
    os.unlink(str(checkout / "tf_ge_custom" / "_version.py"))  # no file newer than the stamps
    assert "--no-build-isolation ." in plan(checkout)


def test_a_changed_lock_plans_the_set_up_and_the_build(checkout):
    made(checkout)
    touch(checkout / "requirements" / "demo.lock")
    out = plan(checkout)
    assert "-r requirements/demo.lock" in out
    assert "--no-build-isolation ." in out


def test_a_changed_build_variable_plans_the_build(checkout):
    made(checkout)
    assert "--no-build-isolation ." not in plan(checkout)
    assert "--no-build-isolation ." in plan(checkout, TF_GE_CUSTOM_XLA="0")
    made(checkout, TF_GE_CUSTOM_XLA="0")
    assert "--no-build-isolation ." not in plan(checkout, TF_GE_CUSTOM_XLA="0")
    # and back: the variable unset is a change too
    assert "--no-build-isolation ." in plan(checkout)


# --- make clean / make distclean: what each removes, printed, and nothing else ---------------

# What the clone's targets make (docs/install.md, "Uninstalling, and what each cache is"): a
# file of each, the path the target removes it with, and the target that first removes it
BUILT = (("build/object-cache/ab/cd.o", "build", "clean"), ("build/temp-tf-ge-custom/u.o", "build", "clean"),
         ("dist/tf_ge_custom-0.1.0.tar.gz", "dist", "clean"),
         ("tf_ge_custom.egg-info/PKG-INFO", "tf_ge_custom.egg-info", "clean"),
         ("tf_ge_custom/_lib/libtf_ge_custom_ops.so", "tf_ge_custom/_lib", "clean"),
         ("tf_ge_custom/opp/vendors/config.ini", "tf_ge_custom/opp", "clean"),
         ("tf_ge_custom/build_info.json", "tf_ge_custom/build_info.json", "clean"),
         (".venv-tf1.15/bin/python", ".venv-tf1.15", "clean"), (".venv-tf2.6/pyvenv.cfg", ".venv-tf2.6", "clean"),
         (".cache/triton-interp/triton/__init__.py", ".cache/triton-interp", "clean"),
         (".venv/bin/python", ".venv", "distclean"))
# What is not theirs: a user's own files and environments, beside and among them
OTHERS = ("notes.txt", ".venv-mine/bin/python", ".cache/pip/x.whl", "tf_ge_custom/my_module_draft.py",
          "builds/report.txt", "dist.md")


def _tree(root):
    return {os.path.relpath(os.path.join(folder, name), str(root))
            for folder, dirs, names in os.walk(str(root)) for name in names + dirs}


@pytest.mark.documents("make distclean")
@pytest.mark.parametrize("target", ["clean", "distclean"])
def test_clean_removes_what_it_prints_and_nothing_else(checkout, target):
    for relative in [b[0] for b in BUILT] + list(OTHERS):
        (checkout / relative).parent.mkdir(parents=True, exist_ok=True)
        (checkout / relative).write_text("x")
    before = _tree(checkout)
    proc = subprocess.run(["make", "--no-print-directory", target], cwd=str(checkout),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          env=_env())
    assert proc.returncode == 0, proc.stdout
    printed = [line.split("removing ", 1)[1].rsplit(" (", 1)[0] for line in proc.stdout.splitlines()]
    assert all(line.startswith("removing ") for line in proc.stdout.splitlines()), proc.stdout
    expected = {removed for _, removed, first in BUILT if first == "clean" or target == "distclean"}
    assert sorted(printed) == sorted(expected), proc.stdout
    gone = set(printed)
    assert _tree(checkout) == {p for p in before
                               if not any(p == g or p.startswith(g + "/") for g in gone)}
    for relative in OTHERS:
        assert (checkout / relative).is_file(), relative
    assert (checkout / ".venv" / "bin" / "python").is_file() == (target == "clean")


# --- make test-quick: the quick tier, by rule (tests/quick_tier.py) ---------------------------

@pytest.mark.documents("make test-quick")
def test_make_test_quick_runs_the_whole_suite_under_the_quick_tier_rule(checkout):
    # the plan: one pytest of the whole of tests/, the quick tier's rule on, not strict
    lines = plan(checkout, "test-quick", PYTEST_ARGS="").replace("\\\n", " ").splitlines()
    (run,) = [l for l in lines if "/bin/pytest " in l]
    words = shlex.split(run)
    assert words[:3] == ["TF_GE_CUSTOM_STRICT_SKIPS=", "TF_GE_CUSTOM_QUICK=1", "TF_GE_CUSTOM_TRITON_INTERP=%s" % (
        checkout / ".cache" / "triton-interp")], run
    at = words.index(".venv/bin/pytest")
    assert words[at + 1:] == ["-q", "tests"], run


def test_an_aarch64_host_plans_its_own_demo_lock(checkout):
    out = plan(checkout, HOST_ARCH="aarch64")
    assert "-r requirements/demo-aarch64.lock" in out and "requirements/demo.lock" not in out
    assert "-r requirements/dev.lock" not in out
    assert "-r requirements/demo.lock" in plan(checkout, HOST_ARCH="x86_64")


def test_make_test_on_aarch64_stops_in_one_line_before_installing(checkout):
    made(checkout, HOST_ARCH="aarch64")
    proc = subprocess.run(["make", "test"], cwd=str(checkout), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True,
                          env=_env(HOST_ARCH="aarch64"))
    assert proc.returncode != 0
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "x86_64 only" in errors[0] and "aarch64" in errors[0], proc.stdout
    assert "pip install" not in proc.stdout and not (checkout / ".venv" / ".deps").exists()
