// The serialized format: round trip, and refusal of truncated, corrupt, oversized and
// unknown-version input without reading out of bounds (the fuzz driver goes further).
#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/sha256.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;

namespace {
std::vector<BundleSoc> Sample() {
  BundleSoc a;
  a.manifest_json = "{\"soc\":\"A\"}";
  a.binaries = {{"add_kernel_float32.npubin", {1, 2, 3}}, {"add_kernel_int32.npubin", {}}};
  BundleSoc b;
  b.manifest_json = "";
  return {a, b};
}

// Recompute the trailing checksum, so a test reaches the checks behind it.
void Reseal(std::vector<uint8_t> *bytes) {
  const auto d = Sha256Digest(bytes->data(), bytes->size() - kBundleTrailerBytes);
  std::copy(d.begin(), d.end(), bytes->end() - kBundleTrailerBytes);
}

Code CodeOf(const std::vector<uint8_t> &bytes) {
  std::vector<BundleSoc> out;
  return DecodeBundle(bytes.data(), bytes.size(), &out).code();
}
}  // namespace

TEST(Bundle, RoundTripsExactly) {
  auto enc = EncodeBundle(Sample());
  REQUIRE_OK(enc);
  const auto &bytes = enc.value();
  // Header by hand: magic, version 4, flags 0, body size.
  CHECK_EQ(std::string(bytes.begin(), bytes.begin() + 8), std::string("TFGEKRNL"));
  CHECK_EQ(bytes[8], static_cast<unsigned char>(4));
  const uint64_t body = bytes.size() - kBundleHeaderBytes - kBundleTrailerBytes;
  CHECK_EQ(bytes[16], static_cast<unsigned char>(body & 0xFF));
  std::vector<BundleSoc> back;
  REQUIRE_OK(DecodeBundle(bytes.data(), bytes.size(), &back));
  REQUIRE_EQ(back.size(), size_t{2});
  CHECK_EQ(back[0].manifest_json, Sample()[0].manifest_json);
  REQUIRE_EQ(back[0].binaries.size(), size_t{2});
  CHECK_EQ(back[0].binaries[0].name, std::string("add_kernel_float32.npubin"));
  CHECK_EQ(back[0].binaries[0].bytes, (std::vector<unsigned char>{1, 2, 3}));
  CHECK_TRUE(back[0].binaries[1].bytes.empty());
  CHECK_EQ(back[1].manifest_json, std::string(""));
  auto again = EncodeBundle(back);
  CHECK_EQ(again.value(), bytes);
}

TEST(Bundle, CarriesTheServedBoardsAndTheNodesAndReadsVersions1To3WithoutThem) {
  const std::vector<BundleServing> serving = {{"Ascend910B4-1", "AddCustom", "float16", "Ascend910B4"}};
  const std::vector<BundleNode> nodes = {{"encoder/add_7", "AddCustom", {}}};
  auto enc = EncodeBundle(Sample(), serving, nodes);
  REQUIRE_OK(enc);
  const std::vector<uint8_t> &bytes = enc.value();
  // The body's end, by hand: u32 count 1, then 2-byte lengths and the four names; then u32
  // count 1, the node's two names and its attribute word count 0.
  const std::string tail = std::string("\x01\x00\x00\x00", 4) + std::string("\x0d\x00", 2) + "Ascend910B4-1" +
                           std::string("\x09\x00", 2) +
                           "AddCustom" + std::string("\x07\x00", 2) + "float16" + std::string("\x0b\x00", 2) +
                           "Ascend910B4" + std::string("\x01\x00\x00\x00", 4) + std::string("\x0d\x00", 2) +
                           "encoder/add_7" + std::string("\x09\x00", 2) + "AddCustom" + std::string("\x00\x00\x00\x00", 4);
  const std::string body_end(bytes.end() - kBundleTrailerBytes - tail.size(), bytes.end() - kBundleTrailerBytes);
  CHECK_EQ(body_end, tail);
  std::vector<BundleSoc> socs;
  std::vector<BundleServing> back;
  std::vector<BundleNode> named;
  REQUIRE_OK(DecodeBundle(bytes.data(), bytes.size(), &socs, &back, &named));
  REQUIRE_EQ(back.size(), size_t{1});
  CHECK_EQ(back[0].board + " " + back[0].op + " " + back[0].dtype + " " + back[0].soc,
           std::string("Ascend910B4-1 AddCustom float16 Ascend910B4"));
  REQUIRE_EQ(named.size(), size_t{1});
  CHECK_EQ(named[0].node + " " + named[0].op, std::string("encoder/add_7 AddCustom"));
  CHECK_EQ(socs.size(), size_t{2});
  // Versions 1 to 3, as the package wrote them before boards were served, before models
  // named their nodes and before nodes carried attribute words: the SoCs, (version 2) the
  // servings, (version 3) the nodes without words, nothing after.
  for (const uint8_t version : {uint8_t{1}, uint8_t{2}, uint8_t{3}}) {
    auto old = EncodeBundle(Sample(), version >= 2 ? serving : std::vector<BundleServing>(),
                            version == 3 ? nodes : std::vector<BundleNode>())
                   .value();
    const size_t drop = version == 1 ? 8 : 4;  // the counts, or the node's word count, left out
    old.erase(old.end() - kBundleTrailerBytes - drop, old.end() - kBundleTrailerBytes);
    old[8] = version;
    const uint64_t body = old.size() - kBundleHeaderBytes - kBundleTrailerBytes;
    for (int i = 0; i < 8; ++i) old[16 + i] = static_cast<uint8_t>(body >> (8 * i));
    Reseal(&old);
    back = serving;
    named = nodes;
    REQUIRE_OK(DecodeBundle(old.data(), old.size(), &socs, &back, &named));
    CHECK_EQ(socs.size(), size_t{2});
    CHECK_EQ(back.size(), size_t{version >= 2 ? 1u : 0u});
    CHECK_EQ(named.size(), size_t{version == 3 ? 1u : 0u});
    if (version == 3) CHECK_TRUE(named[0].attrs.empty());
  }
  // A serving or node whose length runs past the end is refused like any other length.
  auto cut = bytes;
  cut[cut.size() - kBundleTrailerBytes - 4 - 9 - 2] = 0xFF;  // the node's op length
  Reseal(&cut);
  CHECK_EQ(CodeOf(cut), Code::kCorrupt);
}

