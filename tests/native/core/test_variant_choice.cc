// The kernel-variant rule of ChooseKernel (broadcast.cc), pinned: a tiled pattern has one
// variant per block shape; the widest block (most columns) is taken first, and each
// narrower one in turn replaces the one taken when it needs fewer than three quarters of
// its tiles (4 * narrower < 3 * taken). A variant's tiles over the launch plane are
// ceil(rows / block rows) * ceil(cols / block cols), rows and cols being the last two
// extents of the reduced shape (outer dimensions are looped over, not tiled).
//
// Two checks: a table written by hand (shape -> variant and block, with the tiles worked
// out in the comments), including the ties exactly at the 3/4 threshold, which keep the
// wider block, and the shapes one tile short of it, which take the narrower one; and a
// brute force over every small 2-D plane and a set of 3-D shapes against the rule as
// restated below, computed from the shape the test builds, not from ChooseKernel's frame.
#include <algorithm>
#include <string>
#include <vector>

#include "testing.h"
#include "tf_ge_custom_core/broadcast.h"
#include "tf_ge_custom_core/op_checks.h"

using namespace tf_ge_custom::core;
using Dims = std::vector<int64_t>;

namespace {
const OpDefinition &Add() { return *FindOp("AddCustom"); }

int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The rule, restated plainly: the pattern's tiled variants, ordered by block columns
// (widest first, a stable sort: table order among equals); start with the first; a later
// one replaces the one taken when four times its tiles are fewer than three times the
// taken one's.
std::string Expected(Pattern pattern, int64_t rows, int64_t cols) {
  std::vector<const KernelVariantDefinition *> candidates;
  for (const auto &v : Add().variants) {
    if (v.pattern == pattern && v.block.size() == 2) candidates.push_back(&v);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const KernelVariantDefinition *a, const KernelVariantDefinition *b) {
                     return a->block[1] > b->block[1];
                   });
  if (candidates.empty()) return "(no candidate)";
  auto tiles = [&](const KernelVariantDefinition *v) { return Ceil(rows, v->block[0]) * Ceil(cols, v->block[1]); };
  const KernelVariantDefinition *taken = candidates[0];
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (4 * tiles(candidates[i]) < 3 * tiles(taken)) taken = candidates[i];
  }
  return taken->name;
}

// Shapes whose reduced plane has `rows` x `cols` (both >= 2) in the given pattern, under
// `outer` leading extents (0: none) that the rule must not count as rows.
void Inputs(Pattern pattern, int64_t outer, int64_t rows, int64_t cols, Dims *x, Dims *y) {
  if (outer == 0) {
    if (pattern == Pattern::kRow) *x = {rows, cols}, *y = {cols};
    if (pattern == Pattern::kCol) *x = {rows, cols}, *y = {rows, 1};
    if (pattern == Pattern::kOuter) *x = {1, cols}, *y = {rows, 1};
    return;
  }
  // y varies along `outer` where x does, so neither pair of neighbours merges.
  if (pattern == Pattern::kRow) *x = {outer, rows, cols}, *y = {outer, 1, cols};
  if (pattern == Pattern::kCol) *x = {outer, rows, cols}, *y = {1, rows, 1};
  if (pattern == Pattern::kOuter) *x = {outer, 1, cols}, *y = {outer, rows, 1};
}

const Pattern kTiled[] = {Pattern::kRow, Pattern::kCol, Pattern::kOuter};
}  // namespace

