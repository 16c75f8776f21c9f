// The npubin's own symbol (elf_symbols.h), by the runtime's rule: real ELF objects made by
// this machine's C compiler and strip (the right name, a wrong one, a local, undefined or hidden
// one, stripped, a shared object whose only table is .dynsym: refused), not ELF, cut short;
// hand-written objects of the other byte order, 32-bit ones (refused), crafted entries the
// runtime would not launch (an undefined FUNC, hidden, protected, .dynsym only; the miss says
// why), many headers naming one table, and only the first table with symbols read, as the
// runtime reads it (test_support's ElfObject); every byte of a real object flipped and every
// cut, never read out of bounds (also under ASan + UBSan); and the reader where the library
// verifies a binary: a kernel set whose npubin does not define its entry is refused by name.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/elf_symbols.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/manifest.h"

using namespace tf_ge_custom::core;
using test_support::TempDir;

namespace {

const std::string kEntry = "tf_ge_custom_add_custom_flat_float32";

std::vector<uint8_t> ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `cc -x c` of source into dir/name (flags: "-c" for an object, "-shared -fPIC" for a library);
// empty when the compiler fails (the case then fails on its own checks).
std::vector<uint8_t> Compile(const TempDir &dir, const std::string &name, const std::string &source,
                             const std::string &flags = "-c") {
  dir.Write(name + ".c", source);
  const std::string out = dir.path() + "/" + name;
  const std::string cmd = std::string("'") + TF_GE_CUSTOM_TEST_CC + "' -x c " + flags + " -O1 -o '" + out + "' '" +
                          dir.path() + "/" + name + ".c' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "compiling %s failed: %s\n", name.c_str(), cmd.c_str());
    return {};
  }
  return ReadAll(out);
}

std::vector<uint8_t> Strip(const TempDir &dir, const std::string &name) {
  const std::string path = dir.path() + "/" + name;
  const std::string cmd = std::string("'") + TF_GE_CUSTOM_TEST_STRIP + "' --strip-all '" + path + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) return {};
  return ReadAll(path);
}

ElfLookup Find(const std::vector<uint8_t> &bytes, const std::string &entry = kEntry) {
  return FindFunction(bytes.data(), bytes.size(), EntrySymbolNames(entry, true));
}

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

std::string V(const ElfLookup &l) { return VerdictName(l.verdict); }

}  // namespace

TEST(ElfSymbols, ACompiledFunctionOfTheEntryNameIsFound) {
  TempDir dir;
  const auto object = Compile(dir, "right.o", "int " + kEntry + "(int x) { return x + 1; }\n");
  REQUIRE_TRUE(!object.empty());
  const ElfLookup l = Find(object);
  CHECK_EQ(V(l), std::string("found"));
  CHECK_EQ(l.found, kEntry);
}

TEST(ElfSymbols, TheMixAivSuffixIsTheRuntimesOtherNameOfTheEntry) {
  TempDir dir;
  const auto object = Compile(dir, "mix.o", "int " + kEntry + "_mix_aiv(int x) { return x; }\n");
  CHECK_EQ(Find(object).found, kEntry + "_mix_aiv");
  // A cube (aic) kernel is found under _mix_aic, not _mix_aiv.
  const std::vector<std::string> cube = EntrySymbolNames(kEntry, false);
  CHECK_EQ(cube[1], kEntry + "_mix_aic");
  CHECK_EQ(V(FindFunction(object.data(), object.size(), cube)), std::string("missing"));
}

TEST(ElfSymbols, AnotherNameIsMissingAndTheMessageNamesWhatIsThere) {
  TempDir dir;
  // The old shared name, a longer name with the entry as its prefix, a local function of the
  // entry's name, a global variable of it, and a call of an undefined function of it.
  const auto object = Compile(dir, "wrong.o",
                              "int add_kernel(int x) { return x; }\n"
                              "int " + kEntry + "_v2(int x) { return x; }\n");
  const ElfLookup l = Find(object);
  CHECK_EQ(V(l), std::string("missing"));
  CHECK_EQ(l.function_count, uint64_t{2});
  const std::string said = DescribeMiss(l, EntrySymbolNames(kEntry, true));
  CHECK_TRUE(said.find("defines no global function " + kEntry + " or " + kEntry + "_mix_aiv") != std::string::npos);
  CHECK_TRUE(said.find("add_kernel") != std::string::npos);
  // Each says why the symbol of the entry's name was passed over, and what is accepted.
  const auto local = Compile(dir, "local.o",
                             "static int " + kEntry + "(int x) { return x * 3; }\n"
                             "int (*keep)(int) = " + kEntry + ";\n");
  CHECK_EQ(V(Find(local)), std::string("missing"));
  CHECK_EQ(Find(local).refused, kEntry + " is local (STB_LOCAL), not global");
  const auto variable = Compile(dir, "variable.o", "int " + kEntry + " = 5;\n");
  CHECK_EQ(V(Find(variable)), std::string("missing"));
  CHECK_EQ(Find(variable).refused, kEntry + " is not a function (symbol type 1, not STT_FUNC)");
  const auto undefined = Compile(dir, "undefined.o",
                                 "int " + kEntry + "(int);\nint caller(int x) { return " + kEntry + "(x); }\n");
  CHECK_EQ(V(Find(undefined)), std::string("missing"));
  CHECK_EQ(Find(undefined).refused, kEntry + " is undefined here (a reference: section SHN_UNDEF)");
  const std::string why = DescribeMiss(Find(undefined), EntrySymbolNames(kEntry, true));
  CHECK_TRUE(why.find("; " + kEntry + " is undefined here") != std::string::npos);
  CHECK_TRUE(why.find("the runtime launches only a global, defined, default-visibility function in the "
                      "first .symtab of a 64-bit ELF file") != std::string::npos);
  CHECK_TRUE(l.refused.empty());  // no symbol of the entry's name: no reason
}

