// tf_ge_custom_elf_driver: the GE core's ELF reader (elf_symbols.h) on each file it is given,
// as JSON, so that tests/ge/test_elf_readers_agree.py holds it and the builder's reader
// (kernels/elf_symbols.py) to one verdict, file by file. Built by the tests only.
//
//   tf_ge_custom_elf_driver --names NAME[,NAME...] FILE...
// One line per file: {"path", "verdict", "found", "functions", "function_count", "refused",
// "said"} ("said": DescribeMiss's phrase, empty when found).
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/elf_symbols.h"

using namespace tf_ge_custom::core;
using Json = nlohmann::json;

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
  if (argc < 4 || std::string(argv[1]) != "--names") {
    std::cerr << "usage: " << argv[0] << " --names NAME[,NAME...] FILE...\n";
    return 2;
  }
  std::vector<std::string> names;
  std::stringstream list(argv[2]);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  for (int i = 3; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << "cannot read " << argv[i] << "\n";
      return 2;
    }
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const ElfLookup lookup = FindFunction(data.data(), data.size(), names);
    const bool found = lookup.verdict == ElfVerdict::kFound;
    // Only kMissing's lists mean anything (elf_symbols.h): the others' are not compared.
    const bool missing = lookup.verdict == ElfVerdict::kMissing;
    Json out = {{"path", argv[i]},
                {"verdict", VerdictName(lookup.verdict)},
                {"found", lookup.found},
                {"functions", missing ? lookup.functions : std::vector<std::string>()},
                {"function_count", missing ? lookup.function_count : 0},
                {"refused", missing ? lookup.refused : std::string()},
                {"said", found ? std::string() : DescribeMiss(lookup, names)}};
    std::cout << out.dump(-1, ' ', true, Json::error_handler_t::replace) << "\n";
  }
  return 0;
}
