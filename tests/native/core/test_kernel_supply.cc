// Compile's decision (kernel_supply.h) against an in-process compiler double that writes cache
// entries the way the Python builder lays them out (every kernel variant of one dtype): the
// package's kernel set first, then the cache, then a compile; once per (SoC, op, dtype) even
// from 8 threads; failures remembered; a damaged package said, never papered over; a set
// lacking a variant never used as one; and Serialize carrying exactly what was chosen,
// compiled kernels included, so a model restored from it runs without the package or cache.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/compile_cache.h"
#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/kernel_supply.h"
#include "tf_ge_custom_core/sha256.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;
using test_support::TempDir;

namespace {

const char *kKey = "00aa11bb22cc33dd-triton_ascend_3.2.0-bishengir_1.2.0-cann_8.5.0";

// Bytes a compile on this host would give, distinct from the package's fake npubins.
std::vector<uint8_t> CompiledBinary(const std::string &soc, const std::string &dtype, const std::string &variant) {
  // Another payload than the package's, under the same entry symbol.
  return test_support::ElfObject({{test_support::EntryName(variant, dtype)}},
                                 "compiled on this host for " + soc + " " + variant + " " + dtype);
}

std::string EntryDir(const std::string &soc, const std::string &dtype) {
  return soc + "/" + kKey + "/AddCustom/" + dtype;
}

// Writes <cache>/<SoC>/<key>/<op>/<dtype>/ as the builder does: the manifest and the npubin of
// every variant (all but `without`, to make an entry the builder would never leave).
void WriteEntry(const TempDir &cache, const std::string &soc, const std::string &dtype,
                const std::string &without = "") {
  std::vector<KernelSpec> specs;
  for (auto k : test_support::AllVariants(dtype)) {
    if (k.variant == without) continue;
    k.binary = CompiledBinary(soc, dtype, k.variant);
    specs.push_back(k);
  }
  const std::string dir = EntryDir(soc, dtype);
  cache.Write(dir + "/manifest.json", test_support::ManifestJson(soc, specs));
  for (const auto &k : specs) cache.Write(dir + "/" + test_support::BinaryName(k.variant, dtype), k.binary);
}

// Every variant but `without`, with the package's fake bytes.
std::vector<KernelSpec> PackageSet(const std::string &dtype, const std::string &without = "") {
  std::vector<KernelSpec> specs;
  for (const auto &k : test_support::AllVariants(dtype)) {
    if (k.variant != without) specs.push_back(k);
  }
  return specs;
}

std::vector<KernelSpec> Concat(std::vector<KernelSpec> a, const std::vector<KernelSpec> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class FakeCompiler : public KernelCompiler {
 public:
  explicit FakeCompiler(const TempDir &cache) : cache_(cache) {}
  Result<CacheTarget> Locate() override {
    ++locates;
    return CacheTarget{cache_.path(), kKey};
  }
  Status Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                 const std::string &dtype) override {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (!fail_with.empty()) return Status::Error(fail_code, fail_with);
    if (target.cache_dir != cache_.path() || target.key != kKey || op != "AddCustom") {
      return Status::Error(Code::kInternal, "unexpected target");
    }
    WriteEntry(cache_, soc, dtype);
    return Status::Ok();
  }
  std::atomic<int> locates{0}, compiles{0};
  int delay_ms = 0;
  std::string fail_with;
  Code fail_code = Code::kUnsupported;  // a definite refusal (BuilderProcess: a missing tool)

 private:
  const TempDir &cache_;
};

struct Setup {
  TempDir opp, cache;
  std::shared_ptr<FakeCompiler> compiler = std::make_shared<FakeCompiler>(cache);
  KernelSupply supply{compiler};
  std::shared_ptr<KernelRegistry> registry;
  Setup() {
    test_support::WriteOppKernels(opp, "Ascend910B1", Concat(PackageSet("float32"), PackageSet("int32")));
    registry = KernelRegistry::FromOppRoot(opp.path());
  }
};

std::string Sha(const KernelBinary &k) { return Sha256Hex(k.bytes->data(), k.bytes->size()); }
std::string Sha(const std::vector<uint8_t> &bytes) { return Sha256Hex(bytes.data(), bytes.size()); }

// variant -> sha256 of what Find answers for it ("<code name>: <message>" when it refuses), for
// every variant the op table has: what Execute could load for (soc, dtype).
std::map<std::string, std::string> SetShas(KernelRegistry &registry, const std::string &soc, const std::string &dtype) {
  std::map<std::string, std::string> out;
  for (const auto &v : FindOp("AddCustom")->variants) {
    auto found = registry.Find(soc, "AddCustom", v.name, dtype);
    out[v.name] = found.ok() ? Sha(found.value()) : found.status().ToString();
  }
  return out;
}

// The same map as it must be: `compiled` variants with this host's bytes, the others with
// the package's.
std::map<std::string, std::string> Expected(const std::string &soc, const std::string &dtype,
                                            const std::vector<std::string> &compiled) {
  std::map<std::string, std::string> out;
  for (const auto &k : test_support::AllVariants(dtype)) {
    const bool here = std::find(compiled.begin(), compiled.end(), k.variant) != compiled.end();
    out[k.variant] = Sha(here ? CompiledBinary(soc, dtype, k.variant) : test_support::FakeBinary(soc, dtype, k.variant));
  }
  return out;
}

std::vector<std::string> AllVariantNames() {
  std::vector<std::string> names;
  for (const auto &k : test_support::AllVariants("float32")) names.push_back(k.variant);
  return names;
}

}  // namespace

TEST(KernelSupply, ThePackagesKernelSetWinsWithoutAskingTheCompiler) {
  Setup s;
  auto r = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_OK(r);
  CHECK_EQ(std::string(KernelOriginName(r.value())), std::string("package"));
  CHECK_EQ(s.compiler->locates.load(), 0);
  CHECK_EQ(s.compiler->compiles.load(), 0);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "float32") == Expected("Ascend910B1", "float32", {}));
}

