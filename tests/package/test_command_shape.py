"""One shape for every command and every error: the commands are the registry of
``tf_ge_custom._commands`` (one module each: its options and ``run``), the package's errors are
one hierarchy whose members carry their exit status and fix, and only ``tf_ge_custom/cli.py``
prints them (``tf-ge-custom COMMAND: error: ...`` then ``fix: ...``). The user-level cases run
the installed console script in a fresh process."""
import ast
import os
import re
import subprocess
import sys

import pytest

import tf_ge_custom
from tf_ge_custom import _commands, errors

pytestmark = pytest.mark.kind("plumbing")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
PACKAGE = os.path.dirname(os.path.abspath(tf_ge_custom.__file__))
ERROR_LINE = re.compile(r"^tf-ge-custom ([a-z-]+): error: (.+)$")


def _run(args, cwd, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    full.update({k: v for k, v in env.items() if v is not None})
    for k in [k for k, v in env.items() if v is None]:
        full.pop(k, None)
    proc = subprocess.run([SCRIPT] + list(args), cwd=str(cwd), env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_every_command_is_one_module_of_the_registry(tmp_path):
    import argparse
    import importlib

    for command in _commands.COMMANDS:
        module = importlib.import_module(command.module)
        assert module.__name__.startswith("tf_ge_custom._commands.")
        parser = argparse.ArgumentParser()
        module.add_arguments(parser)
        assert callable(module.run) and parser.format_help()
    listed = _run(["--help"], tmp_path).stdout
    shown = re.findall(r"^    ([a-z-]+)\s{2,}", listed, re.M)
    assert shown == list(_commands.NAMES), listed


@pytest.mark.parametrize("args, command, status, words, fix", [
    (["build-kernels", "--soc", "Ascend999", "--out", "o"], "build-kernels", 2, "unsupported SoC 'Ascend999'", None),
    (["build-kernels", "--cache", "--bundle", "b"], "build-kernels", 2, "--bundle cannot be combined with --cache",
     None),
    (["list-kernels", "--wheel", "nothing.whl"], "list-kernels", 2, "does not exist", None),
    (["list-kernels", "--dir", "."], "list-kernels", 0, None, None),
    (["doctor", "--soc", "Ascend000"], "doctor", 2, "--soc:", None),
    (["selftest", "--only", "BOGUS"], "selftest", 2, "unknown stage BOGUS", None),
    (["export", "no/such/model", "--output", "out/m"], "export", 1, "model not found", None),
    (["run-om", "m.om", "--input", "x.npy"], "run-om", 2, "the OM runner was not built", None),
    (["setup-builder"], "setup-builder", 2, "no folder for the venv", "pass --venv DIR or set TF_GE_CUSTOM_BUILDER"),
])
def test_each_error_is_one_error_line_and_its_fix_with_the_errors_status(tmp_path, args, command, status,
                                                                        words, fix):
    (tmp_path / "m.om").write_bytes(b"om")
    proc = _run(args, tmp_path, HOME=None, XDG_DATA_HOME=None, TF_CPP_MIN_LOG_LEVEL="2")
    assert proc.returncode == status, proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if words is None:
        assert not [l for l in lines if "error" in l], proc.stderr
        return
    assert len(lines) == (2 if fix else 1), proc.stderr
    m = ERROR_LINE.match(lines[0])
    assert m and m.group(1) == command and words in m.group(2), lines[0]
    if fix:
        assert lines[1] == "fix: " + fix


# make's build reporter: run as a script by `make install` before the package is installed
# (it wraps `pip install -v`), so it can import nothing of the package, runner included; it
# is no tf-ge-custom command.
MAKE_REPORTER = os.path.join("_build", "make_report.py")


def test_only_the_command_line_prints_errors():
    """No module of the package writes its own ``error:`` line (there were 22 such places in
    five conventions). compile_kernel.py is the entry point the GE library runs, with its own
    result protocol, not a tf-ge-custom command."""
    exempt = {os.path.join("kernels", "compile_kernel.py"), "cli.py", MAKE_REPORTER}
    found = []
    for folder, _, names in os.walk(PACKAGE):
        for name in names:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, PACKAGE)
            if not name.endswith(".py") or relative in exempt:
                continue
            for node in ast.walk(ast.parse(open(path).read())):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "write":
                    text = " ".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant)
                                    and isinstance(c.value, str))
                    if re.search(r"(^|: )error: ", text):
                        found.append("%s:%d" % (relative, node.lineno))
    assert not found, "error lines written outside cli.py: %s" % ", ".join(found)


