// GE in the loop for LeakyReluCustom (one input x, one output y, a float attribute alpha of
// default 0.2; op_def.py): the adapter's every entry point with the op's own input count and
// the node's attribute, through GE's own context code (harness.h's node calls: metadef's
// builders, the attribute appended as GE's lowering holds a node's IR attributes).
//
// Expectations are independent of the code under test: the launch arguments are compared byte
// for byte with LeakyReluCustom's layout written out by hand (harness.h, LeakyReluArgs), alpha's
// word with its IEEE 754 binary32 bits worked out by hand (0.1f = 0x3DCCCCCD: exponent 123,
// mantissa 0x4CCCCD; -0.5f = 0xBF000000; the default 0.2f = 0x3E4CCCCD), shapes with
// TensorFlow's UnchangedShape. The whole model mixing both ops is whole_model_tests.cc's.
#include <algorithm>
#include <string>
#include <vector>

#include "harness.h"
#include "testing.h"

using namespace harness;

namespace {

constexpr uint32_t kAlpha01 = 0x3DCCCCCDu;    // 0.1f
constexpr uint32_t kAlphaM05 = 0xBF000000u;   // -0.5f
constexpr uint32_t kAlpha02 = 0x3E4CCCCDu;    // 0.2f, the default

std::string Entry(const std::string &dtype) { return "tf_ge_custom_leaky_relu_custom_flat_" + dtype; }

std::vector<uint8_t> Npubin(const std::string &soc, const std::string &dtype) {
  return test_support::FakeBinary(soc, dtype, "flat", kLeakyRelu);
}

// The adapter's own lines of what reached stderr (GE's stand-in report and log repeat them).
std::vector<std::string> AdapterLines(const std::string &err) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < err.size()) {
    const size_t end = std::min(err.find('\n', at), err.size());
    const std::string line = err.substr(at, end - at);
    if (line.compare(0, 15, "[tf-ge-custom] ") == 0) lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

const char kNotInt32[] = "LeakyReluCustom does not support dtype int32; supported: float32, float16, bfloat16";

}  // namespace

TEST(LeakyRelu, TheLibraryRegistersItBesideAddCustomWithGesFactoryAndItsPullRegistry) {
  ge::BaseCustomOp *op = FactoryOp(kLeakyRelu);
  REQUIRE_TRUE(op != nullptr);
  CHECK_TRUE(ge::CustomOpFactory::IsExistOp(ge::AscendString(kLeakyRelu)));
  CHECK_TRUE(FactoryOp(kLeakyRelu) == op);  // one instance per op type ...
  CHECK_TRUE(FactoryOp(kOpType) != op);     // ... and one per type
  CHECK_TRUE(As<ge::EagerExecuteOp>(op) != nullptr && As<ge::ShapeInferOp>(op) != nullptr &&
             As<ge::PortableOp>(op) != nullptr && As<ge::CompilableOp>(op) != nullptr &&
             As<ge::AnnotatedArgsOp>(op) != nullptr);
  CHECK_EQ(PulledCreators(P().library), kOpTypes);
  auto pulled = PulledOp(kLeakyRelu);
  REQUIRE_TRUE(pulled != nullptr);
  CHECK_TRUE(pulled.get() != op);
}

