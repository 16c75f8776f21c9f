"""The builder's reader of an npubin's symbol (tf_ge_custom.kernels.elf_symbols) on real ELF
objects made by this machine's C compiler and strip, against readelf's own reading of the
same files; the hand-written objects of the test data (tests/fixtures/elf_object.py) of both
classes and byte orders; and every cut of a real object. The GE library's reader is held to
the same cases in tests/native/core/test_elf_symbols.cc."""
import importlib.util
import os
import shutil
import struct
import subprocess

import pytest

from tf_ge_custom.errors import KernelBuildError
from tf_ge_custom.kernels import elf_symbols

pytestmark = pytest.mark.kind("oracle")

ENTRY = "tf_ge_custom_add_custom_flat_float32"
NAMES = elf_symbols.entry_names(ENTRY, "aiv")
CC = shutil.which("cc") or shutil.which("gcc")
STRIP = shutil.which("strip")
READELF = shutil.which("readelf")
_spec = importlib.util.spec_from_file_location(
    "_elf_object", os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "fixtures", "elf_object.py"))
elf_object = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(elf_object)


def _compile(tmp_path, name, source, flags=("-c",)):
    assert CC and STRIP and READELF, "these tests need this machine's C compiler and binutils"
    c = tmp_path / (name + ".c")
    c.write_text(source)
    out = tmp_path / name
    subprocess.run([CC, "-x", "c"] + list(flags) + ["-O1", "-o", str(out), str(c)], check=True)
    return out