TEST(KernelSupply, ACachedKernelSetIsUsedWithoutACompile) {
  Setup s;
  WriteEntry(s.cache, "Ascend910_9392", "float16");
  auto r = s.supply.Ensure(*s.registry, "Ascend910_9392", "AddCustom", "float16");
  REQUIRE_OK(r);
  CHECK_EQ(std::string(KernelOriginName(r.value())), std::string("cache"));
  CHECK_EQ(s.compiler->compiles.load(), 0);
  // Every variant Execute may pick is the cache entry's own npubin.
  CHECK_TRUE(SetShas(*s.registry, "Ascend910_9392", "float16") ==
             Expected("Ascend910_9392", "float16", AllVariantNames()));
}

TEST(KernelSupply, AMissingKernelSetIsCompiledOnceThenExecuteFindsEveryVariant) {
  Setup s;
  auto before = s.registry->Find("Ascend910B3", "AddCustom", "flat", "bfloat16");
  CHECK_EQ(before.status().code(), Code::kUnknownSoc);
  auto r = s.supply.Ensure(*s.registry, "Ascend910B3", "AddCustom", "bfloat16");
  REQUIRE_OK(r);
  CHECK_EQ(std::string(KernelOriginName(r.value())), std::string("compiled"));
  auto again = s.supply.Ensure(*s.registry, "Ascend910B3", "AddCustom", "bfloat16");
  REQUIRE_OK(again);
  CHECK_EQ(std::string(KernelOriginName(again.value())), std::string("compiled"));
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_EQ(s.supply.compile_count(), size_t{1});
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B3", "bfloat16") ==
             Expected("Ascend910B3", "bfloat16", AllVariantNames()));
  auto found = s.registry->Find("Ascend910B3", "AddCustom", "row_16x256", "bfloat16");
  REQUIRE_OK(found);
  CHECK_EQ(found.value().entry.variant, std::string("row_16x256"));
  CHECK_EQ(found.value().entry.dtype, std::string("bfloat16"));
  CHECK_EQ(found.value().soc, std::string("Ascend910B3"));
  // A dtype the package lacks for a SoC it has is compiled too; the package's own stay.
  REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "float16"));
  CHECK_EQ(s.compiler->compiles.load(), 2);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "float32") == Expected("Ascend910B1", "float32", {}));
}

TEST(KernelSupply, APackageLackingOneVariantIsCompletedByACompileThatShadowsNothing) {
  Setup s;
  test_support::WriteOppKernels(s.opp, "Ascend910B2", PackageSet("float32", "col_16x256"));
  const Status has = s.registry->HasKernelSet("Ascend910B2", "AddCustom", "float32");
  CHECK_EQ(has.code(), Code::kMissingDType);
  CHECK_TRUE(has.message().find("col_16x256") != std::string::npos);
  CHECK_EQ(s.registry->Choose("Ascend910B2", "AddCustom", "float32").code(), Code::kMissingDType);
  auto r = s.supply.Ensure(*s.registry, "Ascend910B2", "AddCustom", "float32");
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  REQUIRE_OK(s.registry->HasKernelSet("Ascend910B2", "AddCustom", "float32"));
  // The package's kernels answer first; only the variant it lacks comes from the compile.
  const auto expected = Expected("Ascend910B2", "float32", {"col_16x256"});
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B2", "float32") == expected);
  // Both sets travel (the package's and the compiled one) and answer alike in the model.
  auto bytes = s.registry->Serialize();
  REQUIRE_OK(bytes);
  std::vector<BundleSoc> sections;
  REQUIRE_OK(DecodeBundle(bytes.value().data(), bytes.value().size(), &sections));
  CHECK_EQ(sections.size(), size_t{2});
  auto model = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(model);
  CHECK_TRUE(SetShas(*model.value(), "Ascend910B2", "float32") == expected);
}

TEST(KernelSupply, ACacheEntryLackingOneVariantIsNotAUsableSetAndIsRebuilt) {
  Setup s;
  WriteEntry(s.cache, "Ascend910B3", "int32", "outer_128x32");
  const std::string manifest = s.cache.path() + "/" + EntryDir("Ascend910B3", "int32") + "/manifest.json";
  const Status partial = s.registry->AddCompiled("Ascend910B3", manifest);
  CHECK_EQ(partial.code(), Code::kMissingDType);
  CHECK_TRUE(partial.message().find("lacks the AddCustom int32 kernel variant(s) outer_128x32") != std::string::npos);
  CHECK_EQ(s.registry->Find("Ascend910B3", "AddCustom", "flat", "int32").status().code(), Code::kUnknownSoc);
  auto r = s.supply.Ensure(*s.registry, "Ascend910B3", "AddCustom", "int32");
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B3", "int32") == Expected("Ascend910B3", "int32", AllVariantNames()));
}

TEST(KernelSupply, EightThreadsAskingAtOnceCompileOnce) {
  Setup s;
  s.compiler->delay_ms = 100;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto r = s.supply.Ensure(*s.registry, "Ascend910_9382", "AddCustom", "int32");
      if (r.ok() && r.value() == KernelOrigin::kCompiled) ++ok;
    });
  }
  for (auto &t : threads) t.join();
  CHECK_EQ(ok.load(), 8);
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_EQ(s.compiler->locates.load(), 1);
}

TEST(KernelSupply, AFailedCompileIsRememberedNotRepeatedPerNode) {
  Setup s;
  s.compiler->fail_with = "cannot compile the AddCustom kernels for SoC Ascend910B4, dtype float32: hivmc is missing";
  auto first = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32");
  auto second = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32");
  REQUIRE_TRUE(!first.ok());
  CHECK_EQ(first.status().message(), s.compiler->fail_with);
  CHECK_EQ(second.status().message(), s.compiler->fail_with);
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_EQ(s.registry->Find("Ascend910B4", "AddCustom", "flat", "float32").status().code(), Code::kUnknownSoc);
}

