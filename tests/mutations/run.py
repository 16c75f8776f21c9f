"""The mutation check: each fixed mutation below, a change a real bug would make, must make the
test named to catch it (its catcher) fail.

  python tests/mutations/run.py [--list] [NAME ...]    (with the venv's python, after make install)

The tree (tracked and untracked, not ignored files) is copied once to a scratch folder, and
every change is applied to that copy, never to the tree, and undone after its run. First one
control run: the catchers of every chosen mutation together, each once, with pytest in a
fresh process on the clean copy (they must pass, else a failure is not the mutation's doing).
Then for each mutation, with its change in place, its catcher with ``-x``: it must fail (the
run stops at its first failing case). One copy for every run, so what the
control run built (the GE core's native tests: minutes) is only rebuilt where a change
touches it, and the CMake builds take unchanged objects from ccache (tests/compiler_cache.py).

A change to the package (tf_ge_custom/...) must reach every process the tests start, also the
console script that tests/user runs in a fresh process with PYTHONPATH removed: so it is
installed in a copy of the venv. The copy is a new venv (``python -m venv --without-pip``) whose
site-packages hold a copy of the installed package and a .pth line adding this venv's
site-packages after it (TensorFlow, pytest, ... are found there), and whose bin/ holds the
console script pointing at the copy's Python. The control run uses the copy with the package
as installed; a mutated run the same copy with the mutated file in place. The tests run with
the copy's Python, so ``sys.executable`` and the console script beside it are the copy's.

Exit status 0 when every mutation was caught, 1 when one survived, could not be applied, or its
tests failed without it.
"""
import argparse
import ast
import collections
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
NATIVE = ("tests/ge/", "tests/kernels/")

Mutation = collections.namedtuple("Mutation", "name why path old new catcher")


def _replace(old, new):
    def apply(text, path):
        if text.count(old) != 1:
            raise ValueError("%s: the text to mutate occurs %d times, expected once: %r (the code "
                             "changed? update tests/mutations/run.py)" % (path, text.count(old), old))
        return text.replace(old, new)
    return apply


def _delete_function(name):
    def apply(text, path):
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                lines = text.splitlines(True)
                return "".join(lines[:first - 1] + lines[node.end_lineno:])
        raise ValueError("%s: no function %s to delete (renamed? update tests/mutations/run.py)" % (path, name))
    return apply


