"""The quick tier's rule (tests/quick_tier.py), run for real: real pytest on a small tree whose
conftest registers the plugin. A test that starts a process by any route skips naming what it
started; one that starts none passes; a smoke test runs its process; a fixture that starts a
process skips the tests that use it."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

TESTS = pathlib.Path(__file__).resolve().parent

CONFTEST = '''
import importlib.util, pytest
spec = importlib.util.spec_from_file_location("quick_tier", "quick_tier.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

def pytest_configure(config):
    config.addinivalue_line("markers", "smoke: may start processes")
    config.pluginmanager.register(module.QuickTier(), "quick")

@pytest.fixture(scope="session")
def built():
    import subprocess
    subprocess.run(["true"])
    return 1
'''

CASES = '''
import multiprocessing, os, subprocess, sys
import pytest

def test_in_process():
    assert sum(range(4)) == 6

def test_subprocess_run():
    subprocess.run([sys.executable, "-c", "pass"])
    assert False, "ran"

def test_check_output():
    subprocess.check_output(["echo", "hi"])
    assert False, "ran"

def test_os_system():
    os.system("true")
    assert False, "ran"

def test_fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    assert False, "ran"

def _child():
    pass

def test_multiprocessing():
    p = multiprocessing.get_context("spawn").Process(target=_child)
    p.start()
    p.join()
    assert False, "ran"

def test_uses_a_building_fixture(built):
    assert False, "ran"

def test_a_thread_that_starts_a_process():
    import threading
    done = []
    worker = threading.Thread(target=lambda: done.append(subprocess.run(["true"])))
    worker.start()
    worker.join()
    assert done, "the thread's process did not run"

@pytest.mark.smoke
def test_smoke_runs_its_process():
    assert subprocess.run(["echo", "hi"], stdout=subprocess.PIPE).stdout == b"hi\\n"
'''


def test_each_way_of_starting_a_process_skips_and_the_rest_runs(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_cases.py").write_text(CASES)
    shutil.copy(str(TESTS / "quick_tier.py"), str(tmp_path / "quick_tier.py"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TF_GE_CUSTOM_SKIP_LOG")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-q",
                           "test_cases.py"], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out
    assert re.search(r"\b2 passed, 7 skipped\b", out), out
    # what each started, named: subprocess.run and multiprocessing's spawn (this Python),
    # check_output (echo), os.system, the session fixture and the thread (true), os.fork
    named = re.findall(r"SKIPPED \[(\d)\] \S+: quick tier: starts a process \((.*)\)", out)
    counts = {}
    for n, what in named:
        counts[what] = counts.get(what, 0) + int(n)
    assert counts == {sys.executable: 2, "echo": 1, "true": 3, "fork": 1}, out
