"""The CANN-free core's native tests (tests/native/core/), one pytest item per native case.

They pin down byte-exact host arguments for the A2/A3 layouts, kernel choice and every
refusal, grid/chunk plans at the edges, the load-once cache under 8 threads, and the
serialized format; see each case's source for its hand-computed expectations.
"""
import pathlib
import subprocess

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results(native_build, native_cases):
    _, run_cases = native_cases
    return run_cases(native_build.exe("tf_ge_custom_core_tests"))


def test_every_case_in_the_sources_is_registered(native_build, native_cases):
    case_names, _ = native_cases
    listed = subprocess.run([native_build.exe("tf_ge_custom_core_tests"), "--list"],
                            stdout=subprocess.PIPE, universal_newlines=True, check=True)
    assert sorted(listed.stdout.split()) == sorted(case_names())
    assert len(case_names()) >= 50


def test_native(native_case, results):
    records, proc = results
    assert native_case in records, "the native run ended before %s:\n%s" % (
        native_case, proc.stderr[-4000:])
    record = records[native_case]
    assert record["passed"], "\n".join(record["failures"])


@pytest.mark.parametrize("ignored", ["Status", "Result<int>"])
def test_an_ignored_status_or_result_does_not_compile(tmp_path, ignored):
    """[[nodiscard]]: dropping a refusal on the floor is a compile error under -Werror."""
    include = SOURCE_ROOT / "ge_ops" / "core" / "include"
    snippet = ('#include "tf_ge_custom_core/status.h"\n'
               "using namespace tf_ge_custom::core;\n"
               "%s F();\n" % ignored)
    cases = {"used": "bool Use() { return F().ok(); }\n", "ignored": "void Use() { F(); }\n"}
    results = {}
    for name, body in cases.items():
        source = tmp_path / (name + ".cc")
        source.write_text(snippet + body)
        proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Werror=unused-result",
                               "-I" + str(include), str(source)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        results[name] = proc
    assert results["used"].returncode == 0, results["used"].stdout
    assert results["ignored"].returncode != 0
    assert "nodiscard" in results["ignored"].stdout or "unused-result" in results["ignored"].stdout


def test_the_core_exports_none_of_its_nlohmann_json(native_build, tmp_path):
    """GE has its own nlohmann/json: a library made from the core (as the GE library is) must
    export none of ours, or the dynamic linker could bind one copy's code to the other's."""
    probe = tmp_path / "libprobe.so"
    subprocess.run(["g++", "-shared", "-o", str(probe), "-Wl,--whole-archive",
                    str(native_build.dir / "libtf_ge_custom_core.a"), "-Wl,--no-whole-archive",
                    "-ldl", "-lpthread"], check=True)
    exported = subprocess.run(["nm", "-DC", "--defined-only", str(probe)], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
    inside = subprocess.run(["nm", "-C", str(native_build.dir / "libtf_ge_custom_core.a")],
                            stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert "nlohmann" in inside  # the reader does use it ...
    assert "nlohmann" not in exported  # ... and keeps it to itself