TEST(Bundle, CarriesEachNodesAttributeWordsAsLittleEndianU64) {
  // LeakyReluCustom's alpha 0.2f as its binary32 bits (0x3E4CCCCD), and a word with every byte
  // set differently, to see the byte order.
  const std::vector<BundleNode> nodes = {{"lrelu", "LeakyReluCustom", {0x3E4CCCCDull, 0x0102030405060708ull}},
                                         {"add", "AddCustom", {}}};
  const auto bytes = EncodeBundle(Sample(), {}, nodes).value();
  const std::string tail = std::string("\x02\x00\x00\x00", 4) + std::string("\x05\x00", 2) + "lrelu" +
                           std::string("\x0f\x00", 2) + "LeakyReluCustom" + std::string("\x02\x00\x00\x00", 4) +
                           std::string("\xcd\xcc\x4c\x3e\x00\x00\x00\x00", 8) +
                           std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8) + std::string("\x03\x00", 2) +
                           "add" + std::string("\x09\x00", 2) + "AddCustom" + std::string("\x00\x00\x00\x00", 4);
  CHECK_EQ(std::string(bytes.end() - kBundleTrailerBytes - tail.size(), bytes.end() - kBundleTrailerBytes), tail);
  std::vector<BundleSoc> socs;
  std::vector<BundleNode> back;
  REQUIRE_OK(DecodeBundle(bytes.data(), bytes.size(), &socs, nullptr, &back));
  REQUIRE_EQ(back.size(), size_t{2});
  CHECK_TRUE(back[0].attrs == nodes[0].attrs);
  CHECK_TRUE(back[1].attrs.empty());
  // A word count past the limit is refused when writing and when reading.
  std::vector<BundleNode> many = {{"n", "LeakyReluCustom", std::vector<uint64_t>(kMaxNodeAttrWords + 1, 0)}};
  CHECK_EQ(EncodeBundle(Sample(), {}, many).status().code(), Code::kOversized);
  auto big = bytes;
  const size_t count_at = big.size() - kBundleTrailerBytes - tail.size() + 4 + 2 + 5 + 2 + 15;
  big[count_at + 1] = 0x01;  // 258 words
  Reseal(&big);
  CHECK_EQ(CodeOf(big), Code::kCorrupt);
}

TEST(Bundle, RefusesEveryTruncationAndEveryBitFlip) {
  const auto bytes = EncodeBundle(Sample()).value();
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
    if (CodeOf(cut) == Code::kOk) CHECK_EQ(len, size_t{0} + bytes.size());  // never accepted
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto flipped = bytes;
      flipped[i] ^= static_cast<uint8_t>(1u << bit);
      if (CodeOf(flipped) == Code::kOk) CHECK_EQ(i, size_t{9999});
    }
  }
  auto padded = bytes;
  padded.insert(padded.end() - kBundleTrailerBytes, 0);
  CHECK_EQ(CodeOf(padded), Code::kCorrupt);
}

TEST(Bundle, NamesEachRefusal) {
  const auto bytes = EncodeBundle(Sample()).value();
  CHECK_EQ(CodeOf({}), Code::kTruncated);
  CHECK_EQ(CodeOf(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1)), Code::kTruncated);
  auto magic = bytes;
  magic[0] = 'X';
  CHECK_EQ(CodeOf(magic), Code::kBadMagic);
  auto version = bytes;
  version[8] = 5;
  CHECK_EQ(CodeOf(version), Code::kBadVersion);
  version[8] = 0;
  CHECK_EQ(CodeOf(version), Code::kBadVersion);
  auto flags = bytes;
  flags[12] = 1;
  Reseal(&flags);
  CHECK_EQ(CodeOf(flags), Code::kCorrupt);
  auto sum = bytes;
  sum.back() ^= 0x80;
  CHECK_EQ(CodeOf(sum), Code::kCorrupt);
  // Oversized input is refused before a single byte is read.
  std::vector<BundleSoc> out;
  CHECK_EQ(DecodeBundle(bytes.data(), kMaxBundleBytes + 1, &out).code(), Code::kOversized);
}

