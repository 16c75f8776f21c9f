"""Strict mode (tests/conftest.py) on real pytest runs: each case writes a tiny test module
beside a copy of the suite's conftest in a scratch checkout and runs pytest on it in a fresh
process, then holds the exit status and the verdict lines against what the rule says.

The oracle is pytest's own exit status and report; the cases include the deliberate
mutations of the strict-skip check (a wrong skip reason, a module-level skip, a hidden test)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.kind("oracle")

CONFTEST = pathlib.Path(__file__).resolve().parent / "conftest.py"


@pytest.fixture
def scratch(tmp_path):
    """run(module text, *args, strict=True, checker=False, env={}) -> (exit status, output)."""
    checkout = tmp_path / "checkout"
    (checkout / "tests").mkdir(parents=True)
    shutil.copy(str(CONFTEST), str(checkout / "tests" / "conftest.py"))
    (checkout / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:hypothesispytest -ra\n")

    def run(text, *args, strict=True, checker=False, env=None, name="test_scratch.py", run=True):
        (checkout / "tests" / name).write_text(textwrap.dedent(text))
        if not run:
            return None
        tool = tmp_path / "shared" / "tools" / "ge-syntax-check"
        if checker:
            tool.parent.mkdir(parents=True, exist_ok=True)
            tool.write_text("#!/bin/sh\n")
        elif tool.exists():
            tool.unlink()
        child = {k: v for k, v in os.environ.items()
                 if k not in ("TF_GE_CUSTOM_STRICT_SKIPS", "ASCEND_HOME_PATH", "TF_GE_CUSTOM_GE_REPO",
                              "TF_GE_CUSTOM_METADEF_REPO", "TF_GE_CUSTOM_TF_ADAPTER_REPO",
                              "TF_GE_CUSTOM_SKIP_LOG", "PYTEST_ADDOPTS")}
        if strict:
            child["TF_GE_CUSTOM_STRICT_SKIPS"] = "1"
        child.update(env or {})
        proc = subprocess.run([sys.executable, "-m", "pytest", "tests"] + list(args), cwd=str(checkout),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              env=child, timeout=120)
        return proc.returncode, proc.stdout

    return run


HAND_WRITTEN_TOOLKIT_SKIP = """
    import pathlib
    import pytest
    CHECK = pathlib.Path(__file__).resolve().parents[2] / "shared" / "tools" / "ge-syntax-check"

    @pytest.mark.skipif(not CHECK.is_file(), reason="needs a CANN toolkit: or the headers")
    def test_compile_check():
        assert CHECK.is_file()

    def test_other():
        assert 1 + 1 == 2
"""


def test_mutation_a_toolkit_reason_for_a_missing_checker_fails_strict_mode(scratch):
    # A bug strict mode once let through: the checker is missing, the reason says CANN. No toolkit is here
    # either, so only where the skip came from can tell; a hand-written one is refused.
    status, out = scratch(HAND_WRITTEN_TOOLKIT_SKIP)
    assert status == 1, out
    assert "test_compile_check: 'needs a CANN toolkit:' not issued by the needs marker" in out
    assert "1 passed, 1 skipped" in out


def test_the_same_skip_outside_strict_mode_is_reported_and_does_not_fail(scratch):
    status, out = scratch(HAND_WRITTEN_TOOLKIT_SKIP, strict=False)
    assert status == 0, out
    assert "that CI would refuse" in out and "1 skipped; cann_toolkit: 1" in out


NEEDS_CHECKER = """
    import pytest

    @pytest.mark.needs("syntax_checker", "compile-checks the CANN sources")
    def test_compile_check():
        assert True
