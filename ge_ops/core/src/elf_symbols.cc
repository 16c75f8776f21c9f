#include "tf_ge_custom_core/elf_symbols.h"

#include <cstring>

namespace tf_ge_custom {
namespace core {
namespace {

// The fields this reader uses, from the ELF specification (System V gABI, "Object Files"):
// offsets of e_shoff, e_shentsize, e_shnum, e_shstrndx in the file header; in a section
// header sh_type, sh_link, sh_offset, sh_size, sh_entsize; in a symbol st_name, st_info,
// st_shndx. Written out per class rather than taken from <elf.h>, so the reader is the same
// on any host.
struct Layout {
  size_t ehdr_size, shoff_at, shentsize_at, shnum_at;
  size_t shdr_size, sh_type_at, sh_link_at, sh_offset_at, sh_size_at, sh_entsize_at, word;
  size_t sym_size, st_name_at, st_info_at, st_shndx_at;
};
constexpr Layout kElf32 = {52, 32, 46, 48, 40, 4, 24, 16, 20, 36, 4, 16, 0, 12, 14};
constexpr Layout kElf64 = {64, 40, 58, 60, 64, 4, 40, 24, 32, 56, 8, 24, 0, 4, 6};
constexpr uint32_t kShtSymtab = 2, kShtDynsym = 11;
constexpr uint8_t kSttFunc = 2, kStbGlobal = 1;
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
  size_t size() const { return size_; }

 private:
  const uint8_t *data_;
  size_t size_;
  bool big_;
};

struct Section {
  uint64_t type = 0, link = 0, offset = 0, size = 0, entsize = 0;
};

bool ReadSection(const Bytes &b, const Layout &l, uint64_t shoff, uint64_t index, Section *s) {
  const uint64_t at = shoff + index * l.shdr_size;  // shoff and index checked against the size first
  return b.U(at + l.sh_type_at, 4, &s->type) && b.U(at + l.sh_link_at, 4, &s->link) &&
         b.U(at + l.sh_offset_at, l.word, &s->offset) && b.U(at + l.sh_size_at, l.word, &s->size) &&
         b.U(at + l.sh_entsize_at, l.word, &s->entsize);
}

}  // namespace

std::vector<std::string> EntrySymbolNames(const std::string &entry, bool vector_core) {
  return {entry, entry + (vector_core ? "_mix_aiv" : "_mix_aic")};
}

ElfLookup FindFunction(const uint8_t *data, size_t size, const std::vector<std::string> &names) {
  ElfLookup out;
  static const uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (data == nullptr || size < 16 || std::memcmp(data, kMagic, 4) != 0) return out;  // kNotElf
  const uint8_t elf_class = data[4], byte_order = data[5];
  if ((elf_class != 1 && elf_class != 2) || (byte_order != 1 && byte_order != 2)) return out;
  const Layout &l = elf_class == 1 ? kElf32 : kElf64;
  const Bytes b(data, size, byte_order == 2);
  out.verdict = ElfVerdict::kTruncated;
  uint64_t shoff = 0, shentsize = 0, shnum = 0;
  if (size < l.ehdr_size || !b.U(l.shoff_at, l.word, &shoff) || !b.U(l.shentsize_at, 2, &shentsize) ||
      !b.U(l.shnum_at, 2, &shnum)) {
    return out;
  }
  if (shoff == 0) {  // no section table at all: nothing to look a name up in
    out.verdict = ElfVerdict::kNoSymbolTable;
    return out;
  }
  if (shentsize != l.shdr_size || !b.Fits(shoff, l.shdr_size)) return out;
  if (shnum == 0) {  // more than 0xff00 sections: the count is section 0's sh_size
    Section first;
    if (!ReadSection(b, l, shoff, 0, &first)) return out;
    shnum = first.size;
  }
  // Every section header inside the file (shnum * shdr_size cannot wrap: both are bounded).
  if (shnum > size / l.shdr_size || !b.Fits(shoff, shnum * l.shdr_size)) return out;
  bool any_table = false;
  for (uint64_t i = 0; i < shnum; ++i) {
    Section symtab;
    if (!ReadSection(b, l, shoff, i, &symtab)) return out;
    if (symtab.type != kShtSymtab && symtab.type != kShtDynsym) continue;
    any_table = true;
    Section strtab;
    if (symtab.link >= shnum || !ReadSection(b, l, shoff, symtab.link, &strtab)) return out;
    if (symtab.entsize < l.sym_size || !b.Fits(symtab.offset, symtab.size) || !b.Fits(strtab.offset, strtab.size)) {
      return out;
    }
    const uint64_t count = symtab.size / symtab.entsize;
    for (uint64_t s = 1; s < count; ++s) {  // symbol 0 is the null symbol
      const uint64_t at = symtab.offset + s * symtab.entsize;
      uint64_t name = 0, info = 0, shndx = 0;
      if (!b.U(at + l.st_name_at, 4, &name) || !b.U(at + l.st_info_at, 1, &info) ||
          !b.U(at + l.st_shndx_at, 2, &shndx)) {
        return out;
      }
      if ((info & 0xf) != kSttFunc || (info >> 4) != kStbGlobal || shndx == kShnUndef) continue;
      if (name >= strtab.size) return out;
      const char *text = reinterpret_cast<const char *>(b.At(strtab.offset + name));
      const size_t room = static_cast<size_t>(strtab.size - name);
      const void *end = std::memchr(text, '\0', room);
      if (end == nullptr) return out;  // a name without its terminator inside the table
      const std::string symbol(text, static_cast<const char *>(end) - text);
      for (const auto &n : names) {
        if (symbol == n) {
          out.verdict = ElfVerdict::kFound;
          out.found = symbol;
          out.functions.clear();
          return out;
        }
      }
      ++out.function_count;
      if (out.functions.size() < 3) out.functions.push_back(symbol);
    }
  }
  out.verdict = any_table ? ElfVerdict::kMissing : ElfVerdict::kNoSymbolTable;
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
    case ElfVerdict::kTruncated:
      return "is a cut or damaged ELF file (a header or table runs past its end)";
    case ElfVerdict::kNoSymbolTable:
      return "has no symbol table (stripped?), so the runtime cannot find " + wanted + " in it";
    case ElfVerdict::kMissing: {
      std::string listed;
      for (const auto &f : lookup.functions) listed += (listed.empty() ? "" : ", ") + f;
      const uint64_t more = lookup.function_count - lookup.functions.size();
      if (more > 0) listed += " and " + std::to_string(more) + " more";
      return "defines no global function " + wanted + " (its global functions: " +
             (listed.empty() ? std::string("none") : listed) + ")";
    }
  }
  return "?";
}

}  // namespace core
}  // namespace tf_ge_custom
