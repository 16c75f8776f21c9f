// GE in the loop: the GE library (ge_ops/cann/, unchanged) loaded as GE loads it and driven
// through GE's own context code, built from the public sources of hicann/ge and hicann/metadef
// (../CMakeLists.txt), with ACL recorded (stand_ins/). Contexts come from metadef's public
// builders (gert::OpKernelContextBuilder, OpInferShapeContextBuilder,
// OpInferDataTypeContextBuilder), the eager inputs laid out as GE's own faker lays them
// (tests/graph_metadef/depends/faker/kernel_run_context_faker.cc in hicann/ge: inputs
// [x..., allocator, stream, op_desc, execute_func], outputs [z..., workspace blocks]), not by
// GE's runtime lowering: that part stays unproven (docs/ge-library.md, "GE in the loop").
//
// Expectations are independent of the code under test: launch arguments are compared byte for
// byte with layouts written out by hand here (after the manifest fixtures' slot tables,
// tests/native/core/test_support.cc), shapes with tf.math.add's rules worked by hand.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error_manager_stand_in.h"
#include "harness.h"
#include "testing.h"

using namespace harness;

// ---- creation ----

TEST(Registry, TheLibraryRegistersAddCustomWithGesFactoryAndItsOwnPullRegistry) {
  ge::BaseCustomOp *op = FactoryOp();
  REQUIRE_TRUE(op != nullptr);
  CHECK_TRUE(ge::CustomOpFactory::IsExistOp(ge::AscendString(kOpType)));
  CHECK_TRUE(FactoryOp() == op);  // one instance per op type, shared by every node
  CHECK_TRUE(As<ge::EagerExecuteOp>(op) != nullptr);
  CHECK_TRUE(As<ge::ShapeInferOp>(op) != nullptr);
  CHECK_TRUE(As<ge::PortableOp>(op) != nullptr);
  CHECK_TRUE(As<ge::CompilableOp>(op) != nullptr);
  // The OM loader's view: the ops of the harness's table (AddCustom, LeakyReluCustom), at the
  // ABI version the loader knows.
  auto abi = reinterpret_cast<uint32_t (*)()>(dlsym(P().library, "GetRegisteredCustomOpCreatorAbiVersion"));
  REQUIRE_TRUE(abi != nullptr);
  CHECK_EQ(abi(), ge::kCustomOpCreatorPullAbiVersion);
  auto count = reinterpret_cast<size_t (*)()>(dlsym(P().library, "GetRegisteredCustomOpCreatorNum"));
  REQUIRE_TRUE(count != nullptr);
  CHECK_EQ(count(), kOpTypes.size());
  CHECK_EQ(PulledCreators(P().library), kOpTypes);
  auto pulled = PulledOp();
  REQUIRE_TRUE(pulled != nullptr);
  CHECK_TRUE(pulled.get() != op);
  CHECK_TRUE(As<ge::EagerExecuteOp>(pulled.get()) != nullptr);
}

// ---- Execute ----

