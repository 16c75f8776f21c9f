// Whole models through GE's code: every AddCustom node of ResNet50, MobileNetV2 and a
// Transformer encoder block (tests/ge/fixtures/*.nodes.json, read by TensorFlow from the
// frozen graphs the package's export wrote) driven as GE builds and runs a model:
//   1. one graph build: Compile for every node (GE's custom-engine optimizer compiles each node
//      of a graph before any task exists), then DeclareLaunchArgs for every node (sunk);
//   2. Execute for every node (eager, a dynamic-shape model);
//   3. Serialize, Deserialize into a fresh instance, Execute every node again;
// for Ascend910B1 (its own kernels) and the board Ascend910B4-1 (served by Ascend910B4's
// kernels of the same architecture). Then the model loaded the way GE's OM loader loads it
// at HEAD (CustomOpFactory::LoadCustomOpsPartition, into the one instance that also
// compiles), and two graphs compiled and declared from two threads at once.
//
// The expected launch of each node (variant, operand order, extents, strides, programs) comes
// from tests/ge/launch_oracle.py, which works it out from docs/kernels.md's rules, not with the
// library's code (TF_GE_IN_LOOP_MODELS names the scenario it wrote); every launch's argument
// bytes are compared with harness.h's hand-written 64- and 104-byte layouts.
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "testing.h"

using namespace harness;

