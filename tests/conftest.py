"""Suite-wide rules.

- The tests import the *installed* package (pytest runs in importlib mode, so the source
  tree is not on sys.path); a package without its built op library is reported at once.
- A test skips only for one of the causes of :data:`CAUSES`, a closed list, and its reason
  starts with that cause's words. Where a test needs one of them it says so with the
  ``needs`` marker (``@pytest.mark.needs("syntax_checker", "why")``) or the ``needs``
  fixture (``needs("hicann_snapshots", "why")``): this file then looks for the thing itself
  and skips only when it is really missing, with the cause's words.
- Strict mode (``TF_GE_CUSTOM_STRICT_SKIPS=1``, CI) checks every skip *by its cause*:
    * the reason must start with one cause's words;
    * the cause must hold on this machine (each cause's ``missing`` below: the checker is
      not beside the checkout, the snapshots are not configured, no CANN toolkit that can
      host the GE library, no Ascend device, TensorFlow is not 1.x);
    * the causes a test can only claim through ``needs`` (``Cause.checked``: toolkit, NPU,
      syntax checker) must have been issued by it: a hand-written skip with their words is
      refused, since a machine lacking two things would accept the wrong one.
  Collection is policed the same way: a module-level ``pytest.skip(...,
  allow_module_level=True)`` or ``importorskip``, a collection error, a deselected test
  (``-k``, ``-m``, ``--deselect``), an ``--ignore``d path and an xfail all fail a strict
  run. Outside strict mode the same verdicts are printed, and do not change the exit status.
- Every run ends with a summary of what was skipped and why (counts per cause); with
  ``TF_GE_CUSTOM_SKIP_LOG=<file>`` it is also appended there as one JSON line (.ci/run
  prints the lines of all its runs at the end).
"""
import collections
import glob
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[1]


def _keep_the_source_tree_off_sys_path():
    """The tests import the installed package. ``python -m pytest`` from the checkout puts the
    checkout first on sys.path (the current directory), where ``import tf_ge_custom`` would find
    the source tree, without its op library, kernels or build records; importlib mode keeps
    pytest itself from adding it, and this drops the one Python added (or a PYTHONPATH entry)."""
    root = os.path.realpath(str(SOURCE_ROOT))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != root]
    module = sys.modules.get("tf_ge_custom")
    where = os.path.realpath(getattr(module, "__file__", None) or "") if module else ""
    if where.startswith(os.path.join(root, "tf_ge_custom") + os.sep):
        raise pytest.UsageError(
            "tf_ge_custom was imported from the source tree (%s) before the tests started; the "
            "tests need the installed package: run `make install`, then `.venv/bin/pytest PATHS` "
            "or `.venv/bin/python -m pytest PATHS`" % where)


_keep_the_source_tree_off_sys_path()



def _load_beside(name):
    """A helper module of tests/ (importlib mode puts no test folder on sys.path), or None where
    this conftest was copied without it (the small trees of tests/test_strict_skips.py)."""
    import importlib.util

    path = SOURCE_ROOT / "tests" / (name + ".py")
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_tests_" + name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Every CMake build the tests start compiles through ccache (tests/compiler_cache.py).
_compiler_cache = _load_beside("compiler_cache")
if _compiler_cache is not None:
    os.environ.update(_compiler_cache.variables(os.environ, os.path.dirname(sys.executable), SOURCE_ROOT))
STRICT_VAR = "TF_GE_CUSTOM_STRICT_SKIPS"
SKIP_LOG_VAR = "TF_GE_CUSTOM_SKIP_LOG"
GE_REPO_VAR, METADEF_REPO_VAR = "TF_GE_CUSTOM_GE_REPO", "TF_GE_CUSTOM_METADEF_REPO"
TF_ADAPTER_REPO_VAR = "TF_GE_CUSTOM_TF_ADAPTER_REPO"
# The snapshot variables a "needs the hicann snapshots" reason may name (hicann/ge,
# hicann/metadef, hicann/tensorflow); a reason that names none means GE's two.
SNAPSHOT_VARS = (GE_REPO_VAR, METADEF_REPO_VAR, TF_ADAPTER_REPO_VAR)


