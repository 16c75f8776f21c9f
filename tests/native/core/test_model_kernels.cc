// The global-instance path (model_kernels.h): models deserialized into an instance that has
// kernels of its own, as HEAD's OM2 generated code does. A model is known by the sha256 of its
// bytes; each model's nodes run the binaries that model carries, also where the package or
// another model has other binaries under the same (SoC, op, variant, dtype); what cannot be
// told apart is refused in one line.
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/model_kernels.h"
#include "tf_ge_custom_core/sha256.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;

namespace {

const char kSoc[] = "Ascend910B1";

// A model built elsewhere: every float32 variant for kSoc, with bytes of its own (`who`), and
// the nodes its Compile chose them for.
std::vector<uint8_t> Model(const std::string &who, const std::vector<std::string> &nodes, const std::string &dtype = "float32",
                           const std::vector<uint64_t> &words = {}) {
  BundleSoc set;
  std::vector<KernelSpec> specs = test_support::AllVariants(dtype);
  for (auto &k : specs) {
    k.binary = test_support::ElfObject({{test_support::EntryName(k.variant, dtype)}},
                                       "built by " + who + " for " + k.variant + " " + dtype);
    set.binaries.push_back({test_support::BinaryName(k.variant, dtype), k.binary});
  }
  set.manifest_json = test_support::ManifestJson(kSoc, specs);
  std::vector<BundleNode> named;
  for (const auto &n : nodes) named.push_back({n, "AddCustom", words});
  return EncodeBundle({set}, {}, named).value();
}

std::string ShaOf(const std::vector<uint8_t> &b) { return Sha256Hex(b.data(), b.size()); }

std::string Expected(const std::string &who, const std::string &variant, const std::string &dtype = "float32") {
  return ShaOf(test_support::ElfObject({{test_support::EntryName(variant, dtype)}},
                                       "built by " + who + " for " + variant + " " + dtype));
}

// What a node's Execute would run (the adapter's rule, kernel_op.cc): the serving model's
// registry when its kernels are its own, else the instance's. om2: a node whose node-info block
// has no attribute area (ForOm2Node).
std::string RunsFor(ModelKernels &models, KernelRegistry &shared, const char *node, const std::string &variant,
                    const std::string &dtype = "float32", bool om2 = false) {
  const ModelKernels::Model *model = nullptr;
  const Status routed = om2 ? models.ForOm2Node(node, &model) : models.ForNode(node, &model);
  if (!routed.ok()) return routed.ToString();
  KernelRegistry &kernels = model != nullptr && model->own_kernels ? *model->decoded : shared;
  auto found = kernels.Find(kSoc, "AddCustom", variant, dtype);
  return found.ok() ? ShaOf(*found.value().bytes) : found.status().ToString();
}

// Whether node's Execute is served by a model with kernels of its own.
bool Bound(ModelKernels &models, const char *node) {
  const ModelKernels::Model *model = nullptr;
  return models.ForNode(node, &model).ok() && model != nullptr;
}

struct Instance {
  test_support::TempDir opp;
  std::shared_ptr<KernelRegistry> shared;
  ModelKernels models;
  Instance() {
    test_support::WriteOppKernels(opp, kSoc, test_support::AllVariants("float32"));
    shared = KernelRegistry::FromOppRoot(opp.path());
  }
};

}  // namespace

TEST(ModelKernels, TwoModelsWithOtherBinariesUnderOneKeyEachRunTheirOwn) {
  Instance g;
  std::string note;
  REQUIRE_OK(g.models.Add(*g.shared, Model("host A", {"encoder/add_1", "encoder/add_2"}), &note));
  CHECK_TRUE(note.find("11 kernel(s) differ from the ones this process runs under the same key") != std::string::npos);
  CHECK_TRUE(note.find("its 2 node(s) run its own kernels") != std::string::npos);
  REQUIRE_OK(g.models.Add(*g.shared, Model("host B", {"mobilenet/add"}), &note));
  for (const char *variant : {"flat", "row_16x256", "outer_128x32"}) {
    CHECK_EQ(RunsFor(g.models, *g.shared, "encoder/add_1", variant), Expected("host A", variant));
    CHECK_EQ(RunsFor(g.models, *g.shared, "encoder/add_2", variant), Expected("host A", variant));
    CHECK_EQ(RunsFor(g.models, *g.shared, "mobilenet/add", variant), Expected("host B", variant));
    // Any other node runs the package's, which answered before and answers still.
    CHECK_EQ(RunsFor(g.models, *g.shared, "online/add", variant),
             ShaOf(test_support::FakeBinary(kSoc, "float32", variant)));
  }
  CHECK_TRUE(g.models.Owns("encoder/add_1") && !g.models.Owns("online/add"));
}