TEST(ElfSymbols, AStrippedObjectHasNoSymbolTableAndAStrippedLibrarysDynamicOneIsNotRead) {
  TempDir dir;
  REQUIRE_TRUE(!Compile(dir, "stripped.o", "int " + kEntry + "(int x) { return x; }\n").empty());
  const auto stripped = Strip(dir, "stripped.o");
  REQUIRE_TRUE(!stripped.empty());
  const ElfLookup l = Find(stripped);
  CHECK_EQ(V(l), std::string("no_symbol_table"));
  CHECK_TRUE(DescribeMiss(l, {kEntry}).find("stripped") != std::string::npos);
  REQUIRE_TRUE(!Compile(dir, "lib.so", "int " + kEntry + "(int x) { return x; }\n", "-shared -fPIC").empty());
  CHECK_EQ(Find(ReadAll(dir.path() + "/lib.so")).found, kEntry);  // its .symtab
  const auto library = Strip(dir, "lib.so");
  REQUIRE_TRUE(!library.empty());
  // .dynsym, which strip keeps, is not where the runtime looks.
  const ElfLookup dyn = Find(library);
  CHECK_EQ(V(dyn), std::string("no_symbol_table"));
  CHECK_TRUE(DescribeMiss(dyn, {kEntry}).find("it ignores .dynsym") != std::string::npos);
}

TEST(ElfSymbols, AHiddenFunctionIsRefusedAsTheRuntimeRefusesIt) {
  TempDir dir;
  const auto object = Compile(dir, "hidden.o",
                              "__attribute__((visibility(\"hidden\"))) int " + kEntry +
                                  "(int x) { return x; }\nint other(int x) { return x; }\n");
  REQUIRE_TRUE(!object.empty());
  const ElfLookup l = Find(object);
  CHECK_EQ(V(l), std::string("missing"));
  REQUIRE_TRUE(l.functions.size() == 1);
  CHECK_EQ(l.functions[0], std::string("other"));
  CHECK_EQ(l.refused, kEntry + " is hidden (STV_HIDDEN), not of default visibility");
}

TEST(ElfSymbols, CraftedEntriesTheRuntimeWouldNotLaunchAreRefused) {
  CHECK_EQ(Find(test_support::ElfObject({{kEntry}}, "code")).found, kEntry);
  test_support::ElfSymbolSpec undefined{kEntry, 1, false, 2, 0};  // SHN_UNDEF, yet typed FUNC
  test_support::ElfSymbolSpec hidden{kEntry, 1, true, 2, 2}, protected_{kEntry, 1, true, 2, 3};
  const std::vector<std::string> why = {"undefined here (a reference: section SHN_UNDEF)",
                                        "hidden (STV_HIDDEN), not of default visibility",
                                        "protected (STV_PROTECTED), not of default visibility"};
  size_t i = 0;
  for (const auto &spec : {undefined, hidden, protected_}) {
    const ElfLookup l = Find(test_support::ElfObject({spec, {"other"}}, "code"));
    CHECK_EQ(V(l) + " " + std::to_string(l.function_count), std::string("missing 1"));
    CHECK_EQ(l.refused, kEntry + " is " + why[i++]);
  }
  const auto dynsym_only = test_support::ElfObject({{kEntry}}, "code", false, false, 11);
  CHECK_EQ(V(Find(dynsym_only)), std::string("no_symbol_table"));
}

