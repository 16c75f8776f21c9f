"""Both readers of an npubin's entry, one verdict: the GE core's (``tf_ge_custom_elf_driver``,
tests/native/core/elf_driver.cc) and the builder's (tf_ge_custom.kernels.elf_symbols) give the
same verdict, name, function list and count, reason and message on the same files.

The files: the test data's hand-written objects (tests/fixtures/elf_object.py) for every
binding, both tables and byte orders and a 32-bit one; a crafted object whose first symbol
table is cut, emptied or given another record size; objects of this machine's C compiler
(the entry right, hidden, local, a variable, an undefined reference, a stripped library);
and every cut and every byte of a small object flipped two ways. Each reader is held to
readelf and hand-made cases on its own (tests/kernels/test_elf_symbols.py,
tests/native/core/test_elf_symbols.cc); here neither is taken as right, they must agree.
"""
import importlib.util
import json
import os
import shutil
import struct
import subprocess

import pytest

from tf_ge_custom.kernels import elf_symbols

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRY = "tf_ge_custom_add_custom_flat_float32"
NAMES = elf_symbols.entry_names(ENTRY, "aiv")
CC = shutil.which("cc") or shutil.which("gcc")
STRIP = shutil.which("strip")
_spec = importlib.util.spec_from_file_location(
    "_elf_object_agree", os.path.join(ROOT, "tests", "fixtures", "elf_object.py"))
elf_object = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(elf_object)


def _hand_written():
    cases = {}
    for binding in ("global", "local", "weak", "undefined", "hidden", "protected"):
        for table in ("symtab", "dynsym"):
            for big in (False, True):
                cases["%s-%s-%s" % (binding, table, "be" if big else "le")] = elf_object.elf_object(
                    [(ENTRY, binding), "other"], b"code", big_endian=big, table=table)
    cases["elf32"] = elf_object.elf_object([ENTRY], b"code", elf32=True)
    cases["mix-suffix"] = elf_object.elf_object([ENTRY + "_mix_aiv"], b"code")
    cases["no-functions"] = elf_object.elf_object([], b"code")
    # Two headers naming one table (sections 2 and 5): the first cut, emptied, or of
    # another record size.
    two = elf_object.elf_object(["f0", ENTRY], b"code", symtab_headers=2)
    shoff = struct.unpack_from("<Q", two, 40)[0]
    for name, at, value in (("first-cut", 32, 48), ("first-empty", 32, 0), ("first-entsize-0", 56, 0),
                            ("first-entsize-16", 56, 16), ("first-entsize-32", 56, 32)):
        changed = bytearray(two)
        struct.pack_into("<Q", changed, shoff + 2 * 64 + at, value)
        cases[name] = bytes(changed)
    return cases


def _compiled(folder):
    assert CC and STRIP, "this test needs this machine's C compiler and strip"
    sources = {
        "right": "int %s(int x) { return x; }\n" % ENTRY,
        "hidden": '__attribute__((visibility("hidden"))) int %s(int x) { return x; }\n'
                  "int other(int x) { return x; }\n" % ENTRY,
        "local": "static int %s(int x) { return 3 * x; }\nint (*keep)(int) = %s;\n" % (ENTRY, ENTRY),
        "variable": "int %s = 5;\n" % ENTRY,
        "undefined": "int %s(int);\nint caller(int x) { return %s(x); }\n" % (ENTRY, ENTRY),
    }
    cases = {}
    for name, source in sources.items():
        c = folder / (name + ".c")
        c.write_text(source)
        out = folder / (name + ".o")
        subprocess.run([CC, "-x", "c", "-c", "-O1", "-o", str(out), str(c)], check=True)
        cases["cc-" + name] = out.read_bytes()
    lib = folder / "lib.so"
    subprocess.run([CC, "-x", "c", "-shared", "-fPIC", "-O1", "-o", str(lib), str(folder / "right.c")],
                   check=True)
    cases["cc-library"] = lib.read_bytes()
    subprocess.run([STRIP, "--strip-all", str(lib)], check=True)
    cases["cc-library-stripped"] = lib.read_bytes()
    return cases


def _damaged():
    small = elf_object.elf_object([("helper", "local"), (ENTRY, "hidden"), "other", ENTRY + "_mix_aiv"],
                                  b"code")
    cases = {"small": small}
    for n in range(len(small)):
        cases["cut-%04d" % n] = small[:n]
    for i in range(len(small)):
        for mask in (0x01, 0xFF):
            flipped = bytearray(small)
            flipped[i] ^= mask
            cases["flip-%04d-%02x" % (i, mask)] = bytes(flipped)
    return cases


def _python(data):
    lookup = elf_symbols.find_function(data, NAMES)
    missing = lookup.verdict == elf_symbols.MISSING
    return {"verdict": lookup.verdict, "found": lookup.found,
            "functions": list(lookup.functions) if missing else [],
            "function_count": lookup.function_count if missing else 0,
            "refused": lookup.refused if missing else "",
            "said": "" if lookup.verdict == elf_symbols.FOUND else elf_symbols.describe_miss(lookup, NAMES)}


@pytest.fixture(scope="module")
def both(native_build, tmp_path_factory):
    folder = tmp_path_factory.mktemp("elf-readers")
    cases = dict(_hand_written())
    cases.update(_compiled(folder))
    cases.update(_damaged())
    names, paths = sorted(cases), []
    for name in names:
        path = folder / (name + ".bin")
        path.write_bytes(cases[name])
        paths.append(str(path))
    proc = subprocess.run([native_build.exe("tf_ge_custom_elf_driver"), "--names", ",".join(NAMES)] + paths,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r.pop("path") for r in rows] == paths
    return [(name, _python(cases[name]), row) for name, row in zip(names, rows)]


def test_both_readers_give_one_verdict_on_every_file(both):
    differ = ["%s: Python %s, C++ %s" % (name, py, cpp) for name, py, cpp in both if py != cpp]
    assert not differ, "%d of %d files read differently:\n%s" % (len(differ), len(both), "\n".join(differ[:10]))


def test_the_files_reach_every_verdict_and_reason(both):
    """Not a vacuous agreement: every verdict is seen, and each kind of passed-over entry."""
    verdicts = set(py["verdict"] for _, py, _ in both)
    assert verdicts == {elf_symbols.FOUND, elf_symbols.NOT_ELF, elf_symbols.NOT_64_BIT, elf_symbols.TRUNCATED,
                        elf_symbols.NO_SYMBOL_TABLE, elf_symbols.MISSING}
    reasons = set(py["refused"].split(" is ", 1)[1].split(" (")[0] for _, py, _ in both if py["refused"])
    assert {"undefined here", "hidden", "protected", "local", "weak", "not a function"} <= reasons, reasons
