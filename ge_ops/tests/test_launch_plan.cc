// Grid and chunk plans at the edges: 0, 1, block +- 1, the program and grid caps, the
// per-launch limit and counts beyond 2^31 (hand-computed expectations).
#include "testing.h"
#include "tf_ge_custom_core/launch_plan.h"

using namespace tf_ge_custom::core;

namespace {
KernelEntry Kernel(int64_t max_programs = 40, int64_t max_grid = 65535, int64_t per_launch = int64_t{1} << 30) {
  KernelEntry k;
  k.block_size = 4096;
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
}  // namespace

TEST(LaunchPlan, SingleLaunchGridAtTheEdges) {
  const Expect cases[] = {
      {0, 0, 0},          {1, 1, 1},           {4095, 1, 1},         {4096, 1, 1},        {4097, 1, 2},
      {8192, 1, 2},       {8193, 1, 3},        {4096 * 40 - 1, 1, 40}, {4096 * 40, 1, 40}, {4096 * 40 + 1, 1, 40},
      {int64_t{1} << 30, 1, 40},
  };
  for (const auto &c : cases) {
    auto p = LaunchPlan::Make(c.n, 4, Kernel());
    REQUIRE_OK(p);
    CHECK_EQ(p.value().launch_count(), c.launches);
    if (c.launches == 0) continue;
    const Launch l = p.value().launch(0);
    CHECK_EQ(l.grid_x, c.first_grid);
    CHECK_EQ(l.grid_y, 1u);
    CHECK_EQ(l.grid_z, 1u);
    CHECK_EQ(l.num_elements, c.n);
    CHECK_EQ(l.block_dim(), c.first_grid);
  }
}

TEST(LaunchPlan, GridNeverExceedsTheHardwareLimit) {
  // A kernel allowing more programs than the grid limit: 65535 wins.
  auto p = LaunchPlan::Make(int64_t{4096} * 65536, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  REQUIRE_OK(p);
  CHECK_EQ(p.value().launch(0).grid_x, 65535u);
  auto q = LaunchPlan::Make(int64_t{4096} * 65535, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(q.value().launch(0).grid_x, 65535u);
  auto r = LaunchPlan::Make(int64_t{4096} * 65534 + 1, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(r.value().launch(0).grid_x, 65535u);
  auto s = LaunchPlan::Make(int64_t{4096} * 65534, 2, Kernel(1 << 20, 65535, int64_t{1} << 40));
  CHECK_EQ(s.value().launch(0).grid_x, 65534u);
}

TEST(LaunchPlan, ChunksAtThePerLaunchLimit) {
  const int64_t limit = int64_t{1} << 30;
  auto p = LaunchPlan::Make(limit + 1, 4, Kernel());
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{2});
  const Launch second = p.value().launch(1);
  CHECK_EQ(second.first_element, limit);
  CHECK_EQ(second.num_elements, int64_t{1});
  CHECK_EQ(second.byte_offset, uint64_t{1} << 32);  // past 32 bits: pointers advance in 64-bit
  CHECK_EQ(second.grid_x, 1u);
  auto q = LaunchPlan::Make(2 * limit, 4, Kernel());
  CHECK_EQ(q.value().launch_count(), int64_t{2});
  CHECK_EQ(q.value().launch(1).num_elements, limit);
}

TEST(LaunchPlan, MoreThanTwoToThe31Elements) {
  const int64_t n = (int64_t{1} << 31) + 5;
  auto p = LaunchPlan::Make(n, 2, Kernel());  // float16
  REQUIRE_OK(p);
  REQUIRE_EQ(p.value().launch_count(), int64_t{3});
  const int64_t firsts[] = {0, int64_t{1} << 30, int64_t{1} << 31};
  const int64_t counts[] = {int64_t{1} << 30, int64_t{1} << 30, 5};
  const uint64_t offsets[] = {0, uint64_t{1} << 31, uint64_t{1} << 32};
  const uint32_t grids[] = {40, 40, 1};
  int64_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const Launch l = p.value().launch(i);
    CHECK_EQ(l.first_element, firsts[i]);
    CHECK_EQ(l.num_elements, counts[i]);
    CHECK_EQ(l.byte_offset, offsets[i]);
    CHECK_EQ(l.grid_x, grids[i]);
    CHECK_TRUE(l.num_elements <= INT32_MAX);  // fits the kernel's 32-bit n_elements
    total += l.num_elements;
  }
  CHECK_EQ(total, n);
  // 2^40 elements: 1024 launches, computed on demand.
  auto big = LaunchPlan::Make(int64_t{1} << 40, 1, Kernel());
  REQUIRE_OK(big);
  CHECK_EQ(big.value().launch_count(), int64_t{1024});
  CHECK_EQ(big.value().launch(1023).first_element, (int64_t{1} << 40) - (int64_t{1} << 30));
}

TEST(LaunchPlan, RefusesNegativeAndOverflowingCounts) {
  CHECK_FALSE(LaunchPlan::Make(-1, 4, Kernel()).ok());
  CHECK_FALSE(LaunchPlan::Make(int64_t{1} << 62, 4, Kernel()).ok());  // 2^64 bytes
  CHECK_TRUE(LaunchPlan::Make(int64_t{1} << 60, 4, Kernel()).ok());
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
