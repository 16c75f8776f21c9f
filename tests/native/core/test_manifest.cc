// The GE library's manifest reader: the fields it takes, the checks its safety rests on, and
// the shared fixtures (tests/fixtures/manifests/) that the Python validator is held to too.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/sha256.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;
using test_support::ManifestJson;
using test_support::Replace;

namespace {
const std::string kSoc = "Ascend910B1";

std::string Valid() { return ManifestJson(kSoc, {KernelSpec()}); }

Code CodeOf(const std::string &text, const ManifestCheck &check = ManifestCheck()) {
  return ParseManifest(text, check).status().code();
}

// Each edit of the valid manifest must give code; reports the edit that did not.
void ExpectEach(const std::vector<std::pair<std::string, std::string>> &edits, Code code) {
  for (const auto &e : edits) {
    const Code got = CodeOf(Replace(Valid(), e.first, e.second));
    if (got != code) CHECK_EQ(e.second + " -> " + CodeName(got), e.second + " -> " + CodeName(code));
  }
}
}  // namespace

TEST(Manifest, ReadsAValidA2Manifest) {
  KernelSpec f32, f16;
  f16.dtype = "float16";
  f16.has_ffts = false;
  auto r = ParseManifest(ManifestJson(kSoc, {f32, f16}), ManifestCheck());
  REQUIRE_OK(r);
  const KernelManifest &m = r.value();
  CHECK_EQ(m.soc, kSoc);
  REQUIRE_EQ(m.kernels.size(), size_t{2});
  const KernelEntry *e = m.Find("AddCustom", "flat", "float32");
  REQUIRE_TRUE(e != nullptr);
  CHECK_EQ(e->variant, std::string("flat"));
  CHECK_EQ(e->entry, std::string("tf_ge_custom_add_custom_flat_float32"));
  CHECK_EQ(m.Find("AddCustom", "flat", "float16")->entry, std::string("tf_ge_custom_add_custom_flat_float16"));
  CHECK_EQ(e->binary, std::string("add_custom_flat_float32.npubin"));
  const auto bin = test_support::FakeBinary(kSoc, "float32");
  CHECK_EQ(e->binary_size, static_cast<int64_t>(bin.size()));
  CHECK_EQ(e->sha256, Sha256Hex(bin.data(), bin.size()));
  CHECK_TRUE(e->magic == BinaryMagic::kElfVectorCore);
  CHECK_EQ(e->block, (std::vector<int64_t>{4096}));
  CHECK_EQ(e->max_programs, int64_t{40});
  CHECK_EQ(e->max_grid, int64_t{65535});
  CHECK_EQ(e->max_elements_per_launch, int64_t{1} << 30);
  CHECK_EQ(e->args.size, int64_t{64});
  CHECK_TRUE(e->args.has_ffts);
  REQUIRE_EQ(e->args.slots.size(), size_t{10});
  CHECK_TRUE(e->args.slots[3].role == SlotRole::kInput);
  CHECK_EQ(e->args.slots[4].index, int64_t{1});
  CHECK_EQ(e->args.slots[6].offset, int64_t{48});
  CHECK_EQ(m.Find("AddCustom", "flat", "float16")->args.size, int64_t{56});
  CHECK_FALSE(m.Find("AddCustom", "flat", "float16")->args.has_ffts);
  CHECK_TRUE(m.Find("AddCustom", "flat", "int32") == nullptr);
  CHECK_TRUE(m.Find("AddCustom", "scalar", "float32") == nullptr);
}

