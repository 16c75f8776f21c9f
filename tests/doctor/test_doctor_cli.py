"""`tf-ge-custom doctor` on this machine (no CANN, no TF Adapter), in text and JSON.

What this machine is: TensorFlow and the built package work; the NPU stack is absent. So
the package's own checks are OK, the stack's are WARN, nothing FAILs, and the exit status
is 0.
"""
import json
import os
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom import doctor

OWN = ("TensorFlow", "op library", "OPP root", "ASCEND_CUSTOM_OPP_PATH",
       "TF2 adapter finds the JSON")
STACK = ("npu_bridge (TF1)", "npu_device (TF2)", "CANN toolkit", "ASCEND_OPP_PATH",
         "ASCEND_HOME_PATH", "shell environment (atc)")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ASCEND_") and k != "TF_GE_CUSTOM_SET_OPP_PATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.update(extra)
    return env


def run(args, env, cwd):
    proc = subprocess.run(args, env=env, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.slow
def test_json_report_on_this_machine(tmp_path):
    code, out, err = run([sys.executable, "-m", "tf_ge_custom", "doctor", "--json"],
                         clean_env(), tmp_path)
    assert code == 0, err[-3000:]
    report = json.loads(out)
    status = {c["name"]: c["status"] for c in report["checks"]}
    assert report["opp_root"] == tf_ge_custom.opp_root()
    for name in OWN:
        assert status[name] == "OK", (name, report)
    for name in STACK:
        assert status[name] == "WARN", (name, report)
    assert "FAIL" not in status.values() and report["status"] == "WARN"
    assert report["counts"] == {s: list(status.values()).count(s) for s in ("OK", "WARN", "FAIL")}
    for check in report["checks"]:
        assert check["detail"]
        assert bool(check["fix"]) == (check["status"] != "OK"), check


@pytest.mark.slow
def test_text_report_from_the_console_script(tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    root = tf_ge_custom.opp_root()
    code, out, err = run([script, "doctor"], clean_env(ASCEND_CUSTOM_OPP_PATH=root), tmp_path)
    assert code == 0, err[-3000:]
    lines = out.splitlines()
    assert lines[0].startswith("tf-ge-custom %s doctor" % tf_ge_custom.__version__)
    checks = [l for l in lines[1:-1] if not l.startswith(" ")]
    assert len(checks) == len(doctor.CHECKS)
    assert all(l.split()[0] in ("OK", "WARN", "FAIL") for l in checks)
    fixes = [l for l in lines if l.lstrip().startswith("fix: ")]
    assert len(fixes) == sum(l.startswith("WARN") or l.startswith("FAIL") for l in checks)
    # The shell exported the root this time, so atc would find it.
    assert any(l.startswith("OK") and "shell environment (atc)" in l for l in checks)
    assert lines[-1] == "%d OK, %d WARN, 0 FAIL" % (
        sum(l.startswith("OK") for l in checks), sum(l.startswith("WARN") for l in checks))