TEST(ModelKernels, AModelAgreeingWithThePackageJoinsTheInstancesRegistry) {
  // Its bytes are the package's: nothing differs, so no registry of its own and no binding.
  Instance g;
  BundleSoc set;
  for (const auto &k : test_support::AllVariants("float32")) {
    set.binaries.push_back({test_support::BinaryName(k.variant, "float32"), test_support::FakeBinary(kSoc, "float32", k.variant)});
  }
  set.manifest_json = test_support::ManifestJson(kSoc, test_support::AllVariants("float32"));
  REQUIRE_OK(g.models.Add(*g.shared, EncodeBundle({set}, {}, {{"n1", "AddCustom"}}).value(), nullptr));
  CHECK_TRUE(!Bound(g.models, "n1"));
  // A model of another dtype the package lacks: nothing to differ from, it joins too.
  REQUIRE_OK(g.models.Add(*g.shared, Model("host C", {"n2"}, "bfloat16"), nullptr));
  CHECK_TRUE(!Bound(g.models, "n2"));
  CHECK_EQ(RunsFor(g.models, *g.shared, "n2", "flat", "bfloat16"), Expected("host C", "flat", "bfloat16"));
}

TEST(ModelKernels, WhatCannotBeToldApartIsRefusedInOneLine) {
  Instance g;
  // A differing model that names no nodes (version 2 bundles named none).
  const Status unnamed = g.models.Add(*g.shared, Model("host A", {}), nullptr);
  CHECK_EQ(unnamed.code(), Code::kConflict);
  CHECK_TRUE(unnamed.message().find("names none of its nodes") != std::string::npos);
  CHECK_TRUE(unnamed.message().find("SoC Ascend910B1 AddCustom/") != std::string::npos);
  CHECK_TRUE(unnamed.message().find('\n') == std::string::npos);
  // Two differing models sharing a node name both load; by name alone "add" is refused (never
  // run on either's binaries), "other" is host B's.
  REQUIRE_OK(g.models.Add(*g.shared, Model("host A", {"add"}), nullptr));
  REQUIRE_OK(g.models.Add(*g.shared, Model("host B", {"other", "add"}), nullptr));
  const std::string ambiguous = RunsFor(g.models, *g.shared, "add", "flat");
  CHECK_TRUE(ambiguous.find("conflict: 2 models with kernels of their own name node add") == 0);
  CHECK_TRUE(ambiguous.find('\n') == std::string::npos);
  CHECK_EQ(RunsFor(g.models, *g.shared, "other", "flat"), Expected("host B", "flat"));
  // A node name this instance's own graph builds use.
  g.shared->RecordNode("built_here", "AddCustom");
  const Status mine = g.models.Add(*g.shared, Model("host D", {"built_here"}), nullptr);
  CHECK_EQ(mine.code(), Code::kConflict);
  CHECK_TRUE(mine.message().find("a graph this process built") != std::string::npos);
}

TEST(ModelKernels, SerializeNamesTheNodesCompileRecorded) {
  Instance g;
  REQUIRE_OK(g.shared->Choose(kSoc, "AddCustom", "float32"));
  g.shared->RecordNode("resnet/add_16", "AddCustom");
  g.shared->RecordNode("resnet/add_1", "AddCustom");
  auto bytes = g.shared->Serialize();
  REQUIRE_OK(bytes);
  std::vector<BundleSoc> socs;
  std::vector<BundleNode> nodes;
  REQUIRE_OK(DecodeBundle(bytes.value().data(), bytes.value().size(), &socs, nullptr, &nodes));
  REQUIRE_EQ(nodes.size(), size_t{2});
  CHECK_EQ(nodes[0].node + " " + nodes[1].node, std::string("resnet/add_1 resnet/add_16"));
  CHECK_EQ(nodes[0].op, std::string("AddCustom"));
}

