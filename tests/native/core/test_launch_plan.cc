// Grid and chunk plans at the edges: 0, 1, block +- 1, the program and grid caps, the
// per-launch limit and counts beyond 2^31, for the flat kernels and the tiled broadcasting
// ones (hand-computed expectations).
#include "testing.h"
#include "tf_ge_custom_core/launch_plan.h"

using namespace tf_ge_custom::core;

namespace {
KernelEntry Kernel(int64_t max_programs = 40, int64_t max_grid = 65535, int64_t per_launch = int64_t{1} << 30,
                   std::vector<int64_t> block = {4096}) {
  KernelEntry k;
  k.block = block;
  k.max_programs = max_programs;
  k.max_grid = max_grid;
  k.max_elements_per_launch = per_launch;
  return k;
}

struct Expect {
  int64_t n;
  int64_t launches;
  uint32_t first_grid;
};

// A tiled choice over a 5-dimensional frame with operand strides given by hand.
KernelChoice Tiled(const std::string &variant, std::vector<int64_t> frame, std::vector<int64_t> a,
                   std::vector<int64_t> b) {
  KernelChoice c;
  c.variant = FindOp("AddCustom")->FindVariant(variant);
  c.frame = frame;
  c.strides = {a, b};
  c.num_elements = 1;
  for (int64_t d : frame) c.num_elements *= d;
  return c;
}
}  // namespace

TEST(LaunchPlan, SingleLaunchGridAtTheEdges) {
  const Expect cases[] = {
      {0, 0, 0},          {1, 1, 1},           {4095, 1, 1},         {4096, 1, 1},        {4097, 1, 2},
      {8192, 1, 2},       {8193, 1, 3},        {4096 * 40 - 1, 1, 40}, {4096 * 40, 1, 40}, {4096 * 40 + 1, 1, 40},
      {int64_t{1} << 30, 1, 40},
  };
  for (const auto &c : cases) {
    auto p = LaunchPlan::Flat(c.n, 4, Kernel());
    REQUIRE_OK(p);
    CHECK_EQ(p.value().launch_count(), c.launches);
    if (c.launches == 0) continue;
    const Launch l = p.value().launch(0);
    CHECK_EQ(l.grid_x, c.first_grid);
    CHECK_EQ(l.grid_y, 1u);
    CHECK_EQ(l.grid_z, 1u);
    CHECK_EQ(l.num_elements, c.n);
    CHECK_EQ(l.dims, std::vector<int64_t>{c.n});
    CHECK_EQ(l.block_dim(), c.first_grid);
    CHECK_EQ(l.output_offset, uint64_t{0});
  }
}

TEST(LaunchPlan, GridNeverExceedsTheHardwareLimit) {
  // A kernel allowing more programs than the grid limit: 65535 wins.
  auto p = LaunchPlan::Flat(int64_t{4096} * 65536, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  REQUIRE_OK(p);
  CHECK_EQ(p.value().launch(0).grid_x, 65535u);
  auto q = LaunchPlan::Flat(int64_t{4096} * 65535, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(q.value().launch(0).grid_x, 65535u);
  auto r = LaunchPlan::Flat(int64_t{4096} * 65534 + 1, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(r.value().launch(0).grid_x, 65535u);
  auto s = LaunchPlan::Flat(int64_t{4096} * 65534, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(s.value().launch(0).grid_x, 65534u);
}

TEST(LaunchPlan, ChunksAtThePerLaunchLimit) {
  const int64_t limit = int64_t{1} << 30;
  auto p = LaunchPlan::Flat(limit + 1, 4, Kernel());
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{2});
  const Launch second = p.value().launch(1);
  CHECK_EQ(second.num_elements, int64_t{1});
  CHECK_EQ(second.output_offset, uint64_t{1} << 32);  // past 32 bits: pointers advance in 64-bit
  CHECK_EQ(second.input_offsets, (std::vector<uint64_t>{uint64_t{1} << 32, uint64_t{1} << 32}));
  CHECK_EQ(second.grid_x, 1u);
  auto q = LaunchPlan::Flat(2 * limit, 4, Kernel());
  CHECK_EQ(q.value().launch_count(), int64_t{2});
  CHECK_EQ(q.value().launch(1).num_elements, limit);
}

TEST(LaunchPlan, MoreThanTwoToThe31Elements) {
  const int64_t n = (int64_t{1} << 31) + 5;
  auto p = LaunchPlan::Flat(n, 2, Kernel());  // float16
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{3});
  const int64_t counts[] = {int64_t{1} << 30, int64_t{1} << 30, 5};
  const uint64_t offsets[] = {0, uint64_t{1} << 31, uint64_t{1} << 32};
  const uint32_t grids[] = {40, 40, 1};
  int64_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const Launch l = p.value().launch(i);
    CHECK_EQ(l.num_elements, counts[i]);
    CHECK_EQ(l.output_offset, offsets[i]);
    CHECK_EQ(l.input_offsets[0], offsets[i]);
    CHECK_EQ(l.grid_x, grids[i]);
    CHECK_TRUE(l.num_elements <= INT32_MAX);  // fits the kernel's 32-bit n_elements
    total += l.num_elements;
  }
  CHECK_EQ(total, n);
  // 2^40 elements: 1024 launches, computed on demand.
  auto big = LaunchPlan::Flat(int64_t{1} << 40, 1, Kernel());
  REQUIRE_OK(big);
  CHECK_EQ(big.value().launch_count(), int64_t{1024});
  CHECK_EQ(big.value().launch(1023).output_offset, (uint64_t{1} << 40) - (uint64_t{1} << 30));
}

TEST(LaunchPlan, TheScalarOperandNeverAdvances) {
  KernelChoice c;
  c.variant = FindOp("AddCustom")->FindVariant("scalar");
  c.frame = {(int64_t{1} << 30) + 7};
  c.strides = {{1}, {0}};
  auto p = LaunchPlan::Make(c, 4, Kernel());
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{2});
  const Launch l = p.value().launch(1);
  CHECK_EQ(l.input_offsets, (std::vector<uint64_t>{uint64_t{4} << 30, 0}));
  CHECK_EQ(l.output_offset, uint64_t{4} << 30);
  CHECK_EQ(l.num_elements, int64_t{7});
}

