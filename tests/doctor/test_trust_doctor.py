"""``tf-ge-custom doctor`` applies the trust rule and reads the environment without blocking
(docs/kernels.md, "What the package trusts"), through the installed console script in fresh
processes: another user's cache, a relative or untrusted TF_GE_CUSTOM_PYTHON, bad entries of
TF_GE_CUSTOM_KERNELS and ASCEND_CUSTOM_OPP_PATH (a FIFO named like a library, a newline).

Another user's cache is a folder chown'ed to ``nobody``: the suite runs as root, as CI does.
"""
import json
import os
import re
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom import opp

pytestmark = pytest.mark.kind("plumbing")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
NOBODY = 65534
# The doctor's text lines: a status, the padded check name and the detail, or a fix line
# under it (results.py, reporting.py).
LINE = re.compile(r"^((OK|INFO|WARN|FAIL) +\S| +fix( \(by hand\))?: \S)")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "ASCEND_", "PYTEST_")) and k != "PYTHONPATH"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp_path / "cache")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def doctor(tmp_path, env, *args, timeout=300):
    """``tf-ge-custom doctor`` in a fresh process; a hang is a failure, not a wait."""
    try:
        proc = subprocess.run([SCRIPT, "doctor"] + list(args), env=env, cwd=str(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail("doctor did not finish in %d s (it blocked on something)" % timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    return proc


def checks(proc):
    """{name: check} of the JSON report, the checks a CPU-only host folds into one INFO line
    ("Ascend stack", reporting.py) included."""
    report = json.loads(proc.stdout)
    found = {c["name"]: c for c in report["checks"]}
    for c in report["checks"]:
        found.update({f["name"]: f for f in (c.get("data") or {}).get("folded", [])})
    return found


def test_another_users_cache_is_reported_as_not_trusted(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("another user's folder is made with chown, which needs root; run the suite as root")
    cache = tmp_path / "cache"
    (cache / "Ascend910B1").mkdir(parents=True)
    for path in (cache, cache / "Ascend910B1"):
        os.chown(str(path), NOBODY, -1)
        os.chmod(str(path), 0o777)
    found = checks(doctor(tmp_path, _env(tmp_path), "--json"))["kernel cache"]
    assert found["status"] == "WARN", found
    assert "the kernel cache %s is not trusted" % cache in found["detail"]
    assert "owned by uid 65534 (nobody)" in found["detail"]
    assert found["data"]["trusted"] is False
    assert "TF_GE_CUSTOM_CACHE_DIR" in found["fix"]


def test_a_relative_builder_python_is_refused_by_name_and_never_run(tmp_path):
    marker = tmp_path / "ran.txt"
    planted = tmp_path / "python3"  # what the GE library would have run from this folder
    planted.write_text("#!/bin/sh\necho ran > %s\n" % marker)
    planted.chmod(0o755)
    found = checks(doctor(tmp_path, _env(tmp_path, TF_GE_CUSTOM_PYTHON="python3"), "--json"))
    builder = found["kernel builder"]
    assert builder["status"] == "WARN", builder
    assert "TF_GE_CUSTOM_PYTHON=python3 is not an absolute path" in builder["detail"]
    assert "the GE library would run it from each training job's working folder" in builder["detail"]
    assert "TF_GE_CUSTOM_PYTHON=python3 is not an absolute path" in found["kernel cache"]["detail"]
    assert not marker.exists()


def test_bad_kernel_bundle_entries_fail_kernel_sets_by_name_without_blocking(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    fifo = tmp_path / "a-fifo"
    os.mkfifo(str(fifo))
    missing = tmp_path / "missing"
    value = "%s:%s:%s" % (a_file, fifo, missing)
    proc = doctor(tmp_path, _env(tmp_path, TF_GE_CUSTOM_KERNELS=value), "--json")
    sets = checks(proc)["kernel sets"]
    assert sets["status"] == "FAIL" and proc.returncode == 1, sets
    for entry, words in ((a_file, "is a file, not a folder"), (fifo, "is a FIFO (named pipe), not a folder"),
                         (missing, "does not exist")):
        assert "TF_GE_CUSTOM_KERNELS entry %s is refused: %s %s" % (entry, entry, words) in sets["detail"], sets


def test_a_fifo_named_like_a_library_in_an_opp_entry_never_blocks_doctor(tmp_path):
    entry = tmp_path / "vendor-opp"
    libs = entry / opp.ge_library_dir(opp.host_arch())
    libs.mkdir(parents=True)
    os.mkfifo(str(libs / "libvendor.so"))
    proc = doctor(tmp_path, _env(tmp_path, ASCEND_CUSTOM_OPP_PATH=entry), "--json", timeout=240)
    found = checks(proc)["ASCEND_CUSTOM_OPP_PATH"]
    assert found["status"] == "WARN", found
    assert "%s (a FIFO (named pipe))" % (libs / "libvendor.so") in found["detail"], found


def test_a_newline_in_the_opp_path_is_shown_escaped_and_splits_no_line(tmp_path):
    odd = "%s/one\nWARN  injected line" % tmp_path
    proc = doctor(tmp_path, _env(tmp_path, ASCEND_CUSTOM_OPP_PATH=odd + ":" + str(tmp_path)))
    lines = proc.stdout.splitlines()
    body = lines[1:-1]  # the header and the counts line around the checks
    assert body and all(LINE.match(line) for line in body), [l for l in body if not LINE.match(l)]
    assert not any(line.startswith("WARN  injected") for line in lines)
    custom = [l for l in body if l.split()[1:2] == ["ASCEND_CUSTOM_OPP_PATH"]]
    assert custom and "%s/one\\nWARN  injected line" % tmp_path in custom[0], custom
    assert "control characters" in custom[0]
    fix = body[body.index(custom[0]) + 1]
    assert fix.lstrip().startswith("fix:") and "injected" not in fix, fix  # the fix drops it
    assert tf_ge_custom.opp_root() in fix
