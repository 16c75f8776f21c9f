// Run-time broadcasting: the reduction of two shapes (a hand-written table of cases, and a
// brute-force oracle over every small shape pair that reads each element the way numpy's
// broadcasting does, computed independently of the reduction), the kernel variant for each
// pattern, the block choice, and the refusals.
#include <functional>
#include <string>
#include <vector>

#include "testing.h"
#include "tf_ge_custom_core/broadcast.h"
#include "tf_ge_custom_core/op_checks.h"

using namespace tf_ge_custom::core;
using Dims = std::vector<int64_t>;

namespace {
const OpDefinition &Add() { return *FindOp("AddCustom"); }

// The element of input `shape` that output element `out_index` (of `out_shape`) reads under
// numpy broadcasting: align on the right, a size-1 dimension reads index 0. Row-major.
int64_t NumpySource(const Dims &shape, const Dims &out_shape, const Dims &out_index) {
  int64_t offset = 0, stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    const size_t o = k + out_shape.size() - shape.size();
    offset += (shape[k] == 1 ? 0 : out_index[o]) * stride;
    stride *= shape[k];
  }
  return offset;
}

// Every output index of `shape`, row-major.
void ForEachIndex(const Dims &shape, const std::function<void(const Dims &)> &fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Dims index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(index);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

// The offset that linear element i of a row-major `dims` reads with `strides`.
int64_t Strided(int64_t i, const Dims &dims, const Dims &strides) {
  int64_t offset = 0;
  for (size_t k = dims.size(); k-- > 0;) {
    offset += (i % dims[k]) * strides[k];
    i /= dims[k];
  }
  return offset;
}

std::vector<Dims> SmallShapes() {
  std::vector<Dims> shapes = {{}};
  for (size_t rank = 1; rank <= 3; ++rank) {
    std::vector<Dims> next;
    for (const Dims &s : shapes) {
      if (s.size() != rank - 1) continue;
      for (int64_t d : {1, 2, 3}) {
        Dims t = s;
        t.push_back(d);
        next.push_back(t);
      }
    }
    shapes.insert(shapes.end(), next.begin(), next.end());
  }
  for (const Dims &s : {Dims{0}, Dims{2, 0}, Dims{0, 1, 3}, Dims{1, 2, 1, 3}, Dims{2, 1, 3, 1}}) shapes.push_back(s);
  return shapes;
}

bool Compatible(const Dims &x, const Dims &y) {
  for (size_t k = 1; k <= std::min(x.size(), y.size()); ++k) {
    const int64_t a = x[x.size() - k], b = y[y.size() - k];
    if (a != b && a != 1 && b != 1) return false;
  }
  return true;
}
}  // namespace

TEST(Broadcast, ReductionTableWrittenByHand) {
  struct Case {
    Dims x, y, output, dims, sx, sy;
  };
  const Case cases[] = {
      {{8, 2048}, {8, 2048}, {8, 2048}, {16384}, {1}, {1}},                            // equal: one flat range
      {{4}, {}, {4}, {4}, {1}, {0}},                                                   // scalar
      {{}, {}, {}, {}, {}, {}},                                                        // one element each
      {{1, 1}, {1}, {1, 1}, {}, {}, {}},
      {{8192, 1024}, {1024}, {8192, 1024}, {8192, 1024}, {1024, 1}, {0, 1}},           // bias add
      {{4096, 1}, {1, 4096}, {4096, 4096}, {4096, 4096}, {1, 0}, {0, 1}},              // outer
      {{64, 1024}, {64, 1}, {64, 1024}, {64, 1024}, {1024, 1}, {1, 0}},                // [N, C] + [N, 1]
      {{8, 64, 56, 56}, {1, 64, 1, 1}, {8, 64, 56, 56}, {8, 64, 3136}, {200704, 3136, 1}, {0, 1, 0}},  // NCHW bias
      {{8, 56, 56, 64}, {64}, {8, 56, 56, 64}, {25088, 64}, {64, 1}, {0, 1}},          // NHWC bias
      {{2, 1, 3}, {1, 1, 1}, {2, 1, 3}, {6}, {1}, {0}},                                // only size-1 dims in y
      {{2, 3, 1, 5}, {3, 4, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}, {15, 5, 0, 1}, {0, 4, 1, 0}},
      {{1, 3, 1}, {2, 1, 4}, {2, 3, 4}, {2, 3, 4}, {0, 1, 0}, {4, 0, 1}},
      {{5, 0}, {1}, {5, 0}, {}, {}, {}},                                               // no elements: nothing
  };
  for (const auto &c : cases) {
    auto r = ReduceBroadcast(c.x, c.y);
    const std::string what = ShapeString(c.x) + " + " + ShapeString(c.y);
    if (!r.ok()) {
      CHECK_EQ(what + ": " + r.status().ToString(), what + ": ok");
      continue;
    }
    CHECK_EQ(what + " output " + ShapeString(r.value().output), what + " output " + ShapeString(c.output));
    CHECK_EQ(what + " dims " + ShapeString(r.value().dims), what + " dims " + ShapeString(c.dims));
    if (!c.dims.empty()) {
      CHECK_EQ(what + " x strides " + ShapeString(r.value().strides[0]), what + " x strides " + ShapeString(c.sx));
      CHECK_EQ(what + " y strides " + ShapeString(r.value().strides[1]), what + " y strides " + ShapeString(c.sy));
    }
  }
}