namespace {

// What caps the programs of a launch (written out from where the values are set): the
// declared launch takes the manifest's grid.max_programs (test_support.cc writes 40), Execute
// the device's vector cores (the recording ACL answers 48).
constexpr uint64_t kManifestPrograms = 40;
constexpr uint64_t kDeviceVectorCores = 48;

struct Node {
  std::string name, dtype, variant, kernel_name;
  ge::DataType ge_dtype = ge::DT_UNDEFINED;
  std::vector<int64_t> x, y, z;
  std::vector<int> operands;
  bool tiled = false;
  uint64_t n = 0, tiles = 0;
  std::vector<uint64_t> dims, strides;
};

struct Model {
  std::string name;
  std::vector<Node> nodes;
};

ge::DataType GeDType(const std::string &name) {
  if (name == "float32") return ge::DT_FLOAT;
  if (name == "float16") return ge::DT_FLOAT16;
  if (name == "bfloat16") return ge::DT_BF16;
  if (name == "int32") return ge::DT_INT32;
  return ge::DT_UNDEFINED;
}

// The scenario tests/ge/launch_oracle.py wrote; empty (and *why set) without one.
std::vector<Model> Models(std::string *why) {
  const char *path = std::getenv("TF_GE_IN_LOOP_MODELS");
  if (path == nullptr || *path == '\0') {
    *why = "TF_GE_IN_LOOP_MODELS is unset (tests/ge/test_ge_in_loop.py writes the scenario)";
    return {};
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.contains("models")) {
    *why = std::string("cannot read the scenario ") + path;
    return {};
  }
  std::vector<Model> models;
  for (const auto &m : doc["models"]) {
    Model model;
    model.name = m["name"].get<std::string>();
    for (const auto &n : m["nodes"]) {
      Node node;
      node.name = n["name"].get<std::string>();
      node.dtype = n["dtype"].get<std::string>();
      node.ge_dtype = GeDType(node.dtype);
      node.x = n["x"].get<std::vector<int64_t>>();
      node.y = n["y"].get<std::vector<int64_t>>();
      node.z = n["z"].get<std::vector<int64_t>>();
      const auto &l = n["launch"];
      node.variant = l["variant"].get<std::string>();
      node.kernel_name = l["kernel_name"].get<std::string>();
      node.operands = l["operands"].get<std::vector<int>>();
      node.tiled = l["tiled"].get<bool>();
      node.n = l["n"].get<uint64_t>();
      node.tiles = l["tiles"].get<uint64_t>();
      node.dims = l["dims"].get<std::vector<uint64_t>>();
      node.strides = l["strides"].get<std::vector<uint64_t>>();
      model.nodes.push_back(std::move(node));
    }
    models.push_back(std::move(model));
  }
  if (models.empty()) *why = std::string("the scenario ") + path + " holds no model";
  return models;
}

const std::vector<Model> &AllModels() {
  static std::string why;
  static const std::vector<Model> models = Models(&why);
  if (models.empty()) std::fprintf(stderr, "whole-model cases: %s\n", why.c_str());
  return models;
}

const Model *Find(const std::string &name) {
  for (const Model &m : AllModels()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// What went wrong, one line each (collected, so that threads can run the checks too).
using Problems = std::vector<std::string>;

void Expect(Problems *p, bool ok, const std::string &what) {
  if (!ok) p->push_back(what);
}

std::string Hex(const std::vector<uint8_t> &b) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

uint64_t InputAddress(int input) { return input == 0 ? kX : kY; }  // the calls give x kX, y kY

// The launch's argument bytes by harness.h's hand-written layouts: kernel operand a reads op
// input operands[0]; a declared launch has its ffts word 0 (core/declared_launch.h).
std::vector<uint8_t> ExpectedArgs(const Node &n, uint64_t z, uint64_t programs, bool declared) {
  const uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>(n.tiles, programs));
  const uint64_t a = InputAddress(n.operands[0]), b = InputAddress(n.operands[1]);
  std::vector<uint8_t> bytes = n.tiled ? TiledArgs(a, b, z, n.dims, n.strides, grid) : FlatArgs(a, b, z, n.n, grid);
  if (declared) std::fill(bytes.begin(), bytes.begin() + 8, 0);
  return bytes;
}

// The descriptors GE's handler records: ffts, lock and workspace as values, the two operands'
// op inputs and the output, then the value words (8 bytes each) after them.
std::string ExpectedDescs(const Node &n) {
  std::string s = "c c c " + InputDesc(n.operands[0]) + " " + InputDesc(n.operands[1]) + " " + OutputDesc(0);
  for (int w = 0; w < (n.tiled ? 7 : 2); ++w) s += " c";
  return s;
}

std::string What(const Model &m, const Node &n, const std::string &board, const char *step) {
  return m.name + " " + n.name + " (" + n.dtype + " " + n.variant + ") on " + board + ", " + step + ": ";
}

// One graph build of m for board (the platform stand-in names it): Compile every node, then
// declare every node; every declaration checked against the oracle. *names gets each kernel
// name declared with the bytes it carried. No stderr capture: callable from several threads.
void BuildGraph(ge::BaseCustomOp *op, const Model &m, const std::string &board, const std::string &kernels_soc,
                Problems *p, std::map<std::string, std::vector<uint8_t>> *names) {
  for (const Node &n : m.nodes) {
    const ge::graphStatus st = Compile(op, n.ge_dtype, n.ge_dtype, n.name);
    Expect(p, st == ge::GRAPH_SUCCESS, What(m, n, board, "Compile") + "refused");
  }
  for (const Node &n : m.nodes) {
    const std::string what = What(m, n, board, "DeclareLaunchArgs");
    AnnotatedCall call(n.x, n.y, n.z, n.ge_dtype, 5, n.name);
    if (As<ge::AnnotatedArgsOp>(op)->DeclareLaunchArgs(call.ctx()) != ge::GRAPH_SUCCESS) {
      p->push_back(what + "refused");
      continue;
    }
    const std::vector<RecordedDeclaration> d = call.Declared();
    if (d.size() != 1) {
      p->push_back(what + std::to_string(d.size()) + " launches declared");
      continue;
    }
    Expect(p, d[0].kernel_name == n.kernel_name, what + "kernel " + d[0].kernel_name + ", expected " + n.kernel_name);
    Expect(p, d[0].kernel_bin == test_support::FakeBinary(kernels_soc, n.dtype, n.variant),
           what + "the bytes are not " + kernels_soc + "'s " + n.variant + " " + n.dtype + " npubin");
    const uint64_t grid = std::min<uint64_t>(n.tiles, kManifestPrograms);
    Expect(p, d[0].block_dim == grid, what + "block dim " + std::to_string(d[0].block_dim) + ", expected " +
                                          std::to_string(grid));
    Expect(p, d[0].stream_id == 5u, what + "stream " + std::to_string(d[0].stream_id));
    Expect(p, DescString(d[0].descs) == ExpectedDescs(n),
           what + "descriptors " + DescString(d[0].descs) + ", expected " + ExpectedDescs(n));
    const std::vector<uint8_t> args = ExpectedArgs(n, AnnotatedCall::kZ, kManifestPrograms, true);
    Expect(p, d[0].args == args, what + "words " + Hex(d[0].args) + ", expected " + Hex(args));
    const auto first = names->emplace(d[0].kernel_name, d[0].kernel_bin);
    Expect(p, first.first->second == d[0].kernel_bin, what + "kernel name " + d[0].kernel_name +
                                                          " declared with two binaries in one graph");
  }
}

// Execute every node of m on a fresh device reporting board; each launch checked against the
// oracle, with the loaded bytes kernels_soc's npubin and the function its kernel name.
void ExecuteAll(ge::BaseCustomOp *op, const Model &m, const std::string &board, const std::string &kernels_soc,
                Problems *p, int *launched) {
  recording_acl::Reset(OnFreshDevice(board));
  for (const Node &n : m.nodes) {
    const std::string what = What(m, n, board, "Execute");
    const size_t before = recording_acl::Take().launches.size();
    EagerCall call(n.x, n.y, n.ge_dtype, n.ge_dtype, n.name);
    ge::graphStatus st = ge::GRAPH_FAILED;
    const std::string err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(op)->Execute(call.ctx()); });
    if (st != ge::GRAPH_SUCCESS) {
      p->push_back(what + "refused: " + err);
      continue;
    }
    const recording_acl::Record r = recording_acl::Take();
    if (r.launches.size() != before + 1) {
      p->push_back(what + std::to_string(r.launches.size() - before) + " launches");
      continue;
    }
    ++*launched;
    const recording_acl::Launch &l = r.launches.back();
    Expect(p, DimsOf(call.z.GetStorageShape()) == n.z, what + "output shape");
    Expect(p, l.stream == call.stream, what + "stream");
    const uint64_t grid = std::min<uint64_t>(n.tiles, kDeviceVectorCores);
    Expect(p, l.block_dim == grid, what + "block dim " + std::to_string(l.block_dim) + ", expected " +
                                       std::to_string(grid));
    const std::vector<uint8_t> args = ExpectedArgs(n, call.allocator.last, kDeviceVectorCores, false);
    Expect(p, l.args == args, what + "args " + Hex(l.args) + ", expected " + Hex(args));
    const recording_acl::GetFunction *fn = nullptr;
    for (const auto &f : r.functions) {
      if (f.function == l.function) fn = &f;
    }
    if (fn == nullptr) {
      p->push_back(what + "launched a function no aclrtBinaryGetFunction gave");
      continue;
    }
    Expect(p, fn->entry == n.kernel_name, what + "function " + fn->entry + ", expected " + n.kernel_name);
    for (const auto &load : r.loads) {
      if (load.binary == fn->binary) {
        Expect(p, load.bytes == test_support::FakeBinary(kernels_soc, n.dtype, n.variant),
               what + "loaded other bytes than " + kernels_soc + "'s " + n.variant + " " + n.dtype + " npubin");
      }
    }
  }
}