TEST(Manifest, ReadsATiledVariantWithItsExtentAndStrideSlots) {
  KernelSpec k;
  k.variant = "col_128x32";
  auto r = ParseManifest(ManifestJson(kSoc, {k}), ManifestCheck());
  REQUIRE_OK(r);
  const KernelEntry *e = r.value().Find("AddCustom", "col_128x32", "float32");
  REQUIRE_TRUE(e != nullptr);
  CHECK_EQ(e->entry, std::string("tf_ge_custom_add_custom_col_128x32_float32"));
  CHECK_EQ(e->block, (std::vector<int64_t>{128, 32}));
  CHECK_EQ(e->args.size, int64_t{104});
  REQUIRE_EQ(e->args.slots.size(), size_t{20});
  // after the six pointers: extents d0..d4 at 48..64, then a's and b's outer strides
  CHECK_TRUE(e->args.slots[6].role == SlotRole::kDim);
  CHECK_EQ(e->args.slots[6].dim, int64_t{0});
  CHECK_EQ(e->args.slots[10].dim, int64_t{4});
  CHECK_EQ(e->args.slots[10].offset, int64_t{64});
  CHECK_TRUE(e->args.slots[14].role == SlotRole::kInputStride);
  CHECK_EQ(e->args.slots[14].index, int64_t{1});
  CHECK_EQ(e->args.slots[14].dim, int64_t{0});
  CHECK_EQ(e->args.slots[14].offset, int64_t{80});
  CHECK_EQ(e->args.slots[17].offset, int64_t{92});  // gridX
}

TEST(Manifest, RefusesAVariantItsOpDoesNotHaveOrAnotherBlock) {
  KernelSpec k;
  k.variant = "row_16x256";
  const std::string v = ManifestJson(kSoc, {k});
  REQUIRE_OK(ParseManifest(v, ManifestCheck()));
  CHECK_EQ(CodeOf(Replace(v, "\"variant\": \"row_16x256\"", "\"variant\": \"row_8x512\"")), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, "\"block\": [16, 256]", "\"block\": [8, 512]")), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, "\"block\": [16, 256]", "\"block\": [4096]")), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, "\"variant\": \"row_16x256\",\n", "")), Code::kBadManifest);
  // the binary is named after the variant
  CHECK_EQ(CodeOf(Replace(v, "add_custom_row_16x256_float32.npubin", "add_custom_row_128x32_float32.npubin")),
           Code::kBadManifest);
}

TEST(Manifest, EveryKernelHasItsOwnEntryNameOfTheOpTable) {
  // GE keeps one binary per kernel name in a model: the reader takes only the op table's name
  // of each (variant, dtype), written out here, and refuses a set naming two kernels alike.
  KernelSpec flat32, flat16, row32;
  flat16.dtype = "float16";
  row32.variant = "row_16x256";
  const std::string v = ManifestJson(kSoc, {flat32, flat16, row32});
  auto r = ParseManifest(v, ManifestCheck());
  REQUIRE_OK(r);
  CHECK_EQ(r.value().Find("AddCustom", "row_16x256", "float32")->entry,
           std::string("tf_ge_custom_add_custom_row_16x256_float32"));
  const std::string f32 = "\"entry\": \"tf_ge_custom_add_custom_flat_float32\"";
  const std::string f16 = "\"entry\": \"tf_ge_custom_add_custom_flat_float16\"";
  const std::string r32 = "\"entry\": \"tf_ge_custom_add_custom_row_16x256_float32\"";
  // the name the builder wrote before names were per kernel, for every dtype's flat kernel
  auto old = ParseManifest(Replace(v, f16, "\"entry\": \"add_kernel\""), ManifestCheck());
  REQUIRE_TRUE(!old.ok());
  CHECK_TRUE(old.status().code() == Code::kBadManifest);
  CHECK_TRUE(old.status().message().find("tf_ge_custom_add_custom_flat_float16") != std::string::npos);
  // another dtype's or another variant's name, and one name for two kernels
  CHECK_EQ(CodeOf(Replace(v, f16, f32)), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, r32, f32)), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, f32, "\"entry\": \"tf_ge_custom_add_custom_flat_int32\"")), Code::kBadManifest);
}

TEST(Manifest, AcceptsAnIrOnlyManifest) {
  KernelSpec k;
  k.has_binary = false;
  auto r = ParseManifest(ManifestJson(kSoc, {k}), ManifestCheck());
  REQUIRE_OK(r);
  CHECK_FALSE(r.value().kernels[0].has_binary);
}