TEST(Broadcast, BruteForceEveryElementOfEverySmallShapePair) {
  // For every pair of shapes of rank <= 3 (sizes 1..3, and a few with 0 or rank 4), every
  // output element: the reduced shape reads what numpy broadcasting reads, and so does the
  // kernel choice's frame for each kernel operand, with the plane accessed exactly as the
  // chosen pattern's kernel accesses it (add_tile_kernel's A_ROWS / B_ROWS).
  int pairs = 0, elements = 0, refused = 0;
  const std::vector<Dims> shapes = SmallShapes();
  for (const Dims &x : shapes) {
    for (const Dims &y : shapes) {
      const std::string what = ShapeString(x) + " + " + ShapeString(y);
      auto r = ReduceBroadcast(x, y);
      auto c = ChooseKernel(Add(), x, y);
      if (!Compatible(x, y)) {
        ++refused;
        if (r.ok() || c.ok() || r.status().code() != Code::kBadShape) CHECK_EQ(what, std::string("refused"));
        continue;
      }
      if (!r.ok() || !c.ok()) {
        CHECK_EQ(what + ": " + (r.ok() ? c.status().ToString() : r.status().ToString()), what + ": ok");
        continue;
      }
      ++pairs;
      const ReducedBroadcast &red = r.value();
      const KernelChoice &k = c.value();
      CHECK_EQ(red.output, k.output);
      if (red.num_elements == 0) {
        CHECK_TRUE(k.variant == nullptr);
        continue;
      }
      REQUIRE_TRUE(k.variant != nullptr);
      const Dims inputs[2] = {x, y};
      const Pattern p = k.variant->pattern;
      const size_t rank = k.frame.size();
      bool ok = true;
      int64_t linear = 0;
      ForEachIndex(red.output, [&](const Dims &index) {
        for (int i = 0; i < 2; ++i) {
          const int64_t want = NumpySource(inputs[i], red.output, index);
          const Dims reduced_dims = red.dims.empty() ? Dims{1} : red.dims;
          const Dims reduced_strides = red.dims.empty() ? Dims{0} : red.strides[i];
          ok = ok && Strided(linear, reduced_dims, reduced_strides) == want;
        }
        for (int operand = 0; operand < 2; ++operand) {
          const Dims &input = inputs[k.operands[operand]];
          ok = ok && Strided(linear, k.frame, k.strides[operand]) == NumpySource(input, red.output, index);
        }
        ++linear;
        ++elements;
      });
      if (!ok) CHECK_EQ(what + " reads other elements than numpy", what);
      // What each pattern's kernel assumes about the plane (it ignores these strides).
      const Dims &sa = k.strides[0], &sb = k.strides[1];
      bool fits = true;
      if (p == Pattern::kEqual) fits = rank == 1 && sa[0] == 1 && sb[0] == 1;
      if (p == Pattern::kScalar) fits = rank == 1 && sa[0] == 1 && sb[0] == 0;
      if (k.variant->tiled()) {
        const int64_t cols = k.frame[rank - 1];
        const Dims a_plane{sa[rank - 2], sa[rank - 1]}, b_plane{sb[rank - 2], sb[rank - 1]};
        if (p == Pattern::kRow) fits = a_plane == Dims{cols, 1} && b_plane == Dims{0, 1};
        if (p == Pattern::kCol) fits = a_plane == Dims{cols, 1} && b_plane == Dims{1, 0};
        if (p == Pattern::kOuter) fits = a_plane == Dims{0, 1} && b_plane == Dims{1, 0};
        fits = fits && rank == static_cast<size_t>(kMaxBroadcastRank);
      }
      if (!fits) CHECK_EQ(what + " does not fit pattern " + PatternName(p), what);
    }
  }
  // Of the 45 x 45 pairs, numpy.broadcast_shapes accepts 1129 (10945 output elements in all).
  CHECK_EQ(std::to_string(pairs) + " pairs, " + std::to_string(refused) + " refused, " + std::to_string(elements) +
               " elements",
           std::string("1129 pairs, 896 refused, 10945 elements"));
}