def _readelf_global_functions(path):
    """Defined global functions as readelf -sW lists them (the independent reading)."""
    text = subprocess.run([READELF, "-sW", str(path)], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    found = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[4] == "GLOBAL" and parts[6] != "UND":
            found.add(parts[7].split("@")[0])
    return found


def _readelf_row(path, name):
    """readelf -sW's columns for the first symbol called ``name`` (Type, Bind, Vis, Ndx)."""
    text = subprocess.run([READELF, "-sW", str(path)], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    rows = [line.split() for line in text.splitlines() if line.split()[-1:] == [name]]
    assert rows, text
    return rows[0][3], rows[0][4], rows[0][5], rows[0][6]


# Why a symbol of the entry's name is not the runtime's kernel, from readelf's columns: the
# words describe_miss must use for it (readelf and the reader agree on the field's meaning).
_WHY = {"UND": "undefined here", "OBJECT": "not a function", "NOTYPE": "not a function",
        "LOCAL": "local (STB_LOCAL), not global", "WEAK": "weak (STB_WEAK), not global",
        "HIDDEN": "hidden (STV_HIDDEN), not of default visibility",
        "PROTECTED": "protected (STV_PROTECTED), not of default visibility"}


def _expected_why(row):
    kind, bind, vis, ndx = row
    for column in (ndx, kind, bind, vis):  # the reader's order: defined, a function, global, visible
        if column in _WHY and column not in ("FUNC", "GLOBAL", "DEFAULT"):
            return _WHY[column]
    raise AssertionError("readelf shows the runtime's kernel: %s" % (row,))


def test_a_compiled_function_of_the_entry_name_is_found_as_readelf_finds_it(tmp_path):
    obj = _compile(tmp_path, "right.o", "int %s(int x) { return x + 1; }\n" % ENTRY)
    assert ENTRY in _readelf_global_functions(obj)
    assert elf_symbols.find_function(obj.read_bytes(), NAMES).found == ENTRY
    assert elf_symbols.require_entry(obj.read_bytes(), ENTRY, "aiv", "x") == ENTRY


def test_the_mix_suffix_follows_the_mix_mode(tmp_path):
    obj = _compile(tmp_path, "mix.o", "int %s_mix_aiv(int x) { return x; }\n" % ENTRY).read_bytes()
    assert elf_symbols.find_function(obj, NAMES).found == ENTRY + "_mix_aiv"
    assert elf_symbols.entry_names(ENTRY, "aic") == (ENTRY, ENTRY + "_mix_aic")
    assert elf_symbols.find_function(obj, elf_symbols.entry_names(ENTRY, "aic")).verdict == \
        elf_symbols.MISSING


def test_another_name_a_local_a_variable_or_an_undefined_reference_is_missing(tmp_path):
    wrong = _compile(tmp_path, "wrong.o", "int add_kernel(int x) { return x; }\n"
                     "int %s_v2(int x) { return x; }\n" % ENTRY)
    lookup = elf_symbols.find_function(wrong.read_bytes(), NAMES)
    assert lookup.verdict == elf_symbols.MISSING
    assert set(lookup.functions) == _readelf_global_functions(wrong) == {"add_kernel", ENTRY + "_v2"}
    with pytest.raises(KernelBuildError) as e:
        elf_symbols.require_entry(wrong.read_bytes(), ENTRY, "aiv", "the npubin X")
    assert "the npubin X defines no global function %s or %s_mix_aiv" % (ENTRY, ENTRY) in str(e.value)
    for name, source in (
            ("local.o", "static int %s(int x) { return 3 * x; }\nint (*keep)(int) = %s;\n"
             % (ENTRY, ENTRY)),
            ("variable.o", "int %s = 5;\n" % ENTRY),
            ("undefined.o", "int %s(int);\nint caller(int x) { return %s(x); }\n" % (ENTRY, ENTRY))):
        obj = _compile(tmp_path, name, source)
        assert ENTRY not in _readelf_global_functions(obj), name
        lookup = elf_symbols.find_function(obj.read_bytes(), NAMES)
        assert lookup.verdict == elf_symbols.MISSING, name
        # The miss says why the symbol of the entry's name was passed over, and what is accepted.
        said = elf_symbols.describe_miss(lookup, NAMES)
        assert "; %s is %s" % (ENTRY, _expected_why(_readelf_row(obj, ENTRY))) in said, (name, said)
        assert "the runtime launches only a global, defined, default-visibility function" in said


def test_stripped_objects_and_stripped_libraries(tmp_path):
    """The runtime reads .symtab only: a library stripped to its .dynsym is refused, though
    readelf still lists the function there."""
    obj = _compile(tmp_path, "stripped.o", "int %s(int x) { return x; }\n" % ENTRY)
    subprocess.run([STRIP, "--strip-all", str(obj)], check=True)
    lookup = elf_symbols.find_function(obj.read_bytes(), NAMES)
    assert lookup.verdict == elf_symbols.NO_SYMBOL_TABLE
    assert "stripped" in elf_symbols.describe_miss(lookup, NAMES)
    lib = _compile(tmp_path, "lib.so", "int %s(int x) { return x; }\n" % ENTRY, ("-shared", "-fPIC"))
    assert elf_symbols.find_function(lib.read_bytes(), NAMES).found == ENTRY  # .symtab
    subprocess.run([STRIP, "--strip-all", str(lib)], check=True)
    assert ENTRY in _readelf_global_functions(lib)  # .dynsym stays
    lookup = elf_symbols.find_function(lib.read_bytes(), NAMES)
    assert lookup.verdict == elf_symbols.NO_SYMBOL_TABLE
    assert "it ignores .dynsym" in elf_symbols.describe_miss(lookup, NAMES)


def test_a_hidden_function_is_refused_as_the_runtime_refuses_it(tmp_path):
    """gcc's visibility attribute: the symbol stays global in .symtab, with STV_HIDDEN,
    which readelf shows and the runtime skips."""
    obj = _compile(tmp_path, "hidden.o", '__attribute__((visibility("hidden"))) int %s(int x) '
                   "{ return x; }\nint other(int x) { return x; }\n" % ENTRY)
    assert ENTRY in _readelf_global_functions(obj)
    lookup = elf_symbols.find_function(obj.read_bytes(), NAMES)
    assert (lookup.verdict, lookup.functions) == (elf_symbols.MISSING, ("other",))
    assert _readelf_row(obj, ENTRY)[2] == "HIDDEN"
    with pytest.raises(KernelBuildError) as e:
        elf_symbols.require_entry(obj.read_bytes(), ENTRY, "aiv", "the npubin X")
    assert "%s is hidden (STV_HIDDEN), not of default visibility" % ENTRY in str(e.value)


def test_not_elf_and_every_cut_of_a_real_object(tmp_path):
    assert elf_symbols.find_function(b"fake npubin, not an ELF file", NAMES).verdict == \
        elf_symbols.NOT_ELF
    assert elf_symbols.find_function(b"", NAMES).verdict == elf_symbols.NOT_ELF
    data = _compile(tmp_path, "cut.o", "int %s(int x) { return x; }\n" % ENTRY).read_bytes()
    verdicts = [elf_symbols.find_function(data[:n], NAMES).verdict for n in range(len(data))]
    assert elf_symbols.FOUND not in verdicts  # GCC puts the section table last
    assert set(verdicts[16:]) == {elf_symbols.TRUNCATED}
    assert elf_symbols.find_function(data, NAMES).verdict == elf_symbols.FOUND


@pytest.mark.parametrize("big_endian", [False, True])
def test_hand_written_objects_of_both_byte_orders(tmp_path, big_endian):
    good = elf_object.elf_object([("helper", "local"), ENTRY], b"code", False, big_endian)
    path = tmp_path / "good.o"
    path.write_bytes(good)
    assert ENTRY in _readelf_global_functions(path)  # the test data is a real ELF file
    assert elf_symbols.find_function(good, NAMES).found == ENTRY
    weak = elf_object.elf_object([(ENTRY, "weak")], b"code", False, big_endian)
    assert elf_symbols.find_function(weak, NAMES).verdict == elf_symbols.MISSING


@pytest.mark.parametrize("big_endian", [False, True])
def test_a_32_bit_object_is_refused_as_the_runtime_refuses_it(tmp_path, big_endian):
    data = elf_object.elf_object([ENTRY], b"code", True, big_endian)
    path = tmp_path / "elf32.o"
    path.write_bytes(data)
    assert ENTRY in _readelf_global_functions(path)
    lookup = elf_symbols.find_function(data, NAMES)
    assert lookup.verdict == elf_symbols.NOT_64_BIT
    assert "32-bit" in elf_symbols.describe_miss(lookup, NAMES)


@pytest.mark.parametrize("binding, table", [
    ("undefined", "symtab"),  # SHN_UNDEF, yet typed FUNC (gcc's references carry no type)
    ("hidden", "symtab"),
    ("protected", "symtab"),
    ("global", "dynsym"),  # the only table is .dynsym
])
def test_crafted_entries_the_runtime_would_not_launch_are_refused(tmp_path, binding, table):
    """Each differs from a found entry in one field only, which readelf shows."""
    good = elf_object.elf_object([ENTRY], b"code", table="symtab")
    assert elf_symbols.find_function(good, NAMES).found == ENTRY
    data = elf_object.elf_object([(ENTRY, binding), "other"], b"code", table=table)
    path = tmp_path / "crafted.o"
    path.write_bytes(data)
    text = subprocess.run([READELF, "-sW", str(path)], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    row = [line.split() for line in text.splitlines() if line.endswith(" " + ENTRY)]
    assert row and row[0][3:5] == ["FUNC", "GLOBAL"], text
    assert row[0][5] == {"hidden": "HIDDEN", "protected": "PROTECTED"}.get(binding, "DEFAULT")
    assert (row[0][6] == "UND") == (binding == "undefined")
    lookup = elf_symbols.find_function(data, NAMES)
    if table == "dynsym":
        assert lookup.verdict == elf_symbols.NO_SYMBOL_TABLE
    else:
        assert (lookup.verdict, lookup.functions, lookup.function_count) == \
            (elf_symbols.MISSING, ("other",), 1)
        assert lookup.refused.startswith("%s is %s" % (ENTRY, _expected_why(tuple(row[0][3:7]))))


def _section_field(data, index, at):
    shoff = struct.unpack_from("<Q", data, 40)[0]
    return shoff + index * 64 + at


def test_many_headers_naming_one_symbol_table_read_it_once():
    """The crafted object of benchmarks/bench_elf_reader.py, small: its verdicts. The time
    (linear in the size) is that benchmark's, not a timed test."""
    names = ["f%d" % i for i in range(50)]
    data = elf_object.elf_object(names, b"code", symtab_headers=200)
    lookup = elf_symbols.find_function(data, NAMES)
    assert (lookup.verdict, lookup.function_count) == (elf_symbols.MISSING, 50)  # not 50 * 200
    assert elf_symbols.find_function(data, ("f49",)).found == "f49"


def test_only_the_first_symbol_table_with_symbols_is_read_as_the_runtime_reads_it():
    """hicann/runtime's elf.cc stops after the first SHT_SYMTAB it reads, passing over one of
    size 0 or sh_entsize 0 before it; it reads 24-byte records whatever sh_entsize says."""
    data = bytearray(elf_object.elf_object(["f0", "f1"], b"code", symtab_headers=2))
    size_at = _section_field(data, 2, 32)  # section 2: .symtab; section 5: a second header of it
    symtab_size = struct.unpack_from("<Q", data, size_at)[0]
    assert symtab_size == 3 * 24  # the null symbol, f0, f1
    assert elf_symbols.find_function(bytes(data), ("f1",)).found == "f1"
    # The first table cut to the null symbol and f0: f1 is in the second table only.
    struct.pack_into("<Q", data, size_at, 2 * 24)
    lookup = elf_symbols.find_function(bytes(data), ("f1",))
    assert (lookup.verdict, lookup.function_count, lookup.functions) == (elf_symbols.MISSING, 1, ("f0",))
    # A first table of size 0, or of sh_entsize 0, is passed over: the second is read.
    struct.pack_into("<Q", data, size_at, 0)
    assert elf_symbols.find_function(bytes(data), ("f1",)).found == "f1"
    struct.pack_into("<Q", data, size_at, symtab_size)
    struct.pack_into("<Q", data, _section_field(data, 2, 56), 0)
    assert elf_symbols.find_function(bytes(data), ("f1",)).found == "f1"
    # Records of another size than 24 bytes: the runtime would misread them, so damage.
    for entsize in (16, 32):
        struct.pack_into("<Q", data, _section_field(data, 2, 56), entsize)
        assert elf_symbols.find_function(bytes(data), ("f0",)).verdict == elf_symbols.TRUNCATED


def test_a_string_table_without_a_terminator_at_its_end():
    """The names' terminators are checked against one scan of the string table, not one per
    symbol: a string table whose tail has no NUL still gives each name its own verdict (a
    name in the tail: damage; one before it: read)."""
    data = bytearray(elf_object.elf_object(["f0", "f1"], b"code"))
    strtab_at, strtab_size = struct.unpack_from("<QQ", data, _section_field(data, 3, 24))
    # Drop the last name's terminator: "f1" now runs to the table's end unterminated.
    assert data[strtab_at + strtab_size - 1] == 0
    data[strtab_at + strtab_size - 1] = ord("x")
    assert elf_symbols.find_function(bytes(data), ("f0",)).found == "f0"
    assert elf_symbols.find_function(bytes(data), NAMES).verdict == elf_symbols.TRUNCATED