TEST(LaunchPlan, TiledOneLaunchCountsTilesOverThePlaneAndOuterDims) {
  // NCHW bias [8, 64, 56, 56] + [1, 64, 1, 1] reduced to (8, 64, 3136), col pattern:
  // x strides (200704, 3136, 1), the bias (0, 1, 0).
  const KernelChoice c = Tiled("col_16x256", {1, 1, 8, 64, 3136}, {0, 0, 200704, 3136, 1}, {0, 0, 0, 1, 0});
  auto p = LaunchPlan::Make(c, 4, Kernel(40, 65535, int64_t{1} << 30, {16, 256}));
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{1});
  const Launch l = p.value().launch(0);
  CHECK_EQ(l.dims, (std::vector<int64_t>{1, 1, 8, 64, 3136}));
  CHECK_EQ(l.input_strides[0], (std::vector<int64_t>{0, 0, 200704, 3136, 1}));
  CHECK_EQ(l.input_strides[1], (std::vector<int64_t>{0, 0, 0, 1, 0}));
  CHECK_EQ(l.num_elements, int64_t{8 * 64 * 3136});
  CHECK_EQ(l.grid_x, 40u);  // 8 x 4 x 13 = 416 tiles, capped at the programs
  auto few = LaunchPlan::Make(Tiled("col_16x256", {1, 1, 1, 20, 300}, {0, 0, 0, 300, 1}, {0, 0, 0, 1, 0}), 4,
                              Kernel(40, 65535, int64_t{1} << 30, {16, 256}));
  CHECK_EQ(few.value().launch(0).grid_x, 4u);  // ceil(20/16) x ceil(300/256) tiles
}