TEST(Manifest, TheLoadMagicFollowsMixMode) {
  // kernel_contract.py: "aiv" -> vector-core ELF, "aic" and "mix" -> AI-core ELF.
  auto mix = ParseManifest(Replace(Valid(), "\"mix_mode\": \"aiv\"", "\"mix_mode\": \"mix\""), ManifestCheck());
  REQUIRE_OK(mix);
  CHECK_TRUE(mix.value().kernels[0].magic == BinaryMagic::kElfAicore);
  CHECK_EQ(CodeOf(Replace(Valid(), "\"mix_mode\": \"aiv\"", "\"mix_mode\": \"simt\"")), Code::kBadManifest);
}

TEST(Manifest, RefusesKeysAndKindsTheSharedRulesDoNotAllow) {
  // kernel_contract.py's MANIFEST_FIELDS, as the Python validator reads them: a key no rule
  // lists, a wrong JSON kind, a null where none may be, and a kernel with a binary of null but
  // a size and sha256 are refused, naming the key (tests/ge/test_manifest_rules.py: every rule).
  const std::string v = Valid();
  const auto message = [](const std::string &text) { return ParseManifest(text, ManifestCheck()).status().message(); };
  CHECK_EQ(CodeOf(Replace(v, "\"soc\": ", "\"note\": [1, 2], \"soc\": ")), Code::kBadManifest);
  CHECK_TRUE(message(Replace(v, "\"soc\": ", "\"note\": [1, 2], \"soc\": ")).find("unknown key \"note\"") !=
             std::string::npos);
  CHECK_EQ(CodeOf(Replace(v, "\"mix_mode\": \"aiv\",", "\"mix_mode\": \"aiv\", \"x\": {},")), Code::kBadManifest);
  const std::string magic_null = Replace(v, "\"magic\": \"ELF_VECTOR_CORE\"", "\"magic\": null");
  CHECK_EQ(CodeOf(magic_null), Code::kBadManifest);
  CHECK_TRUE(message(magic_null).find("magic must be a string, found null") != std::string::npos);
  const size_t binary_at = v.find("\"binary\": \"");
  REQUIRE_TRUE(binary_at != std::string::npos);
  const size_t binary_end = v.find(",", binary_at);
  const std::string no_binary = v.substr(0, binary_at) + "\"binary\": null" + v.substr(binary_end);
  CHECK_EQ(CodeOf(no_binary), Code::kBadManifest);
  CHECK_TRUE(message(no_binary).find("binary, binary_size, sha256 must be all null") != std::string::npos);
  CHECK_EQ(CodeOf(Replace(v, "\"cann\": \"8.5.0\"", "\"cann\": null")), Code::kOk);  // nullable
  CHECK_EQ(CodeOf(Replace(v, "\"vector_core_count\": 40", "\"vector_core_count\": \"40\"")), Code::kBadManifest);
}

TEST(Manifest, RefusesAnotherFormatOrVersion) {
  const std::string v = Valid();
  CHECK_EQ(CodeOf(Replace(v, "\"version\": 2", "\"version\": 1")), Code::kBadVersion);  // before variants
  CHECK_EQ(CodeOf(Replace(v, "\"version\": 2", "\"version\": 3")), Code::kBadVersion);
  CHECK_EQ(CodeOf(Replace(v, "\"version\": 2", "\"version\": \"2\"")), Code::kBadVersion);
  CHECK_EQ(CodeOf(Replace(v, "\"version\": 2", "\"version\": true")), Code::kBadVersion);
  CHECK_EQ(CodeOf(Replace(v, "tf-ge-custom-kernel-manifest", "other-manifest")), Code::kBadVersion);
  CHECK_EQ(CodeOf(Replace(v, "\"format\": \"tf-ge-custom-kernel-manifest\",\n", "")), Code::kBadVersion);
}

TEST(Manifest, RefusesWhatIsNotAManifestObject) {
  for (const char *text : {"", "{\"format\": ", "[]", "\"manifest\"", "{} x", "{\"a\": NaN}"}) {
    CHECK_EQ(CodeOf(text), Code::kBadManifest);
  }
}

