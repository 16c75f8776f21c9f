"""The symbol an npubin defines for its kernel, read from its ELF symbol tables.

The runtime finds the function to launch by its exact name in the binary
(``aclrtBinaryGetFunction``; hicann/runtime also accepts the name plus ``_mix_aiv`` or
``_mix_aic``), so the builder refuses to write a manifest whose npubin does not define the
entry it names (:func:`require_entry`), instead of the mismatch first showing when a model
runs. The GE library applies the same rule, with its own reader, wherever it verifies a
binary (ge_ops/core elf_symbols.cc); both are held to real objects of this machine's C
compiler (tests/kernels/test_elf_symbols.py, tests/native/core/test_elf_symbols.cc).

A small reader of its own rather than pyelftools: the question is one fixed-layout lookup
(section table, symbol tables, their string tables), the C++ side needs its own reader in any
case (the GE library links nothing it does not ship), the builder runs from the installed
package on every host (Python 3.7 included), and the two readers are kept to one verdict
case by case. Both follow the runtime's rule (hicann/runtime src/runtime/core/src/kernel/
elf.cc): a 64-bit file of either byte order, its first ``.symtab`` that holds symbols (the
runtime reads no other, and never ``.dynsym``), a global, defined, default-visibility
function. Every offset is checked against the file's size, and that one table is read once,
so the time is linear in the size (benchmarks/bench_elf_reader.py). A miss says why a symbol
of the entry's name was passed over (hidden, undefined, local, ...) and what is accepted.

Pure Python, Python 3.7 syntax.
"""
import struct
from typing import NamedTuple, Tuple

FOUND, NOT_ELF, NOT_64_BIT, TRUNCATED, NO_SYMBOL_TABLE, MISSING = (
    "found", "not_elf", "not_64_bit", "truncated", "no_symbol_table", "missing")

# Offsets in a 64-bit ELF file, from the ELF specification (System V gABI, "Object Files"):
# the file header's e_shoff, e_shentsize, e_shnum; a section header's sh_type, sh_offset,
# sh_size, sh_link, sh_entsize; a symbol's st_name, st_info, st_other, st_shndx.
_EHDR, _SHOFF_AT, _SHENTSIZE_AT, _SHNUM_AT = 64, 40, 58, 60
_SHDR, _TYPE_AT, _OFFSET_AT, _SIZE_AT, _LINK_AT, _ENTSIZE_AT = 64, 4, 24, 32, 40, 56
_SYM, _NAME_AT, _INFO_AT, _OTHER_AT, _SHNDX_AT = 24, 0, 4, 5, 6
_SHT_SYMTAB = 2
_STT_FUNC, _STB_GLOBAL, _STV_DEFAULT, _SHN_UNDEF = 2, 1, 0, 0
_BINDING_NAMES = {0: "local (STB_LOCAL)", 2: "weak (STB_WEAK)"}
_VISIBILITY_NAMES = {1: "internal (STV_INTERNAL)", 2: "hidden (STV_HIDDEN)", 3: "protected (STV_PROTECTED)"}
ACCEPTED = "a global, defined, default-visibility function in the first .symtab of a 64-bit ELF file"


class Lookup(NamedTuple):
    verdict: str  # FOUND, NOT_ELF, NOT_64_BIT, TRUNCATED, NO_SYMBOL_TABLE or MISSING
    found: str  # FOUND: the name that matched
    functions: Tuple[str, ...]  # MISSING: up to three functions the runtime could launch
    function_count: int  # MISSING: how many functions the runtime could launch
    refused: str = ""  # MISSING: "NAME is WHY" for the first symbol of a wanted name refused


class _Truncated(Exception):
    pass


def entry_names(entry, mix_mode="aiv"):
    """The names the runtime finds ``entry`` under: itself, then with the suffix of its
    mix_mode (``_mix_aiv`` for vector-core kernels, ``_mix_aic`` otherwise)."""
    from tf_ge_custom import kernel_contract

    return (entry, entry + kernel_contract.ENTRY_SUFFIX_BY_MIX_MODE[mix_mode])


def _refusal(info, other, shndx):
    """Why the runtime would not launch a symbol: a phrase, or "" when it would (a global,
    defined, default-visibility function)."""
    if shndx == _SHN_UNDEF:
        return "undefined here (a reference: section SHN_UNDEF)"
    if info & 0xF != _STT_FUNC:
        return "not a function (symbol type %d, not STT_FUNC)" % (info & 0xF)
    if info >> 4 != _STB_GLOBAL:
        return "%s, not global" % _BINDING_NAMES.get(info >> 4, "binding %d" % (info >> 4))
    if other & 0x3 != _STV_DEFAULT:
        return "%s, not of default visibility" % _VISIBILITY_NAMES[other & 0x3]
    return ""


