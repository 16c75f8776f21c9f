// HEAD's OM2 path (built only for a tag whose GE has the OM2 code generator,
// upstream_files.json "om2"): the generated code takes the op from GE's factory
// (CustomOpFactory::CreateOrGetCustomOp: the one instance, which also compiles graphs),
// Deserializes every model it loads into it, and runs every node of every model through it
// (hicann/ge base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc:
// DeserializeCustKernelBinaries, KernelCustTaskDistribute). Each model must run the kernels it
// carries, also where the package or another model has other binaries under the same key,
// or be refused in one line (core/model_kernels.h).
//
// The models are built on two other hosts (OtherPackage) whose npubins differ from each other
// and from this process's package; their node names are prefixed per model ("om2_a/", ...),
// so these cases bind no name the other cases' graphs use on the same instance.
#include <string>
#include <vector>

#include "whole_models.h"

using namespace harness;
using namespace whole_models;

namespace {

std::vector<uint8_t> HostBinary(const std::string &host, const std::string &soc, const std::string &dtype,
                                const std::string &variant) {
  return test_support::ElfObject({{test_support::EntryName(variant, dtype)}},
                                 "npubin of " + host + " for " + soc + " " + variant + " " + dtype);
}

BytesOf HostBytes(const std::string &host) {
  return [host](const std::string &dtype, const std::string &variant) { return HostBinary(host, kSoc, dtype, variant); };
}

const OtherPackage &Host(const std::string &host) {
  static auto *hosts = new std::map<std::string, OtherPackage *>();  // kept loaded, never destroyed
  auto &h = (*hosts)[host];
  if (h == nullptr) {
    h = new OtherPackage([host](const test_support::TempDir &dir, const std::string &root) {
      std::vector<KernelSpec> kernels = AllKernels();
      for (auto &k : kernels) k.binary = HostBinary(host, kSoc, k.dtype, k.variant);
      dir.Write(root + "/kernels/" + std::string(kSoc) + "/manifest.json", test_support::ManifestJson(kSoc, kernels));
      for (const auto &k : kernels) {
        dir.Write(root + "/kernels/" + std::string(kSoc) + "/" + test_support::BinaryName(k.variant, k.dtype), k.binary);
      }
    });
  }
  return *h;
}

Model Renamed(const Model &m, const std::string &prefix) {
  Model out = m;
  for (Node &n : out.nodes) n.name = prefix + n.name;
  return out;
}

// The model m (its nodes renamed with prefix) built for kSoc on host, serialized.
std::vector<uint8_t> Built(const std::string &host, const Model &m, Problems *p) {
  auto op = Host(host).Op();
  if (op == nullptr) {
    p->push_back(host + "'s library lists no AddCustom creator");
    return {};
  }
  InstallPlatform(kSoc, "");
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(op.get(), m, kSoc, HostBytes(host), p, &names); });
  std::vector<uint8_t> bytes;
  if (As<ge::PortableOp>(op.get())->Serialize(bytes) != ge::GRAPH_SUCCESS) p->push_back("Serialize refused");
  return bytes;
}

// DeserializeCustKernelBinaries: the op from GE's factory, cast to PortableOp, Deserialize.
ge::graphStatus Om2Deserialize(const std::vector<uint8_t> &bytes, std::string *err) {
  P();  // the process's package library, loaded as GE loads it (its creator in GE's factory)
  ge::BaseCustomOp *op = ge::CustomOpFactory::CreateOrGetCustomOp(ge::AscendString(kOpType));
  auto *portable = dynamic_cast<ge::PortableOp *>(op);
  if (portable == nullptr) return ge::GRAPH_FAILED;
  ge::graphStatus st = ge::GRAPH_FAILED;
  *err = CaptureStderr([&] { st = portable->Deserialize(bytes); });
  return st;
}

// KernelCustTaskDistribute: every node through GE's factory's instance.
ge::BaseCustomOp *Om2Op(const Node &) { return ge::CustomOpFactory::CreateOrGetCustomOp(ge::AscendString(kOpType)); }

}  // namespace

