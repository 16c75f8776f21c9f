"""TF Adapter users run Python 3.7: the package must parse there (tests/compat also imports
every module under a real Python 3.7). kernels/ installs as tf_ge_custom.kernels."""
import os
import shutil
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _vermin():
    exe = os.path.join(os.path.dirname(sys.executable), "vermin")
    return exe if os.path.exists(exe) else shutil.which("vermin")


def test_vermin_finds_no_violation_of_python_3_7():
    proc = subprocess.run([_vermin(), "--no-tips", "--violations", "--target=3.7-",
                           os.path.join(REPO_ROOT, "tf_ge_custom"), os.path.join(REPO_ROOT, "kernels")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stdout
    assert "Target versions not met" not in proc.stdout


def test_vermin_would_catch_a_violation(tmp_path):
    # the check above is only worth something if vermin flags 3.8+ syntax here
    (tmp_path / "m.py").write_text("if (n := 3):\n    pass\n")
    proc = subprocess.run([_vermin(), "--no-tips", "--violations", "--target=3.7-", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    assert proc.returncode != 0
