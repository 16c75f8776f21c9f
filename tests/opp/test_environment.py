"""ASCEND_CUSTOM_OPP_PATH activation: every edge case, in-process and in a real process.

The in-process tests pass their own environ/modules to ``activate``; the subprocess tests
check what a C reader (getenv, as TF Adapter and GE call it) sees after
``import tf_ge_custom``.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import types
import warnings

import pytest

import tf_ge_custom
from tf_ge_custom import _environment as environment
from tf_ge_custom.errors import NpuPlacementWarning

VAR = "ASCEND_CUSTOM_OPP_PATH"


@pytest.fixture(autouse=True)
def fresh_warning_state(monkeypatch):
    monkeypatch.setitem(environment._state, "warned", set())


@pytest.fixture
def root(tmp_path):
    path = tmp_path / "site" / "tf_ge_custom" / "opp"
    path.mkdir(parents=True)
    return str(path)


def activate(root, environ, modules=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = environment.activate(root, environ=environ, modules=modules or {})
    return result, [w for w in caught if issubclass(w.category, NpuPlacementWarning)]


@pytest.mark.parametrize("before, after", [
    (None, "{root}"),
    ("", "{root}"),
    ("/a", "{root}:/a"),
    ("/a:/b", "{root}:/a:/b"),
    ("/b:/a", "{root}:/b:/a"),  # order kept, never sorted
    ("/a::/b:", "{root}:/a:/b"),  # empty entries dropped
    ("::", "{root}"),
    ("{root}", "{root}"),
    ("{root}:/a", "{root}:/a"),
    ("/a:{root}:/b", "{root}:/a:/b"),  # moved to the front, once
    ("{root}:/a:{root}", "{root}:/a"),
    ("{root}/:/a", "{root}:/a"),  # another spelling of the same folder
    ("rel/dir:/a", "{root}:rel/dir:/a"),  # others' relative entries are theirs to keep
])
def test_root_is_first_exactly_once_and_other_entries_keep_their_order(root, before, after):
    environ = {} if before is None else {VAR: before.format(root=root)}
    result, _ = activate(root, environ)
    assert environ[VAR] == after.format(root=root)
    assert result.after == environ[VAR]
    assert result.changed == (before is None or before.format(root=root) != environ[VAR])


def test_a_symlinked_spelling_of_the_root_is_recognised(root, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(root)
    environ = {VAR: "/a:%s" % link}
    activate(root, environ)
    assert environ[VAR] == "%s:/a" % root


def test_activation_is_idempotent(root):
    environ = {VAR: "/x::/y"}
    activate(root, environ)
    first = environ[VAR]
    result, _ = activate(root, environ)
    assert environ[VAR] == first and not result.changed


def test_root_is_never_inserted_relative(root, tmp_path, monkeypatch):
    monkeypatch.chdir(os.path.dirname(root))
    environ = {}
    activate("opp", environ)
    assert environ[VAR] == root
    with pytest.raises(ValueError, match="absolute"):
        environment.with_opp_root("/a", "opp")


@pytest.mark.parametrize("value", ["0", "false", "off", "no", " OFF "])
def test_opt_out_leaves_the_variable_alone(root, value):
    environ = {VAR: "/a::/b", environment.OPT_OUT_VAR: value}
    result, _ = activate(root, environ)
    assert environ[VAR] == "/a::/b"
    assert not result.changed and environment.OPT_OUT_VAR in result.skipped_reason


def test_opt_out_variable_with_other_values_does_not_opt_out(root):
    environ = {environment.OPT_OUT_VAR: "1"}
    activate(root, environ)
    assert environ[VAR] == root


def test_a_missing_root_is_not_inserted(tmp_path):
    environ = {VAR: "/a"}
    result, _ = activate(str(tmp_path / "never-built" / "opp"), environ)
    assert environ == {VAR: "/a"}
    assert "does not exist" in result.skipped_reason


def _opp_path(tmp_path, new_layout):
    path = tmp_path / "cann" / "opp"
    path.mkdir(parents=True)
    if new_layout:
        (path / "built-in").mkdir()
    return str(path)


def test_one_warning_when_tf1_adapter_would_ignore_the_custom_path(root, tmp_path):
    environ = {"ASCEND_OPP_PATH": _opp_path(tmp_path, new_layout=False)}
    _, caught = activate(root, environ)
    assert len(caught) == 1
    assert "built-in" in str(caught[0].message) and "TF1" in str(caught[0].message)
    _, caught = activate(root, environ)
    assert caught == []  # one-time


def test_no_layout_warning_for_the_new_layout_or_without_cann(root, tmp_path):
    assert activate(root, {"ASCEND_OPP_PATH": _opp_path(tmp_path, new_layout=True)})[1] == []
    assert activate(root, {})[1] == []


def test_warning_when_npu_bridge_was_imported_first(root):
    modules = {"npu_bridge": types.ModuleType("npu_bridge")}
    _, caught = activate(root, {}, modules)
    assert len(caught) == 1 and "npu_bridge was imported before" in str(caught[0].message)
    # Once the root is in the variable there is nothing left to warn about.
    assert activate(root, {VAR: root}, modules)[1] == []


def test_warning_when_an_npu_device_was_already_opened(root):
    device = types.ModuleType("npu_device.npu_device")
    device._npu_device_instances = {}
    assert activate(root, {}, {"npu_device.npu_device": device})[1] == []  # imported, not opened
    device._npu_device_instances = {0: object()}
    _, caught = activate(root, {}, {"npu_device.npu_device": device})
    assert len(caught) == 1 and "npu_device.open" in str(caught[0].message)


def test_import_sets_the_variable_that_c_readers_see():
    # tf_ge_custom was imported by this test run: the C environment must hold the root too.
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    value = libc.getenv(VAR.encode()).decode()
    assert value.split(":")[0] == tf_ge_custom.opp_root()
    assert value.split(":").count(tf_ge_custom.opp_root()) == 1


_CHILD = r"""
import ctypes, importlib, json, os, sys, warnings
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda m, c, *a, **k: caught.append((c.__name__, str(m)))
if sys.argv[1] == "bridge-first":
    import npu_bridge