TEST(Execute, FlatFloat32LaunchesOnceWithTheA2ArgumentBytesOnTheContextsStream) {
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  REQUIRE_TRUE(op != nullptr);
  recording_acl::Settings s;
  s.device = 11;  // a device this process has loaded nothing on yet
  recording_acl::Reset(s);
  EagerCall call({8, 2048}, {8, 2048});
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  // The output: allocated through GE's L1 allocator call, 8*2048*4 bytes rounded to 512.
  CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{65536}));
  const uint64_t z = call.allocator.last;
  CHECK_EQ(U64(call.z.GetAddr()), z);
  CHECK_EQ(DimsOf(call.z.GetStorageShape()), (std::vector<int64_t>{8, 2048}));
  CHECK_EQ(DimsOf(call.z.GetOriginShape()), (std::vector<int64_t>{8, 2048}));
  CHECK_EQ(call.z.GetDataType(), ge::DT_FLOAT);
  // One load of the float32 flat npubin, as a vector-core ELF, and its entry.
  REQUIRE_EQ(r.loads.size(), size_t{1});
  CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "float32", "flat"));
  CHECK_EQ(r.loads[0].option_types, (std::vector<uint32_t>{ACL_RT_BINARY_LOAD_OPT_MAGIC}));
  CHECK_EQ(r.loads[0].option_magics, (std::vector<uint32_t>{ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE}));
  REQUIRE_EQ(r.functions.size(), size_t{1});
  CHECK_EQ(r.functions[0].entry, std::string("tf_ge_custom_add_custom_flat_float32"));
  CHECK_TRUE(r.functions[0].binary == r.loads[0].binary);
  // 16384 elements in blocks of 4096: 4 programs.
  REQUIRE_EQ(r.launches.size(), size_t{1});
  const recording_acl::Launch &l = r.launches[0];
  CHECK_TRUE(l.function == r.functions[0].function);
  CHECK_TRUE(l.stream == call.stream);
  CHECK_EQ(l.block_dim, 4u);
  CHECK_TRUE(l.cfg_null && l.placeholders_null);
  CHECK_EQ(l.placeholder_num, size_t{0});
  // The 64-byte flat layout with ffts (test_support.cc's slot table, docs/ascend-stack.md).
  std::vector<uint8_t> expected;
  Le(&expected, 0x00000000FF001000ull, 8);  // ffts: aclrtGetHardwareSyncAddr
  Le(&expected, 0, 8);                      // no lock
  Le(&expected, 0, 8);                      // no workspace
  Le(&expected, kX, 8);
  Le(&expected, kY, 8);
  Le(&expected, z, 8);
  Le(&expected, 16384, 4);  // n_elements
  Le(&expected, 4, 4);      // gridX
  Le(&expected, 1, 4);      // gridY
  Le(&expected, 1, 4);      // gridZ
  CHECK_EQ(l.args, expected);
  CHECK_EQ(r.memsets.size(), size_t{0});
}

TEST(Execute, EveryTiledVariantGetsItsExtentsStridesAndGrid) {
  // Shapes worked by hand: the reduction (core/broadcast.h) leaves [rows, cols]; the block is
  // the widest unless a narrower one needs under 3/4 of its tiles (1x4096, 16x256, 128x32).
  //   row:   x [R, C] + y [C]      col: x [R, C] + y [R, 1]      outer: x [1, C] + y [R, 1]
  struct Case {
    const char *variant;
    std::vector<int64_t> xs, ys;
    uint64_t rows, cols;
    uint32_t grid;  // tiles: ceil(R / block rows) * ceil(C / block cols)
  };
  const Case cases[] = {
      {"row_1x4096", {2, 4096}, {4096}, 2, 4096, 2},    {"row_16x256", {16, 256}, {256}, 16, 256, 1},
      {"row_128x32", {128, 32}, {32}, 128, 32, 1},      {"col_1x4096", {3, 4096}, {3, 1}, 3, 4096, 3},
      {"col_16x256", {16, 256}, {16, 1}, 16, 256, 1},   {"col_128x32", {128, 32}, {128, 1}, 128, 32, 1},
      {"outer_1x4096", {1, 4096}, {3, 1}, 3, 4096, 3},  {"outer_16x256", {1, 256}, {16, 1}, 16, 256, 1},
      {"outer_128x32", {1, 32}, {128, 1}, 128, 32, 1},
  };
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  REQUIRE_TRUE(op != nullptr);
  for (const Case &c : cases) {
    recording_acl::Reset(OnFreshDevice());
    EagerCall call(c.xs, c.ys);
    REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
    const recording_acl::Record r = recording_acl::Take();
    REQUIRE_EQ(r.loads.size(), size_t{1});
    CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "float32", c.variant));
    REQUIRE_EQ(r.functions.size(), size_t{1});
    CHECK_EQ(r.functions[0].entry, "tf_ge_custom_add_custom_" + std::string(c.variant) + "_float32");
    REQUIRE_EQ(r.launches.size(), size_t{1});
    CHECK_EQ(DimsOf(call.z.GetStorageShape()), (std::vector<int64_t>{static_cast<int64_t>(c.rows),
                                                                    static_cast<int64_t>(c.cols)}));
    CHECK_TRUE(r.launches[0].stream == call.stream);
    CHECK_EQ(r.launches[0].block_dim, c.grid);
    // No outer dimension: every outer stride is 0.
    CHECK_EQ(r.launches[0].args,
             TiledArgs(kX, kY, call.allocator.last, {1, 1, 1, c.rows, c.cols}, {0, 0, 0, 0, 0, 0}, c.grid));
  }
}

