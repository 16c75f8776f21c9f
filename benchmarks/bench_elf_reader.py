"""The npubin symbol readers' time on crafted objects: linear in the file's size.

Both readers (the GE core's ``ge_ops/core/src/elf_symbols.cc`` and the builder's
``kernels/elf_symbols.py``) read one ``.symtab`` (the first with symbols, as the runtime does)
once, however many section headers name it. A crafted object where many headers name one
large symbol table made earlier readers rescan the table once per header: time grew as
headers x symbols (a 2 MB object took 6.4 s in the C++ reader, 256 KB 7.1 s in Python). This
benchmark makes such objects of growing size (the test data's ``tests/fixtures/elf_object.py``,
half the bytes symbols and half section headers naming their table), looks each up for a
name it does not define (every symbol read), and prints the time per byte for both readers:
about constant when the time is linear in the size. The run fails (exit status 1) when
either reader's time per byte, largest object over smallest, exceeds ``--max-ratio`` (4 by
default: generous for a shared machine; a reader rescanning per header gives about the size
ratio, 8 for the default sizes).

The C++ reader runs in ``tf_ge_custom_bench_elf_reader`` (``benchmarks/ge_bench/``, built
into ``build/ge-bench/`` as ``bench_ge_execute.py`` builds its targets); the Python one in this
process, from the source tree (no install needed).

    python benchmarks/bench_elf_reader.py [--sizes-kib 256,512,1024,2048] [--rounds 5] [--max-ratio 4]
                                          [--json out.json]
"""
import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.join(ROOT, "build", "ge-bench")
TARGET = "tf_ge_custom_bench_elf_reader"
OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS_DIR=",
           "-DTF_GE_CUSTOM_BENCH_DIR=" + os.path.join(ROOT, "benchmarks", "ge_bench"))
ABSENT = "tf_ge_custom_not_defined_here"
MAX_RATIO = 4.0


def _load(name, *parts):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, *parts))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(log=None):
    """Configure and build the C++ driver as the other native benchmarks are; its path."""
    import builtins

    builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True  # the build step needs no TensorFlow
    from tf_ge_custom._build import ge_step

    ge_step.configure_and_build(ROOT, BUILD_DIR, (TARGET,), jobs=max(1, min(2, os.cpu_count() or 1)),
                                options=OPTIONS, log=log or (lambda message: None))
    return os.path.join(BUILD_DIR, "bench", TARGET)