TEST(ModelKernels, AModelIsKnownByItsBytesNotByItsNodesNames) {
  Instance g;
  std::string note;
  const std::vector<uint8_t> a = Model("host A", {"add", "add_1"});
  REQUIRE_OK(g.models.Add(*g.shared, a, &note));
  // The same bytes again (a second instance of the OM, or an unload and a reload): the same
  // model, loaded, running what it ran.
  REQUIRE_OK(g.models.Add(*g.shared, a, &note));
  CHECK_TRUE(note.find("the model (sha256 " + ShaOf(a).substr(0, 12) + "...) was loaded before") == 0);
  CHECK_EQ(g.models.size(), size_t{1});
  CHECK_EQ(RunsFor(g.models, *g.shared, "add", "flat"), Expected("host A", "flat"));
  // A rebuilt model under the same node names (hot reload): another model, loaded, not refused;
  // on OM2's path each thread's nodes run the model that thread loaded last.
  const std::vector<uint8_t> rebuilt = Model("host A, rebuilt", {"add", "add_1"});
  REQUIRE_OK(g.models.Add(*g.shared, rebuilt, &note));
  CHECK_EQ(g.models.size(), size_t{2});
  CHECK_EQ(RunsFor(g.models, *g.shared, "add", "flat", "float32", true), Expected("host A, rebuilt", "flat"));
  CHECK_EQ(RunsFor(g.models, *g.shared, "add_1", "row_16x256", "float32", true),
           Expected("host A, rebuilt", "row_16x256"));
  std::string other_thread;
  std::thread([&] {
    std::string n;
    REQUIRE_OK(g.models.Add(*g.shared, a, &n));  // the first model again, on another thread
    other_thread = RunsFor(g.models, *g.shared, "add", "flat", "float32", true);
  }).join();
  CHECK_EQ(other_thread, Expected("host A", "flat"));
  // This thread still runs what it loaded last.
  CHECK_EQ(RunsFor(g.models, *g.shared, "add", "flat", "float32", true), Expected("host A, rebuilt", "flat"));
  // A node the thread's last model does not name goes by name: "online/add" is nobody's.
  CHECK_EQ(RunsFor(g.models, *g.shared, "online/add", "flat", "float32", true),
           ShaOf(test_support::FakeBinary(kSoc, "float32", "flat")));
}

TEST(ModelKernels, AModelOfTheInstancesOwnKernelsStillServesItsNodesAttributeWords) {
  // Its kernels are the package's (it joins the registry), yet an OM2 node of it takes the
  // words its Compile recorded: LeakyReluCustom's alpha 0.2f is 0x3E4CCCCD.
  Instance g;
  BundleSoc set;
  for (const auto &k : test_support::AllVariants("float32")) {
    set.binaries.push_back({test_support::BinaryName(k.variant, "float32"), test_support::FakeBinary(kSoc, "float32", k.variant)});
  }
  set.manifest_json = test_support::ManifestJson(kSoc, test_support::AllVariants("float32"));
  REQUIRE_OK(g.models.Add(*g.shared, EncodeBundle({set}, {}, {{"lrelu", "LeakyReluCustom", {0x3E4CCCCDull}}}).value(),
                          nullptr));
  const ModelKernels::Model *model = nullptr;
  REQUIRE_OK(g.models.ForOm2Node("lrelu", &model));
  REQUIRE_TRUE(model != nullptr);
  CHECK_TRUE(!model->own_kernels);
  std::vector<uint64_t> words;
  REQUIRE_TRUE(model->decoded->NodeAttrWords("lrelu", &words));
  CHECK_TRUE(words == std::vector<uint64_t>{0x3E4CCCCDull});
  // By name in GE's graph runtime it is not bound (the instance's registry answers).
  CHECK_TRUE(!Bound(g.models, "lrelu"));
}

TEST(ModelKernels, SerializeCarriesTheAttributeWordsCompileRecorded) {
  Instance g;
  REQUIRE_OK(g.shared->Choose(kSoc, "AddCustom", "float32"));
  g.shared->RecordNode("lrelu_a", "LeakyReluCustom", {0x3E4CCCCDull});
  g.shared->RecordNode("lrelu_b", "LeakyReluCustom", {0x80000000ull});  // -0.0f keeps its sign
  g.shared->RecordNode("add", "AddCustom");
  auto bytes = g.shared->Serialize();
  REQUIRE_OK(bytes);
  auto back = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(back);
  std::vector<uint64_t> words;
  REQUIRE_TRUE(back.value()->NodeAttrWords("lrelu_a", &words));
  CHECK_TRUE(words == std::vector<uint64_t>{0x3E4CCCCDull});
  REQUIRE_TRUE(back.value()->NodeAttrWords("lrelu_b", &words));
  CHECK_TRUE(words == std::vector<uint64_t>{0x80000000ull});
  CHECK_TRUE(!back.value()->NodeAttrWords("add", &words));
  CHECK_TRUE(!back.value()->NodeAttrWords("absent", &words));
}