std::string Summary(const Model &m, const std::map<std::string, std::vector<uint8_t>> &names, int launched) {
  std::set<std::string> variants, dtypes;
  for (const Node &n : m.nodes) {
    variants.insert(n.variant);
    dtypes.insert(n.dtype);
  }
  std::string v, d;
  for (const auto &s : variants) v += (v.empty() ? "" : ",") + s;
  for (const auto &s : dtypes) d += (d.empty() ? "" : ",") + s;
  return m.name + ": " + std::to_string(m.nodes.size()) + " AddCustom nodes, " + std::to_string(variants.size()) +
         " variants (" + v + "), dtypes " + d + ", " + std::to_string(names.size()) + " kernel names, " +
         std::to_string(launched) + " launches checked";
}

void Report(Problems &p) {
  for (size_t i = 0; i < p.size() && i < 20; ++i) testing::RecordFailure(__FILE__, __LINE__, p[i]);
  if (p.size() > 20) testing::RecordFailure(__FILE__, __LINE__, std::to_string(p.size() - 20) + " more problems");
}

// The whole flow for one model and board.
void RunModel(const std::string &model, const std::string &board, const std::string &kernels_soc) {
  const Model *m = Find(model);
  REQUIRE_TRUE(m != nullptr);
  REQUIRE_TRUE(!m->nodes.empty());
  InstallPlatform(board, "");
  ge::BaseCustomOp *op = FactoryOp();  // the one instance GE's factory holds, as online
  Problems p;
  std::map<std::string, std::vector<uint8_t>> names;
  std::string err = CaptureStderr([&] { BuildGraph(op, *m, board, kernels_soc, &p, &names); });
  // Compile's progress lines only: no refusal ("<op> node <name>: ...") reached stderr.
  Expect(&p, !Contains(err, "[tf-ge-custom] AddCustom node "), "a refusal on stderr: " + err.substr(0, 2000));
  // Distinct kernels, distinct names: one name per (variant, dtype) of the graph.
  std::set<std::string> kernels;
  for (const Node &n : m->nodes) kernels.insert(n.variant + " " + n.dtype);
  Expect(&p, names.size() == kernels.size(), m->name + ": " + std::to_string(names.size()) + " kernel names for " +
                                                 std::to_string(kernels.size()) + " kernels");
  int launched = 0;
  ExecuteAll(op, *m, board, kernels_soc, &p, &launched);
  // The model's bytes, as GE writes them into the OM, run in an instance that never compiled.
  std::vector<uint8_t> bytes;
  Expect(&p, As<ge::PortableOp>(op)->Serialize(bytes) == ge::GRAPH_SUCCESS, "Serialize refused");
  auto fresh = PulledOp();
  REQUIRE_TRUE(fresh != nullptr);
  Expect(&p, As<ge::PortableOp>(fresh.get())->Deserialize(bytes) == ge::GRAPH_SUCCESS, "Deserialize refused");
  ExecuteAll(fresh.get(), *m, board, kernels_soc, &p, &launched);
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

TEST(WholeModel, AnInstanceThatNeverCompiledRefusesTheBoardUntilTheModelServesIt) {
  // The serving Compile chose travels in the model: without it, a fresh instance has no
  // kernels of the board's name.
  const Model *m = Find("transformer_encoder");
  REQUIRE_TRUE(m != nullptr);
  const Node &n = m->nodes.front();
  auto fresh = PulledOp();
  recording_acl::Reset(OnFreshDevice(kBoard));
  EagerCall call(n.x, n.y, n.ge_dtype, n.ge_dtype, "unserved_node");
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(fresh.get())->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node unserved_node: ") && Contains(err, kBoard));
}

TEST(WholeModel, LoadCustomOpsPartitionDeserializesIntoTheInstanceThatStillCompiles) {
  // GE's OM loader at HEAD (custom_op_factory.cc, custom_op_registry.cc): the model's
  // CUSTOM_OPS partition, item by item (header: magic "KCSK", name length, binary length, as
  // inc/framework/common/framework_types_internal.h lays it out; then the op type and the
  // PortableOp bytes), deserialized into the instance GE's factory holds.
  const Model *m = Find("transformer_encoder");
  REQUIRE_TRUE(m != nullptr);
  // The model: built for the board by an instance of its own, as on the host that built the OM.
  InstallPlatform(kBoard, "");
  auto builder = PulledOp();
  Problems p;
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(builder.get(), *m, kBoard, kArchSoc, &p, &names); });
  std::vector<uint8_t> model;
  REQUIRE_EQ(As<ge::PortableOp>(builder.get())->Serialize(model), ge::GRAPH_SUCCESS);
  std::vector<uint8_t> partition;
  const std::string type = kOpType;
  Le(&partition, 0x4B43534Bu, 4);
  Le(&partition, type.size(), 4);
  Le(&partition, model.size(), 4);
  partition.insert(partition.end(), type.begin(), type.end());
  partition.insert(partition.end(), model.begin(), model.end());
  ge::graphStatus loaded = ge::GRAPH_FAILED;
  std::string err = CaptureStderr([&] { loaded = ge::CustomOpFactory::LoadCustomOpsPartition(partition.data(), partition.size()); });
  REQUIRE_EQ(loaded, ge::GRAPH_SUCCESS);
  CHECK_EQ(err, std::string());
  ge::BaseCustomOp *op = FactoryOp();
  // The model runs on the board in that instance...
  int launched = 0;
  ExecuteAll(op, *m, kBoard, kArchSoc, &p, &launched);
  CHECK_EQ(launched, static_cast<int>(m->nodes.size()));
  // ... which keeps its OPP root: a packaged SoC the model lacks (Ascend910B1 bfloat16) still
  // compiles from the package, with nothing built, and runs its npubin.
  const char *count = std::getenv("TF_GE_CUSTOM_DOUBLE_COUNT");
  const auto builds = [&] {
    std::ifstream in(count != nullptr ? count : "");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all;
  };
  const std::string builds_before = builds();
  InstallPlatform(kSoc, "");
  ge::graphStatus st = ge::GRAPH_FAILED;
  err = CaptureStderr([&] { st = Compile(op, ge::DT_BF16, ge::DT_BF16, "after_load"); });
  CHECK_EQ(st, ge::GRAPH_SUCCESS);
  const std::string from_package = "AddCustom bfloat16 for SoC " + std::string(kSoc) + ": the package (";
  CHECK_EQ(Contains(err, from_package) ? from_package : err, from_package);
  CHECK_EQ(builds(), builds_before);
  recording_acl::Reset(OnFreshDevice(kSoc));
  EagerCall call({4096}, {4096}, ge::DT_BF16, ge::DT_BF16);
  CHECK_EQ(As<ge::EagerExecuteOp>(op)->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  REQUIRE_EQ(r.loads.size(), size_t{1});
  CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "bfloat16", "flat"));
  // A partition item that is no AddCustom bundle is refused by the op, through GE's loader.
  std::vector<uint8_t> broken = partition;
  broken.back() ^= 1;
  err = CaptureStderr([&] { loaded = ge::CustomOpFactory::LoadCustomOpsPartition(broken.data(), broken.size()); });
  CHECK_TRUE(loaded != ge::GRAPH_SUCCESS);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom: Deserialize"));
  Report(p);
  InstallPlatform(kSoc, "");
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
    for (int round = 0; round < 4; ++round) BuildGraph(op, *m, kSoc, kSoc, p, names);
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