TEST(LeakyRelu, ExecuteLaunchesItsFlatKernelWithTheNodesAlphaWordOrTheDefault) {
  // float32 [8, 2048] alpha -0.5: 16384 elements, 4 blocks of 4096; float16 [3, 5000] alpha
  // 0.1: 15000 elements, 4 blocks; bfloat16 [4096] without alpha: the default 0.2, 1 block.
  struct Case {
    ge::DataType ge_dtype;
    const char *dtype;
    std::vector<int64_t> x;
    FloatAttrs attrs;
    uint64_t n, bytes;
    uint32_t alpha, grid;
  };
  const Case cases[] = {
      {ge::DT_FLOAT, "float32", {8, 2048}, {-0.5f}, 16384, 65536, kAlphaM05, 4},
      {ge::DT_FLOAT16, "float16", {3, 5000}, {0.1f}, 15000, 30208, kAlpha01, 4},  // 30000 bytes, to 512
      {ge::DT_BF16, "bfloat16", {4096}, {}, 4096, 8192, kAlpha02, 1},
  };
  auto *op = As<ge::EagerExecuteOp>(FactoryOp(kLeakyRelu));
  REQUIRE_TRUE(op != nullptr);
  recording_acl::Reset(OnFreshDevice());
  for (const Case &c : cases) {
    NodeEagerCall call(kLeakyRelu, {c.x}, c.ge_dtype, c.attrs, std::string("lrelu_") + c.dtype);
    REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
    const recording_acl::Record r = recording_acl::Take();
    CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{c.bytes}));
    CHECK_EQ(DimsOf(call.out.GetStorageShape()), c.x);
    CHECK_EQ(call.out.GetDataType(), c.ge_dtype);
    REQUIRE_TRUE(!r.loads.empty() && !r.functions.empty() && !r.launches.empty());
    CHECK_EQ(r.loads.back().bytes, Npubin(kSoc, c.dtype));
    CHECK_EQ(r.functions.back().entry, Entry(c.dtype));
    const recording_acl::Launch &l = r.launches.back();
    CHECK_TRUE(l.function == r.functions.back().function);
    CHECK_TRUE(l.stream == call.stream);
    CHECK_EQ(l.block_dim, c.grid);
    CHECK_EQ(l.args, LeakyReluArgs(kX, call.allocator.last, c.n, c.alpha, c.grid));
  }
  const recording_acl::Record all = recording_acl::Take();
  CHECK_EQ(all.loads.size(), size_t{3});  // one kernel per dtype, each loaded once
  CHECK_EQ(all.launches.size(), size_t{3});
}

TEST(LeakyRelu, EveryLaunchOfAChunkedCallCarriesTheAlphaWord) {
  // 2^30 + 7 float16 elements: two launches of at most 2^30 (the manifest's
  // max_elements_per_launch), the second's pointers advanced by 2^30 x 2 bytes; the grid is
  // the device's 48 vector cores, then 1 block. The output's 2 GiB are only an address.
  auto *op = As<ge::EagerExecuteOp>(FactoryOp(kLeakyRelu));
  recording_acl::Reset(OnFreshDevice());
  const int64_t n = (int64_t{1} << 30) + 7;
  NodeEagerCall call(kLeakyRelu, {{n}}, ge::DT_FLOAT16, {0.1f}, "lrelu_chunked");
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  const uint64_t y = call.allocator.last;
  REQUIRE_EQ(r.launches.size(), size_t{2});
  const uint64_t step = uint64_t{1} << 31;
  CHECK_EQ(r.launches[0].args, LeakyReluArgs(kX, y, uint64_t{1} << 30, kAlpha01, 48));
  CHECK_EQ(r.launches[1].args, LeakyReluArgs(kX + step, y + step, 7, kAlpha01, 1));
  CHECK_EQ(r.loads.size(), size_t{1});
}

TEST(LeakyRelu, DeclareLaunchArgsDeclaresAlphasWordAsAValueOfTheLaunch) {
  // A sunk static graph: one launch of the flat kernel, the words laid out as the 64-byte
  // struct (ffts declared 0), x and y as address words of op input 0 and output 0, the
  // words holding n_elements | alpha, gridX | gridY and gridZ | padding as values.
  auto op = PulledOp(kLeakyRelu);
  REQUIRE_TRUE(op != nullptr);
  SetGraphSoc(kSoc);
  struct Case {
    FloatAttrs attrs;
    uint32_t alpha;
  };
  for (const Case &c : {Case{{-0.5f}, kAlphaM05}, Case{{}, kAlpha02}}) {
    NodeAnnotatedCall call(kLeakyRelu, {{8, 2048}}, {8, 2048}, ge::DT_FLOAT, c.attrs, 3, "lrelu_sunk");
    REQUIRE_EQ(As<ge::AnnotatedArgsOp>(op.get())->DeclareLaunchArgs(call.ctx()), ge::GRAPH_SUCCESS);
    const std::vector<RecordedDeclaration> d = call.Declared();
    REQUIRE_EQ(d.size(), size_t{1});
    CHECK_EQ(d[0].kernel_name, Entry("float32"));
    CHECK_EQ(d[0].kernel_bin, Npubin(kSoc, "float32"));
    CHECK_EQ(d[0].block_dim, 4u);  // 16384 elements in blocks of 4096
    CHECK_EQ(d[0].stream_id, 3u);
    CHECK_EQ(DescString(d[0].descs), "c c c " + InputDesc(0) + " " + OutputDesc(0) + " c c c");
    CHECK_EQ(d[0].args, LeakyReluArgs(kX, AnnotatedCall::kZ, 16384, c.alpha, 4, 0));
  }
  SetGraphSoc("");
}