TEST(KernelSupply, ADamagedPackageIsSaidAndNothingIsCompiled) {
  Setup s;
  // A variant other than "flat": the whole set is verified before it is chosen.
  s.opp.Write("kernels/Ascend910B1/" + test_support::BinaryName("row_128x32", "int32"), std::string("tampered"));
  auto r = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "int32");
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kChecksum);
  CHECK_EQ(s.compiler->compiles.load(), 0);
}

TEST(KernelSupply, AnIrOnlyPackageManifestFallsBackToACompile) {
  Setup s;
  auto ir_only = PackageSet("float32");
  for (auto &k : ir_only) k.has_binary = false;
  test_support::WriteOppKernels(s.opp, "Ascend910B2", ir_only);
  auto r = s.supply.Ensure(*s.registry, "Ascend910B2", "AddCustom", "float32");
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B2", "float32") ==
             Expected("Ascend910B2", "float32", AllVariantNames()));
}

TEST(KernelSupply, ADamagedCacheEntryIsCompiledAgain) {
  Setup s;
  WriteEntry(s.cache, "Ascend910B1", "bfloat16");
  s.cache.Write(EntryDir("Ascend910B1", "bfloat16") + "/" + test_support::BinaryName("col_1x4096", "bfloat16"),
                std::string("cut"));
  auto r = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "bfloat16");
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "bfloat16") ==
             Expected("Ascend910B1", "bfloat16", AllVariantNames()));
}

TEST(KernelSupply, ACompileThatLeavesNoVerifiedKernelIsARefusal) {
  Setup s;
  class Liar : public FakeCompiler {
   public:
    explicit Liar(const TempDir &c) : FakeCompiler(c) {}
    Status Compile(const CacheTarget &, const std::string &, const std::string &, const std::string &) override {
      return Status::Ok();  // says done, writes nothing
    }
  };
  KernelSupply supply(std::make_shared<Liar>(s.cache));
  auto r = supply.Ensure(*s.registry, "Ascend910_9391", "AddCustom", "float32");
  REQUIRE_TRUE(!r.ok());
  CHECK_TRUE(r.status().message().find("the kernel compiled for SoC Ascend910_9391, dtype float32 does not verify") ==
             0);
}

TEST(KernelSupply, PrepareKernelChecksDTypeAndSocFirst) {
  Setup s;
  const OpDefinition &op = *FindOp("AddCustom");
  auto bad = PrepareKernel(s.supply, *s.registry, op, "Ascend910B1", "2201", {{"float64", {4}}, {"float64", {4}}});
  CHECK_EQ(bad.status().code(), Code::kBadDType);
  auto mixed = PrepareKernel(s.supply, *s.registry, op, "Ascend910B1", "2201", {{"float32", {4}}, {"int32", {4}}});
  CHECK_EQ(mixed.status().code(), Code::kBadDType);
  auto no_soc = PrepareKernel(s.supply, *s.registry, op, "", "2201", {{"float32", {4}}, {"float32", {4}}});
  CHECK_EQ(no_soc.status().code(), Code::kUnknownSoc);
  CHECK_TRUE(no_soc.status().message().find("NpuArch 2201") != std::string::npos);
  auto odd_soc = PrepareKernel(s.supply, *s.registry, op, "../x", "", {{"float32", {4}}, {"float32", {4}}});
  CHECK_EQ(odd_soc.status().code(), Code::kUnknownSoc);
  CHECK_EQ(s.compiler->compiles.load(), 0);
  auto ok = PrepareKernel(s.supply, *s.registry, op, "Ascend910B1", "2201", {{"int32", {4}}, {"int32", {4}}});
  REQUIRE_OK(ok);
  CHECK_TRUE(ok.value() == KernelOrigin::kPackage);
}

TEST(KernelSupply, SerializeCarriesWhatCompileChoseAndRunsWithoutPackageOrCache) {
  std::vector<uint8_t> bytes;
  std::map<std::string, std::string> compiled, packaged, same_soc;
  {
    Setup s;
    REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910_9392", "AddCustom", "float16"));  // compiled
    REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "int32"));       // package
    REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "bfloat16"));    // compiled, same SoC
    compiled = SetShas(*s.registry, "Ascend910_9392", "float16");
    packaged = SetShas(*s.registry, "Ascend910B1", "int32");
    same_soc = SetShas(*s.registry, "Ascend910B1", "bfloat16");
    auto serialized = s.registry->Serialize();
    REQUIRE_OK(serialized);
    bytes = serialized.value();
  }  // the OPP root and the cache are gone now
  CHECK_TRUE(compiled == Expected("Ascend910_9392", "float16", AllVariantNames()));
  CHECK_TRUE(packaged == Expected("Ascend910B1", "int32", {}));
  CHECK_TRUE(same_soc == Expected("Ascend910B1", "bfloat16", AllVariantNames()));
  auto restored = KernelRegistry::FromSerialized(bytes);
  REQUIRE_OK(restored);
  auto &model = *restored.value();
  CHECK_TRUE(SetShas(model, "Ascend910_9392", "float16") == compiled);
  CHECK_TRUE(SetShas(model, "Ascend910B1", "int32") == packaged);
  CHECK_TRUE(SetShas(model, "Ascend910B1", "bfloat16") == same_soc);
  // the package's set travels whole
  CHECK_TRUE(SetShas(model, "Ascend910B1", "float32") == Expected("Ascend910B1", "float32", {}));
  CHECK_EQ(model.Find("Ascend910_9392", "AddCustom", "flat", "int32").status().code(), Code::kMissingDType);
  CHECK_EQ(model.Socs(), (std::vector<std::string>{"Ascend910B1", "Ascend910_9392"}));
  // Serialized again (an OM re-saved), nothing chosen: everything it holds.
  auto again = model.Serialize();
  REQUIRE_OK(again);
  CHECK_EQ(again.value().size(), bytes.size());
}