"""


def test_the_needs_marker_skips_with_the_real_cause_and_strict_mode_accepts_it(scratch):
    status, out = scratch(NEEDS_CHECKER)
    assert status == 0, out
    assert "needs the shared syntax checker: compile-checks the CANN sources (" in out
    assert "1 skipped; syntax_checker: 1" in out


def test_the_needs_marker_runs_the_test_when_the_checker_is_there(scratch):
    status, out = scratch(NEEDS_CHECKER, checker=True)
    assert (status, "1 passed" in out, "0 skipped" in out) == (0, True, True), out


def test_a_hand_written_checker_skip_with_the_checker_present_fails(scratch):
    status, out = scratch("""
        import pytest

        def test_x():
            pytest.skip("needs the shared syntax checker: said by hand")
    """, checker=True)
    assert status == 1 and "not issued by the needs marker" in out, out


def test_the_needs_marker_does_not_skip_with_a_toolkit_that_can_host_the_library(scratch, fake_toolkit):
    status, out = scratch("""
        import pytest

        @pytest.mark.needs("cann_toolkit", "builds against it")
        def test_x():
            assert True
    """, env={"ASCEND_HOME_PATH": fake_toolkit()})
    assert status == 0 and "1 passed" in out and "0 skipped" in out, out


@pytest.mark.parametrize("module, words", [
    ('import pytest\npytest.skip("needs an Ascend NPU: the whole module", allow_module_level=True)\n'
     "def test_x():\n    assert False\n", "'needs an Ascend NPU:' not issued by the needs marker"),
    ('import pytest\npytest.importorskip("no_such_module_here")\ndef test_x():\n    assert False\n',
     "not one of the skip causes"),
    ('import pytest\npytest.skip("TensorFlow 1.15 has no such thing", allow_module_level=True)\n'
     "def test_x():\n    assert False\n", "the cause does not hold on this machine: this TensorFlow is not 1.x"),
], ids=["module-level skip", "module-level importorskip", "TF1 reason under TF2"])
def test_mutation_a_module_level_skip_fails_strict_mode(scratch, module, words):
    # As the audit's scratch copy had it: one module passes, one hides whole (1 passed, 1 skipped)
    scratch("def test_fine():\n    assert True\n", name="test_fine.py", run=False)
    status, out = scratch(module + "\n", name="test_hidden.py")
    assert status == 1, out
    assert "tests/test_hidden.py (whole module): " + words in out
    assert "1 passed, 1 skipped" in out


def test_a_collection_error_is_listed_and_fails(scratch):
    status, out = scratch("import no_such_module_at_all\n\ndef test_x():\n    assert True\n")
    assert status != 0 and "tests/test_scratch.py: collection error" in out, out


@pytest.mark.parametrize("args", [("-k", "not test_b"), ("--deselect", "tests/test_scratch.py::test_b")])
def test_deselecting_a_test_fails_strict_mode_only(scratch, args):
    module = "def test_a():\n    assert True\n\ndef test_b():\n    assert True\n"
    status, out = scratch(module, *args)
    assert status == 1 and "1 tests deselected" in out, out
    status, out = scratch(module, *args, strict=False)
    assert status == 0 and "1 tests deselected" in out, out


def test_an_ignored_path_and_an_xfail_fail_strict_mode(scratch):
    status, out = scratch("import pytest\n\n@pytest.mark.xfail(reason='later')\ndef test_a():\n"
                          "    assert False\n\ndef test_b():\n    assert True\n",
                          "--ignore", "tests/test_other.py")
    assert status == 1, out
    assert "test_a: an xfail hides a failing test" in out
    assert "--ignore tests/test_other.py: the whole suite must run" in out


def test_snapshot_skips_hold_only_while_the_snapshots_are_not_configured(scratch, tmp_path):
    module = ('import pytest\n\ndef test_x():\n    pytest.skip("needs the hicann snapshots: '
              'the matrix")\n')
    status, out = scratch(module, env={"TF_GE_CUSTOM_GE_REPO": str(tmp_path / "none")})
    assert status == 0 and "1 skipped; hicann_snapshots: 1" in out, out
    repos = []
    for name in ("ge", "metadef"):
        repo = tmp_path / name
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        repos.append(str(repo))
    status, out = scratch(module, env={"TF_GE_CUSTOM_GE_REPO": repos[0],
                                       "TF_GE_CUSTOM_METADEF_REPO": repos[1]})
    assert status == 1 and "the cause does not hold on this machine: the snapshot variables name git directories" in out, out


def test_the_skip_log_gets_one_line_per_run_with_counts_per_cause(scratch, tmp_path):
    log = tmp_path / "skips.jsonl"
    module = ('import pytest\n\n@pytest.mark.needs("ascend_npu", "runs on the device")\n'
              'def test_a():\n    assert True\n\n'
              'def test_b():\n    pytest.skip("no reason given")\n')
    status, out = scratch(module, env={"TF_GE_CUSTOM_SKIP_LOG": str(log)})
    status2, _ = scratch(module, strict=False, env={"TF_GE_CUSTOM_SKIP_LOG": str(log)})
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    assert (status, status2, len(lines)) == (1, 0, 2), out
    assert lines[0]["causes"] == {"ascend_npu": 1, "no listed cause": 1} and lines[0]["strict"]
    assert lines[0]["refused"] == ["tests/test_scratch.py::test_b: not one of the skip causes ('needs a CANN "
                                   "toolkit:', 'needs an Ascend NPU:', 'needs the hicann snapshots:', "
                                   "'needs the shared syntax checker:', 'TensorFlow 1.15 has no')"]


def test_a_module_hidden_by_collect_ignore_fails_strict_mode(scratch, tmp_path):
    checkout = tmp_path / "checkout" / "tests"
    (checkout / "sub").mkdir(parents=True)
    (checkout / "sub" / "conftest.py").write_text('collect_ignore = ["test_hidden.py"]\n')
    (checkout / "sub" / "test_hidden.py").write_text("def test_x():\n    assert False\n")
    status, out = scratch("def test_a():\n    assert True\n")
    assert status == 1, out
    assert "tests/sub/test_hidden.py: never collected" in out


# A test that needs one snapshot (hicann/tensorflow) says so by naming its variable.
NEEDS_TF_ADAPTER = """
    import os
    import pytest

    def test_reads_the_adapter(needs):
        needs("hicann_snapshots", "reads hicann/tensorflow (TF_GE_CUSTOM_TF_ADAPTER_REPO)")
        assert os.path.isdir(os.environ["TF_GE_CUSTOM_TF_ADAPTER_REPO"])