MUTATIONS = (
    Mutation("float32-tolerance-loosened",
             "the float32 tolerance of the verification check loosened to (1e-2, 1e-2)",
             "tf_ge_custom/export/checking/compare.py",
             '64 * _EPS["float32"], 64 * _EPS["float32"],', "1e-2, 1e-2,",
             "tests/export/test_tolerances.py::test_an_error_just_inside_the_tolerance_passes_and_just_outside_fails"),
    Mutation("float32-tolerance-tightened",
             "the float32 tolerance of the verification check tightened to (1e-6, 1e-7)",
             "tf_ge_custom/export/checking/compare.py",
             '64 * _EPS["float32"], 64 * _EPS["float32"],', "1e-6, 1e-7,",
             "tests/export/test_tolerances.py::test_an_error_just_inside_the_tolerance_passes_and_just_outside_fails"),
    Mutation("execute-times-as-str",
             "npu_device's execute_times (an int, default -1) validated as a string",
             "tf_ge_custom/npu/options.py",
             '_o("execute_times", INT, "execute_times", tf1=False)',
             '_o("execute_times", STR, "execute_times", tf1=False)',
             "tests/npu/test_adapter_options.py::test_each_option_takes_the_type_the_adapter_reads_and_refuses_the_others"),
    Mutation("snapshot-skip-checks-ges-variables",
             "strict mode's snapshot cause checks GE's and metadef's variables whatever snapshot the skip names",
             "tests/conftest.py",
             "    names = snapshot_vars(reason)\n", "    names = [GE_REPO_VAR, METADEF_REPO_VAR]\n",
             "tests/test_strict_skips.py::test_a_tf_adapter_snapshot_need_runs_when_that_snapshot_is_there"),
    Mutation("keras-example-test-deleted",
             "the test that runs `python examples/keras_train.py` deleted",
             "tests/examples/test_readme_examples.py",
             None, None,
             "tests/user/test_documented_commands.py::"
             "test_every_documented_command_has_a_test_collected_with_its_marker"),
    Mutation("signal-exit-status-always-130",
             "every signal's exit status reported as SIGINT's (130), not 128 + the signal's number",
             "tf_ge_custom/_lifecycle.py",
             "        return 128 + self.signum\n", "        return 130\n",
             "tests/user/test_lifecycle.py::test_sighup_while_atc_runs_stops_it_and_what_it_started_and_removes_staging"),
    Mutation("trust-ignores-group-write",
             "the trust rule refuses a path others may write but takes one its group may write",
             "tf_ge_custom/_trust.py",
             "if mode & GROUP_OTHER_WRITE and ", "if mode & stat.S_IWOTH and ",
             "tests/user/test_trust_logs.py::test_list_kernels_refuses_a_kernel_cache_its_group_may_write"),
    Mutation("sticky-bit-excuses-files",
             "the trust rule's sticky-bit exception excuses a file too (a user's mode 1666 file trusted)",
             "tf_ge_custom/_trust.py",
             "not (stat.S_ISDIR(mode) and mode & stat.S_ISVTX):", "not (mode & stat.S_ISVTX):",
             "tests/kernels/test_trust_rule.py::test_each_shared_case_gets_its_verdict"),
    Mutation("native-sticky-bit-excuses-files",
             "the GE library's trust rule: the sticky-bit exception excuses a file too",
             "ge_ops/core/src/trust.cc",
             "!(S_ISDIR(mode) && (mode & S_ISVTX) != 0)", "!((mode & S_ISVTX) != 0)",
             "tests/ge/test_native_core.py::test_native[Trust.EachSharedCaseGetsItsVerdict]"),
    Mutation("native-elf-undefined-function-accepted",
             "the GE library's ELF reader takes an undefined symbol typed as a function as the entry",
             "ge_ops/core/src/elf_symbols.cc",
             '  if (shndx == kShnUndef) return "undefined here (a reference: section SHN_UNDEF)";\n', "",
             "tests/ge/test_native_core.py::test_native[ElfSymbols.CraftedEntriesTheRuntimeWouldNotLaunchAreRefused]"),
    Mutation("native-manifest-field-rules-unchecked",
             "the GE library's manifest reader no longer checks the shared field rules (a magic of null taken)",
             "ge_ops/core/src/manifest.cc",
             '  TF_GE_CUSTOM_RETURN_IF_ERROR(CheckFields(doc, "manifest", ""));\n', "",
             "tests/ge/test_manifest_rules.py::test_both_readers_give_the_rules_verdict"),
    Mutation("model-known-by-load-order",
             "the GE library tells OM2's models apart by the order they were loaded, not by the sha256 of their bytes",
             "ge_ops/core/src/model_kernels.cc",
             "  const std::string sha = Sha256Hex(bytes.data(), bytes.size());\n",
             "  const std::string sha = std::to_string(models_.size());\n",
             "tests/ge/test_native_core.py::test_native[ModelKernels.AModelIsKnownByItsBytesNotByItsNodesNames]"),
    Mutation("attribute-area-head-unchecked",
             "a node-info block whose attribute area cannot hold its 48-byte head taken as having one",
             "ge_ops/core/src/node_attrs.cc",
             "  if (e < a || e - a < kAttrAreaHeadBytes) return false;\n", "  if (e < a) return false;\n",
             "tests/ge/test_native_core.py::test_native[NodeAttrs.ABlockWithoutAnAttributeAreaIsRefused]"),
    Mutation("dump-step-range-n-n-accepted",
             "a dump_step range N-N accepted (only a range that grows is one)",
             "tf_ge_custom/npu/options.py",
             "int(match.group(1)) >= int(match.group(2))", "int(match.group(1)) > int(match.group(2))",
             "tests/npu/test_option_boundaries.py::test_a_dump_step_range_must_grow"),
    Mutation("import-puts-working-folder-first",
             "export --import puts the working folder first on sys.path (a json.py there shadows the standard library)",
             "tf_ge_custom/export/pipeline.py",
             "    sys.path[:] = [p for p in sys.path if p not in here] + [cwd]\n",
             "    sys.path.insert(0, cwd)\n",
             "tests/user/test_import_shadowing.py::test_the_console_script_exports_beside_json_numpy_and_colorsys_look_alikes"),
)
APPLY = {m.name: (_replace(m.old, m.new) if m.old is not None else None) for m in MUTATIONS}
APPLY["keras-example-test-deleted"] = _delete_function("test_keras_example_trains_saves_and_reloads")