TEST(Bundle, LengthFieldsCannotReachPastTheEnd) {
  const auto bytes = EncodeBundle(Sample()).value();
  // Body starts at 24: u32 SoC count, then u32 manifest length of the first SoC.
  auto many = bytes;
  many[24] = 0xFF;
  many[25] = 0xFF;
  Reseal(&many);
  CHECK_EQ(CodeOf(many), Code::kCorrupt);
  auto long_manifest = bytes;
  long_manifest[28] = 0xFF;
  long_manifest[29] = 0xFF;
  Reseal(&long_manifest);
  CHECK_EQ(CodeOf(long_manifest), Code::kCorrupt);
  // The first binary's u64 size, right after its name: make it huge.
  const size_t manifest_len = Sample()[0].manifest_json.size();
  const size_t name_len = Sample()[0].binaries[0].name.size();
  const size_t size_at = 24 + 4 + 4 + manifest_len + 4 + 2 + name_len;
  auto huge = bytes;
  for (int i = 0; i < 8; ++i) huge[size_at + i] = 0xFF;
  Reseal(&huge);
  CHECK_EQ(CodeOf(huge), Code::kCorrupt);
}

TEST(Bundle, RegistryRoundTripCarriesVerifiedKernels) {
  test_support::TempDir opp;
  KernelSpec f32, i32, row;
  i32.dtype = "int32";
  row.variant = "row_16x256";
  test_support::WriteOppKernels(opp, "Ascend910B1", {f32, i32, row});
  test_support::WriteOppKernels(opp, "Ascend910_9392", {f32});
  auto disk = KernelRegistry::FromOppRoot(opp.path());
  auto bytes = disk->Serialize();
  REQUIRE_OK(bytes);
  auto restored = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(restored);
  CHECK_EQ(restored.value()->Socs(), (std::vector<std::string>{"Ascend910B1", "Ascend910_9392"}));
  auto k = restored.value()->Find("Ascend910_9392", "AddCustom", "flat", "float32");
  REQUIRE_OK(k);
  CHECK_EQ(*k.value().bytes, test_support::FakeBinary("Ascend910_9392", "float32"));
  CHECK_EQ(restored.value()->Find("Ascend910_9392", "AddCustom", "flat", "int32").status().code(), Code::kMissingDType);
  // every variant's binary travels, each under its own name
  auto r = restored.value()->Find("Ascend910B1", "AddCustom", "row_16x256", "float32");
  REQUIRE_OK(r);
  CHECK_EQ(*r.value().bytes, test_support::FakeBinary("Ascend910B1", "float32", "row_16x256"));
  CHECK_EQ(r.value().entry.binary, std::string("add_custom_row_16x256_float32.npubin"));
  CHECK_EQ(restored.value()->Find("Ascend910_9392", "AddCustom", "row_16x256", "float32").status().code(),
           Code::kMissingDType);
}

TEST(Bundle, RegistryRefusesWellFramedButInconsistentKernels) {
  test_support::TempDir opp;
  const std::string manifest = test_support::WriteOppKernels(opp, "Ascend910B1", {KernelSpec()});
  BundleSoc soc;
  soc.manifest_json = manifest;
  soc.binaries = {{"add_custom_flat_float32.npubin", test_support::FakeBinary("Ascend910B1", "float32")}};
  auto good = EncodeBundle({soc}).value();
  CHECK_TRUE(KernelRegistry::FromSerialized(good).ok());
  auto wrong_bytes = soc;
  wrong_bytes.binaries[0].bytes[5] ^= 1;
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle({wrong_bytes}).value()).status().code(), Code::kCorrupt);
  auto stray = soc;
  stray.binaries.push_back({"other.npubin", {1}});
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle({stray}).value()).status().code(), Code::kCorrupt);
  auto missing = soc;
  missing.binaries.clear();
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle({missing}).value()).status().code(), Code::kCorrupt);
  auto twice = EncodeBundle({soc, soc}).value();
  CHECK_EQ(KernelRegistry::FromSerialized(twice).status().code(), Code::kCorrupt);
  auto bad_manifest = soc;
  bad_manifest.manifest_json = "{}";
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle({bad_manifest}).value()).status().code(), Code::kCorrupt);
}

TEST(Bundle, SerializeRefusesWhenThereIsNoBinaryToCarry) {
  test_support::TempDir opp;
  KernelSpec ir_only;
  ir_only.has_binary = false;
  test_support::WriteOppKernels(opp, "Ascend910B1", {ir_only});
  CHECK_EQ(KernelRegistry::FromOppRoot(opp.path())->Serialize().status().code(), Code::kNoBinary);
  test_support::TempDir empty;
  CHECK_EQ(KernelRegistry::FromOppRoot(empty.path())->Serialize().status().code(), Code::kNoBinary);
}
