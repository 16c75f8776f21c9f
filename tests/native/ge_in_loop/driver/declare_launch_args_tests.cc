// KernelOp's DeclareLaunchArgs (static, sunk graphs) through GE's real annotated-args code:
// the unchanged adapter appends its words to GE's AnnotatedKernelArgs and hands the launch to
// GE's AnnotatedArgsContext::AddLaunch; the cases read back what GE's own AnnotatedArgsHandler
// recorded (harness.h, AnnotatedCall) and compare it with layouts worked out here by hand from
// the manifest's slot table (test_support.cc: ffts, lock, workspace, the operands, then the
// extents, strides and grid as 4-byte values), not with the core's code.
#include "harness.h"
#include "testing.h"

using namespace harness;

namespace {

// A fresh op whose Compile named kSoc, as GE compiles every node of a graph before it asks for
// any declaration.
std::unique_ptr<ge::BaseCustomOp> CompiledOp(ge::DataType dtype) {
  InstallPlatform(kSoc, std::string());
  auto op = PulledOp();
  ge::graphStatus st = ge::GRAPH_FAILED;
  if (op != nullptr) (void)CaptureStderr([&] { st = Compile(op.get(), dtype, dtype); });
  if (st != ge::GRAPH_SUCCESS) return nullptr;
  return op;
}

ge::graphStatus Declare(ge::BaseCustomOp *op, AnnotatedCall &call, std::string *err = nullptr) {
  ge::graphStatus st = ge::GRAPH_FAILED;
  const std::string text = CaptureStderr([&] { st = As<ge::AnnotatedArgsOp>(op)->DeclareLaunchArgs(call.ctx()); });
  if (err != nullptr) *err = text;
  return st;
}

// The declared struct: the ffts word is declared as 0 (a vector-core kernel never reads it;
// core/declared_launch.h), everything else as Execute would pass it.
std::vector<uint8_t> Declared(std::vector<uint8_t> bytes) {
  for (size_t i = 0; i < 8; ++i) bytes[i] = 0;
  return bytes;
}

// The tag's descriptors of the three operand words after ffts, lock and workspace.
std::string Operands() { return "c c c " + InputDesc(0) + " " + InputDesc(1) + " " + OutputDesc(0); }

}  // namespace

TEST(DeclareLaunchArgs, FlatFloat32IsOneLaunchOfTheFlatKernelAsGesHandlerRecordsIt) {
  auto op = CompiledOp(ge::DT_FLOAT);
  REQUIRE_TRUE(op != nullptr);
  REQUIRE_TRUE(As<ge::AnnotatedArgsOp>(op.get()) != nullptr);
  AnnotatedCall call({4096, 4096}, {4096, 4096}, {4096, 4096}, ge::DT_FLOAT, 7);
  std::string err;
  REQUIRE_EQ(Declare(op.get(), call, &err), ge::GRAPH_SUCCESS);
  CHECK_EQ(err, std::string());
  const std::vector<RecordedDeclaration> d = call.Declared();
  REQUIRE_EQ(d.size(), size_t{1});
  CHECK_EQ(d[0].kernel_name, std::string("tf_ge_custom_add_custom_flat_float32"));
  CHECK_EQ(d[0].kernel_bin, test_support::FakeBinary(kSoc, "float32", "flat"));
  // 4096 * 4096 = 16777216 elements in blocks of 4096: 4096 tiles, capped at the manifest's
  // 40 programs; under the 2^30 elements of one launch.
  CHECK_EQ(d[0].block_dim, 40u);
  CHECK_EQ(d[0].stream_id, 7u);
  // Slots: ffts, lock, workspace, x, y, z, then n with gridX and gridY with gridZ (4 bytes each).
  CHECK_EQ(DescString(d[0].descs), Operands() + " c c");
  CHECK_EQ(d[0].args, Declared(FlatArgs(kX, kY, AnnotatedCall::kZ, 16777216, 40)));
  CHECK_EQ(call.allocator.block_sizes, (std::vector<size_t>{}));  // no workspace asked for
}

TEST(DeclareLaunchArgs, ARowBroadcastDeclaresTheTiledKernelsExtentsStridesAndGrid) {
  // x [2, 4096] + y [4096]: 2 rows of 4096, the 1x4096 row kernel over 2 tiles; no outer
  // dimension, so the extents are 1, 1, 1, 2, 4096 and every outer stride is 0.
  auto op = CompiledOp(ge::DT_FLOAT);
  REQUIRE_TRUE(op != nullptr);
  AnnotatedCall call({2, 4096}, {4096}, {2, 4096});
  REQUIRE_EQ(Declare(op.get(), call), ge::GRAPH_SUCCESS);
  const std::vector<RecordedDeclaration> d = call.Declared();
  REQUIRE_EQ(d.size(), size_t{1});
  CHECK_EQ(d[0].kernel_name, std::string("tf_ge_custom_add_custom_row_1x4096_float32"));
  CHECK_EQ(d[0].kernel_bin, test_support::FakeBinary(kSoc, "float32", "row_1x4096"));
  CHECK_EQ(d[0].block_dim, 2u);
  // 104 bytes: 6 pointer words, 5 extents, 6 strides, 3 grid values (14 values in 7 words).
  CHECK_EQ(DescString(d[0].descs), Operands() + " c c c c c c c");
  CHECK_EQ(d[0].args, Declared(TiledArgs(kX, kY, AnnotatedCall::kZ, {1, 1, 1, 2, 4096}, {0, 0, 0, 0, 0, 0}, 2)));
}

