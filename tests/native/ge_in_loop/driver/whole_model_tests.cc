// Whole models through GE's code: every AddCustom node of ResNet50, MobileNetV2 and a
// Transformer encoder block, and every AddCustom and LeakyReluCustom node of a Darknet-53 stage
// (whole_models.h), driven as GE builds and runs a model:
//   1. one graph build on the instances GE's factory holds, one per op type (online, and
//      ATC's, whose OM save serializes those instances: graph_builder.cc sets the global
//      registry): Compile for every node, then DeclareLaunchArgs for every node (sunk);
//   2. Execute for every node (eager, a dynamic-shape model);
//   3. Serialize of each op type's instance, one item each, then the OM loaded as GE's OM
//      loader loads it (om_loader.h: the model's own copy of the library from a memfd, a
//      per-model registry, LoadCustomOpsPartition: a fresh instance per op type, each
//      Deserialize'd with its item), and Execute every node again on that model's instances;
// for Ascend910B1 (its own kernels) and the board Ascend910B4-1 (served by Ascend910B4's
// kernels of the same architecture). And two graphs compiled and declared from two threads at
// once. om_load_tests.cc loads models built on another host; om2_global_instance_tests.cc
// runs HEAD's OM2 path (every model deserialized into the one instance).
#include <atomic>
#include <thread>

#include "om_loader.h"
#include "whole_models.h"

using namespace harness;
using namespace whole_models;

namespace {

// The whole flow for one model and board.
void RunModel(const std::string &model, const std::string &board, const std::string &kernels_soc) {
  const Model *m = Find(model);
  REQUIRE_TRUE(m != nullptr);
  REQUIRE_TRUE(!m->nodes.empty());
  InstallPlatform(board, "");
  // The one instance GE's factory holds per op type, as online.
  const OpOf factory = [](const Node &n) { return FactoryOp(n.op); };
  std::vector<std::string> used;  // the model's op types, in the table's order
  for (const std::string &type : kOpTypes) {
    for (const Node &n : m->nodes) {
      if (n.op == type) {
        used.push_back(type);
        break;
      }
    }
  }
  Problems p;
  std::map<std::string, std::vector<uint8_t>> names;
  const OpBytesOf bytes = PackageOpBytes(kernels_soc);
  std::string err = CaptureStderr([&] { BuildGraph(factory, *m, board, bytes, &p, &names); });
  // Compile's progress lines only: no refusal ("<op> node <name>: ...") reached stderr.
  for (const std::string &type : kOpTypes) {
    Expect(&p, !Contains(err, "[tf-ge-custom] " + type + " node "), "a refusal on stderr: " + err.substr(0, 2000));
  }
  // Distinct kernels, distinct names: one name per (op, variant, dtype) of the graph.
  std::set<std::string> kernels;
  for (const Node &n : m->nodes) kernels.insert(n.op + " " + n.variant + " " + n.dtype);
  Expect(&p, names.size() == kernels.size(), m->name + ": " + std::to_string(names.size()) + " kernel names for " +
                                                 std::to_string(kernels.size()) + " kernels");
  int launched = 0;
  ExecuteAll(factory, *m, board, bytes, &p, &launched);
  // The model's bytes, as GE writes them into the OM (an item per op type), run where GE's OM
  // loader puts them.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> items;
  for (const std::string &type : used) {
    items.emplace_back(type, std::vector<uint8_t>());
    Expect(&p, As<ge::PortableOp>(FactoryOp(type))->Serialize(items.back().second) == ge::GRAPH_SUCCESS,
           type + ": Serialize refused");
  }
  const om_loader::LoadedModel loaded =
      om_loader::Load(om_loader::FileBytes(P().library_path), om_loader::CustomOpsPartition(items), used);
  REQUIRE_EQ(loaded.error, std::string());
  ExecuteAll(OpOf([&loaded](const Node &n) { return loaded.Op(n.op); }), *m, board, bytes, &p, &launched);
  std::printf("# %s on %s\n", Summary(*m, names, launched).c_str(), board.c_str());
  CHECK_EQ(launched, static_cast<int>(2 * m->nodes.size()));
  Report(p);
  InstallPlatform(kSoc, "");
}

}  // namespace

TEST(WholeModel, TheScenarioHoldsTheThreeModels) {
  // ResNet50's 16 residual adds, MobileNetV2's 10, the encoder block's mixed dtypes.
  const Model *resnet = Find("resnet50"), *mobilenet = Find("mobilenet_v2"), *encoder = Find("transformer_encoder");
  REQUIRE_TRUE(resnet != nullptr && mobilenet != nullptr && encoder != nullptr);
  CHECK_EQ(resnet->nodes.size(), size_t{16});
  CHECK_EQ(mobilenet->nodes.size(), size_t{10});
  std::set<std::string> dtypes, variants;
  for (const Node &n : encoder->nodes) {
    dtypes.insert(n.dtype);
    variants.insert(n.variant);
    CHECK_TRUE(n.ge_dtype != ge::DT_UNDEFINED);
  }
  CHECK_TRUE(dtypes.count("float16") && dtypes.count("float32") && dtypes.count("int32"));
  CHECK_TRUE(variants.size() >= 5);
}