def syntax_checker_path():
    """Where the workplace's ge-syntax-check is expected: ../shared/tools/ beside the checkout."""
    return SOURCE_ROOT.parent / "shared" / "tools" / "ge-syntax-check"


def _git_dir(path):
    if not path:
        return False
    proc = subprocess.run(["git", "-C", path, "rev-parse", "--git-dir"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    return proc.returncode == 0


def _missing_checker(reason=""):
    path = syntax_checker_path()
    if path.is_file():
        return None
    return "%s does not exist" % path


def snapshot_vars(reason):
    """The snapshot variables ``reason`` names (GE's two when it names none). A name that is
    not one of SNAPSHOT_VARS (a misspelling would be unset forever, and its skip would always
    hold) is a ValueError."""
    named = sorted(set(re.findall(r"TF_GE_CUSTOM_[A-Z0-9_]*REPO\b", reason)))
    unknown = [n for n in named if n not in SNAPSHOT_VARS]
    if unknown:
        raise ValueError("%s: not a snapshot variable; the snapshot variables are %s"
                         % (", ".join(unknown), ", ".join(SNAPSHOT_VARS)))
    return named or [GE_REPO_VAR, METADEF_REPO_VAR]


def _missing_snapshots(reason=""):
    # Only the variables this reason names: a skip for hicann/tensorflow holds while
    # TF_GE_CUSTOM_TF_ADAPTER_REPO is missing, whatever GE's variables say.
    names = snapshot_vars(reason)
    bad = ["%s %s" % (var, "is unset" if not os.environ.get(var) else
                      "=%s is not a git directory" % os.environ[var])
           for var in names if not _git_dir(os.environ.get(var))]
    return "; ".join(bad) or None


def _missing_toolkit(reason=""):
    from tf_ge_custom._build import ge_step

    return ge_step.cann_toolkit()[1]


def _missing_npu(reason=""):
    return None if glob.glob("/dev/davinci[0-9]*") else "no /dev/davinci* device"


def _tensorflow_version():
    module = sys.modules.get("tensorflow")
    if module is not None and getattr(module, "__version__", None):
        return module.__version__
    try:
        from importlib import metadata  # novermin (Python 3.7: pkg_resources below)
    except ImportError:  # Python 3.7 (the compat runs)
        import pkg_resources

        for name in ("tensorflow", "tensorflow-cpu"):
            try:
                return pkg_resources.get_distribution(name).version
            except pkg_resources.DistributionNotFound:
                pass
        return None
    for name in ("tensorflow", "tensorflow-cpu"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return None


def _missing_tf2_feature(reason=""):
    version = _tensorflow_version()
    if version and version.split(".")[0] == "1":
        return "TensorFlow %s" % version
    return None


class Cause(collections.namedtuple("Cause", "key words missing checked here")):
    """One reason a test may skip. ``words``: how its reason starts; ``missing(reason)``: None
    when the thing is here, else what is missing (the cause holds); ``checked``: a skip with
    these words counts only when ``needs`` issued it. The snapshots cause reads the
    TF_GE_CUSTOM_*_REPO variables its reason names (TF_GE_CUSTOM_GE_REPO and
    TF_GE_CUSTOM_METADEF_REPO when it names none)."""


CAUSES = (
    Cause("cann_toolkit", "needs a CANN toolkit: ", _missing_toolkit, True,
          "ASCEND_HOME_PATH names a toolkit that can host the GE library"),
    Cause("ascend_npu", "needs an Ascend NPU: ", _missing_npu, True, "a /dev/davinci* device exists"),
    Cause("hicann_snapshots", "needs the hicann snapshots: ", _missing_snapshots, False,
          "the snapshot variables name git directories"),
    Cause("syntax_checker", "needs the shared syntax checker: ", _missing_checker, True,
          "../shared/tools/ge-syntax-check is beside the checkout"),
    Cause("tf1", "TensorFlow 1.15 has no ", _missing_tf2_feature, False, "this TensorFlow is not 1.x"),
)
CAUSE_BY_KEY = {c.key: c for c in CAUSES}

# What a test's evidence is (``pytestmark = pytest.mark.kind("...")`` in a module, or on a
# test); the run's summary counts the collected tests by kind.
KINDS = {
    "oracle": "checked against an independent oracle (TensorFlow, numpy, pytest, the public "
              "sources, a real compiler)",
    "bytes": "checked against hand-computed bytes or values",
    "doubles": "our process handling, driven by a named test double of an external program",
    "plumbing": "our own tables and messages: what our code decided, with no outside oracle",
}
_kinds = collections.Counter()
# The kind of the modules that do not say (``pytestmark = pytest.mark.kind(...)`` wins): each
# module's predominant evidence, read off its docstring and assertions. A coarse count: a
# module mixes kinds where its tests do not carry their own marker.
KIND_OF_MODULE = {
    "oracle": """benchmarks/test_make_bench compat/test_adapter_tensorflows compat/test_compile_entry_point
        compat/test_export_tf1_routes compat/test_selftest_and_examples distribute/test_strategies
        examples/test_readme_examples export/test_example export/test_freezing export/test_verification
        ge/test_cann_build ge/test_cann_matrix ge/test_kernel_compile ge/test_sanitizers
        kernels/test_interpreter_numerics kernels/test_lowering npu/test_hostile_options
        opp/test_environment opp/test_supported_ops_json package/test_packaging
        package/test_python37_syntax package/test_readme_snippets doctor/test_docs
        tf/test_add_custom_matches_tf_add tf/test_concurrency tf/test_demo tf/test_gradients
        tf/test_graph_structure tf/test_keras tf/test_large_tensor tf/test_ragged
        tf/test_sample_pattern tf/test_saved_model tf/test_xla""",
    "bytes": """ge/test_native_core selftest/test_verdicts opp/test_path_rules package/test_atomic_files
        kernels/test_geometry kernels/test_kernel_manifest""",
    "doubles": """export/test_process_handling export/test_cli kernels/test_builder kernels/test_cache
        doctor/test_kernel_cache_check package/test_cli_startup package/test_commands
        selftest/test_runner""",
    "plumbing": """doctor/test_cann_checks doctor/test_checks doctor/test_doctor_cli doctor/test_hostile
        export/test_freezing_refusals export/test_shapes_and_command_lines ge/test_codegen
        ge/test_ge_step kernels/test_hostile_kernels kernels/test_kernels_step opp/test_layout
        package/test_adding_an_op package/test_import selftest/test_selftest_here tf/test_bad_inputs
        tf/test_library_refusal tf/test_op_library_step tf/test_op_registration tf/test_tf_codegen""",
}
_MODULE_KIND = {module: kind for kind, modules in KIND_OF_MODULE.items() for module in modules.split()}

_issued = {}        # nodeid -> reasons the needs marker/fixture skipped it with
_verdicts = []      # (nodeid, cause key or None, refusal or None)
_collection = {"errors": [], "deselected": 0, "modules": set()}


def cause_of(reason):
    return next((c for c in CAUSES if reason.startswith(c.words)), None)


def judge(nodeid, reason):
    """(cause or None, why strict mode refuses this skip or None)."""
    cause = cause_of(reason)
    if cause is None:
        return None, "not one of the skip causes (%s)" % ", ".join(
            repr(c.words.strip()) for c in CAUSES)
    if cause.checked and reason not in _issued.get(nodeid, ()):
        return cause, ("%r not issued by the needs marker/fixture, which looks for the thing "
                       "itself: use @pytest.mark.needs(%r, ...)" % (cause.words.strip(), cause.key))
    try:
        missing = cause.missing(reason)
    except ValueError as e:
        return cause, str(e)
    if missing is None:
        return cause, "the cause does not hold on this machine: %s" % cause.here
    return cause, None


def _skip_for(nodeid, key, detail):
    cause = CAUSE_BY_KEY.get(key)
    if cause is None:
        raise ValueError("unknown skip cause %r; causes: %s" % (key, ", ".join(CAUSE_BY_KEY)))
    missing = cause.missing(detail)
    if missing is None:
        return
    reason = "%s%s (%s)" % (cause.words, detail, missing)
    _issued.setdefault(nodeid, set()).add(reason)
    pytest.skip(reason)


@pytest.fixture
def needs(request):
    """needs(cause key, why) skips this test when the thing is missing here (see CAUSES)."""
    return lambda key, detail: _skip_for(request.node.nodeid, key, detail)


@pytest.fixture
def ge_syntax_check(needs):
    """run(sources, flags) -> completed process of ../shared/tools/ge-syntax-check (g++
    -fsyntax-only against the public GE, metadef and ACL headers). Skips for the real cause:
    no checker beside the checkout, or no header cache yet and no hicann snapshots to lay it
    out from (the checker's GE_REPO / METADEF_REPO come from TF_GE_CUSTOM_*_REPO)."""
    needs("syntax_checker", "compile-checks sources against the public GE/ACL headers")
    env = dict(os.environ)
    cache = pathlib.Path(env.get("GE_HEADERS_CACHE") or "/tmp/ge-headers")  # the checker's own default
    if not (cache / "ge" / "inc").is_dir():
        needs("hicann_snapshots", "the syntax checker lays out its header cache from them")
        env.update(GE_REPO=env[GE_REPO_VAR], METADEF_REPO=env[METADEF_REPO_VAR])

    def run(sources, flags=()):
        return subprocess.run(["bash", str(syntax_checker_path())] + [str(s) for s in sources]
                              + ["--"] + list(flags), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, env=env)

    return run


FUZZ_SEED_VAR = "TF_GE_CUSTOM_FUZZ_SEED"


def pytest_configure(config):
    config.addinivalue_line("markers", "fresh_process: every command the test runs starts a fresh "
                            "interpreter, never a child of the warm launcher (tests/warm_process.py)")
    config.addinivalue_line("markers", "smoke: the quick tier's run of a console command "
                            "(may start processes under make test-quick: tests/quick_tier.py)")
    quick_tier = _load_beside("quick_tier") if os.environ.get("TF_GE_CUSTOM_QUICK") == "1" and not _strict() else None
    if quick_tier is not None:
        config.pluginmanager.register(quick_tier.QuickTier(), "tf_ge_custom_quick_tier")
    # One fuzz seed per run, new each run unless given: the seeded fuzz tests read it at import.
    if not os.environ.get(FUZZ_SEED_VAR, "").strip():
        os.environ[FUZZ_SEED_VAR] = str(int.from_bytes(os.urandom(4), "little"))
    config.addinivalue_line("markers", "needs(cause, why): skip unless the thing is here; "
                            "causes: " + ", ".join(CAUSE_BY_KEY))
    config.addinivalue_line("markers", "kind(name): what a test's evidence is; kinds: "
                            + ", ".join(KINDS))
    config.addinivalue_line("markers", "documents(*commands): the command lines of README.md and "
                            "docs/*.md this test runs, spelled as the docs show them "
                            "(tests/user/test_documented_commands.py wants one per command)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # before any fixture is set up: a test that skips must not wait for a build first
    for marker in item.iter_markers("needs"):
        _skip_for(item.nodeid, *marker.args)


def pytest_report_header(config):
    return "fuzz seed: %s=%s (set it to draw this run's cases again)" % (FUZZ_SEED_VAR, os.environ[FUZZ_SEED_VAR])


def _skip_reason(longrepr):
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.replace("Skipped: ", "", 1)


def pytest_runtest_logreport(report):
    if report.skipped and hasattr(report, "wasxfail"):
        _verdicts.append((report.nodeid, None, "an xfail hides a failing test"))
    elif report.skipped:
        cause, refusal = judge(report.nodeid, _skip_reason(report.longrepr))
        _verdicts.append((report.nodeid, cause and cause.key, refusal))


def pytest_collectreport(report):
    if report.nodeid.endswith(".py"):
        _collection["modules"].add(report.nodeid)
    if report.failed:
        _collection["errors"].append(report.nodeid)
    elif report.skipped:  # a module-level skip or importorskip: every test in it hides
        cause, refusal = judge(report.nodeid, _skip_reason(report.longrepr))
        _verdicts.append((report.nodeid + " (whole module)", cause and cause.key, refusal))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        marker = item.get_closest_marker("kind")
        module = item.nodeid.split("::")[0]
        module = module[len("tests/"):-3] if module.startswith("tests/") and module.endswith(".py") else module
        kind = marker.args[0] if marker else _MODULE_KIND.get(module, "untagged")
        if kind not in KINDS and kind != "untagged":
            raise pytest.UsageError("%s: unknown kind %r; kinds: %s" % (item.nodeid, kind, ", ".join(KINDS)))
        _kinds[kind] += 1


# --- documented commands and the tests that run them ----------------------------------------
# ``@pytest.mark.documents("tf-ge-custom doctor")`` on a test says it runs that command line of
# README.md or docs/*.md; tests/user/test_documented_commands.py holds every command line of
# the docs against the tests collected with such a marker.
DOCUMENTS_OUT_VAR = "TF_GE_CUSTOM_DOCUMENTS_OUT"  # a collect-only child writes its markers there
# The modules only the compat run collects (make test-compat names them; their names are not
# test_*.py, so the main suite does not collect them).
COMPAT_ONLY_MODULES = ("tests/compat/adapter_user_commands.py",)


def documents_of(items):
    """{command line: [test ids]} of ``items``' ``documents`` markers."""
    found = {}
    for item in items:
        for marker in item.iter_markers("documents"):
            for command in marker.args:
                found.setdefault(command, []).append(item.nodeid)
    return found


def pytest_collection_finish(session):
    out = os.environ.get(DOCUMENTS_OUT_VAR)
    if out:
        with open(out, "w") as f:
            json.dump({"documents": documents_of(session.items),
                       "modules": sorted(_collection["modules"])}, f, sort_keys=True)


def _whole_suite_collected():
    """True when this run collected every tests/**/test_*.py and deselected nothing."""
    expected = {p.relative_to(SOURCE_ROOT).as_posix() for p in (SOURCE_ROOT / "tests").rglob("test_*.py")}
    return not _collection["deselected"] and expected <= _collection["modules"]


def _collect_documents(paths):
    """documents_of() of a ``pytest --collect-only`` of ``paths`` in a fresh process."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "documents.json")
        env = {k: v for k, v in os.environ.items()
               if k not in (STRICT_VAR, SKIP_LOG_VAR, "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
        env[DOCUMENTS_OUT_VAR] = out
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                               "-p", "no:cacheprovider"] + list(paths), cwd=str(SOURCE_ROOT),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=900)
        if proc.returncode != 0 or not os.path.isfile(out):
            raise AssertionError("collecting %s to find their documents markers failed (exit %d):\n%s"
                                 % (" ".join(paths), proc.returncode, proc.stdout[-4000:]))
        with open(out) as f:
            return json.load(f)["documents"]


@pytest.fixture(scope="session")
def compat_only_modules():
    return COMPAT_ONLY_MODULES


@pytest.fixture(scope="session")
def documenting_tests(request):
    """{command line: [test ids]} of the tests carrying ``@pytest.mark.documents(command)``:
    those this run collected, and those of the compat run's own modules (COMPAT_ONLY_MODULES,
    collected in a fresh process). When this run was given only part of the suite, the whole
    of tests/ is collected in that process too, so the answer does not depend on the paths
    given."""
    whole = _whole_suite_collected()
    found = documents_of(request.session.items) if whole else {}
    paths = ([] if whole else ["tests"]) + list(COMPAT_ONLY_MODULES)
    for command, tests in _collect_documents(paths).items():
        found.setdefault(command, []).extend(t for t in tests if t not in found.get(command, ()))
    return found


def pytest_deselected(items):
    _collection["deselected"] += len(items)


def _refusals(config):
    lines = ["%s: %s" % (nodeid, refusal) for nodeid, _, refusal in _verdicts if refusal]
    lines += ["%s: collection error" % nodeid for nodeid in _collection["errors"]]
    if _collection["deselected"]:
        lines.append("%d tests deselected (-k, -m or --deselect): the whole suite must run"
                     % _collection["deselected"])
    for option in ("ignore", "ignore_glob"):
        for path in config.getoption(option, None) or ():
            lines.append("--%s %s: the whole suite must run" % (option.replace("_", "-"), path))
    lines += ["%s: never collected (collect_ignore, a hook or a rename hides it)" % m
              for m in _uncollected_modules(config)]
    return lines


def _uncollected_modules(config):
    """The test_*.py files under the paths this run was given that pytest never collected."""
    if not _collection["modules"] and not _verdicts:
        return []  # collection did not run (e.g. --help)
    root = pathlib.Path(str(config.rootdir))
    expected = set()
    for arg in config.args:
        path = pathlib.Path(arg.split("::")[0])
        path = path if path.is_absolute() else pathlib.Path(str(config.invocation_params.dir)) / path
        files = sorted(path.rglob("test_*.py")) if path.is_dir() else [path] if path.name.startswith("test_") else []
        for f in files:
            try:
                expected.add(f.resolve().relative_to(root.resolve()).as_posix())
            except ValueError:
                pass
    return sorted(expected - _collection["modules"])


def _strict():
    return os.environ.get(STRICT_VAR) == "1"


def pytest_sessionfinish(session, exitstatus):
    # 5: pytest's "no tests collected", which a module-level skip of the only module gives
    if _strict() and _refusals(session.config) and session.exitstatus in (0, 5):
        session.exitstatus = 1


def skip_summary(config):
    """{"causes": {cause or "refused": n}, "refused": [...], ...} for this run."""
    counts = collections.Counter(key or "no listed cause" for _, key, _ in _verdicts)
    return {"python": sys.version.split()[0], "prefix": sys.prefix,
            "tensorflow": _tensorflow_version(), "strict": _strict(),
            "skipped": len(_verdicts), "causes": dict(sorted(counts.items())),
            "refused": _refusals(config), "kinds": dict(sorted(_kinds.items())),
            "fuzz_seed": os.environ.get(FUZZ_SEED_VAR)}


def pytest_terminal_summary(terminalreporter, config):
    summary = skip_summary(config)
    refused = summary["refused"]
    if refused:
        terminalreporter.section("skips and hidden tests %s (%s=1)" % (
            "not allowed in CI" if _strict() else "that CI would refuse", STRICT_VAR))
        for line in refused:
            terminalreporter.write_line(line)
    terminalreporter.section("skip summary")
    terminalreporter.write_line("%d skipped%s" % (summary["skipped"], "".join(
        "; %s: %d" % (key, n) for key, n in summary["causes"].items())))
    terminalreporter.write_line("fuzz seed: %s=%s" % (FUZZ_SEED_VAR, summary["fuzz_seed"]))
    terminalreporter.write_line("tests by kind: " + ", ".join(
        "%s %d" % (k, n) for k, n in summary["kinds"].items()))
    log = os.environ.get(SKIP_LOG_VAR)
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(summary, sort_keys=True) + "\n")


class OddFiles(object):
    """What a reader may find where it expects a regular file, and a guard against hangs.

    ``make(kind, path)`` puts one of :data:`KINDS` at ``path``; ``finishes(f, *args)`` runs
    ``f`` in a thread and fails the test if it blocks (opening a FIFO for reading would).
    """

    KINDS = ("directory", "fifo", "symlink loop", "dangling symlink")

    @staticmethod
    def make(kind, path):
        path = str(path)
        if kind == "directory":
            os.mkdir(path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "symlink loop":
            os.symlink(path, path)
        elif kind == "dangling symlink":
            os.symlink(path + ".gone", path)
        else:
            raise ValueError("unknown kind %r; kinds: %s" % (kind, ", ".join(OddFiles.KINDS)))

    @staticmethod
    def finishes(function, *args, **kwargs):
        import threading

        timeout = kwargs.pop("timeout", 30)
        result = {}

        def target():
            try:
                result["value"] = function(*args, **kwargs)
            except BaseException as e:  # handed to the test
                result["error"] = e

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(timeout)
        assert not thread.is_alive(), "%s blocked" % getattr(function, "__name__", function)
        if "error" in result:
            raise result["error"]
        return result["value"]


@pytest.fixture
def odd_files():
    return OddFiles


# --- synthetic CANN toolkits (tf_ge_custom/_build/cann_toolkit.py; tests/ge, tests/doctor) --

# One stand-in file per feature the build detects, with just the text detection looks for.
# They are not CANN's files: a toolkit made of them passes detection and fails to compile.
_FAKE_TOOLKIT_FILES = {
    "include/graph/custom_op.h": (
        "namespace ge {\nclass BaseCustomOp {};\n"
        "class EagerExecuteOp : virtual public BaseCustomOp {};\n"
        "class PortableOp : virtual public BaseCustomOp {};\n"
        "class ShapeInferOp : virtual public BaseCustomOp {};\n"
        "class CompilableOp : virtual public BaseCustomOp {};\n}\n"),
    "include/register/register.h": "// stand-in\nvoid AutoMappingByOpFn();\n",
    "include/acl/acl_rt.h": "// stand-in\nint aclrtLaunchKernelWithHostArgs();\n",
    "include/parser/tensorflow_parser.h": "// stand-in\nint aclgrphParseTensorFlow();\n",
    "lib64/libcustom_op_registry_static.a": "",
    "lib64/libascendcl.so": "",
    "lib64/libgraph.so": "",
    "lib64/libregister.so": "",
    "lib64/libgert.so": "",
    "lib64/liblowering.so": "",
    "lib64/libfmk_parser.so": "",
}


@pytest.fixture
def fake_toolkit(tmp_path):
    """make(name, version="9.2.0-beta.1", drop=(), replace={}) -> path of a synthetic toolkit
    with every feature the GE build looks for, minus the files in ``drop``; ``replace`` maps
    a file to other text. ``version=None`` writes no install record."""

    def make(name="cann", version="9.2.0-beta.1", drop=(), replace=None):
        home = tmp_path / name
        files = dict(_FAKE_TOOLKIT_FILES)
        files.update(replace or {})
        for rel, text in files.items():
            if rel in drop:
                continue
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(text)
        if version is not None:
            record = home / "x86_64-linux" / "ascend_toolkit_install.info"
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text("package_name=Ascend-cann-toolkit\nversion=%s\narch=x86_64\n" % version)
        home.mkdir(exist_ok=True)
        return str(home)

    return make


# --- a synthetic op for the GE sources' compile check (tests/ge/test_cann_sources.py) ------------
# (the op added for real, end to end, is tests/package/test_adding_an_op.py's SquareCustom)

# Appended to a copy of tf_ge_custom/op_def.py: an op unlike AddCustom in every field a
# generator writes (three inputs, another type attr, two dtypes, its own kernel entry, one variant).
SECOND_OP = '''

SCALED_MUL = OpDefinition(
    type_name="ScaledMulCustom",
    python_name="scaled_mul_custom",
    inputs=("a", "b", "scale"),
    outputs=("out",),
    type_attr="U",
    dtypes=("float16", "int32"),
    kernel=KernelSpec(
        source="add_kernel.py",
        variants=(KernelVariant("flat", "scaled_mul_kernel", "equal", (2048,),
                                (("BLOCK_SIZE", 2048),),
                                ("input:0", "input:1", "input:2", "output:0", "num_elements")),)),
)
OPS = OPS + (SCALED_MUL,)
'''


@pytest.fixture
def two_op_source(tmp_path):
    """A source tree whose op definition holds the package's ops and the synthetic ScaledMulCustom:
    ``(source root, the loaded op_def module)``. Everything else is the repository's own
    (linked), so the generators and build steps run unchanged over it."""
    import importlib.util
    import pathlib

    repo = pathlib.Path(__file__).resolve().parents[1]
    source = tmp_path / "source"
    package = source / "tf_ge_custom"
    package.mkdir(parents=True)
    for entry in ("ge_ops", "tf_ops", "kernels"):
        (source / entry).symlink_to(repo / entry)
    for path in (repo / "tf_ge_custom").glob("*.py"):
        if path.name != "op_def.py":
            (package / path.name).symlink_to(path)
    op_def_path = package / "op_def.py"
    op_def_path.write_text((repo / "tf_ge_custom" / "op_def.py").read_text() + SECOND_OP)
    spec = importlib.util.spec_from_file_location("_two_op_def", str(op_def_path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return source, module