import tf_ge_custom
from tf_ge_custom import _environment as environment
first = os.environ.get("ASCEND_CUSTOM_OPP_PATH")
importlib.reload(tf_ge_custom)
importlib.reload(environment)
tf_ge_custom = importlib.reload(tf_ge_custom)
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(json.dumps({"first": first, "after_reload": os.environ.get("ASCEND_CUSTOM_OPP_PATH"),
                  "c_getenv": libc.getenv(b"ASCEND_CUSTOM_OPP_PATH").decode(),
                  "root": tf_ge_custom.opp_root(),
                  "original": environment.original_custom_opp_path(),
                  "warnings": [m for c, m in caught if c == "NpuPlacementWarning"]}))
"""


def _child(tmp_path, mode, env_value):
    # npu_bridge here is a test double: an empty module that only has to be importable.
    fake = tmp_path / "fake_stack"
    (fake / "npu_bridge").mkdir(parents=True)
    (fake / "npu_bridge" / "__init__.py").write_text("")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ASCEND_") and k != environment.OPT_OUT_VAR}
    env["PYTHONPATH"] = str(fake)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if env_value is not None:
        env[VAR] = env_value
    proc = subprocess.run([sys.executable, "-c", _CHILD, mode], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_import_and_reloads_in_a_fresh_process(tmp_path):
    out = _child(tmp_path, "plain", "/x::/y")
    root = out["root"]
    assert out["first"] == "%s:/x:/y" % root
    assert out["after_reload"] == out["first"] == out["c_getenv"]
    assert out["original"] == "/x::/y"  # what the shell (and atc) see
    assert out["warnings"] == []


@pytest.mark.slow
def test_npu_bridge_imported_first_warns_once_across_reloads(tmp_path):
    out = _child(tmp_path, "bridge-first", None)
    assert out["first"] == out["root"]
    assert len(out["warnings"]) == 1
    assert "npu_bridge was imported before tf_ge_custom" in out["warnings"][0]


# --- an install path holding ':' ----------------------------------------------


@pytest.fixture
def colon_root(tmp_path):
    path = tmp_path / "env:3.11" / "site" / "tf_ge_custom" / "opp"
    path.mkdir(parents=True)
    return str(path)


@pytest.mark.parametrize("before", [None, "/a", "/a:/b"])
def test_a_root_holding_the_separator_is_never_inserted(colon_root, before):
    environ = {} if before is None else {VAR: before}
    result, caught = activate(colon_root, environ)
    # inserted, it would read as two entries, neither of them the root
    assert environ.get(VAR) == before
    assert not result.changed and ":" in result.skipped_reason
    assert len(caught) == 1
    message = str(caught[0].message)
    assert colon_root in message and "install tf-ge-custom where its path has no ':'" in message
    with pytest.raises(ValueError, match="contains ':'"):
        environment.with_opp_root(before, colon_root)


def test_the_separator_warning_is_given_once(colon_root):
    assert len(activate(colon_root, {})[1]) == 1
    assert activate(colon_root, {})[1] == []


@pytest.mark.slow
def test_a_package_installed_under_a_colon_path_warns_and_leaves_the_variable(tmp_path):
    site = tmp_path / "py:3.11" / "site"
    shutil.copytree(os.path.dirname(tf_ge_custom.__file__), str(site / "tf_ge_custom"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ASCEND_") and k != environment.OPT_OUT_VAR}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", ASCEND_CUSTOM_OPP_PATH="/a")
    env.pop("PYTHONPATH", None)  # a ':'-separated list itself: sys.path takes the folder
    code = ("import sys; sys.path.insert(0, %r)\n" % str(site) +
            "import warnings, os; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import tf_ge_custom\n"
            "print(tf_ge_custom.__file__)\n"
            "print(os.environ['ASCEND_CUSTOM_OPP_PATH'])\n"
            "print(sum(1 for x in w if x.category.__name__ == 'NpuPlacementWarning' "
            "and \"contains ':'\" in str(x.message)))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, value, warned = proc.stdout.strip().splitlines()[-3:]
    assert where.startswith(str(site)) and value == "/a" and warned == "1"