TEST(WholeModel, ResNet50BuildsSinksRunsAndRoundTripsOnAscend910B1AndTheBoard) {
  RunModel("resnet50", kSoc, kSoc);
  RunModel("resnet50", kBoard, kArchSoc);
}

TEST(WholeModel, MobileNetV2BuildsSinksRunsAndRoundTripsOnAscend910B1AndTheBoard) {
  RunModel("mobilenet_v2", kSoc, kSoc);
  RunModel("mobilenet_v2", kBoard, kArchSoc);
}

TEST(WholeModel, AMixedPrecisionEncoderBuildsSinksRunsAndRoundTripsOnAscend910B1AndTheBoard) {
  RunModel("transformer_encoder", kSoc, kSoc);
  RunModel("transformer_encoder", kBoard, kArchSoc);
}

TEST(WholeModel, ADarknetStageMixingAddCustomAndLeakyReluCustomBuildsSinksRunsAndRoundTripsOnAscend910B1AndTheBoard) {
  // Both ops in one model: 6 AddCustom nodes (biases on the row kernel, residuals on the flat
  // one) and 6 LeakyReluCustom nodes, float16 at alpha 0.1, bfloat16 at -0.5, and float32 with
  // no alpha on the node (the default's word): each launch and declaration word by word,
  // alpha's included, through both op types' instances, the OM's items and fresh instances.
  const Model *m = Find("darknet_stage");
  REQUIRE_TRUE(m != nullptr);
  CHECK_EQ(m->nodes.size(), size_t{12});
  std::map<std::string, int> ops;
  std::set<uint32_t> alphas;
  int without = 0;
  for (const Node &n : m->nodes) {
    ++ops[n.op];
    if (n.unary()) {
      alphas.insert(n.alpha_bits);
      without += n.has_alpha ? 0 : 1;
    }
  }
  CHECK_EQ(ops[kOpType], 6);
  CHECK_EQ(ops[kLeakyRelu], 6);
  // 0.1f, 0.2f (the default), -0.5f: their binary32 bits by hand
  CHECK_EQ(std::vector<uint32_t>(alphas.begin(), alphas.end()),
           (std::vector<uint32_t>{0x3DCCCCCDu, 0x3E4CCCCDu, 0xBF000000u}));
  CHECK_EQ(without, 1);
  RunModel("darknet_stage", kSoc, kSoc);
  RunModel("darknet_stage", kBoard, kArchSoc);
}

TEST(WholeModel, AnInstanceThatNeverCompiledRefusesTheBoardUntilTheModelServesIt) {
  // The serving Compile chose travels in the model: without it, a fresh instance has no
  // kernels of the board's name.
  const Model *m = Find("transformer_encoder");
  REQUIRE_TRUE(m != nullptr);
  const Node &n = m->nodes.front();
  auto fresh = PulledOp();
  REQUIRE_TRUE(fresh != nullptr);  // the library lists AddCustom in its own pull registry
  recording_acl::Reset(OnFreshDevice(kBoard));
  EagerCall call(n.x, n.y, n.ge_dtype, n.ge_dtype, "unserved_node");
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(fresh.get())->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node unserved_node: ") && Contains(err, kBoard));
}

TEST(WholeModel, TwoGraphsCompiledAndDeclaredFromTwoThreadsAtOnce) {
  // Two graph builds on the one instance GE's factory holds, at the same time, for the same
  // SoC: the mixed-precision encoder and MobileNetV2 (float16), several rounds. No shared state
  // decides a declaration (no ledger): every declaration is the oracle's, every name one binary.
  const Model *a = Find("transformer_encoder"), *b = Find("mobilenet_v2");
  REQUIRE_TRUE(a != nullptr && b != nullptr);
  InstallPlatform(kSoc, "");
  ge::BaseCustomOp *op = FactoryOp();
  std::atomic<int> ready{0};
  Problems pa, pb;
  std::map<std::string, std::vector<uint8_t>> na, nb;
  auto run = [&](const Model *m, Problems *p, std::map<std::string, std::vector<uint8_t>> *names) {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
    for (int round = 0; round < 4; ++round) BuildGraph(op, *m, kSoc, PackageBytes(kSoc), p, names);
  };
  (void)CaptureStderr([&] {
    std::thread ta(run, a, &pa, &na), tb(run, b, &pb, &nb);
    ta.join();
    tb.join();
  });
  CHECK_EQ(pa.size() + pb.size(), size_t{0});
  Report(pa);
  Report(pb);
  // The two graphs share the float16 kernels they both use, under one name and one binary.
  for (const auto &name : na) {
    auto other = nb.find(name.first);
    if (other != nb.end()) CHECK_TRUE(other->second == name.second);
  }
  std::printf("# two threads: %zu + %zu nodes declared 4 times each, %zu + %zu kernel names\n", a->nodes.size(),
              b->nodes.size(), na.size(), nb.size());
}