def find_function(data, names):
    """Whether the ELF file ``data`` (bytes) defines, as the runtime reads it, a function
    named one of ``names``: a 64-bit file; its first ``.symtab`` section that holds symbols
    (the runtime reads no other, and never ``.dynsym``); a symbol of type STT_FUNC, binding
    STB_GLOBAL, visibility STV_DEFAULT and a section index other than SHN_UNDEF. That table
    must hold 24-byte records inside the file (the runtime reads 24-byte records whatever
    sh_entsize says), or the file is damaged. One pass over the section headers and one over
    the table: the time is linear in the size."""
    names = tuple(names)
    if len(data) < 16 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return Lookup(NOT_ELF, "", (), 0)
    if data[4] == 1:  # the runtime loads 64-bit ELF files only
        return Lookup(NOT_64_BIT, "", (), 0)
    order = "<" if data[5] == 1 else ">"
    size = len(data)

    def u(at, fmt):
        n = struct.calcsize(fmt)
        if at < 0 or at + n > size:
            raise _Truncated()
        return struct.unpack_from(order + fmt, data, at)[0]

    def section(index):
        at = shoff + index * _SHDR
        return (u(at + _TYPE_AT, "I"), u(at + _OFFSET_AT, "Q"), u(at + _SIZE_AT, "Q"),
                u(at + _LINK_AT, "I"), u(at + _ENTSIZE_AT, "Q"))

    def fits(at, n):
        return at <= size and n <= size - at

    try:
        if size < _EHDR:
            raise _Truncated()
        shoff, shentsize, shnum = u(_SHOFF_AT, "Q"), u(_SHENTSIZE_AT, "H"), u(_SHNUM_AT, "H")
        if shoff == 0:
            return Lookup(NO_SYMBOL_TABLE, "", (), 0)
        if shentsize != _SHDR or not fits(shoff, _SHDR):
            raise _Truncated()
        if shnum == 0:  # more than 0xff00 sections: the count is section 0's sh_size
            shnum = section(0)[2]
        if shnum > size // _SHDR or not fits(shoff, shnum * _SHDR):
            raise _Truncated()
        # The runtime's table: the first SHT_SYMTAB with symbols in it (it passes over one of
        # size 0 or sh_entsize 0, and stops after the first it reads). .dynsym is never read.
        table = None
        for i in range(shnum):
            kind, offset, length, link, entsize = section(i)
            if kind != _SHT_SYMTAB or length == 0 or entsize == 0:
                continue
            if entsize != _SYM or link >= shnum or not fits(offset, length):
                raise _Truncated()
            table = (offset, length, link)
            break
        if table is None:
            return Lookup(NO_SYMBOL_TABLE, "", (), 0)
        offset, length, link = table
        _, str_offset, str_size, _, _ = section(link)
        if not fits(str_offset, str_size):
            raise _Truncated()
        str_end = str_offset + str_size
        last_nul = data.rfind(b"\0", str_offset, str_end)  # a name needs a terminator after it
        functions, count, refused = [], 0, ""
        wanted = [(n.encode("utf-8") + b"\0") for n in names]
        for s in range(1, length // _SYM):  # symbol 0 is the null symbol
            at = offset + s * _SYM
            name, info = u(at + _NAME_AT, "I"), u(at + _INFO_AT, "B")
            other, shndx = u(at + _OTHER_AT, "B"), u(at + _SHNDX_AT, "H")
            if name == 0:
                continue
            why = _refusal(info, other, shndx)
            if why:  # not the runtime's kernel; named as wanted, it is why the entry is missing
                start = str_offset + name
                if not refused and name < str_size and start <= last_nul:
                    for want in wanted:
                        if data[start:start + len(want)] == want:
                            refused = "%s is %s" % (want[:-1].decode("utf-8"), why)
                continue
            if name >= str_size or str_offset + name > last_nul:
                raise _Truncated()  # past the table, or no terminator after it
            start = str_offset + name
            for want in wanted:
                if data[start:start + len(want)] == want:
                    return Lookup(FOUND, want[:-1].decode("utf-8"), (), 0)
            count += 1
            if len(functions) < 3:
                end = data.find(b"\0", start, str_end)
                functions.append(data[start:end].decode("utf-8", "replace"))
        return Lookup(MISSING, "", tuple(functions), count, refused)
    except _Truncated:
        return Lookup(TRUNCATED, "", (), 0)


def describe_miss(lookup, names):
    """One phrase for a lookup that did not find the entry (the GE library's wording)."""
    wanted = " or ".join(names)
    if lookup.verdict == FOUND:
        return "defines %s" % lookup.found
    if lookup.verdict == NOT_ELF:
        return "is not an ELF file"
    if lookup.verdict == NOT_64_BIT:
        return "is a 32-bit ELF file; the runtime loads 64-bit ELF files only"
    if lookup.verdict == TRUNCATED:
        return "is a cut or damaged ELF file (a header or table runs past its end)"
    if lookup.verdict == NO_SYMBOL_TABLE:
        return ("has no symbol table (stripped?) the runtime reads (.symtab; it ignores .dynsym), "
                "so it cannot find %s in it" % wanted)
    listed = ", ".join(f or '""' for f in lookup.functions)  # a symbol's name may be empty
    more = lookup.function_count - len(lookup.functions)
    if more > 0:
        listed += " and %d more" % more
    said = "defines no global function %s (its global functions: %s)" % (wanted, listed or "none")
    if lookup.refused:
        said += "; %s, and the runtime launches only %s" % (lookup.refused, ACCEPTED)
    return said


def require_entry(data, entry, mix_mode, what):
    """Raise :class:`tf_ge_custom.errors.KernelBuildError` unless ``data`` defines the
    kernel's entry (or entry + its mix_mode's suffix); ``what`` names the npubin."""
    from tf_ge_custom.errors import KernelBuildError

    names = entry_names(entry, mix_mode)
    lookup = find_function(data, names)
    if lookup.verdict != FOUND:
        raise KernelBuildError("%s %s; the manifest would name a kernel it does not hold, so "
                               "nothing is written (check that hivmc compiled the entry %s)"
                               % (what, describe_miss(lookup, names), entry))
    return lookup.found