TEST(Execute, AnNchwBiasRunsTheColumnKernelWithItsOuterStride) {
  // [8, 64, 56, 56] + [1, 64, 1, 1] (float16) -> (8, 64, 3136): x's outer stride 64 * 3136 =
  // 200704, y's 0; 64 rows of 3136: 1x4096 needs 64 tiles, 16x256 52 (not under 48),
  // 128x32 98: col_1x4096, 8 * 64 tiles capped at the device's 48 vector cores (the recording
  // ACL's aclrtGetDeviceInfo(ACL_DEV_ATTR_VECTOR_CORE_NUM); the manifest's own cap says 40).
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice());
  EagerCall call({8, 64, 56, 56}, {1, 64, 1, 1}, ge::DT_FLOAT16, ge::DT_FLOAT16);
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  REQUIRE_EQ(r.loads.size(), size_t{1});
  CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "float16", "col_1x4096"));
  REQUIRE_EQ(r.launches.size(), size_t{1});
  CHECK_EQ(r.device_info_attrs, (std::vector<int>{ACL_DEV_ATTR_VECTOR_CORE_NUM}));
  CHECK_EQ(r.launches[0].block_dim, 48u);
  CHECK_EQ(r.launches[0].args,
           TiledArgs(kX, kY, call.allocator.last, {1, 1, 8, 64, 3136}, {0, 0, 200704, 0, 0, 0}, 48));
  CHECK_EQ(DimsOf(call.z.GetStorageShape()), (std::vector<int64_t>{8, 64, 56, 56}));
  CHECK_EQ(call.z.GetDataType(), ge::DT_FLOAT16);
  CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{size_t{8} * 64 * 56 * 56 * 2}));
}

TEST(Execute, AScalarOperandRunsTheScalarKernelInEitherOrder) {
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice());
  EagerCall xs({5000}, {});
  REQUIRE_EQ(op->Execute(xs.ctx()), ge::GRAPH_SUCCESS);
  EagerCall sx({}, {5000});  // x is the scalar: the kernel gets y first
  REQUIRE_EQ(op->Execute(sx.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  REQUIRE_EQ(r.loads.size(), size_t{1});  // the scalar kernel, loaded once
  CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "float32", "scalar"));
  CHECK_EQ(r.functions[0].entry, std::string("tf_ge_custom_add_custom_scalar_float32"));
  REQUIRE_EQ(r.launches.size(), size_t{2});
  CHECK_EQ(r.launches[0].args, FlatArgs(kX, kY, xs.allocator.last, 5000, 2));
  CHECK_EQ(r.launches[1].args, FlatArgs(kY, kX, sx.allocator.last, 5000, 2));
  CHECK_EQ(DimsOf(sx.z.GetStorageShape()), (std::vector<int64_t>{5000}));
}

TEST(Execute, MoreThanTwoToThe31ElementsAreChunkedWithoutAllocatingThem) {
  // 2^31 + 5 float16 elements: three launches of at most 2^30 (the manifest's
  // max_elements_per_launch), each pointer advanced by the elements before it x 2 bytes. The
  // output's 4 GiB go through GE's MallocOutputTensor to the fake allocator, which hands out
  // an address and allocates nothing.
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice());
  const int64_t n = (int64_t{1} << 31) + 5;
  EagerCall call({n}, {n}, ge::DT_FLOAT16, ge::DT_FLOAT16);
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  // GE's size: elements x 2 bytes, rounded up to 512.
  CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{((size_t{1} << 32) + 10 + 511) / 512 * 512}));
  const uint64_t z = call.allocator.last;
  REQUIRE_EQ(r.launches.size(), size_t{3});
  const uint64_t offsets[] = {0, uint64_t{1} << 31, uint64_t{1} << 32};
  const uint64_t counts[] = {uint64_t{1} << 30, uint64_t{1} << 30, 5};
  // The grid: the device's 48 vector cores (the recording ACL's aclrtGetDeviceInfo), under
  // the 2^31 - 1 - 2^30 elements of room over blocks of 4096 that 32-bit indexes leave.
  const uint32_t grids[] = {48, 48, 1};
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(r.launches[i].args, FlatArgs(kX + offsets[i], kY + offsets[i], z + offsets[i], counts[i], grids[i]));
    CHECK_EQ(r.launches[i].block_dim, grids[i]);
    CHECK_TRUE(r.launches[i].stream == call.stream);
  }
  CHECK_EQ(r.loads.size(), size_t{1});
}

