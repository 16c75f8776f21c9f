"""doctor under a hostile trial: every fix it prints works as printed, a root that
cannot be listed FAILs, odd files never hang or crash it, and a host without any Ascend
component is one INFO line.

The fixes are run for real (bash, rm, pip --dry-run) and the check is asked again: the
oracle is the check's own verdict on the environment the fix produced.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tf_ge_custom
from tf_ge_custom import _library, doctor, _environment as environment, _files as files, kernel_manifest, _path_rules as path_rules
from tf_ge_custom._build import BuildContext, opp_step

REPO = Path(__file__).resolve().parents[2]
VAR = "ASCEND_CUSTOM_OPP_PATH"


def make_root(base):
    ctx = BuildContext(str(REPO), str(base / "tf_ge_custom"), str(base / "build-temp"))
    opp_step.run(ctx)
    return Path(ctx.opp_root)


@pytest.fixture
def root(tmp_path):
    return make_root(tmp_path / "site")


def context(root, environ=None, **kw):
    kw.setdefault("find_spec", lambda name: None)
    kw.setdefault("which", lambda name, path=None: None)
    kw.setdefault("install_dirs", ())
    kw.setdefault("build_info", {})
    return doctor.Context(root=str(root), environ={} if environ is None else environ,
                          shell_custom_opp_path=kw.pop("shell", None), **kw)


def run_fix(fix, environ):
    """Run a printed fix in bash with ``environ``; return the environment it leaves."""
    proc = subprocess.run(["bash", "-c", fix + '\nenv -0'], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=dict(environ, PATH=os.environ["PATH"]),
                          timeout=60)
    assert proc.returncode == 0, (fix, proc.stderr)
    pairs = [item.split(b"=", 1) for item in proc.stdout.split(b"\0") if b"=" in item]
    return {k.decode(): v.decode() for k, v in pairs}


# --- the export fixes, run as printed -------------------------------------------------------


@pytest.mark.parametrize("value", [
    None,                       # unset
    "relative/dir",             # resolved against each program's working directory
    "{tmp}/missing",            # not a folder
    "::",                       # empty entries
    "{root}::relative:{tmp}/missing:{other}",
    "{other}:{root}",           # root present, not first: fine, no fix needed
])
@pytest.mark.parametrize("spaced", [False, True])
def test_the_custom_opp_path_fix_works_as_printed(tmp_path, value, spaced):
    base = tmp_path / ("my site" if spaced else "site")
    root = make_root(base)
    other = tmp_path / "other root"
    other.mkdir()
    environ = {environment.OPT_OUT_VAR: "0"}
    if value is not None:
        environ[VAR] = value.format(tmp=tmp_path, root=root, other=other)
    check = doctor.check_custom_opp_path(context(root, environ))
    if check.status == doctor.OK:
        assert value == "{other}:{root}" and not check.fix
        return
    assert check.status == doctor.WARN and check.fix.startswith("export %s=" % VAR)
    after = run_fix(check.fix, environ)
    again = doctor.check_custom_opp_path(context(root, after))
    assert again.status == doctor.OK, (check.fix, after[VAR], again)
    assert after[VAR].split(":")[0] == str(root)
    if value and "{other}" in value:
        assert str(other) in after[VAR].split(":")  # existing entries are kept


def test_a_rival_root_is_dropped_by_the_fix(root, tmp_path):
    rival = tmp_path / "rival"
    (rival / "framework" / "tensorflow").mkdir(parents=True)
    (rival / "framework/tensorflow/npu_supported_ops.json").write_text('{"AddCustom": {}}')
    environ = {VAR: "%s:%s" % (root, rival)}
    check = doctor.check_custom_opp_path(context(root, environ))
    assert check.status == doctor.WARN
    after = run_fix(check.fix, environ)
    assert after[VAR] == str(root)
    assert doctor.check_custom_opp_path(context(root, after)).status == doctor.OK


def test_the_shell_fix_gives_atc_the_root(root, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    shell_value = "rel::%s" % keep
    check = doctor.check_shell_environment(context(root, shell=shell_value))
    assert check.status == doctor.WARN
    after = run_fix(check.fix, {VAR: shell_value})
    assert after[VAR] == "%s:%s" % (root, keep)
    assert doctor.check_shell_environment(context(root, shell=after[VAR])).status == doctor.OK


def test_the_stray_library_fix_removes_exactly_it(root):
    stray = root / "framework" / "tensorflow" / "old plugin.so"
    stray.write_bytes(b"\x7fELF")
    check = doctor.check_opp_root(context(root))
    assert check.status == doctor.FAIL
    run_fix(check.fix, {})
    assert not stray.exists()
    assert doctor.check_opp_root(context(root)).status == doctor.OK


# --- the CANN fixes: `source` of the set_env.sh found here, else an instruction -----------


def cann_install(folder, layout="new"):
    """A CANN install as its installer lays it out under ``folder`` (docs/cann.md, "Where
    CANN is installed"): ``cann/`` (new) or ``ascend-toolkit/latest`` (old), with a set_env.sh
    that exports what CANN's does and an `atc` (a stand-in) on the PATH it sets."""
    top = folder / ("cann" if layout == "new" else "ascend-toolkit")
    home = top if layout == "new" else top / "latest"
    (home / "opp" / "built-in").mkdir(parents=True)
    (home / "bin").mkdir()
    atc = home / "bin" / "atc"
    atc.write_text("#!/bin/sh\nexit 0\n")
    atc.chmod(0o755)
    (top / "set_env.sh").write_text(
        'export ASCEND_HOME_PATH="%s"\nexport ASCEND_TOOLKIT_HOME="%s"\n'
        'export ASCEND_OPP_PATH="%s/opp"\nexport PATH="%s/bin:$PATH"\n' % (home, home, home, home))
    return top / "set_env.sh", home


CANN_CHECKS = (doctor.check_home_path, doctor.check_opp_path, doctor.check_cann)


@pytest.mark.parametrize("layout", ["new", "old"])
@pytest.mark.parametrize("check_fn", CANN_CHECKS, ids=lambda f: f.__name__)
def test_the_source_fix_names_the_set_env_found_and_works_as_printed(root, tmp_path, layout,
                                                                     check_fn):
    install = tmp_path / "my Ascend"  # a space: the fix must quote the path
    script, home = cann_install(install, layout)
    kw = dict(install_dirs=(str(install),), which=shutil.which)
    check = check_fn(context(root, {}, **kw))
    assert check.status == doctor.WARN
    assert check.fix == "source " + shlex.quote(str(script)) and doctor.is_command(check.fix)
    after = run_fix(check.fix, {})
    assert after["ASCEND_HOME_PATH"] == str(home)
    again = check_fn(context(root, after, **kw))
    assert again.status == doctor.OK, again


def test_a_toolkit_named_by_the_environment_finds_its_own_set_env(root, tmp_path):
    script, home = cann_install(tmp_path / "elsewhere", "old")
    check = doctor.check_opp_path(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.fix == "source " + shlex.quote(str(script))


def test_without_a_set_env_the_cann_fixes_are_instructions_not_fake_commands(root):
    ctx = context(root, {})
    results = [fn(ctx) for fn in CANN_CHECKS + (doctor.check_online_toolkit,
                                                doctor.check_ge_library,
                                                doctor.check_npu_placement)]
    for check in results:
        assert check.status == doctor.WARN and check.fix, check
        assert not doctor.is_command(check.fix), check
        assert check.as_dict()["fix_is_command"] is False
        assert "<CANN install>" not in check.fix, check.fix  # no placeholder
    text = doctor.format_text(results, str(root))
    assert text.count("fix (by hand): ") == len(results) and "  fix: " not in text


def test_the_ge_rebuild_fix_sources_a_toolkit_that_can_host_the_library(root, tmp_path,
                                                                        fake_toolkit,
                                                                        monkeypatch):
    home = Path(fake_toolkit("Ascend/cann"))
    script = home / "set_env.sh"
    script.write_text('export ASCEND_HOME_PATH="%s"\n' % home)
    monkeypatch.setattr(doctor.remedies, "REBUILD", 'echo "rebuild with $ASCEND_HOME_PATH"')
    not_built = {"ge": {"built": False, "reason": "ASCEND_HOME_PATH is not set"}}
    for check_fn in (doctor.check_ge_library, doctor.check_npu_placement):
        check = check_fn(context(root, {}, build_info=not_built, install_dirs=(str(home.parent),)))
        assert check.fix == "source %s && %s" % (shlex.quote(str(script)), doctor.remedies.REBUILD)
        proc = subprocess.run(["bash", "-c", check.fix], stdout=subprocess.PIPE,
                              universal_newlines=True, env={"PATH": os.environ["PATH"]})
        assert proc.returncode == 0 and proc.stdout == "rebuild with %s\n" % home


def test_every_command_fix_is_one_bash_line_without_placeholders(root, tmp_path):
    """Over a CPU host, a partial stack and a stack with CANN found: each fix doctor prints is
    an instruction or parses as a bash command naming no placeholder."""
    install = tmp_path / "Ascend"
    cann_install(install)
    scenarios = [context(root, {}), context(root, {"ASCEND_HOME_PATH": str(tmp_path / "nope"),
                                                   VAR: "rel::%s" % root}),
                 context(root, {}, install_dirs=(str(install),), which=shutil.which)]
    own = (doctor.check_tensorflow, doctor.check_op_library)
    commands = 0
    for ctx in scenarios:
        results = doctor.run_checks(ctx, [c for c in doctor.CHECKS if c not in own])
        found = [r.as_dict() for r in results]
        found += [f for r in results for f in (r.data or {}).get("folded", [])]
        for check in found:
            assert "<CANN install>" not in check["fix"], check
            if not check["fix_is_command"]:
                continue
            commands += 1
            assert "<" not in check["fix"] and "e.g." not in check["fix"], check
            proc = subprocess.run(["bash", "-n", "-c", check["fix"]], stderr=subprocess.PIPE)
            assert proc.returncode == 0, (check["fix"], proc.stderr)
    assert commands >= 5


@pytest.mark.slow
def test_the_rebuild_command_names_this_interpreter_and_source_and_pip_accepts_it(tmp_path):
    command = _library.rebuild_command()
    argv = command.split()
    assert argv[:3] == [sys.executable, "-m", "pip"], command
    source = argv[-1]
    assert os.path.isfile(os.path.join(source, "setup.py"))
    # pip resolves it (builds the metadata from that source) without installing anything
    proc = subprocess.run(argv + ["--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, cwd=str(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Would install tf-ge-custom" in proc.stdout


def test_without_a_source_record_the_rebuild_advice_is_the_generic_one(monkeypatch, tmp_path):
    monkeypatch.setattr(_library, "_PACKAGE_DIR", str(tmp_path / "site" / "tf_ge_custom"))
    assert _library.rebuild_command() == _library.REBUILD_COMMAND


# --- an OPP root whose path holds ':' --------------------------------------------------------


def test_a_root_holding_the_separator_fails_with_the_install_elsewhere_fix(tmp_path):
    root = make_root(tmp_path / "py:3.11" / "site")
    check = doctor.check_custom_opp_path(context(root, {VAR: "/a"}))
    assert check.status == doctor.FAIL and "contains ':'" in check.detail
    assert check.fix == environment.INSTALL_ELSEWHERE
    # no check suggests exporting it (the export would split it in two)
    for fn in (doctor.check_shell_environment, doctor.check_tf2_finds_json,
               doctor.check_tf1_finds_json):
        result = fn(context(root, {VAR: "/a"}))
        assert "export" not in result.fix, (fn.__name__, result.fix)


# --- files that must not hang or crash doctor ------------------------------------------------


def _deep(path):
    path.write_text("{\"AddCustom\": " + "[" * 100000 + "]" * 100000 + "}")


def make(kind, path, odd_files):
    if kind == "deep":
        _deep(path)
    else:
        odd_files.make(kind, path)


@pytest.mark.parametrize("kind, words", [
    ("fifo", "FIFO"), ("deep", "deeper than"), ("symlink loop", "symlink loop"),
    ("directory", "directory")])
def test_an_odd_supported_ops_json_in_the_root_is_a_fail_line(root, odd_files, kind, words):
    path = root / "framework" / "tensorflow" / "npu_supported_ops.json"
    path.unlink()
    make(kind, path, odd_files)
    check = odd_files.finishes(doctor.check_opp_root, context(root))
    assert check.status == doctor.FAIL and words in check.detail


@pytest.mark.parametrize("kind", ["fifo", "deep", "symlink loop"])
def test_an_odd_json_in_another_entry_neither_hangs_nor_crashes(root, tmp_path, odd_files,
                                                                kind):
    finishes = odd_files.finishes
    other = tmp_path / "other"
    (other / "framework" / "tensorflow").mkdir(parents=True)
    make(kind, other / "framework" / "tensorflow" / "npu_supported_ops.json", odd_files)
    cann = tmp_path / "cann" / "opp"
    (cann / "built-in").mkdir(parents=True)
    environ = {VAR: "%s:%s" % (root, other), "ASCEND_OPP_PATH": str(cann)}
    assert finishes(doctor.check_custom_opp_path, context(root, environ)).status == doctor.OK
    lookup = finishes(path_rules.tf1_lookup, "AddCustom", environ)
    (read,) = [r for r in lookup.reads if r.path.startswith(str(other))]
    assert read.ops is None and read.error
    assert finishes(doctor.check_tf2_finds_json, context(root, environ)).status == doctor.OK


def test_a_vendors_config_that_is_a_fifo_does_not_block_tf1s_lookup(tmp_path, odd_files):
    opp_path = tmp_path / "opp"
    (opp_path / "built-in").mkdir(parents=True)
    (opp_path / "vendors").mkdir()
    odd_files.make("fifo", opp_path / "vendors" / "config.ini")
    lookup = odd_files.finishes(path_rules.tf1_lookup, "AddCustom",
                                {"ASCEND_OPP_PATH": str(opp_path)})
    assert lookup.reads[-1].role == "opp-custom"  # as with no config.ini


def test_a_symlink_cycle_under_framework_is_walked_once(root, tmp_path, odd_files):
    cann = tmp_path / "cann" / "opp"
    (cann / "built-in").mkdir(parents=True)
    folder = root / "framework" / "tensorflow"
    (folder / "libmine.so").write_bytes(b"\x7fELF")
    os.symlink(str(folder), str(folder / "again"))
    os.symlink(str(root / "framework"), str(folder / "up"))
    environ = {"ASCEND_OPP_PATH": str(cann), VAR: str(root)}
    libraries, _ = odd_files.finishes(path_rules.ge_parser_plugins, environ)
    assert [os.path.basename(p) for p, _ in libraries] == ["libmine.so"]


@pytest.mark.parametrize("what, kind", [
    ("directory", "io"), ("fifo", "io"), ("symlink loop", "io"), ("deep", "syntax")])
def test_a_damaged_manifest_in_the_package_is_a_fail_line(root, odd_files, what, kind):
    soc = root / "kernels" / "Ascend910B1"
    soc.mkdir()
    make(what, soc / "manifest.json", odd_files)
    check = odd_files.finishes(doctor.check_kernels,
                               context(root, manifest_reader=kernel_manifest))
    assert check.status == doctor.FAIL and "Ascend910B1: %s error" % kind in check.detail
    assert check.fix == doctor.REBUILD


# --- CPU mode: one INFO line, and only where nothing of the stack is present ------------------


def _stack_pairs(ctx):
    return [(c, c(ctx)) for c in doctor.CHECKS
            if c not in (doctor.check_tensorflow, doctor.check_op_library)]


def test_no_ascend_component_folds_the_stack_warnings_into_one_info_line(root):
    ctx = context(root, {VAR: str(root)}, shell=str(root))
    assert ctx.ascend_components() == []
    results = doctor.fold_cpu_mode(ctx, _stack_pairs(ctx))
    statuses = [r.status for r in results]
    assert statuses.count(doctor.INFO) == 1 and doctor.WARN not in statuses
    (info,) = [r for r in results if r.status == doctor.INFO]
    assert "CPU mode" in info.detail and not info.fix
    # every stack check is folded, the OK ones too (six of them were shown as OK before),
    # into one short line; the package's own checks stay
    stack = [c for c, _ in _stack_pairs(ctx) if c not in doctor.OWN_CHECKS]
    assert [f["name"] for f in info.data["folded"]] == [c.check_name for c in stack]
    assert {f["status"] for f in info.data["folded"]} == {doctor.OK, doctor.WARN}
    assert [r.name for r in results if r is not info] == [
        c.check_name for c, _ in _stack_pairs(ctx) if c in doctor.OWN_CHECKS]
    assert len(info.detail) < 160 and "%d Ascend checks" % len(stack) in info.detail
    assert doctor.worst(statuses) == doctor.OK


def test_on_a_cpu_host_the_ge_librarys_skip_reason_stays_a_line_of_its_own(root):
    """Plain text says why the GE library is missing, not only --json's folded list."""
    reason = "ASCEND_HOME_PATH is not set; to build them, source set_env.sh"
    ctx = context(root, {VAR: str(root)}, shell=str(root),
                  build_info={"ge": {"built": False, "reason": reason}})
    results = doctor.fold_cpu_mode(ctx, _stack_pairs(ctx))
    assert [r.status for r in results].count(doctor.INFO) == 2
    (ge,) = [r for r in results if r.name == "GE library"]
    assert ge.status == doctor.INFO and not ge.fix
    assert ge.detail == "skipped by the build (expected on a CPU host): " + reason
    (info,) = [r for r in results if r.name == doctor.CPU_MODE]
    assert "GE library" not in [f["name"] for f in info.data["folded"]]
    text = doctor.format_text(results, str(root))
    assert re.search(r"^INFO +GE library +skipped by the build \(expected on a CPU host\): "
                     + re.escape(reason) + "$", text, re.M), text


@pytest.mark.parametrize("component, words", [
    ({"find_spec": lambda name: object() if name == "npu_device" else None}, "npu_device"),
    ({"which": lambda name, path=None: "/bin/atc" if name == "atc" else None}, "atc on PATH"),
    ({"install_dirs": ("/",)}, "/"),
    ({"environ": {VAR: "/other/vendor/root"}}, "/other/vendor/root"),
    ({"build_info": {"ge": {"built": True}}}, "GE library"),
])
def test_any_ascend_component_keeps_the_warnings(root, component, words):
    ctx = context(root, **component)
    assert any(words in c for c in ctx.ascend_components()), ctx.ascend_components()
    results = doctor.fold_cpu_mode(ctx, _stack_pairs(ctx))
    assert doctor.INFO not in [r.status for r in results]
    assert doctor.WARN in [r.status for r in results]


@pytest.mark.parametrize("environ", [{"ASCEND_HOME_PATH": "/nowhere"}, {"ASCEND_OPP_PATH": "/nowhere"},
                                     {"ASCEND_HOME_PATH": "/nowhere", "ASCEND_AICPU_PATH": "/x"}])
def test_stray_ascend_variables_alone_are_said_once(root, environ):
    """Variables and nothing they point to: one INFO naming them, not a WARN each."""
    ctx = context(root, environ=environ)
    results = doctor.fold_cpu_mode(ctx, _stack_pairs(ctx))
    bare = context(root)
    assert [r.status for r in results] == [r.status for r in doctor.fold_cpu_mode(bare, _stack_pairs(bare))]
    info = [r for r in results if r.status == doctor.INFO]
    assert len(info) == 1 and info[0].data["stray_variables"] == sorted(environ)
    assert all(var in info[0].detail for var in environ)


def test_a_fail_is_never_folded(root):
    ctx = context(root)
    fail = doctor.Check("npubins", doctor.FAIL, "broken", "fix it")
    warn = doctor.Check("CANN toolkit", doctor.WARN, "absent", "install it")
    results = doctor.fold_cpu_mode(ctx, [(doctor.check_kernels, fail), (doctor.check_cann, warn)])
    assert [r.status for r in results] == [doctor.FAIL, doctor.INFO]


def test_the_installed_package_on_this_host_is_cpu_mode():
    ctx = doctor.Context(environ={k: v for k, v in os.environ.items()
                                  if not k.startswith("ASCEND_")})
    assert ctx.ascend_components() == [], "this test host has part of an Ascend stack"
    assert ctx.build_info_error == ""
    assert ctx.build_info["tensorflow"]["library_sha256"] == files.sha256_file(
        tf_ge_custom.library_path())