def _tree_files():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    return [f for f in out.split("\0") if f]


def _copy_tree(files, into):
    for rel in files:
        source, target = ROOT / rel, into / rel
        if not (source.is_file() or source.is_symlink()):
            continue  # deleted in the working tree, or a submodule folder
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(str(source)), str(target))
        else:
            shutil.copy2(str(source), str(target))


def _installed_package():
    """The folder of the tf_ge_custom this interpreter imports outside the checkout."""
    proc = subprocess.run([sys.executable, "-c", "import importlib.util as u; "
                           "print(u.find_spec('tf_ge_custom').submodule_search_locations[0])"],
                          cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise SystemExit("error: %s cannot import tf_ge_custom: run make install, then this script with "
                         ".venv/bin/python\n%s" % (sys.executable, proc.stderr[-2000:]))
    return pathlib.Path(proc.stdout.strip())


def _run_tests(checkout, tests, python=None, timeout=900):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_GE_CUSTOM_STRICT_SKIPS", "TF_GE_CUSTOM_SKIP_LOG", "PYTEST_ADDOPTS", "PYTHONPATH")}
    started = time.time()
    proc = subprocess.run([python or sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider"] + tests,
                          cwd=str(checkout), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=timeout)
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, re.M)
    return proc.returncode, failed, proc.stdout, time.time() - started


def _site_packages(python):
    return pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip())


CONSOLE_SCRIPTS = ("tf-ge-custom",)


def venv_copy(where, installed):
    """A copy of this venv at ``where`` holding a copy of the installed package (see the module's
    docstring); returns its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = _site_packages(python)
    here = _site_packages(sys.executable)
    # processed after the copy's own site-packages: the package copy there comes first
    (site / "zz-tf-ge-custom-mutations-base.pth").write_text("import site; site.addsitedir(%r)\n" % str(here))
    shutil.copytree(str(installed), str(site / "tf_ge_custom"), symlinks=True)
    for name in CONSOLE_SCRIPTS:
        source = pathlib.Path(sys.executable).parent / name
        lines = source.read_text().splitlines(True)
        if not lines or not lines[0].startswith("#!"):
            raise SystemExit("error: %s is not a console script (no #! line)" % source)
        target = where / "bin" / name
        target.write_text("#!%s\n" % python + "".join(lines[1:]))
        target.chmod(0o755)
    return python, site / "tf_ge_custom"


def _install_mutated(package, relative, mutated):
    """Put the mutated file into the venv copy's package (its compiled bytecode removed)."""
    shutil.copy2(str(mutated), str(package / relative))
    cache = (package / relative).parent / "__pycache__"
    for compiled in cache.glob(relative.stem + ".*.pyc") if cache.is_dir() else ():
        compiled.unlink()


def _write_mutated(target, mutated):
    """The change in place in the copy, with any bytecode compiled from the file before it."""
    target.write_text(mutated)
    cache = target.parent / "__pycache__"
    for compiled in cache.glob(target.stem + ".*.pyc") if cache.is_dir() else ():
        compiled.unlink()


def union(specs):
    """The test specs in order, each once: a node whose file (or a parent node) is already
    listed is left out."""
    chosen = []
    for spec in specs:
        if not any(spec == c or spec.startswith(c + "::") for c in chosen):
            chosen = [c for c in chosen if not c.startswith(spec + "::")] + [spec]
    return chosen


def failing_specs(mutation, failed):
    """The control run's failures that are this mutation's catcher (one of its cases)."""
    return [f for f in failed if f == mutation.catcher or f.startswith((mutation.catcher + "[",
                                                                         mutation.catcher + "::"))]


