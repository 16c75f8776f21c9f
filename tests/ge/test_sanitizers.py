"""The core under AddressSanitizer + UBSan: its native tests, and a bounded fuzz run of the
deserializer and the manifest reader (tests/native/fuzz/): whatever the reader accepts must plan
and pack without a refusal."""
import os
import subprocess


SANITIZER_ENV = dict(os.environ, ASAN_OPTIONS="abort_on_error=1:detect_leaks=1",
                     UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
# Deterministic and bounded: the same inputs every run, at most half a minute per target (the
# iterations are a ceiling; on a loaded machine the time limit ends a target first).
FUZZ_ITERATIONS = 25000
FUZZ_SECONDS = 30


def test_native_cases_pass_under_asan_and_ubsan(sanitized_build, native_cases):
    case_names, run_cases = native_cases
    records, proc = run_cases(sanitized_build.exe("tf_ge_custom_core_tests"), env=SANITIZER_ENV)
    failed = {name: r["failures"] for name, r in records.items() if not r["passed"]}
    assert proc.returncode == 0, (failed, proc.stderr[-6000:])
    assert sorted(records) == sorted(case_names())
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr


def test_bounded_fuzz_finds_nothing(sanitized_build):
    proc = subprocess.run(
        [sanitized_build.exe("tf_ge_custom_fuzz"), "--iterations", str(FUZZ_ITERATIONS),
         "--seed", "20261129", "--max-seconds", str(FUZZ_SECONDS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=SANITIZER_ENV,
        timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-6000:]
    assert "2 passed, 0 failed" in proc.stdout
    for target in ("bundle", "manifest"):
        line = [l for l in proc.stdout.splitlines() if l.startswith("fuzz %s:" % target)]
        assert line, proc.stdout
        # Accepted inputs prove the mutations reach past the first check, not just bounce off it.
        inputs, accepted = int(line[0].split()[2]), int(line[0].split()[4])
        assert inputs > 1000 and accepted > 0, line[0]
    assert "runtime error" not in proc.stderr