TEST(Execute, AZeroElementOutputIsAllocatedAsOneElementAndNothingRuns) {
  // GE's MallocOutputTensor refuses a 0-byte allocation, so the adapter asks for one element
  // and then gives the tensor its real, empty shape.
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice());
  EagerCall call({0, 3}, {1, 3});
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{512}));  // 1 x 4 bytes, rounded to 512
  CHECK_EQ(DimsOf(call.z.GetStorageShape()), (std::vector<int64_t>{0, 3}));
  CHECK_EQ(DimsOf(call.z.GetOriginShape()), (std::vector<int64_t>{0, 3}));
  CHECK_EQ(r.launches.size(), size_t{0});
  CHECK_EQ(r.loads.size(), size_t{0});
  CHECK_EQ(r.soc_calls, 0);
}

TEST(Execute, AWorkspaceComesFromGesMallocWorkSpaceAndLocksAreFilledOnTheStream) {
  // The Ascend910_9391 flat float32 kernel: 96 bytes of workspace per program, 3 int64 locks
  // set to -1 (bytes 0xff), at most 4096 * 8 elements per launch: 4096 * 8 + 1 elements are
  // two launches, of 8 and 1 programs.
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice(kWorkspaceSoc));
  EagerCall call({4096 * 8 + 1}, {4096 * 8 + 1});
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  // GE's MallocWorkSpace: the largest grid's 8 x 96 = 768 bytes, then 24 bytes of locks, each
  // rounded up to a multiple of 512 and kept in the context's workspace list.
  CHECK_EQ(call.allocator.block_sizes, (std::vector<size_t>{1024, 512}));
  REQUIRE_EQ(call.workspace.size(), size_t{2});
  const uint64_t ws = U64(call.workspace[0]->GetAddr()), lock = U64(call.workspace[1]->GetAddr());
  REQUIRE_EQ(r.memsets.size(), size_t{2});
  for (size_t i = 0; i < 2; ++i) {
    CHECK_EQ(r.memsets[i].address, lock);
    CHECK_EQ(r.memsets[i].count, uint64_t{24});
    CHECK_EQ(r.memsets[i].max_count, uint64_t{24});
    CHECK_EQ(r.memsets[i].value, 255);
    CHECK_EQ(r.memsets[i].launches_before, i);  // refilled before each launch
    CHECK_TRUE(r.memsets[i].stream == call.stream);
  }
  REQUIRE_EQ(r.launches.size(), size_t{2});
  const uint64_t z = U64(call.z.GetAddr());
  CHECK_EQ(call.allocator.l1_sizes, (std::vector<size_t>{(size_t{4096} * 8 + 1) * 4 / 512 * 512 + 512}));
  CHECK_EQ(r.launches[0].args, FlatArgs(kX, kY, z, 4096 * 8, 8, lock, ws));
  CHECK_EQ(r.launches[1].args, FlatArgs(kX + 4096 * 8 * 4, kY + 4096 * 8 * 4, z + 4096 * 8 * 4, 1, 1, lock, ws));
}

// ---- Execute's refusals: one line naming the node, nothing allocated or launched ----

struct Refused {
  ge::graphStatus status;
  std::string err;
  recording_acl::Record record;
  std::vector<size_t> allocations;
};

Refused RunRefused(EagerCall &call, const recording_acl::Settings &settings) {
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(settings);
  Refused out;
  out.err = CaptureStderr([&] { out.status = op->Execute(call.ctx()); });
  out.record = recording_acl::Take();
  out.allocations = call.allocator.l1_sizes;
  return out;
}