TEST(LaunchPlan, TiledChunksTheOutermostDimensionThatFits) {
  // (4, 1000, 1000) row pattern with 1.5e6 elements per launch: the outer dimension is split,
  // one plane of 1e6 per launch; the row operand b advances by its outer stride 1000.
  const KernelChoice c = Tiled("row_16x256", {1, 1, 4, 1000, 1000}, {0, 0, 1000000, 1000, 1}, {0, 0, 1000, 0, 1});
  auto p = LaunchPlan::Make(c, 2, Kernel(40, 65535, 1500000, {16, 256}));
  REQUIRE_OK(p);
  CHECK_EQ(p.value().split_dim(), int64_t{2});
  REQUIRE_EQ(p.value().launch_count(), int64_t{4});
  const Launch l = p.value().launch(3);
  CHECK_EQ(l.dims, (std::vector<int64_t>{1, 1, 1, 1000, 1000}));
  CHECK_EQ(l.output_offset, uint64_t{3 * 1000000 * 2});
  CHECK_EQ(l.input_offsets, (std::vector<uint64_t>{3 * 1000000 * 2, 3 * 1000 * 2}));
  CHECK_EQ(l.input_strides[0], (std::vector<int64_t>{0, 0, 1000000, 1000, 1}));
  // Rows: (5, 1000) with at most 4096 elements per launch: four rows, then the fifth.
  auto rows = LaunchPlan::Make(Tiled("row_16x256", {1, 1, 1, 5, 1000}, {0, 0, 0, 1000, 1}, {0, 0, 0, 0, 1}), 4,
                               Kernel(40, 65535, 4096, {16, 256}));
  REQUIRE_OK(rows);
  CHECK_EQ(rows.value().split_dim(), int64_t{3});
  REQUIRE_EQ(rows.value().launch_count(), int64_t{2});
  CHECK_EQ(rows.value().launch(0).dims, (std::vector<int64_t>{1, 1, 1, 4, 1000}));
  const Launch last = rows.value().launch(1);
  CHECK_EQ(last.dims, (std::vector<int64_t>{1, 1, 1, 1, 1000}));
  CHECK_EQ(last.output_offset, uint64_t{4 * 1000 * 4});
  CHECK_EQ(last.input_offsets, (std::vector<uint64_t>{4 * 1000 * 4, 0}));
  CHECK_EQ(last.grid_x, 4u);  // one row tile x 4 column tiles
}

TEST(LaunchPlan, TiledBeyondTwoToThe31ElementsKeepsEveryArgumentIn32Bits) {
  // outer [3, 2^30] pattern: x (1, 2^30) + y (3, 1) -> rows 3, cols 2^30 (3 x 2^30 elements).
  // A row alone fills a launch: the rows dimension is split, one row per launch; within a row
  // the column dimension fits exactly.
  const int64_t cols = int64_t{1} << 30;
  const KernelChoice c = Tiled("outer_1x4096", {1, 1, 1, 3, cols}, {0, 0, 0, 0, 1}, {0, 0, 0, 1, 0});
  auto p = LaunchPlan::Make(c, 2, Kernel(48, 65535, int64_t{1} << 30, {1, 4096}));
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{3});
  for (int64_t i = 0; i < 3; ++i) {
    const Launch l = p.value().launch(i);
    CHECK_EQ(l.dims, (std::vector<int64_t>{1, 1, 1, 1, cols}));
    CHECK_EQ(l.output_offset, static_cast<uint64_t>(i) * static_cast<uint64_t>(cols) * 2);  // beyond 2^32 bytes
    CHECK_EQ(l.input_offsets, (std::vector<uint64_t>{0, static_cast<uint64_t>(i) * 2}));    // b advances one row
    for (int64_t d : l.dims) CHECK_TRUE(d <= INT32_MAX);
  }
  // 2^31 + 2 columns in one row: the columns are split.
  const KernelChoice wide = Tiled("row_1x4096", {1, 1, 1, 2, (int64_t{1} << 31) + 2}, {0, 0, 0, (int64_t{1} << 31) + 2, 1},
                                  {0, 0, 0, 0, 1});
  auto q = LaunchPlan::Make(wide, 1, Kernel(48, 65535, int64_t{1} << 30, {1, 4096}));
  REQUIRE_OK(q);
  CHECK_EQ(q.value().split_dim(), int64_t{4});
  REQUIRE_EQ(q.value().launch_count(), int64_t{6});  // 2 rows x 3 column chunks
  const Launch l = q.value().launch(5);
  CHECK_EQ(l.dims, (std::vector<int64_t>{1, 1, 1, 1, 2}));
  CHECK_EQ(l.output_offset, (uint64_t{1} << 31) + 2 + (uint64_t{1} << 31));
  CHECK_EQ(l.input_offsets, (std::vector<uint64_t>{(uint64_t{1} << 31) + 2 + (uint64_t{1} << 31), uint64_t{1} << 31}));
  CHECK_EQ(l.input_strides[0], (std::vector<int64_t>{0, 0, 0, 0, 1}));  // the row stride no longer matters: 0
}

TEST(LaunchPlan, RefusesNegativeAndOverflowingCounts) {
  CHECK_FALSE(LaunchPlan::Flat(-1, 4, Kernel()).ok());
  CHECK_FALSE(LaunchPlan::Flat(int64_t{1} << 62, 4, Kernel()).ok());  // 2^64 bytes
  CHECK_TRUE(LaunchPlan::Flat(int64_t{1} << 60, 4, Kernel()).ok());
  KernelChoice none;
  none.frame = {5};
  none.strides = {{1}, {1}};
  CHECK_FALSE(LaunchPlan::Make(none, 4, Kernel()).ok());  // no variant chosen
}