TEST(KernelSupply, OnlyChosenSocsTravelOnceSomethingIsChosen) {
  Setup s;
  test_support::WriteOppKernels(s.opp, "Ascend910B4", PackageSet("float32"));
  auto all = s.registry->Serialize();  // nothing chosen yet: every SoC of the package
  REQUIRE_OK(all);
  REQUIRE_OK(KernelRegistry::FromSerialized(all.value()).value()->HasKernelSet("Ascend910B4", "AddCustom", "float32"));
  REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "float32"));
  auto chosen = s.registry->Serialize();
  REQUIRE_OK(chosen);
  auto model = KernelRegistry::FromSerialized(chosen.value());
  REQUIRE_OK(model);
  CHECK_EQ(model.value()->Socs(), std::vector<std::string>{"Ascend910B1"});
}

TEST(KernelRegistry, AddCompiledRefusesAnotherSocAKnownKernelSetAndBadBytes) {
  Setup s;
  WriteEntry(s.cache, "Ascend910B3", "float32");
  const std::string manifest = s.cache.path() + "/" + EntryDir("Ascend910B3", "float32") + "/manifest.json";
  CHECK_EQ(s.registry->AddCompiled("Ascend910B4", manifest).code(), Code::kBadManifest);
  REQUIRE_OK(s.registry->AddCompiled("Ascend910B3", manifest));
  CHECK_EQ(s.registry->AddCompiled("Ascend910B3", manifest).code(), Code::kInternal);  // twice
  WriteEntry(s.cache, "Ascend910B1", "float32");
  const Status shadow =
      s.registry->AddCompiled("Ascend910B1", s.cache.path() + "/" + EntryDir("Ascend910B1", "float32") + "/manifest.json");
  CHECK_EQ(shadow.code(), Code::kInternal);  // the package has the whole set: a compiled copy adds nothing
  CHECK_TRUE(shadow.message().find("AddCustom/float32 of SoC Ascend910B1 are there already") != std::string::npos);
  WriteEntry(s.cache, "Ascend910B2", "int32");
  s.cache.Write(EntryDir("Ascend910B2", "int32") + "/" + test_support::BinaryName("scalar", "int32"),
                std::string("changed"));
  const Status bad =
      s.registry->AddCompiled("Ascend910B2", s.cache.path() + "/" + EntryDir("Ascend910B2", "int32") + "/manifest.json");
  CHECK_EQ(bad.code(), Code::kChecksum);
  CHECK_EQ(s.registry->Find("Ascend910B2", "AddCustom", "flat", "int32").status().code(), Code::kUnknownSoc);
}

TEST(KernelRegistry, ASerializedKernelSetTwiceInOneSocIsRefused) {
  Setup s;
  WriteEntry(s.cache, "Ascend910B3", "float32");
  REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B3", "AddCustom", "float32"));
  auto one = s.registry->Serialize();
  REQUIRE_OK(one);
  std::vector<BundleSoc> sections;
  REQUIRE_OK(DecodeBundle(one.value().data(), one.value().size(), &sections));
  REQUIRE_EQ(sections.size(), size_t{1});
  auto twice = KernelRegistry::FromSerialized(EncodeBundle({sections[0], sections[0]}).value());
  CHECK_EQ(twice.status().code(), Code::kCorrupt);
  CHECK_TRUE(twice.status().message().find("AddCustom/float32 of SoC Ascend910B3 are there already") !=
             std::string::npos);
  CHECK_TRUE(twice.status().message().find("serialized twice") != std::string::npos);
}

TEST(CompileCache, TheLayoutNeverLeavesTheCache) {
  const CacheTarget t{"/c", kKey};
  CHECK_EQ(CacheEntryDir(t, "Ascend910B1", "AddCustom", "float32").value(),
           std::string("/c/Ascend910B1/") + kKey + "/AddCustom/float32");
  // two ops sharing a dtype: two entries
  CHECK_EQ(CacheEntryDir(t, "Ascend910B1", "LeakyReluCustom", "float32").value(),
           std::string("/c/Ascend910B1/") + kKey + "/LeakyReluCustom/float32");
  CHECK_EQ(CacheEntryDir(t, "..", "AddCustom", "float32").status().code(), Code::kUnknownSoc);
  CHECK_EQ(CacheEntryDir(t, "Ascend910B4-1", "AddCustom", "float32").status().code(), Code::kOk);
  CHECK_EQ(CacheEntryDir(t, "a/b", "AddCustom", "float32").status().code(), Code::kUnknownSoc);
  CHECK_EQ(CacheEntryDir(t, "Ascend910B1", "AddCustom", ".hidden").status().code(), Code::kBadDType);
  CHECK_EQ(CacheEntryDir(t, "Ascend910B1", "../x", "float32").status().code(), Code::kInternal);
  CHECK_EQ(CacheEntryDir(t, "Ascend910B1", "", "float32").status().code(), Code::kInternal);
  CHECK_EQ(CacheEntryDir(CacheTarget{"c", kKey}, "Ascend910B1", "AddCustom", "float32").status().code(), Code::kInternal);
  CHECK_EQ(CacheEntryDir(CacheTarget{"/c", ""}, "Ascend910B1", "AddCustom", "float32").status().code(), Code::kInternal);
  CHECK_EQ(CacheEntryDir(CacheTarget{"/c", "a b"}, "Ascend910B1", "AddCustom", "float32").status().code(),
           Code::kInternal);
  CHECK_FALSE(IsCacheName(std::string(201, 'a')));
}

// --- Finding 1: a board takes a kernel set of its architecture ------------------------