TEST(ExecuteRefuses, MixedDtypesNamingTheNodeAndBoth) {
  EagerCall call({4}, {4}, ge::DT_FLOAT, ge::DT_INT32, "mixed_node");
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "[tf-ge-custom] AddCustom node mixed_node: "));
  CHECK_TRUE(Contains(r.err, "float32") && Contains(r.err, "int32"));
  CHECK_EQ(r.allocations.size(), size_t{0});
  CHECK_EQ(r.record.launches.size(), size_t{0});
}

TEST(ExecuteRefuses, TheRefusalReachesGesErrorManagerAsAnOperatorError) {
  // ge_report.cc reports through metadef's REPORT_INNER_ERROR (error_message::ReportInnerError,
  // recorded by the error-manager stand-in) with GE's operator-error code, the line as data.
  (void)error_manager_stand_in::Take();
  EagerCall call({4}, {4}, ge::DT_FLOAT, ge::DT_INT32, "report_node");
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  const std::vector<error_manager_stand_in::Report> reports = error_manager_stand_in::Take();
  REQUIRE_EQ(reports.size(), size_t{1});
  CHECK_EQ(reports[0].error_code, std::string("EZ9999"));
  CHECK_TRUE(Contains(reports[0].message, "[tf-ge-custom] AddCustom node report_node: "));
  CHECK_TRUE(Contains(reports[0].message, "float32") && Contains(reports[0].message, "int32"));
  CHECK_TRUE(Contains(r.err, reports[0].message));  // and the same line on stderr
}

TEST(ExecuteRefuses, ADtypeTheOpDoesNotHave) {
  EagerCall call({4}, {4}, ge::DT_DOUBLE, ge::DT_DOUBLE, "double_node");
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "node double_node: "));
  CHECK_TRUE(Contains(r.err, "ge::DataType(" + std::to_string(static_cast<int>(ge::DT_DOUBLE)) + ")"));
  CHECK_EQ(r.record.launches.size(), size_t{0});
}

TEST(ExecuteRefuses, ShapesThatDoNotBroadcastNamingBoth) {
  EagerCall call({3}, {4}, ge::DT_FLOAT, ge::DT_FLOAT, "shape_node");
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "node shape_node: ") && Contains(r.err, "[3]") && Contains(r.err, "[4]"));
  CHECK_EQ(r.allocations.size(), size_t{0});
}

TEST(ExecuteRefuses, MoreReducedDimensionsThanTheKernelsHandle) {
  // Alternating broadcast dimensions merge with none of their neighbours: 7 remain.
  EagerCall call({2, 1, 2, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1}, ge::DT_FLOAT, ge::DT_FLOAT, "rank_node");
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "node rank_node: ") && Contains(r.err, "7 remain"));
  CHECK_EQ(r.record.launches.size(), size_t{0});
}

TEST(ExecuteRefuses, ASocWithoutKernelsNamingIt) {
  EagerCall call({4}, {4});
  const Refused r = RunRefused(call, OnFreshDevice("Ascend310P3"));
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "Ascend310P3"));
  CHECK_EQ(r.record.loads.size(), size_t{0});
  CHECK_EQ(r.record.launches.size(), size_t{0});
}

TEST(ExecuteRefuses, AclFailuresNamingTheCallAndCode) {
  struct Case {
    const char *call;
    void (*set)(recording_acl::Settings *);
  };
  const Case cases[] = {
      {"aclrtGetSocName", [](recording_acl::Settings *s) { s->soc.clear(); }},
      {"aclrtGetDevice returned 107001", [](recording_acl::Settings *s) { s->get_device_error = 107001; }},
      {"aclrtBinaryLoadFromData returned 107002", [](recording_acl::Settings *s) { s->load_error = 107002; }},
      {"aclrtBinaryGetFunction returned 107003", [](recording_acl::Settings *s) { s->get_function_error = 107003; }},
      {"aclrtGetHardwareSyncAddr returned 107004", [](recording_acl::Settings *s) { s->sync_error = 107004; }},
      {"aclrtLaunchKernelWithHostArgs returned 107005", [](recording_acl::Settings *s) { s->launch_error = 107005; }},
  };
  for (const Case &c : cases) {
    recording_acl::Settings s = OnFreshDevice();
    c.set(&s);
    EagerCall call({4}, {4}, ge::DT_FLOAT, ge::DT_FLOAT, "acl_node");
    const Refused r = RunRefused(call, s);
    CHECK_EQ(r.status, ge::GRAPH_FAILED);
    if (!CHECK_TRUE(Contains(r.err, "node acl_node: ") && Contains(r.err, c.call))) {
      std::fprintf(stderr, "for %s the adapter wrote: %s\n", c.call, r.err.c_str());
    }
    CHECK_EQ(r.record.launches.size(), size_t{0});
  }
}