TEST(LeakyRelu, InferShapeKeepsTheInputsShapeAndInferDataTypeItsDtype) {
  // TensorFlow's UnchangedShape: the output is x's shape, unknown dims and rank included.
  ge::BaseCustomOp *op = FactoryOp(kLeakyRelu);
  for (const std::vector<int64_t> &x : std::vector<std::vector<int64_t>>{{8, 2048}, {}, {0, 3}, {-1, 7}, {-2}}) {
    std::vector<int64_t> out;
    CHECK_EQ(InferNodeShape(op, kLeakyRelu, {x}, &out), ge::GRAPH_SUCCESS);
    CHECK_EQ(out, x);
  }
  for (ge::DataType dt : {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16}) {
    ge::DataType out = ge::DT_UNDEFINED;
    CHECK_EQ(InferNodeDataType(op, kLeakyRelu, {dt}, &out), ge::GRAPH_SUCCESS);
    CHECK_EQ(out, dt);
  }
}

TEST(LeakyRelu, RefusalsAreOneLineNamingItsOneInputAndWhatItAccepts) {
  ge::BaseCustomOp *op = FactoryOp(kLeakyRelu);
  // int32 is AddCustom's, not LeakyReluCustom's: refused at InferDataType, Compile and Execute.
  ge::DataType out = ge::DT_UNDEFINED;
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  std::string err = CaptureStderr([&] { st = InferNodeDataType(op, kLeakyRelu, {ge::DT_INT32}, &out, "lr_i32"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_EQ(AdapterLines(err), std::vector<std::string>{"[tf-ge-custom] LeakyReluCustom node lr_i32: " +
                                                       std::string(kNotInt32)});
  InstallPlatform(kSoc, "");
  auto fresh = PulledOp(kLeakyRelu);
  REQUIRE_TRUE(fresh != nullptr);
  err = CaptureStderr([&] { st = CompileNode(fresh.get(), kLeakyRelu, 1, ge::DT_INT32, "lr_compile_i32"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_EQ(AdapterLines(err), std::vector<std::string>{"[tf-ge-custom] LeakyReluCustom node lr_compile_i32 (SoC "
                                                       "Ascend910B1): " + std::string(kNotInt32)});
  recording_acl::Reset(OnFreshDevice());
  NodeEagerCall call(kLeakyRelu, {{16}}, ge::DT_INT32, {0.1f}, "lr_exec_i32");
  err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(op)->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_EQ(AdapterLines(err), std::vector<std::string>{"[tf-ge-custom] LeakyReluCustom node lr_exec_i32: " +
                                                       std::string(kNotInt32)});
  CHECK_EQ(recording_acl::Take().launches.size(), size_t{0});
  CHECK_EQ(call.allocator.l1_sizes.size(), size_t{0});
  // An output GE planned other than x's shape: the one input named, no second one assumed.
  SetGraphSoc(kSoc);
  NodeAnnotatedCall planned(kLeakyRelu, {{8, 2048}}, {8, 2047}, ge::DT_FLOAT, {0.1f}, 3, "lr_planned");
  err = CaptureStderr([&] { st = As<ge::AnnotatedArgsOp>(fresh.get())->DeclareLaunchArgs(planned.ctx()); });
  SetGraphSoc("");
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_EQ(AdapterLines(err), std::vector<std::string>{"[tf-ge-custom] LeakyReluCustom node lr_planned: GE planned "
                                                       "output 0 as [8, 2047], but the input x [8, 2048] gives [8, 2048]"});
  CHECK_EQ(planned.Declared().size(), size_t{0});
  InstallPlatform(kSoc, "");
}
