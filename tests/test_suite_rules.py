"""Rules over the suite's own source text (read with ``ast``; nothing is imported).

Every test function must be able to fail for a reason it states: its body (nested functions
and lambdas included) holds at least one of
  - an ``assert`` statement;
  - ``pytest.raises`` / ``pytest.warns`` / ``pytest.fail`` (called, or as a ``with`` item);
  - a call of a function whose name starts with ``assert`` (``numpy.testing.assert_*``,
    ``tf.debugging.assert_*``, the ``assert_same`` fixture of tests/tf);
  - a call of a *checker*: a function of the same module (or a method of one of its
    classes) whose own body, by these same rules, asserts; or one of CHECKERS below, the
    helpers that fixtures hand to tests and that assert inside (named by attribute or
    function name).
A test that only runs code and checks nothing is reported with its file and line.

The same walk tags each module with the kind of its evidence (``pytest.mark.kind``,
tests/conftest.py KINDS) where it says so; the count is printed by every run's summary.
"""
import ast
import pathlib
import re

import pytest

pytestmark = pytest.mark.kind("oracle")

TESTS = pathlib.Path(__file__).resolve().parent

# Helpers reached through fixtures or other modules that assert inside (each checked in
# test_the_named_checkers_assert below, so a name here cannot hide a test that checks nothing).
CHECKERS = {
    "finishes": ("conftest.py", "OddFiles.finishes"),
}
RAISING = {"raises", "warns", "fail", "deprecated_call"}


def _called_name(call):
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr, (f.value.id if isinstance(f.value, ast.Name) else None)
    if isinstance(f, ast.Name):
        return f.id, None
    return None, None


def _asserts_directly(node, checkers):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assert):
            return True
        if isinstance(sub, ast.Call):
            name, owner = _called_name(sub)
            if name in RAISING and owner == "pytest":
                return True
            if name and (name.startswith("assert") or name in checkers or name in CHECKERS):
                return True
    return False


def _functions(tree):
    """{name: node} of the module's functions and its classes' methods."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(item.name, item)
    return found


def _checkers(functions):
    """The non-test functions that assert, directly or through another checker."""
    checkers = set()
    changed = True
    while changed:
        changed = False
        for name, node in functions.items():
            if name not in checkers and not name.startswith("test") and _asserts_directly(node, checkers):
                checkers.add(name)
                changed = True
    return checkers


def _unchecked_tests(path):
    tree = ast.parse(path.read_text(), str(path))
    functions = _functions(tree)
    checkers = _checkers(functions)
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            if not _asserts_directly(node, checkers):
                missing.append("%s:%d %s" % (path.relative_to(TESTS.parent), node.lineno, node.name))
    return missing


def test_every_test_function_has_a_check_that_can_fail():
    files = sorted(TESTS.rglob("test_*.py"))
    assert len(files) > 70  # the walk found the suite
    missing = [m for f in files for m in _unchecked_tests(f)]
    assert missing == [], "tests that check nothing:\n" + "\n".join(missing)


def test_the_lint_finds_a_test_that_only_runs_code(tmp_path):
    # The rule itself, on a module written here: what it must report and what it must not.
    module = tmp_path / "test_sample.py"
    module.write_text(
        "import pytest\n"
        "def _helper(x):\n    assert x\n"
        "def _runs(x):\n    return x + 1\n"
        "def test_asserts():\n    assert 1\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        int('x')\n"
        "def test_via_helper():\n    _helper(2)\n"
        "def test_only_runs():\n    _runs(1)\n"
        "class TestK:\n    def test_method_runs(self):\n        print(1)\n")
    got = [m.split(" ", 1)[1] for m in _unchecked_tests_at(module)]
    assert got == ["test_only_runs", "test_method_runs"]


def _unchecked_tests_at(path):
    global TESTS
    saved, TESTS = TESTS, path.parent
    try:
        return [m.replace(str(path.parent.name) + "/", "") for m in _unchecked_tests(path)]
    finally:
        TESTS = saved


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_the_named_checkers_assert(name):
    file, qualname = CHECKERS[name]
    tree = ast.parse((TESTS / file).read_text())
    cls, method = qualname.split(".")
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    func = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == method)
    assert any(isinstance(n, ast.Assert) for n in ast.walk(func)), qualname


def _mutation_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_mutations_run", str(TESTS / "mutations" / "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_mutation_of_the_mutation_check_still_applies_and_names_a_real_catcher():
    # The check itself runs in CI after the suite (tests/mutations/run.py); here, cheaply, that
    # none of its mutations has drifted from the tree: each changes its file, and the test
    # named to catch it exists in the tests it runs.
    run = _mutation_script()
    assert len(run.MUTATIONS) >= 4
    for mutation in run.MUTATIONS:
        text = (TESTS.parent / mutation.path).read_text()
        assert run.APPLY[mutation.name](text, mutation.path) != text, mutation.name
        module, name = mutation.catcher.split("::")
        assert (TESTS.parent / module).is_file(), mutation.catcher
        # A parametrized catcher (test_native[Suite.Case]) names its function and one case of it;
        # a native case must be a TEST(Suite, Case) of the GE core's sources.
        function, _, case = name.partition("[")
        assert function in _functions(ast.parse((TESTS.parent / module).read_text())), mutation.catcher
        if case and function == "test_native":
            suite, _, test = case.rstrip("]").partition(".")
            sources = "".join(p.read_text() for p in (TESTS / "native" / "core").rglob("*.cc"))
            assert re.search(r"TEST(_F)?\(\s*%s\s*,\s*%s\s*\)" % (suite, test), sources), mutation.catcher


def test_a_mutation_that_no_longer_applies_is_an_error_naming_the_file():
    run = _mutation_script()
    with pytest.raises(ValueError, match="compare.py: the text to mutate occurs 0 times"):
        run._replace("no such text", "x")("other text", "compare.py")
    with pytest.raises(ValueError, match="no function test_gone to delete"):
        run._delete_function("test_gone")("def test_here():\n    pass\n", "t.py")


def test_the_control_run_holds_each_catcher_once_and_a_catchers_own_failures_are_told_apart():
    run = _mutation_script()
    assert run.union(["a.py::t", "a.py", "b.py::u", "b.py::u", "b.py::v[1]", "a.py::w"]) == [
        "a.py", "b.py::u", "b.py::v[1]"]
    # a parametrized node's id is not a parent of another function's
    assert run.union(["a.py::t", "a.py::t2"]) == ["a.py::t", "a.py::t2"]
    catchers = run.union(m.catcher for m in run.MUTATIONS)
    assert set(catchers) == {m.catcher for m in run.MUTATIONS} and len(catchers) == len(set(catchers))
    tolerance = next(m for m in run.MUTATIONS if m.name == "float32-tolerance-loosened")
    failed = [tolerance.catcher + "[above-0.0-float32]", tolerance.catcher + "_too", "tests/other.py::test_y"]
    assert run.failing_specs(tolerance, failed) == failed[:1]
