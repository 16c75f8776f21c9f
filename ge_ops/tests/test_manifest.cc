// The manifest reader: what it accepts, and the kind of every refusal docs/kernel-manifest.md names.
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

std::string KindOf(const std::string &text, const ManifestCheck &check = ManifestCheck()) {
  auto r = ParseManifest(text, check);
  return r.ok() ? std::string("valid") : r.status().kind();
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
  CHECK_EQ(m.vector_core_count, int64_t{40});
  CHECK_EQ(m.cann, std::string("8.5.0"));
  REQUIRE_EQ(m.kernels.size(), size_t{2});
  const KernelEntry *e = m.Find("AddCustom", "float32");
  REQUIRE_TRUE(e != nullptr);
  CHECK_EQ(e->binary, std::string("add_kernel_float32.npubin"));
  const auto bin = test_support::FakeBinary(kSoc, "float32");
  CHECK_EQ(e->binary_size, static_cast<int64_t>(bin.size()));
  CHECK_EQ(e->sha256, Sha256Hex(bin.data(), bin.size()));
  CHECK_TRUE(e->magic == BinaryMagic::kElfVectorCore);
  CHECK_EQ(e->args.size, int64_t{64});
  CHECK_TRUE(e->args.has_ffts);
  REQUIRE_EQ(e->args.slots.size(), size_t{10});
  CHECK_TRUE(e->args.slots[3].role == SlotRole::kInput);
  CHECK_EQ(e->args.slots[4].index, int64_t{1});
  CHECK_EQ(e->args.slots[6].offset, int64_t{48});
  CHECK_EQ(m.Find("AddCustom", "float16")->args.size, int64_t{56});
  CHECK_TRUE(m.Find("AddCustom", "int32") == nullptr);
}

TEST(Manifest, NormalizedDumpIsSortedCompactJson) {
  const std::string text =
      Replace(Valid(), "\"toolchain\": {\"triton_ascend\": \"3.2.0\", \"bishengir\": \"1.2.0\", \"cann\": \"8.5.0\"}",
              "\"toolchain\": {\"triton_ascend\": \"3.2.0\", \"bishengir\": \"1.2.0\", \"cann\": null}");
  auto r = ParseManifest(text, ManifestCheck());
  REQUIRE_OK(r);
  const std::string n = r.value().Normalized();
  CHECK_EQ(n.substr(0, 39), std::string("{\"format\":\"tf-ge-custom-kernel-manifest"));
  CHECK_TRUE(n.find("\"toolchain\":{\"bishengir\":\"1.2.0\",\"cann\":null,\"triton_ascend\":\"3.2.0\"}") !=
             std::string::npos);
  CHECK_TRUE(n.find("{\"name\":\"x_ptr\",\"role\":\"input\",\"index\"") == std::string::npos);  // sorted
  CHECK_TRUE(n.find("{\"index\":0,\"name\":\"x_ptr\",\"offset\":24,\"role\":\"input\",\"size\":8}") != std::string::npos);
  CHECK_TRUE(n.find(' ') == std::string::npos);
}

TEST(Manifest, AcceptsAnIrOnlyManifest) {
  KernelSpec k;
  k.has_binary = false;
  auto r = ParseManifest(ManifestJson(kSoc, {k}), ManifestCheck());
  REQUIRE_OK(r);
  CHECK_FALSE(r.value().kernels[0].has_binary);
}

TEST(Manifest, SyntaxRefusals) {
  CHECK_EQ(KindOf("{\"format\": "), std::string("syntax"));
  CHECK_EQ(KindOf("[]"), std::string("syntax"));
  CHECK_EQ(KindOf("\"manifest\""), std::string("syntax"));
  // NaN / Infinity are not JSON, wherever they stand (Python's json would read them)
  CHECK_EQ(KindOf(Replace(Valid(), "\"vector_core_count\": 40", "\"vector_core_count\": NaN")),
           std::string("syntax"));
  CHECK_EQ(KindOf(Replace(Valid(), "\"lock_init_val\": 0", "\"lock_init_val\": -Infinity")),
           std::string("syntax"));
}

TEST(Manifest, VersionRefusals) {
  const std::string v = Valid();
  CHECK_EQ(KindOf(Replace(v, "\"version\": 1", "\"version\": 2")), std::string("version"));
  CHECK_EQ(KindOf(Replace(v, "\"version\": 1", "\"version\": \"1\"")), std::string("version"));
  CHECK_EQ(KindOf(Replace(v, "\"version\": 1", "\"version\": true")), std::string("version"));
  CHECK_EQ(KindOf(Replace(v, "tf-ge-custom-kernel-manifest", "other-manifest")), std::string("version"));
  // The version check comes before the schema: an unknown key does not hide a wrong version.
  CHECK_EQ(KindOf(Replace(Replace(v, "\"version\": 1", "\"version\": 3"), "\"soc\"", "\"extra\": 0, \"soc\"")),
           std::string("version"));
}

