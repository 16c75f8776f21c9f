// HEAD's OM2 path with GE's own node-info layout (om2_context.h: the 88-byte block with no
// attribute area that the generated code builds, not metadef's builders): every op of the
// library's table runs with its attributes, as its Compile recorded them and the model carries
// them (bundle.h, version 4); a model that carries none is refused in one line, with nothing
// read past the block (the sanitizer build would stop there); an empty output keeps the
// address the model gave it; and a model is known by its bytes: the same model loaded twice,
// two models whose node names collide, and a rebuilt model loaded again each run their own
// kernels, the node served by the model its thread loaded last.
//
// Expectations are independent of the code under test: the launch words are the oracle's
// (tests/ge/launch_oracle.py through op_table.h: each attribute's binary32 bits worked out in
// Python), LeakyReluCustom's alpha words written out by hand (0.1f = 0x3DCCCCCD, -0.5f =
// 0xBF000000), binaries told apart by the bytes each host wrote.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "om2_context.h"
#include "testing.h"

using namespace harness;

#define CHECK_AT(what, a, b) ::testing::CheckEq((a), (b), ((what) + #a).c_str(), #b, __FILE__, __LINE__)

namespace {

constexpr uint64_t kDevicePrograms = 48;
constexpr uint64_t kFfts = 0x00000000FF001000ull;

// The oracle's words of launch l, with the addresses the OM2 call handed in.
std::vector<uint8_t> Args(const op_table::Launch &l, uint64_t output, uint64_t programs) {
  std::vector<uint8_t> bytes(l.size, 0);
  for (const op_table::Word &w : l.words) {
    uint64_t v = w.value;
    if (w.symbol == "ffts") {
      v = kFfts;
    } else if (w.symbol == "programs") {
      v = programs;
    } else if (w.symbol.rfind("input:", 0) == 0) {
      v = InputAt(std::stoul(w.symbol.substr(6)));
    } else if (w.symbol == "output:0") {
      v = output;
    } else if (!w.symbol.empty()) {
      testing::RecordFailure(__FILE__, __LINE__, "the oracle's word " + w.symbol + " is unknown here");
    }
    for (uint64_t i = 0; i < w.size && w.offset + i < bytes.size(); ++i) bytes[w.offset + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return bytes;
}

// The model of one node of op_type (its attributes attrs) built on a fresh instance: what a
// graph build serializes into the OM.
std::vector<uint8_t> OneNodeModel(const std::string &op_type, size_t inputs, ge::DataType dtype, const std::string &node,
                                  const NodeAttrs &attrs) {
  InstallPlatform(kSoc, "");
  auto builder = PulledOp(op_type);
  if (builder == nullptr) return {};
  ge::graphStatus st = ge::GRAPH_FAILED;
  const std::string err = CaptureStderr([&] { st = CompileNode(builder.get(), op_type, inputs, dtype, node, attrs); });
  if (st != ge::GRAPH_SUCCESS) {
    testing::RecordFailure(__FILE__, __LINE__, "Compile of " + node + " refused: " + err);
    return {};
  }
  std::vector<uint8_t> bytes;
  if (As<ge::PortableOp>(builder.get())->Serialize(bytes) != ge::GRAPH_SUCCESS) {
    testing::RecordFailure(__FILE__, __LINE__, "Serialize of " + node + " refused");
  }
  return bytes;
}

// DeserializeCustKernelBinaries: the op from GE's factory, Deserialize.
ge::graphStatus Om2Load(const std::string &op_type, const std::vector<uint8_t> &bytes, std::string *err) {
  auto *portable = As<ge::PortableOp>(FactoryOp(op_type));
  if (portable == nullptr) return ge::GRAPH_FAILED;
  ge::graphStatus st = ge::GRAPH_FAILED;
  *err = CaptureStderr([&] { st = portable->Deserialize(bytes); });
  return st;
}

// KernelCustTaskDistribute: Execute on GE's factory's instance with OM2's context.
ge::graphStatus Om2Execute(om2::Om2Call &call, std::string *err) {
  auto *exec = As<ge::EagerExecuteOp>(FactoryOp(call.type));
  if (exec == nullptr) return ge::GRAPH_FAILED;
  ge::graphStatus st = ge::GRAPH_FAILED;
  *err = CaptureStderr([&] { st = exec->Execute(call.ctx()); });
  return st;
}

}  // namespace

TEST(Om2NodeInfo, TheBlockIsTheHeadAloneWithNoAttributeArea) {
  // What the adapter is handed: GetOutputInstanceInfo(0) has nothing to point at.
  om2::Om2Call call(kLeakyRelu, {{16}}, ge::DT_FLOAT, {16}, "om2_layout");
  CHECK_TRUE(call.info().GetOutputInstanceInfo(0) == nullptr);
  CHECK_EQ(call.info().GetIrOutputsNum(), size_t{0});
  CHECK_EQ(std::string(call.info().GetNodeName()), std::string("om2_layout"));
}

TEST(Om2NodeInfo, EveryOpRunsWithTheAttributeWordsItsCompileRecordedInBothDtypes) {
  REQUIRE_TRUE(!op_table::Ops().empty());
  int checked = 0;
  for (const op_table::Op &op : op_table::Ops()) {
    for (size_t i = 0; i < op.cases.size(); ++i) {
      const op_table::Launch &l = op.cases[i];
      const std::string node = "om2_" + op.python_name + "_" + l.dtype + "_" + std::to_string(i);
      const std::string what = op.type + " " + l.dtype + (l.carries_attrs ? " with its attributes" : " without") + ": ";
      const NodeAttrs attrs = l.carries_attrs ? l.attrs : NodeAttrs{};
      const std::vector<uint8_t> model = OneNodeModel(op.type, op.inputs, l.ge_dtype, node, attrs);
      std::string err;
      REQUIRE_EQ(Om2Load(op.type, model, &err), ge::GRAPH_SUCCESS);
      recording_acl::Reset(OnFreshDevice());
      om2::Om2Call call(op.type, std::vector<std::vector<int64_t>>(op.inputs, l.shape), l.ge_dtype, l.shape, node);
      const ge::graphStatus st = Om2Execute(call, &err);
      CHECK_AT(what + err + " ", st, ge::GRAPH_SUCCESS);
      const recording_acl::Record r = recording_acl::Take();
      if (st != ge::GRAPH_SUCCESS || r.launches.size() != 1) {
        testing::RecordFailure(__FILE__, __LINE__, what + std::to_string(r.launches.size()) + " launches");
        continue;
      }
      const uint64_t programs = std::min(l.tiles, kDevicePrograms);
      CHECK_AT(what, r.launches[0].args, Args(l, om2::Om2Call::kOut, programs));
      CHECK_AT(what, r.launches[0].stream == call.stream, true);
      ++checked;
    }
  }
  size_t cases = 0;
  for (const op_table::Op &op : op_table::Ops()) cases += op.cases.size();
  CHECK_EQ(checked, static_cast<int>(cases));
  std::printf("# OM2 node-info layout: %d launches of every op and dtype checked\n", checked);
}

TEST(Om2NodeInfo, LeakyRelusAlphaWordIsTheBinary32BitsOfTheNodesAlpha) {
  struct Case {
    ge::DataType ge_dtype;
    const char *dtype;
    float alpha;
    uint32_t bits;
  };
  for (const Case &c : {Case{ge::DT_FLOAT, "float32", -0.5f, 0xBF000000u}, Case{ge::DT_FLOAT16, "float16", 0.1f, 0x3DCCCCCDu}}) {
    const std::string node = std::string("om2_lrelu_alpha_") + c.dtype;
    std::string err;
    REQUIRE_EQ(Om2Load(kLeakyRelu, OneNodeModel(kLeakyRelu, 1, c.ge_dtype, node, {c.alpha}), &err), ge::GRAPH_SUCCESS);
    recording_acl::Reset(OnFreshDevice());
    om2::Om2Call call(kLeakyRelu, {{8, 2048}}, c.ge_dtype, {8, 2048}, node);
    REQUIRE_EQ(Om2Execute(call, &err), ge::GRAPH_SUCCESS);
    const recording_acl::Record r = recording_acl::Take();
    REQUIRE_EQ(r.launches.size(), size_t{1});
    CHECK_EQ(r.launches[0].args, LeakyReluArgs(kX, om2::Om2Call::kOut, 16384, c.bits, 4));
  }
}

TEST(Om2NodeInfo, AModelCarryingNoAttributeWordsIsRefusedInOneLineWithNothingReadPastTheBlock) {
  // A node no model and no Compile of this process recorded: the words are nowhere, and the
  // block has no area to read them from.
  recording_acl::Reset(OnFreshDevice());
  om2::Om2Call call(kLeakyRelu, {{16}}, ge::DT_FLOAT, {16}, "om2_never_compiled");
  std::string err;
  CHECK_EQ(Om2Execute(call, &err), ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] LeakyReluCustom node om2_never_compiled: GE's node-info block of node "
                           "om2_never_compiled has no attribute area (HEAD's OM2 code builds it so), and the model "
                           "recorded no attribute words for the node"));
  CHECK_EQ(recording_acl::Take().launches.size(), size_t{0});
  // AddCustom has no attributes: its node runs without any.
  om2::Om2Call add(kOpType, {{4096}, {4096}}, ge::DT_FLOAT, {4096}, "om2_add_no_attrs");
  CHECK_EQ(Om2Execute(add, &err), ge::GRAPH_SUCCESS);
  CHECK_EQ(recording_acl::Take().launches.size(), size_t{1});
}