TEST(ElfSymbols, ManyHeadersNamingOneSymbolTableReadItOnce) {
  // The crafted object of benchmarks/bench_elf_reader.py, small: the verdicts (its time is the
  // benchmark's, not a timed test).
  std::vector<test_support::ElfSymbolSpec> specs;
  for (int i = 0; i < 50; ++i) specs.push_back({"f" + std::to_string(i)});
  const auto object = test_support::ElfObject(specs, "code", false, false, 2, 200);
  const ElfLookup l = Find(object);
  CHECK_EQ(V(l), std::string("missing"));
  CHECK_EQ(l.function_count, uint64_t{50});  // not 50 * 200
  CHECK_EQ(FindFunction(object.data(), object.size(), {"f49"}).found, std::string("f49"));
}

namespace {

// A little-endian 64-bit field of the hand-written object.
uint64_t Field(const std::vector<uint8_t> &o, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | o[at + i];
  return v;
}
void SetField(std::vector<uint8_t> *o, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*o)[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
size_t SectionField(const std::vector<uint8_t> &o, size_t index, size_t at) {
  return static_cast<size_t>(Field(o, 40)) + index * 64 + at;
}

}  // namespace

TEST(ElfSymbols, OnlyTheFirstSymbolTableWithSymbolsIsReadAsTheRuntimeReadsIt) {
  // hicann/runtime's elf.cc stops after the first SHT_SYMTAB it reads, passing over one of size
  // 0 or sh_entsize 0 before it; it reads 24-byte records whatever sh_entsize says. Section 2
  // is .symtab, section 5 a second header of it.
  auto object = test_support::ElfObject({{"f0"}, {"f1"}}, "code", false, false, 2, 2);
  const size_t size_at = SectionField(object, 2, 32), entsize_at = SectionField(object, 2, 56);
  REQUIRE_TRUE(Field(object, size_at) == 3 * 24);  // the null symbol, f0, f1
  CHECK_EQ(FindFunction(object.data(), object.size(), {"f1"}).found, std::string("f1"));
  // The first table cut to the null symbol and f0: f1 is in the second table only.
  SetField(&object, size_at, 2 * 24);
  const ElfLookup cut = FindFunction(object.data(), object.size(), {"f1"});
  CHECK_EQ(V(cut) + " " + std::to_string(cut.function_count), std::string("missing 1"));
  // A first table of size 0, or of sh_entsize 0, is passed over: the second is read.
  SetField(&object, size_at, 0);
  CHECK_EQ(FindFunction(object.data(), object.size(), {"f1"}).found, std::string("f1"));
  SetField(&object, size_at, 3 * 24);
  SetField(&object, entsize_at, 0);
  CHECK_EQ(FindFunction(object.data(), object.size(), {"f1"}).found, std::string("f1"));
  // Records of another size than 24 bytes: the runtime would misread them, so damage.
  for (uint64_t entsize : {uint64_t{16}, uint64_t{32}}) {
    SetField(&object, entsize_at, entsize);
    CHECK_EQ(V(FindFunction(object.data(), object.size(), {"f0"})), std::string("truncated"));
  }
}

TEST(ElfSymbols, AStringTableWithoutATerminatorAtItsEnd) {
  // The names' terminators are checked against one scan of the string table, not one per
  // symbol: a name in an unterminated tail is damage, one before it is read.
  auto object = test_support::ElfObject({{"f0"}, {"f1"}}, "code");
  const uint64_t strtab_at = Field(object, SectionField(object, 3, 24));
  const uint64_t strtab_size = Field(object, SectionField(object, 3, 32));
  REQUIRE_TRUE(object[strtab_at + strtab_size - 1] == 0);
  object[strtab_at + strtab_size - 1] = 'x';
  CHECK_EQ(FindFunction(object.data(), object.size(), {"f0"}).found, std::string("f0"));
  CHECK_EQ(V(Find(object)), std::string("truncated"));
}

TEST(ElfSymbols, NotElfAndEveryCutOfARealObjectAreRefusedWithoutReadingPastTheEnd) {
  const std::string text = "fake npubin, not an ELF file";
  CHECK_EQ(V(Find(std::vector<uint8_t>(text.begin(), text.end()))), std::string("not_elf"));
  CHECK_EQ(V(Find({})), std::string("not_elf"));
  std::vector<uint8_t> bad_class = {0x7f, 'E', 'L', 'F', 3, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_EQ(V(Find(bad_class)), std::string("not_elf"));
  TempDir dir;
  const auto object = Compile(dir, "cut.o", "int " + kEntry + "(int x) { return x; }\n");
  REQUIRE_TRUE(object.size() > 64);
  size_t found = 0, refused = 0;
  for (size_t n = 0; n < object.size(); ++n) {
    // Each cut is its own allocation, so ASan sees any read past its end.
    std::vector<uint8_t> cut(object.begin(), object.begin() + static_cast<long>(n));
    const ElfLookup l = Find(cut);
    if (l.verdict == ElfVerdict::kFound) ++found; else ++refused;
    if (n >= 16 && l.verdict == ElfVerdict::kNotElf) CHECK_EQ(V(l), std::string("an ELF verdict"));
  }
  // The section table is at the end of a GCC object: every cut loses it.
  CHECK_EQ(found, size_t{0});
  CHECK_EQ(refused, object.size());
  std::vector<uint8_t> half(object.begin(), object.begin() + static_cast<long>(object.size() / 2));
  CHECK_EQ(V(Find(half)), std::string("truncated"));
}

TEST(ElfSymbols, EveryByteOfARealObjectFlippedIsReadSafely) {
  TempDir dir;
  const auto object = Compile(dir, "flip.o", "int " + kEntry + "(int x) { return x; }\n");
  REQUIRE_TRUE(!object.empty());
  size_t still_found = 0;
  for (size_t i = 0; i < object.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> flipped = object;
      flipped[i] ^= mask;
      if (Find(flipped).verdict == ElfVerdict::kFound) ++still_found;
    }
  }
  // Most bytes (code, padding, other symbols) do not touch the entry's record.
  CHECK_TRUE(still_found > 0);
}

TEST(ElfSymbols, HandWrittenObjectsOfBothByteOrdersAnd32BitOnesRefused) {
  for (bool elf32 : {false, true}) {
    for (bool big : {false, true}) {
      const std::string what = std::string(elf32 ? "ELF32" : "ELF64") + (big ? " big-endian" : " little-endian");
      const auto good = test_support::ElfObject({{"helper", 0}, {kEntry}}, "code", elf32, big);
      if (elf32) {  // the runtime loads 64-bit ELF files only
        const ElfLookup l = Find(good);
        CHECK_EQ(what + ": " + V(l), what + ": not_64_bit");
        CHECK_TRUE(DescribeMiss(l, {kEntry}).find("32-bit") != std::string::npos);
        continue;
      }
      CHECK_EQ(what + ": " + Find(good).found, what + ": " + kEntry);
      const auto weak = test_support::ElfObject({{kEntry, 2}}, "code", elf32, big);  // STB_WEAK
      CHECK_EQ(what + ": " + V(Find(weak)), what + ": missing");
      const auto object = test_support::ElfObject({{kEntry, 1, true, 1}}, "data", elf32, big);  // STT_OBJECT
      CHECK_EQ(what + ": " + V(Find(object)), what + ": missing");
    }
  }
  // The package's fake npubins are such objects, each defining its own entry.
  CHECK_EQ(Find(test_support::FakeBinary("Ascend910B1", "float32")).found, kEntry);
  CHECK_EQ(V(Find(test_support::FakeBinary("Ascend910B1", "float16"))), std::string("missing"));
}

TEST(ElfSymbols, ASetWhoseNpubinLacksItsEntryIsRefusedByNameWhereTheLibraryReadsIt) {
  TempDir root;
  test_support::KernelSpec k;
  k.binary = test_support::ElfObject({{"add_kernel"}}, "the old shared name");
  test_support::WriteOppKernels(root, "Ascend910B1", {k});
  auto registry = KernelRegistry::FromOppRoot(root.path());
  auto found = registry->Find("Ascend910B1", "AddCustom", "flat", "float32");
  REQUIRE_TRUE(!found.ok());
  CHECK_EQ(found.status().code(), Code::kNoEntrySymbol);
  const std::string &said = found.status().message();
  CHECK_TRUE(said.find("add_custom_flat_float32.npubin") != std::string::npos);
  CHECK_TRUE(said.find("defines no global function " + kEntry) != std::string::npos);
  CHECK_TRUE(said.find("add_kernel") != std::string::npos);
  // Damage, not absence: Compile does not compile over it.
  CHECK_FALSE(IsAbsent(found.status().code()));
  // The shared reader refuses it the same way (LoadManifest with its binaries).
  auto loaded = LoadManifest(root.path() + "/kernels/Ascend910B1/manifest.json", true);
  CHECK_EQ(loaded.status().code(), Code::kNoEntrySymbol);
}

TEST(ElfSymbols, AnEntryNameLongerThan49CharactersIsRefused) {
  // The op table's names are at most 45 characters; a manifest naming a longer entry is not
  // one this library launches (triton-ascend cuts names to 49 characters).
  CHECK_EQ(kMaxEntryName, int64_t{49});
  const std::string manifest = test_support::ManifestJson("Ascend910B1", {test_support::KernelSpec()});
  const std::string longer = test_support::Replace(manifest, "\"entry\": \"" + kEntry + "\"",
                                                   "\"entry\": \"" + kEntry + "_and_then_some_more\"");
  auto parsed = ParseManifest(longer, ManifestCheck());
  REQUIRE_TRUE(!parsed.ok());
  CHECK_EQ(parsed.status().code(), Code::kBadManifest);
  CHECK_TRUE(parsed.status().message().find("55 characters, more than the 49") != std::string::npos);
}
