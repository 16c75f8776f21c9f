// The global-instance path (model_kernels.h): models deserialized into an instance that has
// kernels of its own, as HEAD's OM2 generated code does. Each model's nodes run the binaries
// that model carries, also where the package or another model has other binaries under the
// same (SoC, op, variant, dtype); what cannot be told apart is refused in one line.
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
std::vector<uint8_t> Model(const std::string &who, const std::vector<std::string> &nodes, const std::string &dtype = "float32") {
  BundleSoc set;
  std::vector<KernelSpec> specs = test_support::AllVariants(dtype);
  for (auto &k : specs) {
    k.binary = test_support::ElfObject({{test_support::EntryName(k.variant, dtype)}},
                                       "built by " + who + " for " + k.variant + " " + dtype);
    set.binaries.push_back({test_support::BinaryName(k.variant, dtype), k.binary});
  }
  set.manifest_json = test_support::ManifestJson(kSoc, specs);
  std::vector<BundleNode> named;
  for (const auto &n : nodes) named.push_back({n, "AddCustom"});
  return EncodeBundle({set}, {}, named).value();
}

std::string ShaOf(const std::vector<uint8_t> &b) { return Sha256Hex(b.data(), b.size()); }

std::string Expected(const std::string &who, const std::string &variant, const std::string &dtype = "float32") {
  return ShaOf(test_support::ElfObject({{test_support::EntryName(variant, dtype)}},
                                       "built by " + who + " for " + variant + " " + dtype));
}

// What a node's Execute would run: the model's registry for its nodes, else the instance's.
std::string RunsFor(ModelKernels &models, KernelRegistry &shared, const char *node, const std::string &variant,
                    const std::string &dtype = "float32") {
  std::shared_ptr<KernelRegistry> own = models.ForNode(node);
  auto found = (own ? *own : shared).Find(kSoc, "AddCustom", variant, dtype);
  return found.ok() ? ShaOf(*found.value().bytes) : found.status().ToString();
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
  CHECK_TRUE(g.models.ForNode("n1") == nullptr);
  // A model of another dtype the package lacks: nothing to differ from, it joins too.
  REQUIRE_OK(g.models.Add(*g.shared, Model("host C", {"n2"}, "bfloat16"), nullptr));
  CHECK_TRUE(g.models.ForNode("n2") == nullptr);
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
  // Two differing models sharing a node name.
  REQUIRE_OK(g.models.Add(*g.shared, Model("host A", {"add"}), nullptr));
  const Status twice = g.models.Add(*g.shared, Model("host B", {"other", "add"}), nullptr);
  CHECK_EQ(twice.code(), Code::kConflict);
  CHECK_TRUE(twice.message().find("its node add is also a node of a model loaded before") != std::string::npos);
  CHECK_TRUE(g.models.ForNode("other") == nullptr);  // nothing of the refused model was bound
  CHECK_EQ(RunsFor(g.models, *g.shared, "add", "flat"), Expected("host A", "flat"));
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