"""


@pytest.fixture
def bare_repos(tmp_path):
    def make(*names):
        made = {}
        for name in names:
            repo = tmp_path / "repos" / name
            subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
            made[name] = str(repo)
        return made
    return make


def test_a_tf_adapter_snapshot_need_runs_when_that_snapshot_is_there(scratch, bare_repos):
    # The snapshot the reason names is configured, GE's two are not: the test must run. A check
    # that looked at GE's variables whatever the reason names would skip it, and strict mode
    # would accept that skip, since GE's snapshots are indeed missing.
    status, out = scratch(NEEDS_TF_ADAPTER, env={"TF_GE_CUSTOM_TF_ADAPTER_REPO": bare_repos("tensorflow")["tensorflow"]})
    summary = [l for l in out.splitlines() if "skipped" in l or "passed" in l]
    assert (status, "1 passed" in out, "0 skipped" in out) == (0, True, True), (
        "with TF_GE_CUSTOM_TF_ADAPTER_REPO set the test must run, not skip: exit %d; %s\n%s"
        % (status, " | ".join(summary), out))


def test_a_tf_adapter_snapshot_need_skips_naming_that_variable_while_ges_are_there(scratch, bare_repos):
    repos = bare_repos("ge", "metadef")
    status, out = scratch(NEEDS_TF_ADAPTER, env={"TF_GE_CUSTOM_GE_REPO": repos["ge"],
                                                 "TF_GE_CUSTOM_METADEF_REPO": repos["metadef"]})
    assert status == 0 and "1 skipped; hicann_snapshots: 1" in out, out
    assert "(TF_GE_CUSTOM_TF_ADAPTER_REPO is unset)" in out
    assert "TF_GE_CUSTOM_GE_REPO is unset" not in out


def test_a_hand_written_tf_adapter_snapshot_skip_is_refused_while_that_snapshot_is_there(scratch, bare_repos):
    status, out = scratch("""
        import pytest

        def test_x():
            pytest.skip("needs the hicann snapshots: said by hand (TF_GE_CUSTOM_TF_ADAPTER_REPO)")
    """, env={"TF_GE_CUSTOM_TF_ADAPTER_REPO": bare_repos("tensorflow")["tensorflow"]})
    assert status == 1, out
    assert "test_x: the cause does not hold on this machine: the snapshot variables name git directories" in out


def test_a_misspelt_snapshot_variable_is_refused_not_taken_as_missing(scratch):
    # Unset forever, a misspelt variable would make its skip hold on every machine.
    status, out = scratch("""
        def test_x(needs):
            needs("hicann_snapshots", "reads hicann/tensorflow (TF_GE_CUSTOM_TFADAPTER_REPO)")
            assert True
    """)
    assert status == 1, out
    assert "TF_GE_CUSTOM_TFADAPTER_REPO: not a snapshot variable; the snapshot variables are " in out
    status, out = scratch("""
        import pytest

        def test_x():
            pytest.skip("needs the hicann snapshots: by hand (TF_GE_CUSTOM_TFADAPTER_REPO)")
    """)
    assert status == 1 and "test_x: TF_GE_CUSTOM_TFADAPTER_REPO: not a snapshot variable" in out, out


def test_python_m_pytest_from_the_checkout_tests_the_installed_package(scratch, tmp_path):
    # ``python -m pytest`` puts the current directory first on sys.path; from a checkout that
    # is the source tree's tf_ge_custom/ (no op library, no kernels), here a stand-in.
    stand_in = tmp_path / "checkout" / "tf_ge_custom"
    stand_in.mkdir()
    (stand_in / "__init__.py").write_text("SOURCE_TREE = True\n")
    status, out = scratch("""
        import importlib.util
        import pathlib

        def test_the_package_found_is_not_the_checkouts():
            spec = importlib.util.find_spec("tf_ge_custom")
            checkout = pathlib.Path(__file__).resolve().parents[1]
            assert spec is not None and checkout not in pathlib.Path(spec.origin).resolve().parents, spec.origin
    """)
    assert status == 0 and "1 passed" in out, out
    # imported from the source tree before the conftest could keep it off: a usage error saying what to run
    (tmp_path / "checkout" / "early_import.py").write_text("import tf_ge_custom\n")
    status, out = scratch("def test_x():\n    assert True\n", "-p", "early_import")
    assert status == 4, out
    assert "tf_ge_custom was imported from the source tree" in out and "make install" in out, out
