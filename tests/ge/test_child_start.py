"""The builder child's start on a host without close_range (kernel 4.19: EulerOS, openEuler,
Ubuntu 18.04), where a container's RLIMIT_NOFILE can be about 2^30.

``tf_ge_custom_child_start_tests`` is the process runner compiled with its close_range path
left out (``TF_GE_CUSTOM_CLOSE_RANGE=0``, ge_ops/CMakeLists.txt), with the runner's own cases
(tests/native/core/test_process_runner.cc) and the child-start cases (test_child_start.cc): the
child closes what /proc/self/fd lists, one close per open descriptor, whatever the limit; its
pipes stay off descriptors 0-2. The oracle for what is closed is the kernel's fd table; the
figure printed is the child's start with the limit raised as far as this machine allows, and
what the loop up to the limit it replaced costs here per number (timed) and at that limit.
"""
import json
import os
import pathlib
import re

import pytest

pytestmark = pytest.mark.kind("oracle")

NATIVE_TESTS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "native" / "core"
# As tests/ge/test_sanitizers.py runs the core's cases.
SANITIZER_ENV = dict(os.environ, ASAN_OPTIONS="abort_on_error=1:detect_leaks=1",
                     UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
_TEST_RE = re.compile(r"^TEST\((\w+),\s*(\w+)\)", re.M)
SOURCES = ("test_process_runner.cc", "test_child_start.cc")
# What a child start may cost (first output line after Run is called): a vfork, one close per
# open descriptor, an execve. The loop it replaced made one close() per number below the
# limit: about 300 ns each here, so minutes at 2^30.
START_BOUND_MS = 250.0


def _cases():
    names = []
    for source in SOURCES:
        names += ["%s.%s" % m for m in _TEST_RE.findall((NATIVE_TESTS / source).read_text())]
    return names


def _figure(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("child-start: ")]
    assert len(lines) == 1, proc.stdout[-3000:]
    return json.loads(lines[0][len("child-start: "):])


def _check_run(records, proc):
    failed = {name: r["failures"] for name, r in records.items() if not r["passed"]}
    assert proc.returncode == 0 and not failed, (failed, proc.stderr[-4000:])
    assert sorted(records) == sorted(_cases())


def test_without_close_range_every_runner_case_passes_and_the_start_is_bounded(native_build, native_cases):
    _, run_cases = native_cases
    records, proc = run_cases(native_build.exe("tf_ge_custom_child_start_tests"))
    _check_run(records, proc)
    figure = _figure(proc)
    print("child start without close_range: %s" % json.dumps(figure))
    assert figure["close_range"] is False
    assert figure["limit"] >= 1024  # raised: to nr_open where allowed, else to the hard limit
    assert figure["limit"] <= figure["nr_open"]
    assert 0 < figure["start_ms_median"] < START_BOUND_MS
    # The loop it replaced, at 2^30 numbers: minutes (moby/moby#38814 measured about ten).
    assert figure["old_loop_s_at_2_30"] > 10


def test_without_close_range_under_asan_and_ubsan(sanitized_build, native_cases):
    _, run_cases = native_cases
    records, proc = run_cases(sanitized_build.exe("tf_ge_custom_child_start_tests"), env=SANITIZER_ENV)
    _check_run(records, proc)
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr
    assert _figure(proc)["close_range"] is False
