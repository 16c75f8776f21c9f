"""Builds of ge_ops/ for the GE-side tests, made by the same code setup.py uses.

An install builds only what ships (tf_ge_custom/_build/ge_step.py); the core's native tests
and fuzz driver are built here, into build/ge-tests/ (kept between runs, so a second run only
recompiles what changed) and build/ge-sanitize/ (AddressSanitizer + UBSan).
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

from tf_ge_custom._build import ge_step

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_ROOT = SOURCE_ROOT / "build"
NATIVE_TESTS = SOURCE_ROOT / "ge_ops" / "tests"
_TEST_RE = re.compile(r"^TEST\((\w+),\s*(\w+)\)", re.M)
NATIVE_TARGETS = ("tf_ge_custom_core_tests", "tf_ge_custom_fuzz", "tf_ge_custom_plan",
                  "tf_ge_custom_compile_driver")
NATIVE_OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS=ON")


def case_names():
    """Every TEST(Suite, Name) in the sources, as "Suite.Name" (read from the source text,
    so the pytest items exist before anything is built)."""
    names = []
    for path in sorted(NATIVE_TESTS.glob("test_*.cc")):
        names += ["%s.%s" % m for m in _TEST_RE.findall(path.read_text())]
    return names


def run_cases(exe, env=None, timeout=600):
    """Run the native test binary; returns ({name: record}, completed process)."""
    proc = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout)
    records = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["name"]] = record
    return records, proc


class NativeBuild(object):
    def __init__(self, build_dir, options=NATIVE_OPTIONS):
        self.dir = pathlib.Path(build_dir)
        self.options = list(options)

    def build(self):
        """Configure and build the native tests and fuzz driver (again: only what changed)."""
        ge_step.configure_and_build(str(SOURCE_ROOT), str(self.dir), NATIVE_TARGETS, _jobs(),
                                    self.options)
        return self

    def exe(self, name):
        path = self.dir / name
        assert path.is_file(), "%s was not built" % path
        return str(path)

    @property
    def generated(self):
        return self.dir / "generated"


def _jobs():
    return max(1, min(2, os.cpu_count() or 1))


@pytest.fixture(scope="session")
def native_build():
    # <root>/ge: the folder ge_step.run uses under a build_temp of <root> (test_ge_step.py).
    return NativeBuild(BUILD_ROOT / "ge-tests" / ge_step.BUILD_SUBDIR).build()


@pytest.fixture(scope="session")
def sanitized_build():
    return NativeBuild(BUILD_ROOT / "ge-sanitize", NATIVE_OPTIONS + (
        "-DTF_GE_CUSTOM_SANITIZE=ON", "-DCMAKE_BUILD_TYPE=Sanitize")).build()


def pytest_generate_tests(metafunc):
    # One pytest item per native case, named from the sources before anything is built.
    if "native_case" in metafunc.fixturenames:
        metafunc.parametrize("native_case", case_names())


@pytest.fixture(scope="session")
def native_cases():
    """(case_names, run_cases) for the test modules (importlib mode: no plain imports)."""
    return case_names, run_cases
