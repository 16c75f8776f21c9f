"""Python started in the clone's root behaves as the installed package (tf_ge_custom/_checkout.py).

The root is first on ``sys.path`` there (``python -c``, ``python -m``, a prompt), so
``import tf_ge_custom`` finds the source tree; it hands over to the installed copy when that
copy was built from the clone's sources as they are, and otherwise stays and says why, with a
rebuild command for this interpreter. Each case runs in a fresh process: in the real root,
and in a copy of the clone's sources (identical, then with one file changed), which the
installed copy's record is compared with file by file.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom import _checkout, _library

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = os.path.dirname(os.path.abspath(tf_ge_custom.__file__))

# what the user types at the root: the op against tf.math.add, and where the package came from
PROBE = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tf_ge_custom
x = tf.constant([[1.5, -2.0, 3.25]])
y = tf.constant([[10.0], [20.0]])
print(json.dumps({
    "file": tf_ge_custom.__file__,
    "opp_root": tf_ge_custom.opp_root(),
    "same": bool(np.array_equal(tf_ge_custom.add_custom(x, y).numpy(), tf.math.add(x, y).numpy())),
    "modules": sorted({m.__file__.rsplit("/tf_ge_custom/", 1)[0] for n, m in sys.modules.items()
                       if n.split(".")[0] == "tf_ge_custom" and getattr(m, "__file__", None)}),
}))
"""


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env


def _python(args, cwd):
    return subprocess.run([sys.executable] + args, cwd=str(cwd), env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def _copy_sources(where):
    """A clone holding exactly the sources the build read (what the handover compares)."""
    for top in _checkout.SOURCES:
        source = os.path.join(ROOT, top)
        if os.path.isfile(source):
            shutil.copy2(source, os.path.join(str(where), top))
        else:
            shutil.copytree(source, os.path.join(str(where), top),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "_lib",
                                                          "opp", "build_info.json"))
    return where


def test_the_build_recorded_the_sources_it_read_and_they_are_the_clones():
    recorded = _library.build_info()["source"]["files"]
    assert "tf_ops/add_custom_ops.cc" in recorded and "setup.py" in recorded
    assert not [p for p in recorded if p.startswith(("tf_ge_custom/_lib/", "tf_ge_custom/opp/"))
                or p.endswith((".pyc", "build_info.json")) or "__pycache__" in p]
    assert _checkout.differences(recorded, _checkout.source_files(ROOT)) == [], (
        "the package changed since `make install`: run it again")


