"""`tf-ge-custom doctor`, through the installed console script, on a host where TF Adapter's
online parser could not compile the `REG_OP` GE generates for our ops: no `g++` on `PATH`
and a working directory nobody may write in (GE writes `./custom_op_tmp_<pid>/` there;
docs/cann.md). Each need is said in one line of its own, with its fix on the next; the need
that is met (the toolkit `ASCEND_HOME_PATH` names, stand-in files here) is one OK line.

The folder is made read-only with its mode. Root may write in any folder whatever its mode,
so as root the folder also gets the immutable attribute (`chattr +i`), which binds root too,
as tests/user/conftest.py's ``unwritable`` does. The oracle is the
operating system: what the child's `os.access` and `shutil.which` over its PATH find.
"""
import os
import shutil
import stat
import subprocess
import sys

import pytest

from tf_ge_custom import _path_rules as path_rules

pytestmark = [pytest.mark.kind("oracle"), pytest.mark.slow]

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


@pytest.fixture
def host(tmp_path):
    """(folder, environment) for a child that sees no g++: a stand-in toolkit, an empty
    bin/, a home, and a working directory that is read-only."""
    home = tmp_path / "cann"
    for rel in (["include/" + h for h in path_rules.ONLINE_COMPILE_HEADERS]
                + ["lib64/" + l for l in path_rules.ONLINE_COMPILE_LIBRARIES]):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("// stand-in\n")
    for sub in ("bin", "home", "read-only"):
        (tmp_path / sub).mkdir()
    (tmp_path / "read-only").chmod(0o555)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.update(PATH=str(tmp_path / "bin"), HOME=str(tmp_path / "home"), ASCEND_HOME_PATH=str(home),
               TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_GE_CUSTOM_SET_OPP_PATH", None)
    yield tmp_path, env
    (tmp_path / "read-only").chmod(stat.S_IRWXU)


def _lines(env, cwd, read_only=False):
    immutable = read_only and os.geteuid() == 0
    if immutable:  # root ignores the folder's mode, not its immutable attribute
        done = subprocess.run(["chattr", "+i", cwd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        assert done.returncode == 0, "root ignores modes, and chattr +i failed: " + done.stdout
    try:
        proc = subprocess.run([SCRIPT, "doctor"], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=300)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", cwd])
    assert proc.stdout.startswith("tf-ge-custom "), proc.stdout + proc.stderr[-3000:]
    return proc.stdout.splitlines()


def _check_line(lines, name):
    """(the check's line, the line after it) of the check called ``name``."""
    found = [i for i, line in enumerate(lines) if line[6:].startswith(name + "  ")]
    assert len(found) == 1, (name, lines)
    return lines[found[0]], (lines[found[0] + 1] if found[0] + 1 < len(lines) else "")


def test_no_gxx_and_a_read_only_working_directory_each_say_so_in_one_line(host):
    top, env = host
    cwd = str(top / "read-only")
    lines = _lines(env, cwd, read_only=True)
    compiler, compiler_fix = _check_line(lines, "online compile: g++")
    assert compiler.startswith("WARN") and "g++ is not on PATH" in compiler, compiler
    assert "fix (by hand): install g++" in compiler_fix, compiler_fix
    working, working_fix = _check_line(lines, "online compile: working directory")
    assert working.startswith("WARN") and "the working directory %s is not writable" % cwd in working
    assert "fix (by hand): run the program from a writable directory" in working_fix, working_fix
    toolkit, _ = _check_line(lines, "online compile: ASCEND_HOME_PATH")
    assert toolkit.startswith("OK") and env["ASCEND_HOME_PATH"] in toolkit, toolkit
    # Each finding is its own line: no other line of the report repeats it.
    assert sum("g++ is not on PATH" in line for line in lines) == 1, lines
    assert sum("is not writable" in line for line in lines) == 1, lines


def test_with_gxx_on_path_and_a_writable_working_directory_the_lines_are_ok(host):
    top, env = host
    gxx = shutil.which("g++")
    assert gxx, "this test needs the machine's g++ (the suite builds the op library with it)"
    (top / "bin" / "g++").symlink_to(gxx)
    lines = _lines(env, str(top / "home"))
    for name in ("online compile: g++", "online compile: ASCEND_HOME_PATH",
                 "online compile: working directory"):
        line, _ = _check_line(lines, name)
        assert line.startswith("OK"), line