namespace {

// The package holds Ascend910B4's kernels (architecture dav-2201) and nothing else.
struct ArchSetup {
  TempDir opp, bundle, cache;
  std::shared_ptr<FakeCompiler> compiler = std::make_shared<FakeCompiler>(cache);
  KernelSupply supply{compiler};
  std::shared_ptr<KernelRegistry> registry;
  explicit ArchSetup(bool record_architecture = true, bool in_bundle = false) {
    const TempDir &root = in_bundle ? bundle : opp;
    const std::string manifest = test_support::WriteOppKernels(root, "Ascend910B4", PackageSet("float32"));
    if (record_architecture) {
      root.Write("kernels/Ascend910B4/manifest.json", test_support::WithArchitecture(manifest, "dav-2201"));
    }
    opp.Write("kernels/README.txt", "x");
    bundle.Write("kernels/README.txt", "x");  // the bundle folder exists (a missing one is refused)
    registry = KernelRegistry::FromOppRoot(opp.path(), {bundle.path() + "/kernels"});
  }
};

}  // namespace

TEST(KernelSupply, ABoardWithoutItsOwnKernelsTakesASetOfItsArchitecture) {
  ArchSetup s;
  std::string note;
  auto r = PrepareKernel(s.supply, *s.registry, *FindOp("AddCustom"), "Ascend910B4-1", "2201",
                         {{"float32", {}}, {"float32", {}}}, &note);
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kSameArchitecture);
  CHECK_EQ(s.compiler->compiles.load(), 0);  // nothing compiled
  // The log line names the board, the set taken, the architecture and where it came from.
  CHECK_TRUE(note.find("SoC Ascend910B4-1") != std::string::npos);
  CHECK_TRUE(note.find("the Ascend910B4 kernels of the same architecture dav-2201") != std::string::npos);
  CHECK_TRUE(note.find("the package (" + s.opp.path() + "/kernels)") != std::string::npos);
  // Execute asks for the board's own name: it gets the B4 bytes of every variant.
  for (const auto &v : FindOp("AddCustom")->variants) {
    auto found = s.registry->Find("Ascend910B4-1", "AddCustom", v.name, "float32");
    REQUIRE_OK(found);
    CHECK_EQ(found.value().soc, std::string("Ascend910B4"));
    CHECK_EQ(Sha(found.value()), Sha(test_support::FakeBinary("Ascend910B4", "float32", v.name)));
  }
}

TEST(KernelSupply, AnExactSocMatchComesBeforeTheArchitecture) {
  ArchSetup s;
  const std::string manifest = test_support::WriteOppKernels(s.opp, "Ascend910B1", PackageSet("float32"));
  s.opp.Write("kernels/Ascend910B1/manifest.json", test_support::WithArchitecture(manifest, "dav-2201"));
  s.registry = KernelRegistry::FromOppRoot(s.opp.path());
  auto r = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32", "dav-2201");
  REQUIRE_OK(r);
  CHECK_TRUE(r.value() == KernelOrigin::kPackage);
  CHECK_EQ(s.registry->Find("Ascend910B4", "AddCustom", "flat", "float32").value().soc, std::string("Ascend910B4"));
  // ... and the per-user cache's exact entry before another SoC's set.
  WriteEntry(s.cache, "Ascend910B4-1", "float32");
  auto cached = s.supply.Ensure(*s.registry, "Ascend910B4-1", "AddCustom", "float32", "dav-2201");
  REQUIRE_OK(cached);
  CHECK_TRUE(cached.value() == KernelOrigin::kCache);
}

TEST(KernelSupply, AnotherArchitectureOrNoneRecordedIsNoMatch) {
  {
    ArchSetup s;
    auto r = s.supply.Ensure(*s.registry, "Ascend950PR_9599", "AddCustom", "float32", "dav-3510");
    REQUIRE_OK(r);  // the fake compiler builds it
    CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  }
  {
    ArchSetup s(/*record_architecture=*/false);  // a manifest written before the field
    auto r = s.supply.Ensure(*s.registry, "Ascend910B4-1", "AddCustom", "float32", "dav-2201");
    REQUIRE_OK(r);
    CHECK_TRUE(r.value() == KernelOrigin::kCompiled);
  }
  {
    ArchSetup s;
    s.compiler->fail_with = "hivmc is missing";
    auto r = s.supply.Ensure(*s.registry, "Ascend910B4-1", "AddCustom", "int32", "dav-2201");  // no int32 set
    REQUIRE_TRUE(!r.ok());
  }
}

TEST(KernelSupply, ABundleServesLikeThePackageAndSaysWhereItCameFrom) {
  ArchSetup s(/*record_architecture=*/true, /*in_bundle=*/true);
  std::string note;
  auto exact = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32", "dav-2201", &note);
  REQUIRE_OK(exact);
  CHECK_TRUE(exact.value() == KernelOrigin::kPackage);
  CHECK_TRUE(note.find("the kernel bundle " + s.bundle.path() + "/kernels") != std::string::npos);
  auto board = s.supply.Ensure(*s.registry, "Ascend910_9361", "AddCustom", "float32", "dav-2201", &note);
  REQUIRE_OK(board);
  CHECK_TRUE(board.value() == KernelOrigin::kSameArchitecture);
  CHECK_EQ(KernelBundleDirs("/a::/b").size(), size_t{2});
  CHECK_TRUE(KernelBundleDirs(nullptr).empty());
}

// --- Finding 3: only a definite refusal is remembered ------------------------------------