TEST(Manifest, RefusesMissingOrWronglyTypedFieldsItReads) {
  ExpectEach({
                 {"\"soc\": \"Ascend910B1\",\n", ""},                                      // missing soc
                 {"\"block\": [4096]", "\"block\": [\"4096\"]"},                           // wrong type
                 {"\"block\": [4096]", "\"block\": 4096"},                                 // not a list
                 {"\"block\": [4096]", "\"block\": [4096.5]"},                             // a float
                 {"\"block\": [4096]", "\"block\": [true]"},                               // a boolean
                 {"\"lock_num\": 0", "\"lock_num\": 99999999999999999999"},                // beyond 64 bits
                 {"\"lock_num\": 0", "\"lock_num\": 18446744073709551615"},                // unsigned 64-bit
                 {"\"workspace_size\": 0", "\"workspace_size\": -1"},
                 {"\"max_programs\": 40", "\"max_programs\": 0"},
                 {"\"kernels\": [\n", "\"kernels\": [\n 7,\n"},
                 {"\"offset\": 0, \"size\": 8}", "\"offset\": \"0\", \"size\": 8}"},
             },
             Code::kBadManifest);
  const std::string size = std::to_string(test_support::FakeBinary(kSoc, "float32").size());
  ExpectEach({{"\"binary_size\": " + size, "\"binary_size\": null"}, {"\"binary_size\": " + size, "\"binary_size\": -1"}},
             Code::kBadManifest);
}

TEST(Manifest, RefusesLimitsTheLaunchPlanCannotHonour) {
  ExpectEach({
                 {"\"max_grid\": 65535", "\"max_grid\": 65536"},                              // kernel_contract MAX_GRID
                 {"\"max_elements_per_launch\": 1073741824", "\"max_elements_per_launch\": 2048"},  // < block
                 {"\"max_programs\": 40", "\"max_programs\": 262144"},  // a 32-bit index would wrap
             },
             Code::kBadManifest);
  // A 64-bit element count lifts the 32-bit index limit.
  std::string wide = Replace(Valid(), "\"max_programs\": 40", "\"max_programs\": 262144");
  wide = Replace(wide, "\"offset\": 60, \"size\": 4}", "\"offset\": 64, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 56, \"size\": 4}", "\"offset\": 60, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 52, \"size\": 4}", "\"offset\": 56, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 48, \"size\": 4", "\"offset\": 48, \"size\": 8");
  wide = Replace(wide, "\"size\": 64,", "\"size\": 72,");
  CHECK_TRUE(ParseManifest(wide, ManifestCheck()).ok());
}

TEST(Manifest, RefusesTiledLayoutsWithoutEveryExtentAndStrideOnce) {
  KernelSpec k;
  k.variant = "outer_1x4096";
  const std::string v = ManifestJson(kSoc, {k});
  REQUIRE_OK(ParseManifest(v, ManifestCheck()));
  for (const auto &edit : std::vector<std::pair<std::string, std::string>>{
           {"\"role\": \"dim\", \"dim\": 4", "\"role\": \"dim\", \"dim\": 3"},  // cols missing, rows twice
           {"\"index\": 1, \"dim\": 2", "\"index\": 0, \"dim\": 2"},  // b's stride 2 missing
           {"\"index\": 1, \"dim\": 2", "\"index\": 1, \"dim\": 5"},  // beyond the frame
           {"\"role\": \"dim\", \"dim\": 0, ", "\"role\": \"dim\", "},   // an extent of no dimension
           {"\"name\": \"d0\", \"role\": \"dim\", \"dim\": 0", "\"name\": \"d0\", \"role\": \"num_elements\""},
       }) {
    const Code got = CodeOf(Replace(v, edit.first, edit.second));
    if (got != Code::kBadManifest) CHECK_EQ(edit.second + " -> " + CodeName(got), std::string("kBadManifest"));
  }
}