TEST(VariantChoice, TableOfShapesWithTheBlockTakenAndTheTiesAtThreeQuarters) {
  struct Case {
    Dims x, y;
    std::string variant;
    Dims block;
  };
  // t1, t16, t128: tiles of the 1x4096, 16x256 and 128x32 blocks over rows x cols.
  const Case cases[] = {
      {{8, 2048}, {8, 2048}, "flat", {4096}},
      {{3, 5}, {}, "scalar", {4096}},
      {{2, 5000}, {5000}, "row_1x4096", {1, 4096}},        // t1 4, t16 20: the widest stays
      {{3, 257}, {257}, "row_16x256", {16, 256}},          // t1 3, t16 2: 8 < 9, one short of 3/4
      {{4, 513}, {513}, "row_1x4096", {1, 4096}},          // t1 4, t16 3: 12 == 12, a tie keeps it
      {{34, 4097}, {4097}, "row_1x4096", {1, 4096}},       // t1 68, t16 51: 204 == 204, a tie
      {{35, 4097}, {4097}, "row_16x256", {16, 256}},       // t1 70, t16 51: 204 < 210
      {{49, 65}, {65}, "row_16x256", {16, 256}},           // t16 4, t128 3: 12 == 12, a tie
      {{33, 33}, {33}, "row_128x32", {128, 32}},           // t16 3, t128 2: 8 < 9
      {{48, 65}, {65}, "row_16x256", {16, 256}},           // t16 3, t128 3
      // 16x256 not taken (t1 113, t16 88: 352 >= 339), 128x32 against the 1x4096 taken:
      {{113, 2561}, {2561}, "row_128x32", {128, 32}},      // t128 81: 324 < 339
      {{114, 5441}, {5441}, "row_1x4096", {1, 4096}},      // t1 228, t16 176, t128 171: 684 == 684
      // 16x256 taken; 128x32 would beat 1x4096 (t1 2) but not 16x256 (t16 1, t128 1):
      {{2, 2}, {2}, "row_16x256", {16, 256}},
      // the same rule for the other tiled patterns
      {{4, 513}, {4, 1}, "col_1x4096", {1, 4096}},         // tie
      {{3, 257}, {3, 1}, "col_16x256", {16, 256}},
      {{33, 33}, {33, 1}, "col_128x32", {128, 32}},
      {{4, 1}, {1, 513}, "outer_1x4096", {1, 4096}},       // tie (the row operand goes first)
      {{1, 65}, {49, 1}, "outer_16x256", {16, 256}},       // tie
      {{1, 33}, {33, 1}, "outer_128x32", {128, 32}},
      // outer extents are not rows: [3, 4, 513] tiles a 4 x 513 plane three times
      {{3, 4, 513}, {3, 1, 513}, "row_1x4096", {1, 4096}},  // t1 4, t16 3: a tie (12 rows would not be)
      {{7, 33, 33}, {1, 33, 1}, "col_128x32", {128, 32}},
  };
  for (const auto &c : cases) {
    const std::string what = ShapeString(c.x) + " + " + ShapeString(c.y);
    auto k = ChooseKernel(Add(), c.x, c.y);
    if (!k.ok()) {
      CHECK_EQ(what + ": " + k.status().ToString(), what + ": ok");
      continue;
    }
    REQUIRE_TRUE(k.value().variant != nullptr);
    CHECK_EQ(what + " -> " + k.value().variant->name, what + " -> " + c.variant);
    CHECK_EQ(what + " block " + ShapeString(k.value().variant->block), what + " block " + ShapeString(c.block));
  }
}

TEST(VariantChoice, BruteForceEverySmallPlaneAgainstTheRuleRestated) {
  int checked = 0, differ = 0;
  std::string first;
  auto check = [&](Pattern pattern, int64_t outer, int64_t rows, int64_t cols) {
    Dims x, y;
    Inputs(pattern, outer, rows, cols, &x, &y);
    const std::string want = Expected(pattern, rows, cols);
    auto k = ChooseKernel(Add(), x, y);
    const std::string got = !k.ok() ? k.status().ToString()
                                    : k.value().variant == nullptr ? "(none)" : k.value().variant->name;
    ++checked;
    if (got != want && differ++ < 5) first += " " + ShapeString(x) + "+" + ShapeString(y) + ": " + got + " not " + want + ";";
  };
  for (Pattern p : kTiled) {
    for (int64_t rows = 2; rows <= 160; ++rows) {
      for (int64_t cols = 2; cols <= 320; ++cols) check(p, 0, rows, cols);
      if (rows <= 48) {
        for (int64_t cols : {1023, 1024, 2048, 4095, 4096, 4097, 6144, 8191, 8192, 8193, 12288}) check(p, 0, rows, cols);
      }
    }
    for (int64_t outer : {2, 3, 7}) {
      for (int64_t rows = 2; rows <= 64; ++rows) {
        for (int64_t cols = 2; cols <= 96; ++cols) check(p, outer, rows, cols);
        for (int64_t cols : {255, 256, 257, 513, 4095, 4096, 4097, 8193}) check(p, outer, rows, cols);
      }
    }
  }
  CHECK_EQ(std::to_string(differ) + " of " + std::to_string(checked) + " shapes differ from the rule:" + first,
           std::string("0 of 212115 shapes differ from the rule:"));
}