TEST(DeclareLaunchArgs, Float16DeclaresItsOwnBinaryWithTheElementCount) {
  // [3, 1000] float16: 3000 elements, one tile of 4096.
  auto op = CompiledOp(ge::DT_FLOAT16);
  REQUIRE_TRUE(op != nullptr);
  AnnotatedCall call({3, 1000}, {3, 1000}, {3, 1000}, ge::DT_FLOAT16);
  REQUIRE_EQ(Declare(op.get(), call), ge::GRAPH_SUCCESS);
  const std::vector<RecordedDeclaration> d = call.Declared();
  REQUIRE_EQ(d.size(), size_t{1});
  CHECK_EQ(d[0].kernel_name, std::string("tf_ge_custom_add_custom_flat_float16"));
  CHECK_EQ(d[0].kernel_bin, test_support::FakeBinary(kSoc, "float16", "flat"));
  CHECK_EQ(d[0].block_dim, 1u);
  CHECK_EQ(DescString(d[0].descs), Operands() + " c c");
  CHECK_EQ(d[0].args, Declared(FlatArgs(kX, kY, AnnotatedCall::kZ, 3000, 1)));
}

TEST(DeclareLaunchArgsRefuses, AShapeOverThePerLaunchLimitNamingItAndDeclaringNothing) {
  // 32768 * 32769 = 1073774592 elements, over the 2^30 = 1073741824 of one launch.
  auto op = CompiledOp(ge::DT_FLOAT);
  REQUIRE_TRUE(op != nullptr);
  AnnotatedCall call({32768, 32769}, {32768, 32769}, {32768, 32769}, ge::DT_FLOAT, 3, "big_node");
  std::string err;
  CHECK_EQ(Declare(op.get(), call, &err), ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom node big_node: "));
  CHECK_TRUE(Contains(err, "1073774592 elements") && Contains(err, "1073741824"));
  CHECK_TRUE(Contains(err, "[32768, 32769]"));
  CHECK_EQ(call.Declared().size(), size_t{0});
}

TEST(DeclareLaunchArgs, OneGraphBuildHoldsMixedDtypesAndTwoTiledVariantsEachUnderItsOwnName) {
  // What GE's kernel store keys by: the declared kernel names. float32 and float16 flat nodes,
  // a float32 row bias ([8, 1024] + [1024]: 8 rows of 1024, the 16x256 tiles need 4, under 3/4
  // of the 8 one-row tiles) and an NCHW bias ([8, 64, 32, 32] + [64, 1, 1]: 64 rows of 1024,
  // 16x256 needs 16 tiles against 64 of 1x4096, 128x32 32) in one graph build are all
  // declared, each under its own name with its own bytes.
  auto op = CompiledOp(ge::DT_FLOAT);
  REQUIRE_TRUE(op != nullptr);
  struct Node {
    std::vector<int64_t> x, y;
    ge::DataType dtype;
    const char *name, *variant, *dtype_name;
  };
  const Node nodes[] = {
      {{16}, {16}, ge::DT_FLOAT, "f32_node", "flat", "float32"},
      {{16}, {16}, ge::DT_FLOAT16, "f16_node", "flat", "float16"},
      {{8, 1024}, {1024}, ge::DT_FLOAT, "row_node", "row_16x256", "float32"},
      {{8, 64, 32, 32}, {64, 1, 1}, ge::DT_FLOAT, "nchw_node", "col_16x256", "float32"},
  };
  std::vector<std::string> names;
  for (const Node &n : nodes) {
    std::vector<int64_t> out = n.x;  // both broadcast to x's shape here
    AnnotatedCall call(n.x, n.y, out, n.dtype, 3, n.name);
    // AnnotatedCall gives both inputs the dtype; the shapes are what the node's tensors hold.
    std::string err;
    REQUIRE_EQ(Declare(op.get(), call, &err), ge::GRAPH_SUCCESS);
    CHECK_EQ(err, std::string());
    const std::vector<RecordedDeclaration> d = call.Declared();
    REQUIRE_EQ(d.size(), size_t{1});
    CHECK_EQ(d[0].kernel_name, "tf_ge_custom_add_custom_" + std::string(n.variant) + "_" + n.dtype_name);
    CHECK_EQ(d[0].kernel_bin, test_support::FakeBinary(kSoc, n.dtype_name, n.variant));
    names.push_back(d[0].kernel_name);
  }
  std::sort(names.begin(), names.end());
  CHECK_TRUE(std::unique(names.begin(), names.end()) == names.end());
}

// ---- the graph's SoC from GE's context, and the target's vector cores ----

TEST(DeclareLaunchArgs, TheSocComesFromGesGraphContextAndMustBeOneThisInstanceCompiled) {
  // GE's task generator reads ge.socVersion of its context right before DeclareLaunchArgs
  // (custom_ops_kernel_builder.cc). One instance compiled for Ascend910B1 and for the board
  // Ascend910B4-1 (served by Ascend910B4's kernels): the option says which.
  auto op = PulledOp();
  REQUIRE_TRUE(op != nullptr);
  for (const char *soc : {kSoc, kBoard}) {
    InstallPlatform(soc, "");
    ge::graphStatus st = ge::GRAPH_FAILED;
    (void)CaptureStderr([&] { st = Compile(op.get(), ge::DT_FLOAT, ge::DT_FLOAT); });
    REQUIRE_EQ(st, ge::GRAPH_SUCCESS);
  }
  InstallPlatform(kSoc, "");
  const std::vector<std::pair<std::string, std::string>> served = {{kBoard, kArchSoc}, {kSoc, kSoc}};
  for (const auto &s : served) {
    SetGraphSoc(s.first);
    AnnotatedCall call({4096, 4096}, {4096, 4096}, {4096, 4096});
    std::string err;
    REQUIRE_EQ(Declare(op.get(), call, &err), ge::GRAPH_SUCCESS);
    REQUIRE_EQ(call.Declared().size(), size_t{1});
    CHECK_EQ(s.first + ": " + std::to_string(call.Declared()[0].kernel_bin == test_support::FakeBinary(s.second, "float32", "flat")),
             s.first + ": 1");
  }
  // A SoC no Compile chose kernels for, and no SoC with two compiled: refused, nothing declared.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"Ascend910B3", "GE's graph context names SoC Ascend910B3 (ge.socVersion), but this instance compiled kernels "
                      "for Ascend910B1, Ascend910B4-1 only"},
      {"", "GE's graph context names no SoC (ge.socVersion is empty) and this instance compiled kernels for several "
           "(Ascend910B1, Ascend910B4-1)"}};
  for (const auto &r : refused) {
    SetGraphSoc(r.first);
    AnnotatedCall call({4096}, {4096}, {4096}, ge::DT_FLOAT, 3, "soc_node");
    std::string err;
    CHECK_EQ(Declare(op.get(), call, &err), ge::GRAPH_FAILED);
    CHECK_TRUE(Contains(err, "AddCustom node soc_node: " + r.second));
    CHECK_EQ(call.Declared().size(), size_t{0});
  }
  SetGraphSoc("");
}