TEST(Manifest, RefusesLayoutsPackHostArgsCannotFill) {
  ExpectEach({
                 {"\"role\": \"grid_z\"", "\"role\": \"grid_w\""},  // unknown role
                 {"\"role\": \"grid_z\"", "\"role\": \"grid_y\""},  // grid_z missing, grid_y twice
                 {"\"name\": \"b_ptr\", \"role\": \"input\", \"index\": 1",
                  "\"name\": \"b_ptr\", \"role\": \"input\", \"index\": 0"},              // input 1 missing
                 {"\"role\": \"num_elements\", ", "\"role\": \"dim\", \"dim\": 0, "},      // no count; a
                                                                                          // dim flat has not
                 {"\"index\": 1, \"offset\": 32", "\"index\": 2, \"offset\": 32"},          // no input 2
                 {"\"role\": \"output\", \"index\": 0, ", "\"role\": \"output\", "},      // output without index
                 {"\"offset\": 40, \"size\": 8", "\"offset\": 40, \"size\": 4"},           // pointer of 4 bytes
                 {"\"offset\": 48, \"size\": 4", "\"offset\": 48, \"size\": 2"},           // 2-byte count
                 {"\"offset\": 60, \"size\": 4", "\"offset\": 64, \"size\": 4"},           // past the struct
                 {"\"offset\": 60, \"size\": 4", "\"offset\": 9223372036854775804, \"size\": 4"},
                 {"\"offset\": 0, \"size\": 8}", "\"offset\": -8, \"size\": 8}"},
                 {"\"size\": 64,", "\"size\": 1048576,"},                                  // beyond PackHostArgs
             },
             Code::kBadManifest);
}

TEST(Manifest, RefusesKernelsOfAnotherOpDefinitionOrFolder) {
  const std::string v = Valid();
  CHECK_EQ(CodeOf(Replace(v, "\"op\": \"AddCustom\"", "\"op\": \"MulCustom\"")), Code::kBadManifest);
  CHECK_EQ(CodeOf(Replace(v, "\"dtype\": \"float32\"", "\"dtype\": \"float64\"")), Code::kBadManifest);
  // The binary's name becomes a path: nothing but the op definition's name is read.
  CHECK_EQ(CodeOf(Replace(v, "\"binary\": \"add_custom_flat_float32.npubin\"", "\"binary\": \"../../x.npubin\"")),
           Code::kBadManifest);
  ManifestCheck folder;
  folder.expected_soc = "Ascend910_9392";
  CHECK_EQ(CodeOf(v, folder), Code::kBadManifest);
  folder.expected_soc = kSoc;
  CHECK_TRUE(ParseManifest(v, folder).ok());
}

TEST(Manifest, ChecksumRefusalsWhenAskedToCheckFiles) {
  test_support::TempDir dir;
  KernelSpec k;
  test_support::WriteOppKernels(dir, kSoc, {k});
  const std::string path = dir.path() + "/kernels/" + kSoc + "/manifest.json";
  CHECK_TRUE(LoadManifest(path, true).ok());
  auto bin = test_support::FakeBinary(kSoc, "float32");
  bin[10] ^= 1;  // same size, other bytes
  dir.Write("kernels/" + kSoc + "/add_custom_flat_float32.npubin", bin);
  CHECK_EQ(LoadManifest(path, true).status().code(), Code::kChecksum);
  CHECK_TRUE(LoadManifest(path, false).ok());  // files are looked at only on request
  bin.push_back(0);
  dir.Write("kernels/" + kSoc + "/add_custom_flat_float32.npubin", bin);
  CHECK_EQ(LoadManifest(path, true).status().code(), Code::kChecksum);
  std::remove((dir.path() + "/kernels/" + kSoc + "/add_custom_flat_float32.npubin").c_str());
  CHECK_EQ(LoadManifest(path, true).status().code(), Code::kChecksum);
  CHECK_EQ(LoadManifest(dir.path() + "/nothing.json", false).status().code(), Code::kIo);
}

