// The symbol an npubin defines for its kernel: the runtime finds the function to launch by
// exact name in the binary (aclrtBinaryGetFunction; hicann/runtime also accepts the name
// with a "_mix_aiv" / "_mix_aic" suffix), so a binary that does not define the entry the
// manifest names would first fail when a model runs. Checked wherever a kernel binary is
// verified (VerifyBinary, manifest.h): the package's sets, the per-user cache, a bundle of
// TF_GE_CUSTOM_KERNELS and a model's serialized kernels. The kernel builder checks the same
// before it writes a manifest (kernels/elf_symbols.py).
//
// The reader follows the runtime's own rule (hicann/runtime src/runtime/core/src/kernel/
// elf.cc; docs/kernel-manifest.md): a 64-bit ELF file of either byte order, its first .symtab
// that holds symbols (the runtime reads no other, and never .dynsym), and a symbol that is a
// global function, defined in the file, of default visibility. It never reads outside the
// bytes it is given (every offset, size and count is checked against what is there, in 64-bit
// arithmetic that cannot wrap), and reads that one table once however many section headers
// name it, so its time is linear in the file's size (benchmarks/bench_elf_reader.py).
#ifndef TF_GE_CUSTOM_CORE_ELF_SYMBOLS_H_
#define TF_GE_CUSTOM_CORE_ELF_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tf_ge_custom {
namespace core {

// What FindFunction saw.
enum class ElfVerdict {
  kFound,          // a defined global function of one of the names
  kNotElf,         // no ELF magic, or an ELF class / byte order that does not exist
  kNot64Bit,       // a 32-bit ELF file, which the runtime does not load
  kTruncated,      // a header, section table, symbol table or name runs past the end, or
                   // the symbol table's records are not 24 bytes
  kNoSymbolTable,  // no .symtab with symbols (a stripped binary, or a library with .dynsym only)
  kMissing,        // symbol tables, but none defines a global function of the names
};

struct ElfLookup {
  ElfVerdict verdict = ElfVerdict::kNotElf;
  std::string found;  // kFound: the name that matched
  // kMissing: up to three defined global functions there are, for the message
  std::vector<std::string> functions;
  uint64_t function_count = 0;  // kMissing: how many defined global functions there are
  // kMissing: "NAME is WHY" for the first symbol of a wanted name the runtime would not launch
  // ("... is hidden (STV_HIDDEN), not of default visibility"); empty when there is none
  std::string refused;
};

// What the runtime launches, for messages: "a global, defined, default-visibility function in
// the first .symtab of a 64-bit ELF file".
extern const char kElfAccepted[];

// Looks in the first .symtab with symbols for a defined (section index not SHN_UNDEF) symbol of type STT_FUNC,
// binding STB_GLOBAL and visibility STV_DEFAULT named exactly one of names.
ElfLookup FindFunction(const uint8_t *data, size_t size, const std::vector<std::string> &names);

// The names the runtime finds the entry of a kernel under: the entry itself, then entry +
// "_mix_aiv" (vector-core kernels) or entry + "_mix_aic" (AI-core and mixed ones).
std::vector<std::string> EntrySymbolNames(const std::string &entry, bool vector_core);

// One phrase for a lookup that did not find the entry ("has no symbol table (stripped?)", ...).
std::string DescribeMiss(const ElfLookup &lookup, const std::vector<std::string> &names);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_ELF_SYMBOLS_H_
