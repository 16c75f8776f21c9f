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
case by case. It takes both ELF classes and byte orders, looks through ``.symtab`` and
``.dynsym``, and checks every offset against the file's size.

Pure Python, Python 3.7 syntax.
"""
import struct
from typing import NamedTuple, Tuple

FOUND, NOT_ELF, TRUNCATED, NO_SYMBOL_TABLE, MISSING = (
    "found", "not_elf", "truncated", "no_symbol_table", "missing")

# (header size, e_shoff, e_shentsize, e_shnum; section header size, sh_type, sh_offset,
# sh_size, sh_link, sh_entsize, word; symbol size, st_name, st_info, st_shndx) per class,
# from the ELF specification (System V gABI, "Object Files").
_LAYOUT = {
    1: (52, 32, 46, 48, 40, 4, 16, 20, 24, 36, "I", 16, 0, 12, 14),
    2: (64, 40, 58, 60, 64, 4, 24, 32, 40, 56, "Q", 24, 0, 4, 6),
}
_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_STT_FUNC, _STB_GLOBAL, _SHN_UNDEF = 2, 1, 0


class Lookup(NamedTuple):
    verdict: str  # FOUND, NOT_ELF, TRUNCATED, NO_SYMBOL_TABLE or MISSING
    found: str  # FOUND: the name that matched
    functions: Tuple[str, ...]  # MISSING: up to three defined global functions there are
    function_count: int  # MISSING: how many defined global functions there are


class _Truncated(Exception):
    pass


def entry_names(entry, mix_mode="aiv"):
    """The names the runtime finds ``entry`` under: itself, then with the suffix of its
    mix_mode (``_mix_aiv`` for vector-core kernels, ``_mix_aic`` otherwise)."""
    from tf_ge_custom import kernel_contract

    return (entry, entry + kernel_contract.ENTRY_SUFFIX_BY_MIX_MODE[mix_mode])


def find_function(data, names):
    """Whether the ELF file ``data`` (bytes) defines a global function (STT_FUNC,
    STB_GLOBAL, a section index other than SHN_UNDEF) named one of ``names``."""
    names = tuple(names)
    if len(data) < 16 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return Lookup(NOT_ELF, "", (), 0)
    order = "<" if data[5] == 1 else ">"
    (ehdr, shoff_at, shentsize_at, shnum_at, shdr, type_at, offset_at, size_at, link_at,
     entsize_at, word, sym, name_at, info_at, shndx_at) = _LAYOUT[data[4]]
    size = len(data)

    def u(at, fmt):
        n = struct.calcsize(fmt)
        if at < 0 or at + n > size:
            raise _Truncated()
        return struct.unpack_from(order + fmt, data, at)[0]

    def section(index):
        at = shoff + index * shdr
        return (u(at + type_at, "I"), u(at + offset_at, word), u(at + size_at, word),
                u(at + link_at, "I"), u(at + entsize_at, word))

    def fits(at, n):
        return at <= size and n <= size - at

    try:
        if size < ehdr:
            raise _Truncated()
        shoff, shentsize, shnum = u(shoff_at, word), u(shentsize_at, "H"), u(shnum_at, "H")
        if shoff == 0:
            return Lookup(NO_SYMBOL_TABLE, "", (), 0)
        if shentsize != shdr or not fits(shoff, shdr):
            raise _Truncated()
        if shnum == 0:  # more than 0xff00 sections: the count is section 0's sh_size
            shnum = section(0)[2]
        if shnum > size // shdr or not fits(shoff, shnum * shdr):
            raise _Truncated()
        any_table, functions, count = False, [], 0
        for i in range(shnum):
            kind, offset, length, link, entsize = section(i)
            if kind not in (_SHT_SYMTAB, _SHT_DYNSYM):
                continue
            any_table = True
            if link >= shnum:
                raise _Truncated()
            _, str_offset, str_size, _, _ = section(link)
            if entsize < sym or not fits(offset, length) or not fits(str_offset, str_size):
                raise _Truncated()
            for s in range(1, length // entsize):  # symbol 0 is the null symbol
                at = offset + s * entsize
                name, info, shndx = u(at + name_at, "I"), u(at + info_at, "B"), u(at + shndx_at, "H")
                if info & 0xF != _STT_FUNC or info >> 4 != _STB_GLOBAL or shndx == _SHN_UNDEF:
                    continue
                if name >= str_size:
                    raise _Truncated()
                end = data.find(b"\0", str_offset + name, str_offset + str_size)
                if end < 0:
                    raise _Truncated()
                symbol = data[str_offset + name:end].decode("utf-8", "replace")
                if symbol in names:
                    return Lookup(FOUND, symbol, (), 0)
                count += 1
                if len(functions) < 3:
                    functions.append(symbol)
        if not any_table:
            return Lookup(NO_SYMBOL_TABLE, "", (), 0)
        return Lookup(MISSING, "", tuple(functions), count)
    except _Truncated:
        return Lookup(TRUNCATED, "", (), 0)


def describe_miss(lookup, names):
    """One phrase for a lookup that did not find the entry (the GE library's wording)."""
    wanted = " or ".join(names)
    if lookup.verdict == FOUND:
        return "defines %s" % lookup.found
    if lookup.verdict == NOT_ELF:
        return "is not an ELF file"
    if lookup.verdict == TRUNCATED:
        return "is a cut or damaged ELF file (a header or table runs past its end)"
    if lookup.verdict == NO_SYMBOL_TABLE:
        return "has no symbol table (stripped?), so the runtime cannot find %s in it" % wanted
    listed = ", ".join(lookup.functions)
    more = lookup.function_count - len(lookup.functions)
    if more > 0:
        listed += " and %d more" % more
    return "defines no global function %s (its global functions: %s)" % (wanted, listed or "none")


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