TEST(LaunchPlan, WorkspaceAndLockFill) {
  KernelEntry k = Kernel();
  k.workspace_size = 1024;
  CHECK_EQ(WorkspaceBytes(k, 40).value(), uint64_t{40960});
  k.workspace_size = INT64_MAX;
  CHECK_FALSE(WorkspaceBytes(k, 2).ok());
  CHECK_EQ(LockFillByte(0).value(), static_cast<unsigned char>(0));
  CHECK_EQ(LockFillByte(-1).value(), static_cast<unsigned char>(0xFF));
  CHECK_EQ(LockFillByte(0x0101010101010101ll).value(), static_cast<unsigned char>(1));
  CHECK_FALSE(LockFillByte(1).ok());
}

TEST(LaunchPlan, PlansAndLaunchesIntoReusedObjectsEqualFreshOnes) {
  // Execute keeps one plan and one launch per thread and fills them call after call: nothing
  // a previous plan left (another rank, split, chunking, 0 elements) may reach the next one.
  // Fresh objects are the oracle; the sequence mixes flat and tiled, one and many launches.
  struct Case {
    KernelChoice choice;
    int64_t itemsize;
    KernelEntry kernel;
  };
  KernelChoice flat;
  flat.variant = FindOp("AddCustom")->FindVariant("flat");
  flat.frame = {(int64_t{1} << 31) + 5};
  flat.strides = {{1}, {1}};
  flat.num_elements = flat.frame[0];
  KernelChoice scalar = flat;
  scalar.frame = {1000};
  scalar.strides = {{1}, {0}};
  KernelChoice empty = flat;
  empty.frame = {0};
  const std::vector<Case> cases = {
      {Tiled("row_16x256", {1, 1, 4, 1000, 1000}, {0, 0, 1000000, 1000, 1}, {0, 0, 1000, 0, 1}), 2,
       Kernel(40, 65535, 1500000, {16, 256})},
      {flat, 2, Kernel()},
      {Tiled("row_16x256", {1, 1, 1, 5, 1000}, {0, 0, 0, 1000, 1}, {0, 0, 0, 0, 1}), 4, Kernel(40, 65535, 4096, {16, 256})},
      {empty, 4, Kernel()},
      {scalar, 4, Kernel(40, 65535, 300, {64})},
      {Tiled("outer_1x4096", {1, 1, 1, 3, int64_t{1} << 30}, {0, 0, 0, 0, 1}, {0, 0, 0, 1, 0}), 2,
       Kernel(48, 65535, int64_t{1} << 30, {1, 4096})},
      {Tiled("col_16x256", {2, 1, 3, 7, 9}, {189, 0, 63, 9, 1}, {21, 0, 7, 1, 0}), 4, Kernel(40, 65535, 100, {4, 8})},
  };
  LaunchPlan plan;
  Launch launch;
  int64_t launches = 0;
  for (int round = 0; round < 2; ++round) {
    for (const Case &c : cases) {
      auto fresh = LaunchPlan::Make(c.choice, c.itemsize, c.kernel);
      REQUIRE_OK(fresh);
      REQUIRE_TRUE(LaunchPlan::Make(c.choice, c.itemsize, c.kernel, &plan).ok());
      REQUIRE_EQ(plan.launch_count(), fresh.value().launch_count());
      CHECK_EQ(plan.split_dim(), fresh.value().split_dim());
      CHECK_EQ(plan.max_block_dim(), fresh.value().max_block_dim());
      if (fresh.value().launch_count() > 0) CHECK_EQ(plan.max_block_dim(), fresh.value().launch(0).block_dim());
      for (int64_t i = 0; i < fresh.value().launch_count(); ++i, ++launches) {
        const Launch want = fresh.value().launch(i);
        plan.launch(i, &launch);
        CHECK_EQ(launch.dims, want.dims);
        CHECK_EQ(launch.num_elements, want.num_elements);
        CHECK_EQ(launch.output_offset, want.output_offset);
        CHECK_EQ(launch.input_offsets, want.input_offsets);
        REQUIRE_EQ(launch.input_strides.size(), want.input_strides.size());
        for (size_t k = 0; k < want.input_strides.size(); ++k) CHECK_EQ(launch.input_strides[k], want.input_strides[k]);
        CHECK_EQ(launch.block_dim(), want.block_dim());
      }
    }
  }
  CHECK_TRUE(launches > 20);
}
