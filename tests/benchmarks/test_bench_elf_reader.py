"""benchmarks/bench_elf_reader.py's crafted objects, judging and report. The objects are
checked against readelf's reading of them; the judging against ratios worked out by hand;
the report with a TEST DOUBLE of the C++ reader's driver (fixed nanoseconds per file) and of
the Python reader's timer (the lookup itself is the real reader's). Nothing here times a
reader: the readers' real speed is the benchmark's run (docs/performance.md)."""
import importlib.util
import io
import json
import os
import pathlib
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.kind("doubles")

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_elf_reader", str(ROOT / "benchmarks" / "bench_elf_reader.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
elf_object = bench._load("_elf_object_for_bench_test", "tests", "fixtures", "elf_object.py")
READELF = shutil.which("readelf")


def test_a_crafted_object_is_half_symbols_and_half_headers_naming_one_table(tmp_path):
    # 64 KiB: 32,768 bytes of symbols at 24 + 8 ("f000000\0") each, 32,768 of 64-byte headers.
    symbols, headers, data = bench.crafted(elf_object, 64 * 1024)
    assert (symbols, headers) == (1024, 512)
    assert abs(len(data) - 64 * 1024) < 0.05 * 64 * 1024
    path = tmp_path / "crafted.o"
    path.write_bytes(data)
    assert READELF, "this test needs binutils' readelf"
    sections = subprocess.run([READELF, "-SW", str(path)], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
    assert "There are %d section headers" % (5 + headers - 1) in sections
    listed = subprocess.run([READELF, "-sW", str(path)], stdout=subprocess.PIPE,
                            universal_newlines=True, check=True).stdout
    tables = [line for line in listed.splitlines() if line.startswith("Symbol table")]
    assert len(tables) == headers  # every header names the one table
    assert all("contains %d entries" % (symbols + 1) in t for t in tables)  # + the null symbol


def _row(size, cpp_s, python_s):
    return {"bytes": size, "cpp_s_median": cpp_s, "python_s_median": python_s}


def test_the_time_per_byte_largest_over_smallest_is_judged_against_the_bound():
    linear = [_row(1000, 1e-6, 40e-6), _row(2000, 2e-6, 80e-6), _row(8000, 8e-6, 320e-6)]
    assert bench.judge(linear, 1.5) == [("C++", pytest.approx(1.0), True),
                                        ("Python", pytest.approx(1.0), True)]
    # Python's time grows as the size squared: per byte, 8000 / 1000 = 8 times.
    quadratic = [_row(1000, 1e-6, 40e-6), _row(8000, 8e-6, 40e-6 * 64)]
    assert bench.judge(quadratic, 4.0) == [("C++", pytest.approx(1.0), True),
                                           ("Python", pytest.approx(8.0), False)]
    assert bench.judge(quadratic, 8.0)[1][2] is True  # the bound is inclusive


def _native_double(ns_per_file):
    """A DOUBLE of run_native: the driver's JSON rows, each file 'missing' with the symbol
    count bench.crafted gives its size (hand formula: half the KiB in 32-byte symbols)."""
    calls = []

    def run(paths, rounds):
        calls.append((tuple(paths), rounds))
        rows = []
        for path in paths:
            size = os.path.getsize(path)
            kib = int(os.path.basename(path)[len("crafted-"):-len(".o")])
            ns = ns_per_file(size)
            rows.append({"verdict": "missing", "function_count": kib // 2 // 32,
                         "ns_median": ns, "ns_min": ns})
        return rows

    run.calls = calls
    return run


def _python_double(seconds_per_byte):
    def timed(elf_symbols, data, rounds):
        lookup = elf_symbols.find_function(data, (bench.ABSENT,))  # the real reader's verdict
        return len(data) * seconds_per_byte, len(data) * seconds_per_byte, lookup
    return timed


def test_a_linear_run_passes_and_writes_its_figures(tmp_path):
    native = _native_double(lambda size: 0.4 * size)
    out = io.StringIO()
    status = bench.main(["--sizes-kib", "4,8", "--rounds", "2", "--json", str(tmp_path / "r.json")],
                        native=native, python=_python_double(40e-9), out=out)
    text = out.getvalue()
    assert status == 0, text
    assert len(native.calls) == 1 and native.calls[0][1] == 2
    data = json.loads((tmp_path / "r.json").read_text())
    # 4 KiB: 2,048 bytes of symbols at 32 each = 64; 8 KiB: 128 (the real reader counted them).
    assert [o["symbols"] for o in data["objects"]] == [64, 128]
    assert [o["headers"] for o in data["objects"]] == [32, 64]
    assert data["verdicts"] == {"C++": {"ratio": pytest.approx(1.0), "ok": True},
                                "Python": {"ratio": pytest.approx(1.0), "ok": True}}
    assert "C++ time per byte, largest object over smallest: 1.00 (1.0: linear; at most 4.0): linear" in text
    first = data["objects"][0]
    assert "| %d | 64 | 32 | %.2f | 0.40 |" % (first["bytes"], first["bytes"] * 0.4 / 1e6) in text


def test_a_reader_whose_time_grows_faster_than_the_size_fails_the_run(tmp_path):
    native = _native_double(lambda size: 0.4 * size * size / 4096.0)  # headers x symbols
    out = io.StringIO()
    # From 4 to 32 KiB the time per byte grows about 8 times: past the default bound of 4.
    status = bench.main(["--sizes-kib", "4,32", "--rounds", "1", "--json", str(tmp_path / "r.json")],
                        native=native, python=_python_double(40e-9), out=out)
    assert status == 1
    data = json.loads((tmp_path / "r.json").read_text())
    small, large = (o["bytes"] for o in data["objects"])
    assert data["verdicts"]["C++"] == {"ratio": pytest.approx(large / small), "ok": False}
    assert "C++ time per byte, largest object over smallest: %.2f (1.0: linear; at most 4.0): NOT linear" \
        % (large / small) in out.getvalue()
    assert data["verdicts"]["Python"]["ok"] is True


@pytest.mark.parametrize("argv, said", [
    (["--sizes-kib", "8,4"], "at least two sizes, growing"),
    (["--sizes-kib", "8"], "at least two sizes, growing"),
    (["--sizes-kib", "4k,8"], "whole KiB separated by commas"),
    (["--max-ratio", "0.5"], "a number of at least 1.0"),
])
def test_bad_arguments_are_refused_naming_what_is_accepted(capsys, argv, said):
    with pytest.raises(SystemExit) as e:
        bench.main(argv, native=_native_double(lambda size: size), python=_python_double(1e-9))
    assert e.value.code == 2
    assert said in capsys.readouterr().err