TEST(Manifest, SchemaRefusals) {
  const std::string v = Valid();
  std::vector<std::pair<std::string, std::string>> edits = {
      {"\"vector_core_count\": 40,\n", ""},                                    // missing key
      {"\"format\": \"tf-ge-custom-kernel-manifest\",\n", ""},                 // missing format
      {"\"soc\": ", "\"socs\": 1, \"soc\": "},                                  // unknown top-level key
      {"\"entry\": \"add_kernel\",", "\"entry\": \"add_kernel\", \"note\": 1,"},  // unknown kernel key
      {"\"block_size\": 4096", "\"block_size\": \"4096\""},                    // wrong type
      {"\"block_size\": 4096", "\"block_size\": 4096.0"},                      // a float is not an integer
      {"\"vector_core_count\": 40", "\"vector_core_count\": 0"},               // out of range
      {"\"max_grid\": 65535", "\"max_grid\": 65536"},
      {"\"soc\": \"Ascend910B1\"", "\"soc\": \"Ascend 910B1\""},
      {"\"kernel_source_sha256\": \"aaaa", "\"kernel_source_sha256\": \"AAAA"},
      {"\"magic\": \"ELF_VECTOR_CORE\"", "\"magic\": \"ELF_AICORE\""},         // contradicts mix_mode aiv
      {"\"mix_mode\": \"aiv\"", "\"mix_mode\": \"simt\""},
      {"\"max_elements_per_launch\": 1073741824", "\"max_elements_per_launch\": 1073741825"},
      {"\"max_elements_per_launch\": 1073741824", "\"max_elements_per_launch\": 2048"},
      {"\"workspace_size\": 0", "\"workspace_size\": -1"},
      {"\"lock_num\": 0", "\"lock_num\": 99999999999999999999"},               // beyond 64 bits
      {", \"cann\": \"8.5.0\"", ""},                                           // toolchain key missing
      {"\"has_ffts\": true", "\"has_ffts\": 1"},
      {"\"offset\": 0, \"size\": 8}", "\"offset\": \"0\", \"size\": 8}"},
      {"\"soc\": \"Ascend910B1\"", "\"soc\": \"Ascend910B1\", \"soc\": \"Ascend910B1\""},  // duplicate key
      {"\"kernels\": [\n", "\"kernels\": [\n 7,\n"},
  };
  const std::string size = std::to_string(test_support::FakeBinary(kSoc, "float32").size());
  edits.push_back({"\"binary_size\": " + size, "\"binary_size\": null"});  // null size with a binary
  edits.push_back({"\"binary_size\": " + size, "\"binary_size\": -1"});
  for (const auto &e : edits) {
    const std::string kind = KindOf(Replace(v, e.first, e.second));
    if (kind != "schema") CHECK_EQ(e.second + " -> " + kind, e.second + " -> schema");
  }
  CHECK_EQ(KindOf(Replace(v, "\"kernels\": [\n {", "\"kernels\": [\n ], \"x\": [{")), std::string("schema"));
  KernelSpec a, b;
  CHECK_EQ(KindOf(ManifestJson(kSoc, {a, b})), std::string("schema"));  // duplicate (op, dtype)
  const std::string empty = ManifestJson(kSoc, {});
  CHECK_EQ(KindOf(empty), std::string("schema"));  // no kernels
}