@pytest.mark.slow
def test_python_in_the_root_runs_the_installed_package():
    proc = _python(["-c", PROBE], ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["file"] == tf_ge_custom.__file__
    assert found["opp_root"] == tf_ge_custom.opp_root()
    assert found["same"] is True
    # every tf_ge_custom module of that process is the installed copy's, none the source tree's
    assert found["modules"] == [os.path.dirname(INSTALLED)], found["modules"]


@pytest.mark.slow
def test_python_m_in_the_root_is_the_console_script_and_as_quiet():
    script = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    elsewhere = subprocess.run([script, "doctor"], cwd=os.path.expanduser("~"), env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=300)
    env = _env()
    env.pop("TF_CPP_MIN_LOG_LEVEL")  # TensorFlow's default: the command itself keeps it quiet
    here = subprocess.run([sys.executable, "-m", "tf_ge_custom", "doctor"], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert (here.returncode, elsewhere.returncode) == (0, 0), here.stdout + here.stderr
    assert here.stdout == elsewhere.stdout
    assert "FAIL" not in here.stdout.splitlines()[-1].replace("0 FAIL", "")
    assert here.stderr == "" and elsewhere.stderr == ""


@pytest.mark.slow
def test_a_copy_of_the_same_sources_hands_over_too(tmp_path):
    clone = _copy_sources(tmp_path)
    proc = _python(["-c", PROBE], clone)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["file"] == tf_ge_custom.__file__


@pytest.mark.slow
def test_a_changed_source_keeps_the_source_tree_and_says_which_file_and_how_to_rebuild(tmp_path):
    clone = _copy_sources(tmp_path)
    with open(str(clone / "tf_ops" / "add_custom_ops.cc"), "a") as f:
        f.write("// changed after the build\n")
    proc = _python(["-c", PROBE], clone)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tf_ge_custom.errors.OpLibraryError: "), proc.stderr[-3000:]
    assert ("this is the source tree of the clone at %s, imported in place" % clone) in last
    assert ("the tf_ge_custom installed at %s was built from other sources than the clone has "
            "now (1 file differs: tf_ops/add_custom_ops.cc)" % INSTALLED) in last
    # the rebuild is of this clone, for this interpreter: a command that works as printed
    assert last.endswith("Rebuild: %s -m pip install --no-deps --force-reinstall --no-cache-dir %s"
                         % (sys.executable, clone)), last


@pytest.mark.slow
def test_doctor_in_a_changed_clone_says_it_is_the_source_tree_in_one_line(tmp_path):
    clone = _copy_sources(tmp_path)
    with open(str(clone / "tf_ge_custom" / "op_def.py"), "a") as f:
        f.write("# changed after the build\n")
    proc = _python(["-m", "tf_ge_custom", "doctor"], clone)
    assert proc.returncode == 1 and proc.stderr == "", proc.stdout + proc.stderr
    header, check, fix, counts = proc.stdout.splitlines()
    assert header.startswith("tf-ge-custom %s doctor (OPP root: %s" % (tf_ge_custom.__version__, clone))
    assert check.startswith("FAIL  installation  This is the source tree of the clone at %s" % clone)
    assert "(1 file differs: tf_ge_custom/op_def.py)" in check, check
    assert check.endswith(": there is no build here to check")
    assert fix.split() == ["fix:", sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall",
                           "--no-cache-dir", str(clone)], fix
    assert counts == "0 OK, 0 INFO, 0 WARN, 1 FAIL"


def test_without_an_installed_copy_the_source_tree_says_so(tmp_path):
    clone = _copy_sources(tmp_path)
    # -S: no site-packages, so nothing is installed for this interpreter
    proc = _python(["-S", "-c", "import tf_ge_custom, tf_ge_custom._library as l\n"
                                "print(tf_ge_custom.__file__); print(l._missing_library_error())"],
                   clone)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, message = proc.stdout.strip().splitlines()
    assert where == str(clone / "tf_ge_custom" / "__init__.py")
    assert ("This is the source tree of the clone at %s, imported in place" % clone) in message
    assert "no built tf_ge_custom is installed for this interpreter (%s)" % sys.executable in message
    assert message.endswith("Build and install it: %s -m pip install --no-deps --force-reinstall "
                            "--no-cache-dir %s" % (sys.executable, clone)), message


def test_setup_py_imports_the_source_tree_itself():
    proc = _python(["-c", "import builtins; builtins.__TF_GE_CUSTOM_SETUP__ = True\n"
                          "import tf_ge_custom; print(tf_ge_custom.__file__)"], ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == os.path.join(ROOT, "tf_ge_custom", "__init__.py")


def test_the_sources_leave_out_what_a_build_writes(tmp_path):
    clone = _copy_sources(tmp_path)
    before = _checkout.source_files(str(clone))
    for written in ("tf_ge_custom/_lib/libtf_ge_custom_ops.so", "tf_ge_custom/opp/x.json",
                    "tf_ge_custom/build_info.json", "tf_ge_custom/__pycache__/ops.cpython-311.pyc",
                    "tf_ge_custom.egg-info/PKG-INFO", "ge_ops/core/x.o.so"):
        path = clone / written
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("built")
    assert _checkout.source_files(str(clone)) == before
    (clone / "kernels" / "new_kernel.py").write_text("# new\n")
    (clone / "setup.py").unlink()
    assert _checkout.differences(before, _checkout.source_files(str(clone))) == [
        "kernels/new_kernel.py", "setup.py"]


def test_an_editable_install_or_another_folder_is_no_clone_to_hand_over_from(tmp_path):
    clone = _copy_sources(tmp_path)
    assert _checkout.checkout_of(str(clone / "tf_ge_custom")) == str(clone)
    assert _checkout.checkout_of(INSTALLED) is None  # site-packages has no setup.py
    (clone / "tf_ge_custom" / "build_info.json").write_text("{}")  # built in place (editable)
    assert _checkout.checkout_of(str(clone / "tf_ge_custom")) is None