TEST(ExecuteRefuses, AFailedOutputAllocationNamingMallocOutputTensor) {
  EagerCall call({4}, {4}, ge::DT_FLOAT, ge::DT_FLOAT, "alloc_node");
  call.allocator.fail = true;  // GE's MallocOutputTensor then returns null
  const Refused r = RunRefused(call, OnFreshDevice());
  CHECK_EQ(r.status, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(r.err, "node alloc_node: ") && Contains(r.err, "MallocOutputTensor returned null for output 0"));
  CHECK_EQ(r.record.launches.size(), size_t{0});
}

// ---- InferShape / InferDataType ----

TEST(InferShape, BroadcastsAsTfMathAdd) {
  ge::BaseCustomOp *op = FactoryOp();
  struct Case {
    std::vector<int64_t> x, y, out;
  };
  const Case cases[] = {
      {{8, 2048}, {1, 2048}, {8, 2048}}, {{4, 1, 3}, {5, 1}, {4, 5, 3}}, {{}, {3}, {3}},
      {{2, 3}, {}, {2, 3}},              {{0, 3}, {1, 3}, {0, 3}},       {{}, {}, {}},
  };
  for (const Case &c : cases) {
    std::vector<int64_t> out;
    CHECK_EQ(InferShape(op, c.x, c.y, &out), ge::GRAPH_SUCCESS);
    CHECK_EQ(out, c.out);
  }
}

TEST(InferShape, UnknownDimsAndRankAsTensorFlowsShapeFunction) {
  // -1: a dimension unknown until run time, {-2}: unknown rank. A known size above 1 wins,
  // a known 1 yields the other, two unknowns stay unknown, an unknown rank gives one.
  ge::BaseCustomOp *op = FactoryOp();
  struct Case {
    std::vector<int64_t> x, y, out;
  };
  const Case cases[] = {
      {{-1, 2048}, {1, 2048}, {-1, 2048}}, {{-1}, {5}, {5}}, {{-1}, {1}, {-1}},
      {{-1}, {-1}, {-1}},                  {{-2}, {3}, {-2}}, {{4, 3}, {-2}, {-2}},
  };
  for (const Case &c : cases) {
    std::vector<int64_t> out;
    CHECK_EQ(InferShape(op, c.x, c.y, &out), ge::GRAPH_SUCCESS);
    CHECK_EQ(out, c.out);
  }
}

TEST(InferShape, GesRankLimitHolds) {
  // gert::Shape holds at most kMaxDimNum (25) dimensions: two rank-25 inputs infer a rank-25
  // output, and a 26th dimension is never there for the adapter to see.
  CHECK_EQ(gert::Shape::kMaxDimNum, size_t{25});
  std::vector<int64_t> x(25, 1), y(25, 1), expected(25, 1);
  x[0] = 3;
  y[24] = 7;
  expected[0] = 3;
  expected[24] = 7;
  std::vector<int64_t> out;
  CHECK_EQ(InferShape(FactoryOp(), x, y, &out), ge::GRAPH_SUCCESS);
  CHECK_EQ(out, expected);
  gert::Shape s;
  for (int i = 0; i < 25; ++i) s.AppendDim(1);
  s.AppendDim(2);
  CHECK_EQ(s.GetDimNum(), size_t{25});
}