TEST(Manifest, LayoutRefusals) {
  const std::string v = Valid();
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"\"role\": \"grid_z\"", "\"role\": \"grid_w\""},                                 // unknown role
      {"\"role\": \"grid_z\"", "\"role\": \"grid_y\""},                                 // grid_z missing
      {"\"name\": \"y_ptr\", \"role\": \"input\", \"index\": 1",
       "\"name\": \"y_ptr\", \"role\": \"input\", \"index\": 0"},                         // input 1 missing
      {"\"index\": 1, \"offset\": 32", "\"index\": 2, \"offset\": 32"},                   // index out of range
      {"\"role\": \"workspace\", ", "\"role\": \"workspace\", \"index\": 0, "},          // index on a non-tensor
      {"\"role\": \"output\", \"index\": 0, ", "\"role\": \"output\", "},                // output without index
      {"\"offset\": 40, \"size\": 8", "\"offset\": 40, \"size\": 4"},                     // pointer of 4 bytes
      {"\"offset\": 52, \"size\": 4", "\"offset\": 52, \"size\": 8"},                     // grid of 8 bytes
      {"\"offset\": 48, \"size\": 4", "\"offset\": 48, \"size\": 2"},                     // num_elements of 2
      {"\"offset\": 52, \"size\": 4", "\"offset\": 50, \"size\": 4"},                     // misaligned
      {"\"offset\": 56, \"size\": 4", "\"offset\": 52, \"size\": 4"},                     // overlap
      {"\"size\": 64,", "\"size\": 72,"},                                                 // not end rounded to 8
      {"\"has_ffts\": true", "\"has_ffts\": false"},                                      // contradicts the slots
      {"\"max_programs\": 40", "\"max_programs\": 262144"},                               // int32 index overflow
      {"\"offset\": 60, \"size\": 4", "\"offset\": 9223372036854775804, \"size\": 4"},   // no room to end
  };
  for (const auto &e : edits) {
    const std::string kind = KindOf(Replace(v, e.first, e.second));
    if (kind != "layout") CHECK_EQ(e.second + " -> " + kind, e.second + " -> layout");
  }
  // ffts anywhere but first.
  std::string moved = Replace(v, "{\"name\": \"ffts_base_address\", \"role\": \"ffts\", \"offset\": 0, \"size\": 8},\n", "");
  moved = Replace(moved, "{\"name\": \"workspace\", \"role\": \"workspace\", \"offset\": 16, \"size\": 8}",
                  "{\"name\": \"ffts_base_address\", \"role\": \"ffts\", \"offset\": 0, \"size\": 8},\n"
                  "      {\"name\": \"workspace\", \"role\": \"workspace\", \"offset\": 16, \"size\": 8}");
  CHECK_EQ(KindOf(moved), std::string("layout"));
  // A 64-bit element count lifts the int32 limit.
  std::string wide = Replace(v, "\"max_programs\": 40", "\"max_programs\": 262144");
  wide = Replace(wide, "\"offset\": 60, \"size\": 4}", "\"offset\": 64, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 56, \"size\": 4}", "\"offset\": 60, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 52, \"size\": 4}", "\"offset\": 56, \"size\": 4}");
  wide = Replace(wide, "\"offset\": 48, \"size\": 4", "\"offset\": 48, \"size\": 8");
  wide = Replace(wide, "\"size\": 64,", "\"size\": 72,");
  CHECK_EQ(KindOf(wide), std::string("valid"));
}

TEST(Manifest, MismatchRefusals) {
  const std::string v = Valid();
  CHECK_EQ(KindOf(Replace(v, "\"op\": \"AddCustom\"", "\"op\": \"MulCustom\"")), std::string("mismatch"));
  CHECK_EQ(KindOf(Replace(v, "\"dtype\": \"float32\"", "\"dtype\": \"float64\"")), std::string("mismatch"));
  CHECK_EQ(KindOf(Replace(v, "\"entry\": \"add_kernel\"", "\"entry\": \"add\"")), std::string("mismatch"));
  CHECK_EQ(KindOf(Replace(v, "\"block_size\": 4096", "\"block_size\": 1024")), std::string("mismatch"));
  CHECK_EQ(KindOf(Replace(v, "\"binary\": \"add_kernel_float32.npubin\"", "\"binary\": \"add.npubin\"")),
           std::string("mismatch"));
  ManifestCheck folder;
  folder.expected_soc = "Ascend910_9392";
  CHECK_EQ(KindOf(v, folder), std::string("mismatch"));
  folder.expected_soc = kSoc;
  CHECK_EQ(KindOf(v, folder), std::string("valid"));
}

TEST(Manifest, ChecksumRefusalsWhenAskedToCheckFiles) {
  test_support::TempDir dir;
  KernelSpec k;
  test_support::WriteOppKernels(dir, kSoc, {k});
  const std::string path = dir.path() + "/kernels/" + kSoc + "/manifest.json";
  CHECK_TRUE(LoadManifest(path, true).ok());
  auto bin = test_support::FakeBinary(kSoc, "float32");
  bin[10] ^= 1;  // same size, other bytes
  dir.Write("kernels/" + kSoc + "/add_kernel_float32.npubin", bin);
  CHECK_EQ(LoadManifest(path, true).status().kind(), std::string("checksum"));
  CHECK_TRUE(LoadManifest(path, false).ok());  // files are looked at only on request
  bin.push_back(0);
  dir.Write("kernels/" + kSoc + "/add_kernel_float32.npubin", bin);
  CHECK_EQ(LoadManifest(path, true).status().kind(), std::string("checksum"));
  std::remove((dir.path() + "/kernels/" + kSoc + "/add_kernel_float32.npubin").c_str());
  CHECK_EQ(LoadManifest(path, true).status().kind(), std::string("checksum"));
  CHECK_EQ(LoadManifest(dir.path() + "/nothing.json", false).status().kind(), std::string("io"));
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