def test_every_error_carries_an_exit_status_and_a_fix():
    for name in dir(errors):
        cls = getattr(errors, name)
        if isinstance(cls, type) and issubclass(cls, errors.TfGeCustomError):
            assert cls.exit_status in (errors.EXIT_FAILED, errors.EXIT_USAGE), name
            assert isinstance(cls.fix, str), name
    e = errors.ExportError("bad", fix="do this", exit_status=2)
    assert (str(e), e.fix, e.exit_status, isinstance(e, ValueError)) == ("bad", "do this", 2, True)
    assert errors.UsageError("x").exit_status == 2 and errors.MissingToolchainError("x").exit_status == 2
    assert errors.ManifestError("io", "gone", fix="rebuild").fix == "rebuild"


def test_the_build_error_joins_them_and_setup_still_needs_only_the_standard_library():
    """setup.py imports tf_ge_custom._build with nothing but the standard library installed:
    run as it does, in a fresh process, the modules loaded are all the standard library's."""
    code = ("import builtins, sys\n"
            "builtins.__TF_GE_CUSTOM_SETUP__ = True\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from tf_ge_custom import _build\n"
            "from tf_ge_custom._build import ge_step, kernels_step, op_library, opp_step\n"
            "from tf_ge_custom.errors import TfGeCustomError\n"
            "assert issubclass(_build.BuildError, TfGeCustomError)\n"
            "top = set(m.split('.')[0] for m in sys.modules)\n"
            "print(sorted(top - set(sys.stdlib_module_names) - set(sys.builtin_module_names) - {'__main__'}))\n")
    proc = subprocess.run([sys.executable, "-S", "-c", code, os.path.dirname(PACKAGE)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['tf_ge_custom']", proc.stdout


def test_selftest_starts_its_stages_through_the_one_process_runner():
    """Only tf_ge_custom/_processes.py starts programs (subprocess); selftest has no runner of its own."""
    users = []
    for folder, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                tree = ast.parse(open(path).read())
                for node in ast.walk(tree):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and "subprocess" in [
                            a.name for a in node.names] + [getattr(node, "module", None)]:
                        users.append(os.path.relpath(path, PACKAGE))
    assert sorted(users) == sorted(["_processes.py", MAKE_REPORTER]), users


# The package's public modules: what README.md and docs/ tell users to import or run.
PUBLIC_MODULES = {
    "__init__", "__main__", "cli",          # `import tf_ge_custom`, `python -m`, the console script
    "ops", "layers", "npu", "export", "errors",  # the op, its Keras layer, NPU sessions, export, the errors
    "op_def", "opp", "kernel_manifest", "kernel_contract", "kernels",  # for op authors (docs/adding-an-op.md)
    "doctor", "selftest",                   # their result types are read by scripts (--json)
    "saved_model_cli",                      # python -m tf_ge_custom.saved_model_cli (docs/deploy.md)
    "testing",                              # tf_ge_custom.testing.opcheck (docs/testing-your-op.md)
}


def test_modules_that_are_not_public_api_begin_with_an_underscore():
    names = {os.path.splitext(n)[0] for n in os.listdir(PACKAGE)
             if (n.endswith(".py") or os.path.isfile(os.path.join(PACKAGE, n, "__init__.py")))}
    assert PUBLIC_MODULES <= names, sorted(PUBLIC_MODULES - names)
    assert sorted(n for n in names - PUBLIC_MODULES if not n.startswith("_")) == []