TEST(KernelSupply, ATimeoutOrCrashIsTriedAgainAtTheNextGraphBuildABoundedNumberOfTimes) {
  Setup s;
  s.compiler->fail_code = Code::kRuntime;  // what BuilderProcess says for a timeout or a crash
  s.compiler->fail_with = "the compile took longer than 900 s and was stopped";
  for (int i = 0; i < kMaxCompileTries; ++i) {
    auto r = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32");
    REQUIRE_TRUE(!r.ok());
    CHECK_EQ(r.status().message(), s.compiler->fail_with);
  }
  CHECK_EQ(s.compiler->compiles.load(), kMaxCompileTries);
  auto last = s.supply.Ensure(*s.registry, "Ascend910B4", "AddCustom", "float32");
  REQUIRE_TRUE(!last.ok());
  CHECK_TRUE(last.status().message().find("gave up after 3 tries in this process") != std::string::npos);
  CHECK_EQ(s.compiler->compiles.load(), kMaxCompileTries);  // bounded
  // A later success after a transient failure is kept.
  Setup t;
  t.compiler->fail_code = Code::kRuntime;
  t.compiler->fail_with = "killed by signal 9";
  REQUIRE_TRUE(!t.supply.Ensure(*t.registry, "Ascend910B4", "AddCustom", "float32").ok());
  t.compiler->fail_with.clear();
  auto ok = t.supply.Ensure(*t.registry, "Ascend910B4", "AddCustom", "float32");
  REQUIRE_OK(ok);
  CHECK_TRUE(ok.value() == KernelOrigin::kCompiled);
  CHECK_TRUE(IsDefiniteRefusal(Status::Error(Code::kUnsupported, "hivmc is missing")));
  CHECK_FALSE(IsDefiniteRefusal(Status::Error(Code::kRuntime, "timed out")));
}

// --- A model built for a board runs on it after Deserialize; a merge keeps both ----------

TEST(KernelSupply, AModelBuiltForABoardRunsOnThatBoardAfterDeserialize) {
  // Compile for Ascend910B4-1 takes the Ascend910B4 kernels (same architecture). The model
  // carries that serving: a registry restored from it, with no package on disk, answers the
  // board's own name with the B4 bytes, for the dtype Compile served and no other.
  ArchSetup s;
  REQUIRE_OK(s.supply.Ensure(*s.registry, "Ascend910B4-1", "AddCustom", "float32", "dav-2201"));
  auto bytes = s.registry->Serialize();
  REQUIRE_OK(bytes);
  std::vector<BundleSoc> socs;
  std::vector<BundleServing> serving;
  REQUIRE_OK(DecodeBundle(bytes.value().data(), bytes.value().size(), &socs, &serving));
  REQUIRE_EQ(serving.size(), size_t{1});
  CHECK_EQ(serving[0].board + " " + serving[0].op + " " + serving[0].dtype + " " + serving[0].soc,
           std::string("Ascend910B4-1 AddCustom float32 Ascend910B4"));
  auto restored = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(restored);
  for (const auto &v : FindOp("AddCustom")->variants) {
    auto found = restored.value()->Find("Ascend910B4-1", "AddCustom", v.name, "float32");
    REQUIRE_OK(found);
    CHECK_EQ(Sha(found.value()), Sha(test_support::FakeBinary("Ascend910B4", "float32", v.name)));
  }
  CHECK_EQ(restored.value()->Find("Ascend910B4-1", "AddCustom", "flat", "float16").status().code(), Code::kUnknownSoc);
  CHECK_EQ(restored.value()->Find("Ascend910B4-2", "AddCustom", "flat", "float32").status().code(), Code::kUnknownSoc);
  // ... and serializes the serving again.
  auto again = restored.value()->Serialize();
  REQUIRE_OK(again);
  CHECK_EQ(again.value(), bytes.value());
  // A model claiming a serving whose kernels it does not carry is refused.
  std::vector<BundleServing> bad = {{"Ascend910B4-1", "AddCustom", "float16", "Ascend910B4"}};
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle(socs, bad).value()).status().code(), Code::kCorrupt);
  bad = {{"Ascend910B4-1", "AddCustom", "float32", "Ascend910B2"}};
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle(socs, bad).value()).status().code(), Code::kCorrupt);
  bad = {{"Ascend910B4-1", "MulCustom", "float32", "Ascend910B4"}};
  CHECK_EQ(KernelRegistry::FromSerialized(EncodeBundle(socs, bad).value()).status().code(), Code::kCorrupt);
}

TEST(KernelRegistry, AModelAddedToARegistryKeepsTheOppRootAndEveryEarlierAnswer) {
  // The instance that compiles also deserializes a model (HEAD's OM2 code, GE's factory's instance): the model
  // brings Ascend910B1 float32 (other bytes than the package's), float16 (the package lacks
  // it) and Ascend910_9392 float32; the package keeps answering what it answered before.
  TempDir opp, elsewhere;
  test_support::WriteOppKernels(opp, "Ascend910B1", PackageSet("float32"));
  auto registry = KernelRegistry::FromOppRoot(opp.path());
  auto before = registry->Find("Ascend910B1", "AddCustom", "flat", "float32");
  REQUIRE_OK(before);
  std::vector<KernelSpec> model_b1 = Concat(PackageSet("float32"), PackageSet("float16"));
  for (auto &k : model_b1) k.binary = CompiledBinary("Ascend910B1", k.dtype, k.variant);
  test_support::WriteOppKernels(elsewhere, "Ascend910B1", model_b1);
  test_support::WriteOppKernels(elsewhere, "Ascend910_9392", PackageSet("float32"));
  auto model = KernelRegistry::FromOppRoot(elsewhere.path())->Serialize();
  REQUIRE_OK(model);
  REQUIRE_OK(registry->AddSerialized(model.value()));
  auto after = registry->Find("Ascend910B1", "AddCustom", "flat", "float32");
  REQUIRE_OK(after);
  CHECK_EQ(Sha(after.value()), Sha(before.value()));  // the package's, as before
  auto f16 = registry->Find("Ascend910B1", "AddCustom", "row_16x256", "float16");
  REQUIRE_OK(f16);
  CHECK_EQ(Sha(f16.value()), Sha(CompiledBinary("Ascend910B1", "float16", "row_16x256")));
  CHECK_TRUE(registry->Find("Ascend910_9392", "AddCustom", "scalar", "float32").ok());
  CHECK_EQ(registry->SourceOf("Ascend910_9392", "AddCustom", "float32"), std::string("the model's own kernels"));
  // The OPP root is still there: a SoC added to it later is found, a Compile still chooses.
  test_support::WriteOppKernels(opp, "Ascend910B3", PackageSet("int32"));
  CHECK_TRUE(registry->Find("Ascend910B3", "AddCustom", "flat", "int32").ok());
  REQUIRE_OK(registry->Choose("Ascend910B1", "AddCustom", "float16"));
  // The same model again adds nothing and refuses nothing; damaged bytes are refused whole.
  REQUIRE_OK(registry->AddSerialized(model.value()));
  std::vector<uint8_t> damaged = model.value();
  damaged[damaged.size() / 2] ^= 1;
  CHECK_EQ(registry->AddSerialized(damaged).code(), Code::kCorrupt);
  CHECK_EQ(Sha(registry->Find("Ascend910B1", "AddCustom", "flat", "float32").value()), Sha(before.value()));
}