TEST(Broadcast, EachPatternGetsItsVariantAndTheBlockFittingThePlane) {
  struct Case {
    Dims x, y;
    std::string variant;
    std::vector<int> operands;
  };
  const Case cases[] = {
      {{8, 2048}, {8, 2048}, "flat", {0, 1}},
      {{4096}, {}, "scalar", {0, 1}},
      {{}, {4096}, "scalar", {1, 0}},                       // the scalar goes second
      {{1024, 1024}, {1024}, "row_16x256", {0, 1}},
      {{1024}, {1024, 1024}, "row_16x256", {1, 0}},
      {{64, 1024}, {64, 1}, "col_16x256", {0, 1}},
      {{4096, 1}, {1, 4096}, "outer_1x4096", {1, 0}},       // a is the row [1, 4096]
      {{1, 4096}, {4096, 1}, "outer_1x4096", {0, 1}},
      {{25088, 64}, {64}, "row_128x32", {0, 1}},            // NHWC bias, C = 64: narrow rows
      {{32, 2048, 7, 7}, {1, 2048, 1, 1}, "col_128x32", {0, 1}},
      {{1, 3, 224, 224}, {1, 3, 1, 1}, "col_1x4096", {0, 1}},  // three long rows
      {{2, 1048576}, {1048576}, "row_1x4096", {0, 1}},
  };
  for (const auto &c : cases) {
    auto k = ChooseKernel(Add(), c.x, c.y);
    const std::string what = ShapeString(c.x) + " + " + ShapeString(c.y);
    if (!k.ok()) {
      CHECK_EQ(what + ": " + k.status().ToString(), what + ": ok");
      continue;
    }
    CHECK_EQ(what + " -> " + k.value().variant->name, what + " -> " + c.variant);
    CHECK_EQ(k.value().operands, c.operands);
  }
}

TEST(Broadcast, RefusesWhatItCannotComputeNamingBothShapes) {
  auto incompatible = ChooseKernel(Add(), {2, 5}, {3});
  CHECK_EQ(incompatible.status().code(), Code::kBadShape);
  CHECK_TRUE(incompatible.status().message().find("x [2, 5] and y [3]") != std::string::npos);
  auto unknown = ChooseKernel(Add(), {-1, 5}, {5});
  CHECK_EQ(unknown.status().code(), Code::kBadShape);
  // Six dimensions that broadcast alternately stay six after merging: above the bound of 5.
  auto deep = ChooseKernel(Add(), {2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2});
  CHECK_EQ(deep.status().code(), Code::kUnsupported);
  CHECK_TRUE(deep.status().message().find("x [2, 1, 2, 1, 2, 1] and y [1, 2, 1, 2, 1, 2]") != std::string::npos);
  // The same six dimensions merge when they broadcast alike.
  auto merged = ChooseKernel(Add(), {2, 2, 2, 1, 1, 1}, {1, 1, 1, 2, 2, 2});
  REQUIRE_OK(merged);
  CHECK_EQ(merged.value().variant->name, std::string("outer_16x256"));
  auto overflow = ChooseKernel(Add(), {int64_t{1} << 32, 1}, {1, int64_t{1} << 32});
  CHECK_EQ(overflow.status().code(), Code::kBadShape);
}

TEST(Broadcast, ResultsIntoReusedObjectsEqualFreshOnesWhateverCameBefore) {
  // Execute keeps one choice per thread and reduces into it call after call (no allocation in
  // the steady state): what a previous call left there (another rank, pattern, operand order,
  // 0 elements or a refusal) must not leak into the next result. Fresh objects are the oracle.
  ReducedBroadcast reduced;
  KernelChoice choice;
  int compared = 0;
  const std::vector<Dims> shapes = SmallShapes();
  for (int pass = 0; pass < 2; ++pass) {  // forwards, then backwards: each pair after others
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Dims &x = shapes[pass == 0 ? i : shapes.size() - 1 - i];
      for (const Dims &y : shapes) {
        const std::string what = ShapeString(x) + " + " + ShapeString(y);
        auto fresh_r = ReduceBroadcast(x, y);
        const Status reused_r = ReduceBroadcast(x, y, &reduced);
        CHECK_EQ(what + " " + reused_r.ToString(), what + " " + fresh_r.status().ToString());
        if (fresh_r.ok() && reused_r.ok()) {
          CHECK_EQ(reduced.output, fresh_r.value().output);
          CHECK_EQ(reduced.num_elements, fresh_r.value().num_elements);
          CHECK_EQ(reduced.dims, fresh_r.value().dims);
          CHECK_EQ(reduced.strides[0], fresh_r.value().strides[0]);
          CHECK_EQ(reduced.strides[1], fresh_r.value().strides[1]);
        }
        auto fresh_c = ChooseKernel(Add(), x, y);
        const Status reused_c = ChooseKernel(Add(), x, y, &choice);
        CHECK_EQ(what + " " + reused_c.ToString(), what + " " + fresh_c.status().ToString());
        if (!fresh_c.ok() || !reused_c.ok()) continue;
        ++compared;
        const KernelChoice &k = fresh_c.value();
        CHECK_EQ(choice.output, k.output);
        CHECK_EQ(choice.num_elements, k.num_elements);
        CHECK_TRUE(choice.variant == k.variant);
        CHECK_EQ(choice.operands, k.operands);
        CHECK_EQ(choice.frame, k.frame);
        REQUIRE_EQ(choice.strides.size(), k.strides.size());
        for (size_t s = 0; s < k.strides.size(); ++s) CHECK_EQ(choice.strides[s], k.strides[s]);
      }
    }
  }
  CHECK_TRUE(compared > 1000);
}