def control(chosen, checkout, python):
    """One control run of every chosen mutation's catcher on the clean copy: (status, failed, out,
    seconds, specs)."""
    specs = union(m.catcher for m in chosen)
    # the native tests last: by the time they build the GE core, the suite beside this check
    # has compiled it into the shared compiler cache (tests/compiler_cache.py)
    specs = [s for s in specs if not s.startswith(NATIVE)] + [s for s in specs if s.startswith(NATIVE)]
    status, failed, out, seconds = _run_tests(checkout, specs, python, timeout=2700)
    return status, failed, out, seconds, specs


def check(mutation, checkout, package, python, control_run):
    """(caught, lines to print) for one mutation, applied to the copy and undone after."""
    status, failed, out, seconds, _ = control_run
    target = checkout / mutation.path
    text = target.read_text()
    try:
        mutated = APPLY[mutation.name](text, mutation.path)
    except ValueError as e:
        return False, ["NOT APPLIED %s: %s" % (mutation.name, e)]
    relative = None
    if mutation.path.startswith("tf_ge_custom/"):
        relative = pathlib.Path(mutation.path).relative_to("tf_ge_custom")
        installed_file = package / relative
        if not installed_file.is_file() or installed_file.read_text() != text:
            return False, ["NOT APPLIED %s: the installed %s is not the tree's %s (run make install)"
                           % (mutation.name, installed_file, mutation.path)]
    broken = failing_specs(mutation, failed)
    if status != 0 and (broken or not failed):
        return False, ["CONTROL RUN FAILS %s: %s fail without the mutation (exit %d, %.0f s):" % (
            mutation.name, " ".join(broken or [mutation.catcher]), status, seconds), out[-4000:]]
    lines = ["%s: %s" % (mutation.name, mutation.why),
             "  control run (the venv copy, package as installed): %s passes" % mutation.catcher]
    _write_mutated(target, mutated)
    if relative is not None:
        _install_mutated(package, relative, target)
    try:
        status, failed, out, seconds = _run_tests(checkout, ["-x", mutation.catcher], python)
    finally:
        _write_mutated(target, text)
        if relative is not None:
            _install_mutated(package, relative, target)
    caught = status not in (0, 5) and any(f.startswith(mutation.catcher) for f in failed)
    lines.append("  mutated copy%s: exit %d in %.0f s; %d failed (stopped at the first)" % (
        " (mutated package installed in the venv copy)" if relative is not None else "", status, seconds,
        len(failed)))
    if caught:
        lines.append("  CAUGHT by %s" % next(f for f in failed if f.startswith(mutation.catcher)))
        lines += ["    " + l for l in re.findall(r"^E +(.*\S)", out, re.M)[:3]]
    else:
        lines += ["  SURVIVED: %s was meant to fail" % mutation.catcher, out[-4000:]]
    return caught, lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to check (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    by_name = {m.name: m for m in MUTATIONS}
    if args.list:
        for m in MUTATIONS:
            print("%-36s %s (%s; caught by %s)" % (m.name, m.why, m.path, m.catcher))
        return 0
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error("unknown mutation %s; mutations: %s" % (", ".join(unknown), ", ".join(by_name)))
    chosen = [by_name[n] for n in args.names] or list(MUTATIONS)
    installed = _installed_package()
    if installed.resolve() == (ROOT / "tf_ge_custom").resolve():
        raise SystemExit("error: %s imports tf_ge_custom from the source tree; install it (make install)"
                         % sys.executable)
    caught, started = 0, time.time()
    with tempfile.TemporaryDirectory(prefix="tf-ge-custom-mutations-") as scratch:
        scratch = pathlib.Path(scratch)
        checkout = scratch / "checkout"
        _copy_tree(_tree_files(), checkout)
        python, package = venv_copy(scratch / "venv", installed)
        control_run = control(chosen, checkout, python)
        status, failed, _, seconds, specs = control_run
        print("control run: %d test specs of %d mutations on the clean copy: exit %d in %.0f s; %d failed"
              % (len(specs), len(chosen), status, seconds, len(failed)), flush=True)
        for mutation in chosen:
            ok, lines = check(mutation, checkout, package, python, control_run)
            caught += ok
            print("\n".join(lines), flush=True)
    print("mutation check: %d of %d mutations caught (%.0f s)" % (caught, len(chosen), time.time() - started))
    return 0 if caught == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