TEST(KernelRegistry, ABoardKeepsTheFirstSocItWasServedBy) {
  // Answers never change: once Ascend910B4-1's float32 kernels are B4's, a later Serve or a
  // model naming B2 for it changes nothing.
  ArchSetup s;
  const std::string b2 = test_support::WriteOppKernels(s.opp, "Ascend910B2", PackageSet("float32"));
  s.opp.Write("kernels/Ascend910B2/manifest.json", test_support::WithArchitecture(b2, "dav-2201"));
  REQUIRE_OK(s.registry->Serve("Ascend910B4-1", "Ascend910B4", "AddCustom", "float32"));
  REQUIRE_OK(s.registry->Serve("Ascend910B4-1", "Ascend910B2", "AddCustom", "float32"));
  CHECK_EQ(s.registry->Find("Ascend910B4-1", "AddCustom", "flat", "float32").value().soc, std::string("Ascend910B4"));
  // Another dtype of the board may be served by another SoC.
  const std::string b2h = test_support::ManifestJson("Ascend910B2", Concat(PackageSet("float32"), PackageSet("float16")));
  s.opp.Write("kernels/Ascend910B2/manifest.json", test_support::WithArchitecture(b2h, "dav-2201"));
  for (const auto &k : PackageSet("float16")) {
    s.opp.Write("kernels/Ascend910B2/" + test_support::BinaryName(k.variant, "float16"),
                test_support::FakeBinary("Ascend910B2", "float16", k.variant));
  }
  auto fresh = KernelRegistry::FromOppRoot(s.opp.path());
  REQUIRE_OK(fresh->Serve("Ascend910B4-1", "Ascend910B4", "AddCustom", "float32"));
  REQUIRE_OK(fresh->Serve("Ascend910B4-1", "Ascend910B2", "AddCustom", "float16"));
  CHECK_EQ(fresh->Find("Ascend910B4-1", "AddCustom", "flat", "float32").value().soc, std::string("Ascend910B4"));
  CHECK_EQ(fresh->Find("Ascend910B4-1", "AddCustom", "flat", "float16").value().soc, std::string("Ascend910B2"));
}

namespace {
// The manifest text as the first entry naming wrote it: every dtype's kernel of a variant
// named after its @triton.jit function (op_def.py: add_kernel, add_scalar_kernel,
// add_tile_kernel), no "entry_naming" field. Written out here, not taken from the op table.
std::string FirstNaming(std::string manifest) {
  for (const auto &k : test_support::AllVariants("float32")) {
    for (const char *dtype : {"float32", "float16", "bfloat16", "int32"}) {
      const std::string name = "\"entry\": \"" + test_support::EntryName(k.variant, dtype) + "\"";
      const std::string old = k.variant == "flat"     ? "add_kernel"
                              : k.variant == "scalar" ? "add_scalar_kernel"
                                                      : "add_tile_kernel";
      for (size_t at = manifest.find(name); at != std::string::npos; at = manifest.find(name)) {
        manifest.replace(at, name.size(), "\"entry\": \"" + old + "\"");
      }
    }
  }
  return manifest;
}
}  // namespace

TEST(KernelSupply, APackageSetOfTheFirstEntryNamingIsPassedOverForTheCacheOrACompile) {
  // A package installed over an older release's npubins: not damaged, of another release.
  Setup s;
  const std::string path = s.opp.path() + "/kernels/Ascend910B1/manifest.json";
  s.opp.Write("kernels/Ascend910B1/manifest.json",
              FirstNaming(test_support::ManifestJson("Ascend910B1", Concat(PackageSet("float32"), PackageSet("int32")))));
  auto found = s.registry->Find("Ascend910B1", "AddCustom", "flat", "float32");
  REQUIRE_TRUE(!found.ok());
  CHECK_EQ(found.status().code(), Code::kOutdated);
  CHECK_TRUE(IsAbsent(found.status().code()));
  CHECK_TRUE(found.status().message().find(path + ": the kernel set was built under entry naming 1") !=
             std::string::npos);
  CHECK_TRUE(found.status().message().find("rebuild it with this package's tf-ge-custom build-kernels") !=
             std::string::npos);
  // Compile falls through: float32 from the cache (nothing compiled), int32 compiled.
  WriteEntry(s.cache, "Ascend910B1", "float32");
  auto cached = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_OK(cached);
  CHECK_TRUE(cached.value() == KernelOrigin::kCache);
  CHECK_EQ(s.compiler->compiles.load(), 0);
  auto compiled = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "int32");
  REQUIRE_OK(compiled);
  CHECK_TRUE(compiled.value() == KernelOrigin::kCompiled);
  CHECK_EQ(s.compiler->compiles.load(), 1);
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "int32") == Expected("Ascend910B1", "int32", AllVariantNames()));
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "float32") == Expected("Ascend910B1", "float32", AllVariantNames()));
  // Said once: the registry keeps the verdict (the manifest is not read again per lookup).
  REQUIRE_EQ(s.registry->OutdatedSets().size(), size_t{1});
  s.opp.Write("kernels/Ascend910B1/manifest.json", "not read again");
  CHECK_EQ(s.registry->Find("Ascend910B1", "AddCustom", "flat", "float32").status().code(), Code::kOk);
  // A model made now carries the compiled sets, never the outdated one.
  auto bytes = s.registry->Serialize();
  REQUIRE_OK(bytes);
  auto model = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(model);
  CHECK_TRUE(SetShas(*model.value(), "Ascend910B1", "int32") == Expected("Ascend910B1", "int32", AllVariantNames()));
}

