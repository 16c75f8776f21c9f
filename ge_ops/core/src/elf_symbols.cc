#include "tf_ge_custom_core/elf_symbols.h"

#include <cstring>

namespace tf_ge_custom {
namespace core {
namespace {

// The fields this reader uses, from the ELF specification (System V gABI, "Object Files"),
// 64-bit class only: offsets of e_shoff, e_shentsize, e_shnum in the file header; in a section
// header sh_type, sh_link, sh_offset, sh_size, sh_entsize; in a symbol st_name, st_info,
// st_other, st_shndx. Written out rather than taken from <elf.h>, so the reader is the same on
// any host.
constexpr size_t kEhdrSize = 64, kShoffAt = 40, kShentsizeAt = 58, kShnumAt = 60;
constexpr size_t kShdrSize = 64, kShTypeAt = 4, kShLinkAt = 40, kShOffsetAt = 24, kShSizeAt = 32,
                 kShEntsizeAt = 56;
constexpr size_t kSymSize = 24, kStNameAt = 0, kStInfoAt = 4, kStOtherAt = 5, kStShndxAt = 6;
constexpr uint32_t kShtSymtab = 2;
constexpr uint8_t kSttFunc = 2, kStbGlobal = 1, kStvDefault = 0;
constexpr uint16_t kShnUndef = 0;

class Bytes {
 public:
  Bytes(const uint8_t *data, size_t size, bool big_endian) : data_(data), size_(size), big_(big_endian) {}
  // The unsigned integer of n bytes at offset at; false when it runs past the end.
  bool U(uint64_t at, size_t n, uint64_t *out) const {
    if (at > size_ || n > size_ - at) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t b = data_[at + (big_ ? i : n - 1 - i)];
      v = (v << 8) | b;
    }
    *out = v;
    return true;
  }
  bool Fits(uint64_t at, uint64_t n) const { return at <= size_ && n <= size_ - at; }
  const uint8_t *At(uint64_t at) const { return data_ + at; }

