"""`tf-ge-custom doctor` on this machine (no CANN, no TF Adapter), in text and JSON.

What this machine is: TensorFlow and the built package work; no Ascend component exists at
all. So the package's own checks are OK, every stack check folds into one short INFO line
(CPU mode) but the GE library's, which is a second INFO line with the reason the build
skipped it, nothing WARNs or FAILs, and the exit status is 0. With one piece of a stack
present (a partial stack) the same checks WARN one by one.
"""
import json
import os
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom import _library, doctor

OWN = ("TensorFlow", "op library", "XLA kernels", "OPP root", "ASCEND_CUSTOM_OPP_PATH")
STACK = ("npu_bridge (TF1)", "npu_device (TF2)", "CANN toolkit", "ASCEND_OPP_PATH",
         "ASCEND_HOME_PATH", "shell environment (atc)")
# Ascend-only checks that are OK on a CPU host: shown as OK lines before, folded now
STACK_OK_HERE = ("TF1 adapter finds the JSON", "TF2 adapter finds the JSON", "custom OPP search order (GE)",
                 "npubin toolchain", "kernel sets", "kernel builder")


# The CPU host's second INFO line: the reason the build recorded for leaving GE out, whole.
GE_SKIPPED = "skipped by the build (expected on a CPU host): %s" % (
    _library.build_info()["ge"]["reason"])


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
    info, ge = [c for c in report["checks"] if c["status"] == "INFO"]
    assert "CPU mode" in info["detail"] and info["data"]["cpu_mode"] is True
    assert ge["name"] == "GE library" and ge["detail"] == GE_SKIPPED, ge
    folded = {c["name"]: c["status"] for c in info["data"]["folded"]}
    for name in STACK:
        assert name not in status and folded[name] == "WARN", (name, report)
    for name in STACK_OK_HERE:
        assert name not in status and folded[name] == "OK", (name, report)
    assert sorted(status) == sorted(OWN + ("Ascend stack", "GE library"))
    assert set(status.values()) == {"OK", "INFO"} and report["status"] == "OK"
    assert report["counts"] == {s: list(status.values()).count(s)
                                for s in ("OK", "INFO", "WARN", "FAIL")}
    for check in report["checks"]:
        assert check["detail"]
        assert bool(check["fix"]) == (check["status"] in ("WARN", "FAIL")), check


def _text_report(tmp_path, **env):
    script = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    code, out, err = run([script, "doctor"], clean_env(**env), tmp_path)
    assert code == 0, err[-3000:]
    lines = out.splitlines()
    assert lines[0].startswith("tf-ge-custom %s doctor" % tf_ge_custom.__version__)
    return lines, [l for l in lines[1:-1] if not l.startswith(" ")]


@pytest.mark.slow
def test_text_report_on_a_cpu_host_is_the_packages_checks_and_one_short_line(tmp_path):
    lines, checks = _text_report(tmp_path)
    assert all(l.split()[0] in ("OK", "INFO", "WARN", "FAIL") for l in checks)
    assert [l.split()[0] for l in checks].count("INFO") == 2
    info, ge = [l for l in checks if l.startswith("INFO")]
    assert "Ascend stack" in info and "CPU mode" in info and len(info) < 200, info
    # why the GE library is not there, in the plain report too (README, docs/npu.md)
    assert ge.split(None, 3)[1:3] == ["GE", "library"] and ge.endswith("  " + GE_SKIPPED), ge
    assert "ASCEND_HOME_PATH is not set" in ge
    names = [l[6:].split("  ")[0].strip() for l in checks]
    assert sorted(names) == sorted(OWN + ("Ascend stack", "GE library")), names
    assert not [l for l in checks if l.startswith(("WARN", "FAIL"))]
    assert not [l for l in lines if l.lstrip().startswith("fix: ")]
    assert "(see '" not in "\n".join(lines) and "see '" not in "\n".join(lines)  # no pointer to a folded line
    assert lines[-1] == "%d OK, 2 INFO, 0 WARN, 0 FAIL" % sum(l.startswith("OK") for l in checks)
    # the shell has no ASCEND_CUSTOM_OPP_PATH: the value shown is the one import tf_ge_custom set
    (opp,) = [l for l in checks if l[6:].startswith("ASCEND_CUSTOM_OPP_PATH")]
    assert opp.startswith("OK") and opp.endswith(
        "%s (set by tf_ge_custom at import, not by your shell)" % tf_ge_custom.opp_root()), opp


@pytest.mark.slow
def test_a_variable_the_shell_set_is_shown_as_the_shells(tmp_path):
    root = tf_ge_custom.opp_root()
    _, checks = _text_report(tmp_path, ASCEND_CUSTOM_OPP_PATH=root)
    (opp,) = [l for l in checks if l[6:].startswith("ASCEND_CUSTOM_OPP_PATH")]
    assert opp.startswith("OK") and opp.endswith("  " + root), opp  # no note: the shell's own value
    other = str(tmp_path)
    _, checks = _text_report(tmp_path, ASCEND_CUSTOM_OPP_PATH=other)
    (opp,) = [l for l in checks if l[6:].startswith("ASCEND_CUSTOM_OPP_PATH")]
    assert "tf_ge_custom put the OPP root first at import; your shell has %s" % other in opp, opp


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