TEST(Om2, TwoModelsWithOtherBinariesUnderOneKeyEachRunTheirOwnOnTheGlobalInstance) {
  // The encoder (host A) and MobileNetV2 (host B) share the float16 kernels' keys (Ascend910B1,
  // AddCustom, flat/row/..., float16) with each other and with this process's package, each
  // with other bytes. Loaded one after the other into the one instance, each model's nodes run
  // its own npubins; a node of neither runs the package's.
  const Model *encoder = Find("transformer_encoder"), *mobilenet = Find("mobilenet_v2");
  REQUIRE_TRUE(encoder != nullptr && mobilenet != nullptr);
  const Model a = Renamed(*encoder, "om2_a/"), b = Renamed(*mobilenet, "om2_b/");
  Problems p;
  const std::vector<uint8_t> bytes_a = Built("host A", a, &p), bytes_b = Built("host B", b, &p);
  std::string err;
  REQUIRE_EQ(Om2Deserialize(bytes_a, &err), ge::GRAPH_SUCCESS);
  CHECK_TRUE(Contains(err, "Deserialize: the model's ") && Contains(err, " node(s) run its own kernels"));
  REQUIRE_EQ(Om2Deserialize(bytes_b, &err), ge::GRAPH_SUCCESS);
  int launched = 0;
  ExecuteAll(Om2Op, a, kSoc, HostBytes("host A"), &p, &launched);
  ExecuteAll(Om2Op, b, kSoc, HostBytes("host B"), &p, &launched);
  // Interleaved, as two models run at once: the first node of each again.
  ExecuteAll(Om2Op, Model{"a again", {a.nodes.front()}}, kSoc, HostBytes("host A"), &p, &launched);
  ExecuteAll(Om2Op, Model{"b again", {b.nodes.front()}}, kSoc, HostBytes("host B"), &p, &launched);
  CHECK_EQ(launched, static_cast<int>(a.nodes.size() + b.nodes.size() + 2));
  const Model online = Renamed(*mobilenet, "om2_online/");
  ExecuteAll(Om2Op, Model{"online", {online.nodes.front()}}, kSoc, PackageBytes(kSoc), &p, &launched);
  std::printf("# OM2: %zu + %zu nodes of two models with other binaries under the same keys, each ran its own\n",
              a.nodes.size(), b.nodes.size());
  Report(p);
}

TEST(Om2, AModelOfThePackagesOwnBinariesJoinsTheInstanceAndWhatCannotBeToldApartIsRefused) {
  const Model *resnet = Find("resnet50");
  REQUIRE_TRUE(resnet != nullptr);
  Problems p;
  // Built by this process's package (the same bytes): no registry of its own is needed.
  const Model same = Renamed(*resnet, "om2_same/");
  auto builder = PulledOp();
  REQUIRE_TRUE(builder != nullptr);  // the library lists AddCustom in its own pull registry
  InstallPlatform(kSoc, "");
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(builder.get(), same, kSoc, PackageBytes(kSoc), &p, &names); });
  std::vector<uint8_t> bytes;
  REQUIRE_EQ(As<ge::PortableOp>(builder.get())->Serialize(bytes), ge::GRAPH_SUCCESS);
  std::string err;
  REQUIRE_EQ(Om2Deserialize(bytes, &err), ge::GRAPH_SUCCESS);
  CHECK_TRUE(!Contains(err, "run its own kernels"));
  int launched = 0;
  ExecuteAll(Om2Op, same, kSoc, PackageBytes(kSoc), &p, &launched);
  // Another host's ResNet50 under node names host C's model used already: a model is known by
  // its bytes, so it loads; by name alone (GE's graph runtime's context names no model) its
  // nodes are refused in one line, never run on either host's binaries (om2_node_info_tests.cc
  // runs them through OM2's own blocks, where the thread's last loaded model serves them).
  const Model c = Renamed(*resnet, "om2_c/");
  REQUIRE_EQ(Om2Deserialize(Built("host C", c, &p), &err), ge::GRAPH_SUCCESS);
  const std::vector<uint8_t> again = Built("host D", c, &p);
  REQUIRE_EQ(Om2Deserialize(again, &err), ge::GRAPH_SUCCESS);
  NodeEagerCall call(kOpType, {c.nodes.front().x, c.nodes.front().y}, c.nodes.front().ge_dtype, {}, c.nodes.front().name);
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(Om2Op(c.nodes.front()))->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom node " + c.nodes.front().name + ": 2 models with kernels of their "
                           "own name node " + c.nodes.front().name));
  Report(p);
}