TEST(Manifest, FixtureLayoutKeepsBinariesInAFolderNamedAfterTheFile) {
  // tests/fixtures/manifests/<name>.json with binaries in <name>/ (no SoC folder check).
  const ManifestCheck fixture = CheckForPath("/f/manifests/valid_a2.json", true);
  CHECK_EQ(fixture.binary_dir, std::string("/f/manifests/valid_a2"));
  CHECK_EQ(fixture.expected_soc, std::string(""));
  const ManifestCheck opp = CheckForPath("/opp/kernels/Ascend910B1/manifest.json", true);
  CHECK_EQ(opp.binary_dir, std::string("/opp/kernels/Ascend910B1"));
  CHECK_EQ(opp.expected_soc, std::string("Ascend910B1"));
  CHECK_EQ(CheckForPath("/opp/kernels/Ascend910B1/manifest.json", false).binary_dir, std::string(""));
}

TEST(SharedFixtures, EachGetsTheVerdictRecordedForBothReaders) {
  // tests/fixtures/manifests/expected.json, written by generate.py there; the Python side is
  // tests/kernels/test_kernel_manifest.py. Kind "checksum" is kChecksum here, "version"
  // kBadVersion, "outdated" kOutdated (a set of another entry naming: absent), any other
  // kBadManifest.
  const std::string dir = TF_GE_CUSTOM_FIXTURES_DIR;
  std::ifstream in(dir + "/expected.json");
  REQUIRE_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json expected = nlohmann::json::parse(text.str(), nullptr, false);
  REQUIRE_TRUE(expected.is_object() && expected.size() >= 8);
  int valid = 0, refused = 0;
  for (const auto &item : expected.items()) {
    const nlohmann::json &want = item.value();
    auto r = LoadManifest(dir + "/" + want["path"].get<std::string>(), want["check_files"].get<bool>());
    if (want["valid"].get<bool>()) {
      ++valid;
      if (!r.ok()) CHECK_EQ(item.key() + ": " + r.status().ToString(), item.key() + ": ok");
      continue;
    }
    ++refused;
    const Code code = want["kind"] == "checksum"   ? Code::kChecksum
                      : want["kind"] == "version"  ? Code::kBadVersion
                      : want["kind"] == "outdated" ? Code::kOutdated
                                                   : Code::kBadManifest;
    if (r.status().code() != code) CHECK_EQ(item.key() + ": " + r.status().ToString(), item.key() + ": " + CodeName(code));
  }
  CHECK_TRUE(valid >= 4 && refused >= 4);
}

TEST(Manifest, TheArchitectureIsReadWhenRecordedAndCheckedWhenPresent) {
  const std::string plain = test_support::ManifestJson("Ascend910B4", {test_support::KernelSpec()});
  auto old = ParseManifest(plain, ManifestCheck());
  REQUIRE_OK(old);
  CHECK_EQ(old.value().architecture, std::string(""));  // written before the field: exact SoC only
  auto recorded = ParseManifest(test_support::WithArchitecture(plain, "dav-2201"), ManifestCheck());
  REQUIRE_OK(recorded);
  CHECK_EQ(recorded.value().architecture, std::string("dav-2201"));
  for (const std::string bad : {"2201", "dav-", "DAV-2201", "dav-22/01"}) {
    auto r = ParseManifest(test_support::WithArchitecture(plain, bad), ManifestCheck());
    REQUIRE_TRUE(!r.ok());
    CHECK_TRUE(r.status().code() == Code::kBadManifest);
    CHECK_TRUE(r.status().message().find("architecture") != std::string::npos);
  }
  CHECK_EQ(NormalizeArchitecture("2201"), std::string("dav-2201"));     // GE's NpuArch
  CHECK_EQ(NormalizeArchitecture("dav-2201"), std::string("dav-2201"));  // already spelled so
  CHECK_EQ(NormalizeArchitecture(""), std::string(""));
  CHECK_EQ(NormalizeArchitecture("22 01"), std::string(""));
}

TEST(Manifest, APlatformCountIsPlainDecimalDigitsOrNotSaid) {
  CHECK_EQ(ParseCount("40"), int64_t{40});
  CHECK_EQ(ParseCount("1"), int64_t{1});
  for (const std::string bad : {"", "0", "-4", "+4", " 40", "40 ", "4x", "2147483648", "99999999999"}) {
    CHECK_EQ(bad + ": " + std::to_string(ParseCount(bad)), bad + ": 0");
  }
}
