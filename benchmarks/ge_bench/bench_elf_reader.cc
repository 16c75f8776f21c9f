// The GE core's ELF reader (core/elf_symbols.h) timed on the files it is given: nanoseconds
// per FindFunction over the whole file, for a name the file does not define (so every symbol
// is read). benchmarks/bench_elf_reader.py crafts the files (many section headers naming one
// symbol table) and runs this; it prints one JSON line per file, then "bench: ok".
//
//   tf_ge_custom_bench_elf_reader [--rounds N] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tf_ge_custom_core/elf_symbols.h"

using tf_ge_custom::core::ElfLookup;
using tf_ge_custom::core::ElfVerdict;
using tf_ge_custom::core::FindFunction;

namespace {

const char *VerdictName(ElfVerdict v) {
  switch (v) {
    case ElfVerdict::kFound: return "found";
    case ElfVerdict::kNotElf: return "not_elf";
    case ElfVerdict::kNot64Bit: return "not_64_bit";
    case ElfVerdict::kTruncated: return "truncated";
    case ElfVerdict::kNoSymbolTable: return "no_symbol_table";
    case ElfVerdict::kMissing: return "missing";
  }
  return "?";
}

}  // namespace

int main(int argc, char **argv) {
  int rounds = 5;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--rounds N] FILE...\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> names = {"tf_ge_custom_not_defined_here"};
  for (const auto &path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "bench: cannot read %s\n", path.c_str());
      return 1;
    }
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<double> ns;
    ElfLookup lookup;
    for (int r = 0; r < rounds; ++r) {
      const auto start = std::chrono::steady_clock::now();
      lookup = FindFunction(data.data(), data.size(), names);
      const auto stop = std::chrono::steady_clock::now();
      ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
    }
    std::sort(ns.begin(), ns.end());
    std::printf("{\"file\": \"%s\", \"bytes\": %zu, \"verdict\": \"%s\", \"function_count\": %llu, "
                "\"ns_median\": %.0f, \"ns_min\": %.0f}\n",
                path.c_str(), data.size(), VerdictName(lookup.verdict),
                static_cast<unsigned long long>(lookup.function_count), ns[ns.size() / 2], ns[0]);
  }
  std::printf("bench: ok\n");
  return 0;
}