TEST(DeclareLaunchArgs, ASetOf48CoresServingABoardOf40DeclaresItsOwn40Programs) {
  // An installed package whose only set is Ascend910B1's, built for its 48 vector cores
  // (max_programs 48, architecture dav-2201); the graph is for the board Ascend910B4-1, whose
  // platform says 40 vector cores: the set serves it (same architecture) and the declared grid
  // is the board's 40, not the set's 48, which would run in two waves there. Where the platform
  // says nothing, the set's own 48 stay.
  OtherPackage package([](const test_support::TempDir &dir, const std::string &root) {
    std::vector<KernelSpec> kernels = test_support::AllVariants("float32");
    for (auto &k : kernels) k.max_programs = 48;
    const std::string manifest = test_support::WithArchitecture(test_support::ManifestJson(kSoc, kernels),
                                                                std::string("dav-") + kNpuArch);
    dir.Write(root + "/kernels/" + std::string(kSoc) + "/manifest.json", manifest);
    for (const auto &k : kernels) {
      dir.Write(root + "/kernels/" + std::string(kSoc) + "/" + test_support::BinaryName(k.variant, k.dtype),
                test_support::FakeBinary(kSoc, k.dtype, k.variant));
    }
  });
  for (const auto &c : std::vector<std::pair<std::string, uint32_t>>{{"40", 40u}, {"", 48u}}) {
    auto op = package.Op();
    REQUIRE_TRUE(op != nullptr);
    InstallPlatform(kBoard, "", 0, kNpuArch, c.first);
    ge::graphStatus st = ge::GRAPH_FAILED;
    const std::string compiled = CaptureStderr([&] { st = Compile(op.get(), ge::DT_FLOAT, ge::DT_FLOAT); });
    REQUIRE_EQ(st, ge::GRAPH_SUCCESS);
    CHECK_TRUE(Contains(compiled, "so the Ascend910B1 kernels of the same architecture dav-2201"));
    SetGraphSoc(kBoard);
    AnnotatedCall call({4096, 4096}, {4096, 4096}, {4096, 4096}, ge::DT_FLOAT, 7);
    std::string err;
    REQUIRE_EQ(Declare(op.get(), call, &err), ge::GRAPH_SUCCESS);
    const std::vector<RecordedDeclaration> d = call.Declared();
    REQUIRE_EQ(d.size(), size_t{1});
    CHECK_EQ(d[0].block_dim, c.second);
    // 4096 * 4096 elements in blocks of 4096: 4096 tiles, the grid is the cap.
    CHECK_EQ(d[0].args, Declared(FlatArgs(kX, kY, AnnotatedCall::kZ, 4096 * 4096, c.second)));
    SetGraphSoc("");
  }
  InstallPlatform(kSoc, "");
}
