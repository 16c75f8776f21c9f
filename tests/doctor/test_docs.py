"""The examples of docs/npu.md run as documented on this machine (no NPU stack)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "npu.md"


def examples():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def run_example(code, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)


def test_docs_have_the_tf1_and_tf2_examples():
    assert [("session_config" in e, "open_device" in e) for e in examples()] == [
        (True, False), (False, True)]


@pytest.mark.slow
def test_tf1_example_runs_on_the_cpu_with_one_warning(tmp_path):
    proc = run_example(examples()[0], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("NpuPlacementWarning") == 1


@pytest.mark.slow
def test_tf2_example_says_how_to_get_npu_device(tmp_path):
    proc = run_example(examples()[1], tmp_path)
    assert proc.returncode == 1
    assert "NpuStackError" in proc.stderr and "install the npu_device wheel" in proc.stderr


@pytest.mark.kind("plumbing")
def test_the_doctor_table_is_the_checks_own_description():
    """docs/npu.md's table of doctor's checks is made from the checks (their @check name and
    looks_at): a check added, renamed or described anew without the page fails here."""
    from tf_ge_custom.doctor import CHECKS, reporting

    text = DOC.read_text()
    start = text.index("| check | looks at |")
    table = text[start:text.index("\n\n", start) + 1]
    assert table == reporting.markdown_table(), (
        "docs/npu.md's doctor table drifted from the checks; replace it with:\n" + reporting.markdown_table())
    assert len(table.splitlines()) == 2 + len(CHECKS)
    for name in ("XLA kernels", "kernel sets", "kernel builder"):  # the rows the page lacked
        assert "\n| %s |" % name in table


@pytest.mark.kind("plumbing")
def test_each_check_prints_the_name_it_is_documented_under(tmp_path):
    """The names in the table are the names doctor prints (each check run on a bare context)."""
    from tf_ge_custom import doctor

    ctx = doctor.Context(root=str(tmp_path), build_info={}, environ={}, shell_custom_opp_path=None,
                         find_spec=lambda name: None, which=lambda name, path=None: None,
                         tensorflow_probe=lambda: {"tensorflow_error": "not asked here"},
                         dlopen_check=lambda path, env: "", install_dirs=(), cwd=str(tmp_path))
    ctx.builder_describe = lambda python, parent, environ: {"ok": False, "error": "not asked here"}
    for check in doctor.CHECKS:
        assert check(ctx).name == check.check_name, check