TEST(KernelSupply, ADamagedSetWithSomeOldNamesIsStillDamageAndNotCompiledOver) {
  // Only a set named wholly under the first naming is of an earlier release; one kernel under
  // its function's name beside current ones is a damaged set, said and not compiled over.
  Setup s;
  std::string text = test_support::ManifestJson("Ascend910B1", PackageSet("float32"));
  text = test_support::Replace(text, "\"entry\": \"" + test_support::EntryName("flat", "float32") + "\"",
                               "\"entry\": \"add_kernel\"");
  s.opp.Write("kernels/Ascend910B1/manifest.json", text);
  auto r = s.supply.Ensure(*s.registry, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kBadManifest);
  CHECK_EQ(s.compiler->compiles.load(), 0);
}

TEST(KernelRegistry, AnOldReleasesBundleFallsThroughToTheNextBundleAndAnEntryNamingFieldDecides) {
  TempDir opp, old_bundle, new_bundle;
  opp.Write("kernels/README.txt", "x");
  const std::string current = test_support::WriteOppKernels(new_bundle, "Ascend910B3", PackageSet("float16"));
  test_support::WriteOppKernels(old_bundle, "Ascend910B3", PackageSet("float16"));
  old_bundle.Write("kernels/Ascend910B3/manifest.json", FirstNaming(current));
  auto registry = KernelRegistry::FromOppRoot(opp.path(), {old_bundle.path() + "/kernels", new_bundle.path() + "/kernels"});
  auto found = registry->Find("Ascend910B3", "AddCustom", "row_16x256", "float16");
  REQUIRE_OK(found);
  CHECK_EQ(Sha(found.value()), Sha(test_support::FakeBinary("Ascend910B3", "float16", "row_16x256")));
  CHECK_TRUE(registry->SourceOf("Ascend910B3", "AddCustom", "float16").find(new_bundle.path()) != std::string::npos);
  // The field, where a manifest has it, says the naming whatever the entries look like.
  const std::string field = "\"version\": 2,\n";
  for (const std::string naming : {"1", "3"}) {
    TempDir only;
    only.Write("kernels/Ascend910B3/manifest.json",
               test_support::Replace(current, field, field + "\"entry_naming\": " + naming + ",\n"));
    auto r = KernelRegistry::FromOppRoot(only.path())->Find("Ascend910B3", "AddCustom", "flat", "float16");
    CHECK_EQ(naming + ": " + CodeName(r.status().code()), naming + ": outdated");
  }
  TempDir two;
  test_support::WriteOppKernels(two, "Ascend910B3", PackageSet("float16"));
  two.Write("kernels/Ascend910B3/manifest.json", test_support::Replace(current, field, field + "\"entry_naming\": 2,\n"));
  CHECK_EQ(KernelRegistry::FromOppRoot(two.path())->Find("Ascend910B3", "AddCustom", "flat", "float16").status().code(),
           Code::kOk);
}

TEST(KernelRegistry, AModelSerializedUnderTheFirstNamingAddsNothingAndItsKernelsFallThrough) {
  // A model an earlier release serialized, deserialized where this library serves it (HEAD's
  // OM2 global instance): its old set is passed over, said, and this host's kernels answer;
  // a current set in the same model is used.
  Setup s;
  BundleSoc old_set, new_set;
  old_set.manifest_json = FirstNaming(test_support::ManifestJson("Ascend910B1", PackageSet("float32")));
  for (const auto &k : PackageSet("float32")) {
    old_set.binaries.push_back({test_support::BinaryName(k.variant, "float32"),
                                test_support::FakeBinary("Ascend910B1", "float32", k.variant)});
  }
  std::vector<KernelSpec> b3 = PackageSet("int32");
  for (auto &k : b3) k.binary = CompiledBinary("Ascend910B3", "int32", k.variant);
  new_set.manifest_json = test_support::ManifestJson("Ascend910B3", b3);
  for (const auto &k : b3) new_set.binaries.push_back({test_support::BinaryName(k.variant, "int32"), k.binary});
  const auto bytes = EncodeBundle({old_set, new_set}, {{"Ascend910B1-board", "AddCustom", "float32", "Ascend910B1"}}).value();
  auto model = KernelRegistry::FromSerialized(bytes);
  REQUIRE_OK(model);
  REQUIRE_EQ(model.value()->OutdatedSets().size(), size_t{1});
  CHECK_TRUE(model.value()->OutdatedSets()[0].find("the model's kernel set for SoC Ascend910B1") != std::string::npos);
  CHECK_EQ(model.value()->Find("Ascend910B1", "AddCustom", "flat", "float32").status().code(), Code::kOutdated);
  REQUIRE_OK(s.registry->AddSerialized(bytes));
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B1", "float32") == Expected("Ascend910B1", "float32", {}));
  CHECK_TRUE(SetShas(*s.registry, "Ascend910B3", "int32") == Expected("Ascend910B3", "int32", AllVariantNames()));
}