TEST(InferShape, RefusesShapesThatDoNotBroadcastNamingTheNode) {
  std::vector<int64_t> out;
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = InferShape(FactoryOp(), {2, 3}, {4}, &out, "bad_infer"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom node bad_infer: ") && Contains(err, "[2, 3]") &&
             Contains(err, "[4]"));
}

TEST(InferDataType, TheOutputTakesTheInputsDtype) {
  for (ge::DataType dt : {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_INT32}) {
    ge::DataType out = ge::DT_UNDEFINED;
    CHECK_EQ(InferDataType(FactoryOp(), dt, dt, &out), ge::GRAPH_SUCCESS);
    CHECK_EQ(out, dt);
  }
}

TEST(InferDataType, RefusesMixedOrUnsupportedDtypesNamingTheNode) {
  ge::DataType out = ge::DT_UNDEFINED;
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  std::string err = CaptureStderr([&] { st = InferDataType(FactoryOp(), ge::DT_FLOAT, ge::DT_INT32, &out, "mix_dt"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node mix_dt: ") && Contains(err, "float32") && Contains(err, "int32"));
  CHECK_EQ(out, ge::DT_UNDEFINED);
  err = CaptureStderr([&] { st = InferDataType(FactoryOp(), ge::DT_INT64, ge::DT_INT64, &out, "i64_dt"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node i64_dt: "));
}

// ---- Compile ----

TEST(Compile, APackagedSocFromThePlatformNeedsNoBuild) {
  // The SoC from the optional infos (ATC's --soc_version), else from the platform's
  // version/SoC_version; either way the package's npubins serve, nothing is compiled.
  for (const auto &platform : {std::make_pair(std::string(kSoc), std::string()),
                               std::make_pair(std::string(), std::string(kSoc))}) {
    InstallPlatform(platform.first, platform.second);
    auto op = PulledOp();
    REQUIRE_TRUE(op != nullptr);
    std::string err;
    ge::graphStatus st = ge::GRAPH_FAILED;
    err = CaptureStderr([&] { st = Compile(op.get(), ge::DT_FLOAT16, ge::DT_FLOAT16); });
    CHECK_EQ(st, ge::GRAPH_SUCCESS);
    // One progress line (ge_report.cc: GE's log and stderr), naming the packaged kernels.
    CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom: node compile_node: AddCustom float16 for SoC Ascend910B1: "
                             "the package ("));
    CHECK_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  }
  const char *count = std::getenv("TF_GE_CUSTOM_DOUBLE_COUNT");
  if (count != nullptr) CHECK_FALSE(std::filesystem::exists(count));
}

TEST(Compile, RefusesWhenGetPlatformInfosFails) {
  InstallPlatform(kSoc, "", 7);
  auto op = PulledOp();
  REQUIRE_TRUE(op != nullptr);  // the library lists AddCustom in its own pull registry
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = Compile(op.get(), ge::DT_FLOAT, ge::DT_FLOAT, "plat_node"); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node plat_node: ") && Contains(err, "GetPlatformInfos") && Contains(err, "returned 7"));
  InstallPlatform(kSoc, "");
}

TEST(Compile, AnUnpackagedSocIsBuiltOnceThroughTheBuilderThenExecuteRunsIt) {
  // Needs the builder double's environment (tests/ge/test_ge_in_loop.py sets it):
  // TF_GE_CUSTOM_PYTHON names tests/ge/doubles/kernel_compiler_double, which runs the real
  // builder entry point and cache protocol with a made-up build step (a TEST DOUBLE: it proves
  // the adapter's process handling, not that anything compiles a kernel).
  const char *count_file = std::getenv("TF_GE_CUSTOM_DOUBLE_COUNT");
  const char *cache_dir = std::getenv("TF_GE_CUSTOM_CACHE_DIR");
  REQUIRE_TRUE(P().have_package && count_file != nullptr && cache_dir != nullptr);
  auto lines = [&] {
    std::ifstream in(count_file);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line.find(kCompiledSoc) != std::string::npos ? 1 : 0;
    return n;
  };
  // A platform naming no NpuArch: no packaged SoC of its architecture (kArchSoc's dav-2201)
  // can serve it, so Compile builds its kernels.
  InstallPlatform(kCompiledSoc, "", 0, "");
  auto first = PulledOp();
  REQUIRE_TRUE(first != nullptr);  // the library lists AddCustom in its own pull registry
  std::string err;
  ge::graphStatus st = ge::GRAPH_FAILED;
  err = CaptureStderr([&] { st = Compile(first.get(), ge::DT_BF16, ge::DT_BF16); });
  if (st != ge::GRAPH_SUCCESS) testing::RecordFailure(__FILE__, __LINE__, "Compile failed: " + err);
  REQUIRE_EQ(st, ge::GRAPH_SUCCESS);
  CHECK_EQ(lines(), 1);
  // A second instance (another graph) finds the cache entry: no second build.
  auto second = PulledOp();
  REQUIRE_TRUE(second != nullptr);  // the library lists AddCustom in its own pull registry
  REQUIRE_EQ(Compile(second.get(), ge::DT_BF16, ge::DT_BF16), ge::GRAPH_SUCCESS);
  CHECK_EQ(lines(), 1);
  // The npubin Execute loads on that SoC is the cache entry's.
  std::vector<uint8_t> cached;
  for (const auto &e : std::filesystem::recursive_directory_iterator(cache_dir)) {
    if (e.path().filename() == "add_custom_flat_bfloat16.npubin") {
      std::ifstream in(e.path(), std::ios::binary);
      cached.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  REQUIRE_TRUE(!cached.empty());
  recording_acl::Reset(OnFreshDevice(kCompiledSoc));
  EagerCall call({64}, {64}, ge::DT_BF16, ge::DT_BF16);
  REQUIRE_EQ(As<ge::EagerExecuteOp>(second.get())->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  REQUIRE_EQ(r.loads.size(), size_t{1});
  CHECK_EQ(r.loads[0].bytes, cached);
  InstallPlatform(kSoc, "");
}

// ---- Serialize / Deserialize ----

TEST(Portable, SerializeDeserializeRoundTripsAndTheRestoredKernelsRun) {
  auto from = PulledOp();
  REQUIRE_TRUE(from != nullptr);  // the library lists AddCustom in its own pull registry
  std::vector<uint8_t> bytes;
  REQUIRE_EQ(As<ge::PortableOp>(from.get())->Serialize(bytes), ge::GRAPH_SUCCESS);
  CHECK_TRUE(bytes.size() > 8);
  CHECK_EQ(std::string(bytes.begin(), bytes.begin() + 8), std::string("TFGEKRNL"));
  // Every packaged npubin is in it (Compile chose nothing).
  for (const char *variant : {"flat", "row_16x256"}) {
    const auto bin = test_support::FakeBinary(kSoc, "int32", variant);
    CHECK_TRUE(std::search(bytes.begin(), bytes.end(), bin.begin(), bin.end()) != bytes.end());
  }
  auto to = PulledOp();
  REQUIRE_TRUE(to != nullptr);  // the library lists AddCustom in its own pull registry
  REQUIRE_EQ(As<ge::PortableOp>(to.get())->Deserialize(bytes), ge::GRAPH_SUCCESS);
  std::vector<uint8_t> again;
  REQUIRE_EQ(As<ge::PortableOp>(to.get())->Serialize(again), ge::GRAPH_SUCCESS);
  CHECK_EQ(again, bytes);
  recording_acl::Reset(OnFreshDevice());
  EagerCall call({10}, {10}, ge::DT_INT32, ge::DT_INT32);
  REQUIRE_EQ(As<ge::EagerExecuteOp>(to.get())->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  const recording_acl::Record r = recording_acl::Take();
  REQUIRE_EQ(r.loads.size(), size_t{1});
  CHECK_EQ(r.loads[0].bytes, test_support::FakeBinary(kSoc, "int32", "flat"));
  CHECK_EQ(r.launches.size(), size_t{1});
}

TEST(Portable, DeserializeRefusesBytesThatAreNoBundle) {
  auto op = PulledOp();
  REQUIRE_TRUE(op != nullptr);  // the library lists AddCustom in its own pull registry
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = As<ge::PortableOp>(op.get())->Deserialize({1, 2, 3}); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom: Deserialize"));
}