def crafted(elf_object, size):
    """An object of about ``size`` bytes: half symbols (24 bytes each plus a name), half
    section headers (64 bytes each) naming that one symbol table. Its counts and bytes."""
    symbols = max(1, size // 2 // (24 + 8))
    headers = max(1, min(0xFEFF, size // 2 // 64))
    names = ["f%06d" % i for i in range(symbols)]
    return symbols, headers, elf_object.elf_object(names, b"code", symtab_headers=headers)


def time_python(elf_symbols, data, rounds):
    """(median, min) seconds of one lookup, and the lookup."""
    times, lookup = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        lookup = elf_symbols.find_function(data, (ABSENT,))
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], times[0], lookup


def run_native(exe, paths, rounds):
    proc = subprocess.run([exe, "--rounds", str(rounds)] + list(paths), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(rows) != len(paths):
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (exe, proc.returncode, proc.stdout, proc.stderr))
    return rows


def measure(sizes, rounds, native, python=time_python):
    """One row per size. ``native(paths, rounds)`` gives the C++ reader's JSON rows
    (:func:`run_native` with the built driver); ``python`` times the Python reader (tests
    pass doubles of both)."""
    elf_object = _load("_elf_object", "tests", "fixtures", "elf_object.py")
    elf_symbols = _load("_elf_symbols", "kernels", "elf_symbols.py")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-elf-") as tmp:
        paths = []
        for size in sizes:
            symbols, headers, data = crafted(elf_object, size)
            path = os.path.join(tmp, "crafted-%d.o" % size)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
            median, fastest, lookup = python(elf_symbols, data, rounds)
            if (lookup.verdict, lookup.function_count) != (elf_symbols.MISSING, symbols):
                raise RuntimeError("the Python reader read %d bytes as %s with %d functions, not "
                                   "missing with %d" % (len(data), lookup.verdict, lookup.function_count, symbols))
            rows.append({"bytes": len(data), "symbols": symbols, "headers": headers,
                         "python_s_median": median, "python_s_min": fastest})
        for row, seen in zip(rows, native(paths, rounds)):
            if (seen["verdict"], seen["function_count"]) != ("missing", row["symbols"]):
                raise RuntimeError("the C++ reader read %d bytes as %s with %d functions"
                                   % (row["bytes"], seen["verdict"], seen["function_count"]))
            row["cpp_s_median"], row["cpp_s_min"] = seen["ns_median"] / 1e9, seen["ns_min"] / 1e9
    return rows


def table(rows):
    lines = ["| bytes | symbols | headers naming the table | C++ ms (median) | C++ ns per byte | "
             "Python ms (median) | Python ns per byte |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %d | %d | %.2f | %.2f | %.1f | %.0f |" % (
            r["bytes"], r["symbols"], r["headers"], r["cpp_s_median"] * 1e3, r["cpp_s_median"] * 1e9 / r["bytes"],
            r["python_s_median"] * 1e3, r["python_s_median"] * 1e9 / r["bytes"]))
    return "\n".join(lines)


def judge(rows, max_ratio):
    """Each reader's time per byte, largest object over smallest, and whether it is within
    ``max_ratio``: [(reader, ratio, ok)]."""
    verdicts = []
    for reader, key in (("C++", "cpp_s_median"), ("Python", "python_s_median")):
        first, last = rows[0], rows[-1]
        ratio = (last[key] / last["bytes"]) / (first[key] / first["bytes"])
        verdicts.append((reader, ratio, ratio <= max_ratio))
    return verdicts


def main(argv=None, native=None, python=time_python, out=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-kib", default="256,512,1024,2048",
                        help="the crafted objects' sizes in KiB, comma-separated")
    parser.add_argument("--rounds", type=int, default=5, help="lookups per object (median reported)")
    parser.add_argument("--max-ratio", type=float, default=MAX_RATIO,
                        help="the most either reader's time per byte may grow, largest object over "
                             "smallest, before the run fails (1.0: exactly linear)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) * 1024 for s in args.sizes_kib.split(",")]
    except ValueError:
        parser.error("--sizes-kib takes whole KiB separated by commas (256,512), not %r" % args.sizes_kib)
    if any(s < 1024 or s > 64 * 1024 * 1024 for s in sizes):
        parser.error("--sizes-kib: each size from 1 to 65536 KiB")
    if len(sizes) < 2 or sizes != sorted(set(sizes)):
        parser.error("--sizes-kib: at least two sizes, growing (256,512), not %r" % args.sizes_kib)
    if not args.max_ratio >= 1.0:
        parser.error("--max-ratio: a number of at least 1.0 (1.0: exactly linear), not %r" % args.max_ratio)
    out = out or sys.stdout
    if native is None:
        exe = build()
        native = lambda paths, rounds: run_native(exe, paths, rounds)  # noqa: E731
    rows = measure(sizes, max(1, args.rounds), native, python)
    out.write("ELF readers on crafted objects | %s | %d rounds\n" % (platform.processor() or platform.machine(),
                                                                   args.rounds))
    out.write(table(rows) + "\n")
    verdicts = judge(rows, args.max_ratio)
    for reader, ratio, ok in verdicts:
        out.write("%s time per byte, largest object over smallest: %.2f (1.0: linear; at most %.1f): %s\n"
                  % (reader, ratio, args.max_ratio, "linear" if ok else "NOT linear in the size"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "max_ratio": args.max_ratio, "objects": rows,
                       "verdicts": {r: {"ratio": ratio, "ok": ok} for r, ratio, ok in verdicts}}, f, indent=1)
    return 0 if all(ok for _, _, ok in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