 private:
  const uint8_t *data_;
  size_t size_;
  bool big_;
};

struct Section {
  uint64_t type = 0, link = 0, offset = 0, size = 0, entsize = 0;
};

bool ReadSection(const Bytes &b, uint64_t shoff, uint64_t index, Section *s) {
  const uint64_t at = shoff + index * kShdrSize;  // shoff and index checked against the size first
  return b.U(at + kShTypeAt, 4, &s->type) && b.U(at + kShLinkAt, 4, &s->link) &&
         b.U(at + kShOffsetAt, 8, &s->offset) && b.U(at + kShSizeAt, 8, &s->size) &&
         b.U(at + kShEntsizeAt, 8, &s->entsize);
}

// Whether the NUL-terminated name at text (room bytes left in its table) is exactly want.
bool NameIs(const char *text, size_t room, const std::string &want) {
  return want.size() < room && std::memcmp(text, want.data(), want.size()) == 0 && text[want.size()] == '\0';
}

// Why the runtime would not launch a symbol: a phrase, or "" when it would (a global, defined,
// default-visibility function). The same words as kernels/elf_symbols.py's _refusal.
std::string Refusal(uint64_t info, uint64_t other, uint64_t shndx) {
  if (shndx == kShnUndef) return "undefined here (a reference: section SHN_UNDEF)";
  if ((info & 0xf) != kSttFunc) {
    return "not a function (symbol type " + std::to_string(info & 0xf) + ", not STT_FUNC)";
  }
  if ((info >> 4) != kStbGlobal) {
    const uint64_t bind = info >> 4;
    return (bind == 0 ? std::string("local (STB_LOCAL)")
                      : bind == 2 ? std::string("weak (STB_WEAK)") : "binding " + std::to_string(bind)) +
           ", not global";
  }
  if ((other & 0x3) != kStvDefault) {
    static const char *const kVisibility[] = {"default", "internal (STV_INTERNAL)", "hidden (STV_HIDDEN)",
                                              "protected (STV_PROTECTED)"};
    return std::string(kVisibility[other & 0x3]) + ", not of default visibility";
  }
  return "";
}

}  // namespace

const char kElfAccepted[] =
    "a global, defined, default-visibility function in the first .symtab of a 64-bit ELF file";

std::vector<std::string> EntrySymbolNames(const std::string &entry, bool vector_core) {
  return {entry, entry + (vector_core ? "_mix_aiv" : "_mix_aic")};
}

ElfLookup FindFunction(const uint8_t *data, size_t size, const std::vector<std::string> &names) {
  ElfLookup out;
  static const uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (data == nullptr || size < 16 || std::memcmp(data, kMagic, 4) != 0) return out;  // kNotElf
  const uint8_t elf_class = data[4], byte_order = data[5];
  if ((elf_class != 1 && elf_class != 2) || (byte_order != 1 && byte_order != 2)) return out;
  if (elf_class == 1) {  // the runtime reads 64-bit ELF files only
    out.verdict = ElfVerdict::kNot64Bit;
    return out;
  }
  const Bytes b(data, size, byte_order == 2);
  out.verdict = ElfVerdict::kTruncated;
  uint64_t shoff = 0, shentsize = 0, shnum = 0;
  if (size < kEhdrSize || !b.U(kShoffAt, 8, &shoff) || !b.U(kShentsizeAt, 2, &shentsize) ||
      !b.U(kShnumAt, 2, &shnum)) {
    return out;
  }
  if (shoff == 0) {  // no section table at all: nothing to look a name up in
    out.verdict = ElfVerdict::kNoSymbolTable;
    return out;
  }
  if (shentsize != kShdrSize || !b.Fits(shoff, kShdrSize)) return out;
  if (shnum == 0) {  // more than 0xff00 sections: the count is section 0's sh_size
    Section first;
    if (!ReadSection(b, shoff, 0, &first)) return out;
    shnum = first.size;
  }
  // Every section header inside the file (shnum * kShdrSize cannot wrap: both are bounded).
  if (shnum > size / kShdrSize || !b.Fits(shoff, shnum * kShdrSize)) return out;
  // The runtime's table: the first SHT_SYMTAB with symbols in it (it passes over one of size 0
  // or sh_entsize 0, and stops after the first it reads); .dynsym is never read. It reads
  // 24-byte records whatever sh_entsize says, so another record size is damage.
  Section symtab;
  bool any_table = false;
  for (uint64_t i = 0; i < shnum && !any_table; ++i) {
    if (!ReadSection(b, shoff, i, &symtab)) return out;
    if (symtab.type != kShtSymtab || symtab.size == 0 || symtab.entsize == 0) continue;
    if (symtab.entsize != kSymSize || symtab.link >= shnum || !b.Fits(symtab.offset, symtab.size)) return out;
    any_table = true;
  }
  if (!any_table) {
    out.verdict = ElfVerdict::kNoSymbolTable;
    return out;
  }
  Section strtab;
  if (!ReadSection(b, shoff, symtab.link, &strtab) || !b.Fits(strtab.offset, strtab.size)) return out;
  // A name needs a terminator at or after its start: where the table's last NUL lies, found once.
  uint64_t terminator_end = 0;  // the last NUL's position + 1 (0: none)
  for (uint64_t k = strtab.offset + strtab.size; k > strtab.offset; --k) {
    if (data[k - 1] == '\0') {
      terminator_end = k;
      break;
    }
  }
  const char *table = reinterpret_cast<const char *>(b.At(strtab.offset));
  const uint64_t count = symtab.size / kSymSize;
  for (uint64_t s = 1; s < count; ++s) {  // symbol 0 is the null symbol
    const uint64_t at = symtab.offset + s * kSymSize;
    uint64_t name = 0, info = 0, other = 0, shndx = 0;
    if (!b.U(at + kStNameAt, 4, &name) || !b.U(at + kStInfoAt, 1, &info) || !b.U(at + kStOtherAt, 1, &other) ||
        !b.U(at + kStShndxAt, 2, &shndx)) {
      return out;
    }
    if (name == 0) continue;
    // The runtime's kernel: a global function, defined here, visible (st_other's low two bits:
    // STV_DEFAULT), with a name. Another symbol of a wanted name is why the entry is missing.
    const std::string why = Refusal(info, other, shndx);
    if (!why.empty()) {
      if (out.refused.empty() && name < strtab.size && strtab.offset + name < terminator_end) {
        for (const auto &n : names) {
          if (NameIs(table + name, static_cast<size_t>(strtab.size - name), n)) {
            out.refused = n + " is " + why;
            break;
          }
        }
      }
      continue;
    }
    if (name >= strtab.size) return out;
    const char *text = table + name;
    if (terminator_end <= strtab.offset + name) return out;  // no terminator after the name's start
    const size_t room = static_cast<size_t>(strtab.size - name);
    for (const auto &n : names) {
      if (NameIs(text, room, n)) {
        out.verdict = ElfVerdict::kFound;
        out.found = n;
        out.functions.clear();
        out.refused.clear();
        return out;
      }
    }
    ++out.function_count;
    if (out.functions.size() < 3) {
      const void *end = std::memchr(text, '\0', room);  // found: a terminator lies at or after text
      out.functions.emplace_back(text, static_cast<const char *>(end) - text);
    }
  }
  out.verdict = ElfVerdict::kMissing;
  return out;
}
std::string DescribeMiss(const ElfLookup &lookup, const std::vector<std::string> &names) {
  std::string wanted;
  for (const auto &n : names) wanted += (wanted.empty() ? "" : " or ") + n;
  switch (lookup.verdict) {
    case ElfVerdict::kFound:
      return "defines " + lookup.found;
    case ElfVerdict::kNotElf:
      return "is not an ELF file";
    case ElfVerdict::kNot64Bit:
      return "is a 32-bit ELF file; the runtime loads 64-bit ELF files only";
    case ElfVerdict::kTruncated:
      return "is a cut or damaged ELF file (a header or table runs past its end)";
    case ElfVerdict::kNoSymbolTable:
      return "has no symbol table (stripped?) the runtime reads (.symtab; it ignores .dynsym), so it cannot "
             "find " + wanted + " in it";
    case ElfVerdict::kMissing: {
      std::string listed;
      for (size_t i = 0; i < lookup.functions.size(); ++i) {  // a symbol's name may be empty
        const std::string &f = lookup.functions[i];
        listed += (i == 0 ? "" : ", ") + (f.empty() ? std::string("\"\"") : f);
      }
      const uint64_t more = lookup.function_count - lookup.functions.size();
      if (more > 0) listed += " and " + std::to_string(more) + " more";
      std::string said = "defines no global function " + wanted + " (its global functions: " +
                         (listed.empty() ? std::string("none") : listed) + ")";
      if (!lookup.refused.empty()) said += "; " + lookup.refused + ", and the runtime launches only " + kElfAccepted;
      return said;
    }
  }
  return "?";
}

}  // namespace core
}  // namespace tf_ge_custom