TEST(Om2NodeInfo, AnEmptyOutputKeepsTheAddressTheModelGaveIt) {
  // OM2's allocator returns nothing; the output of [0, 3] came with its address: it keeps it,
  // and nothing is launched.
  recording_acl::Reset(OnFreshDevice());
  om2::Om2Call call(kOpType, {{0, 3}, {0, 3}}, ge::DT_FLOAT, {0, 3}, "om2_empty");
  std::string err;
  REQUIRE_EQ(Om2Execute(call, &err), ge::GRAPH_SUCCESS);
  CHECK_EQ(reinterpret_cast<uint64_t>(call.outputs[0]->GetAddr()), om2::Om2Call::kOut);
  CHECK_EQ(DimsOf(call.outputs[0]->GetStorageShape()), (std::vector<int64_t>{0, 3}));
  CHECK_EQ(recording_acl::Take().launches.size(), size_t{0});
}

TEST(Om2NodeInfo, AModelIsKnownByItsBytesAndEachThreadsNodesRunTheModelItLoadedLast) {
  // Three builds of LeakyReluCustom under one node name, each with its own alpha: the same
  // model loaded twice, a second model whose node name collides, and a rebuilt model loaded
  // again (hot reload). The node name alone cannot say which model a node is; the bytes can.
  const std::string node = "om2_identity/lrelu";
  const std::vector<uint8_t> a = OneNodeModel(kLeakyRelu, 1, ge::DT_FLOAT, node, {-0.5f});
  const std::vector<uint8_t> b = OneNodeModel(kLeakyRelu, 1, ge::DT_FLOAT, node, {0.1f});
  REQUIRE_TRUE(a != b);
  auto alpha_run = [&](std::string *err) {
    om2::Om2Call call(kLeakyRelu, {{8, 2048}}, ge::DT_FLOAT, {8, 2048}, node);
    recording_acl::Reset(OnFreshDevice());
    if (Om2Execute(call, err) != ge::GRAPH_SUCCESS) return uint32_t{0};
    const recording_acl::Record r = recording_acl::Take();
    if (r.launches.size() != 1 || r.launches[0].args.size() < 48) return uint32_t{1};
    const auto &w = r.launches[0].args;  // alpha: bytes 44..47 (LeakyReluArgs)
    return uint32_t{w[44]} | uint32_t{w[45]} << 8 | uint32_t{w[46]} << 16 | uint32_t{w[47]} << 24;
  };
  std::string err;
  REQUIRE_EQ(Om2Load(kLeakyRelu, a, &err), ge::GRAPH_SUCCESS);
  CHECK_EQ(alpha_run(&err), 0xBF000000u);
  REQUIRE_EQ(Om2Load(kLeakyRelu, a, &err), ge::GRAPH_SUCCESS);  // the same model again
  CHECK_TRUE(Contains(err, "was loaded before: it runs the same kernels"));
  CHECK_EQ(alpha_run(&err), 0xBF000000u);
  REQUIRE_EQ(Om2Load(kLeakyRelu, b, &err), ge::GRAPH_SUCCESS);  // colliding name, other model
  CHECK_EQ(alpha_run(&err), 0x3DCCCCCDu);
  uint32_t other_thread = 0;
  std::thread([&] {
    std::string e;
    if (Om2Load(kLeakyRelu, a, &e) == ge::GRAPH_SUCCESS) other_thread = alpha_run(&e);  // a reloaded there
  }).join();
  CHECK_EQ(other_thread, 0xBF000000u);
  CHECK_EQ(alpha_run(&err), 0x3DCCCCCDu);  // this thread still runs b
  const std::vector<uint8_t> rebuilt = OneNodeModel(kLeakyRelu, 1, ge::DT_FLOAT, node, {0.25f});
  REQUIRE_EQ(Om2Load(kLeakyRelu, rebuilt, &err), ge::GRAPH_SUCCESS);  // hot reload: not refused
  CHECK_EQ(alpha_run(&err), 0x3E800000u);  // 0.25f
}
