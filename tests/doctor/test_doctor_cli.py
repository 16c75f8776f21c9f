"""`tf-ge-custom doctor` on this machine (no CANN, no TF Adapter), in text and JSON.

What this machine is: TensorFlow and the built package work; no Ascend component exists at
all. So the package's own checks are OK, the stack's checks fold into one INFO line (CPU
mode), nothing WARNs or FAILs, and the exit status is 0. With one piece of a stack present
(a partial stack) the same checks WARN one by one.
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
def test_json_report_on_this_machine_is_cpu_mode(tmp_path):
    code, out, err = run([sys.executable, "-m", "tf_ge_custom", "doctor", "--json"],
                         clean_env(), tmp_path)
    assert code == 0, err[-3000:]
    report = json.loads(out)
    status = {c["name"]: c["status"] for c in report["checks"]}
    assert report["opp_root"] == tf_ge_custom.opp_root()
    for name in OWN:
        assert status[name] == "OK", (name, report)
    (info,) = [c for c in report["checks"] if c["status"] == "INFO"]
    assert "CPU mode" in info["detail"] and info["data"]["cpu_mode"] is True
    folded = {c["name"]: c["status"] for c in info["data"]["folded"]}
    for name in STACK:
        assert name not in status and folded[name] == "WARN", (name, report)
    assert set(status.values()) == {"OK", "INFO"} and report["status"] == "OK"
    assert report["counts"] == {s: list(status.values()).count(s)
                                for s in ("OK", "INFO", "WARN", "FAIL")}
    for check in report["checks"]:
        assert check["detail"]
        assert bool(check["fix"]) == (check["status"] in ("WARN", "FAIL")), check


@pytest.mark.slow
def test_text_report_from_the_console_script(tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    root = tf_ge_custom.opp_root()
    code, out, err = run([script, "doctor"], clean_env(ASCEND_CUSTOM_OPP_PATH=root), tmp_path)
    assert code == 0, err[-3000:]
    lines = out.splitlines()
    assert lines[0].startswith("tf-ge-custom %s doctor" % tf_ge_custom.__version__)
    checks = [l for l in lines[1:-1] if not l.startswith(" ")]
    assert all(l.split()[0] in ("OK", "INFO", "WARN", "FAIL") for l in checks)
    assert [l.split()[0] for l in checks].count("INFO") == 1
    assert not [l for l in checks if l.startswith(("WARN", "FAIL"))]
    assert not [l for l in lines if l.lstrip().startswith("fix: ")]
    # The shell exported the root this time, so atc would find it: not folded, OK.
    assert any(l.startswith("OK") and "shell environment (atc)" in l for l in checks)
    assert lines[-1] == "%d OK, 1 INFO, 0 WARN, 0 FAIL" % sum(l.startswith("OK") for l in checks)


@pytest.mark.slow
def test_a_partial_stack_warns_check_by_check(tmp_path):
    # One component (a CANN home that is not a toolkit) and the stack checks speak again.
    home = tmp_path / "Ascend" / "cann"
    home.mkdir(parents=True)
    code, out, err = run([sys.executable, "-m", "tf_ge_custom", "doctor", "--json"],
                         clean_env(ASCEND_HOME_PATH=str(home)), tmp_path)
    assert code == 0, err[-3000:]
    report = json.loads(out)
    status = {c["name"]: c["status"] for c in report["checks"]}
    assert "INFO" not in status.values()
    for name in ("npu_bridge (TF1)", "npu_device (TF2)", "CANN toolkit", "ASCEND_OPP_PATH"):
        assert status[name] == "WARN", (name, report)
