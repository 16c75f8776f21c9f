#include "tf_ge_custom_core/broadcast.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

#include "tf_ge_custom_core/op_checks.h"
#include "tf_ge_custom_core/thread_scratch.h"

namespace tf_ge_custom {
namespace core {
namespace {

// ChooseKernel's reduction, one per thread (thread_scratch.h: never pins the library).
ThreadScratch<ReducedBroadcast> reductions;

// How the inputs relate along one reduced dimension.
enum class Along { kBoth, kFirstBroadcasts, kSecondBroadcasts };

std::string Shapes(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  return op.inputs[0] + " " + ShapeString(x) + " and " + op.inputs[1] + " " + ShapeString(y);
}

int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

Status ReduceBroadcast(const std::vector<int64_t> &x, const std::vector<int64_t> &y, ReducedBroadcast *out) {
  const auto shapes = [&] { return "x " + ShapeString(x) + " and y " + ShapeString(y); };
  const size_t rank = std::max(x.size(), y.size());
  ReducedBroadcast &r = *out;
  r.output.clear();
  r.num_elements = 0;
  r.dims.clear();
  // While merging, strides[i][k] is 1 where input i varies along reduced dimension k and 0
  // where it broadcasts (the pair says how the inputs relate along k); the real strides
  // replace these flags below. No list besides the result's own: reused, they allocate nothing.
  for (auto &s : r.strides) s.clear();
  for (size_t i = 0; i < rank; ++i) {
    const int64_t xi = i + x.size() < rank ? 1 : x[i + x.size() - rank];
    const int64_t yi = i + y.size() < rank ? 1 : y[i + y.size() - rank];
    if (xi < 0 || yi < 0) {
      return Status::Error(Code::kBadShape, shapes() + " have an unknown or negative dimension at run time");
    }
    if (xi != yi && xi != 1 && yi != 1) {
      return Status::Error(Code::kBadShape, shapes() + " are not broadcast-compatible: dimension " + std::to_string(i) +
                                                " of the output is " + std::to_string(xi) + " in one and " +
                                                std::to_string(yi) + " in the other (each must be equal, or 1 in one "
                                                "of them, as in tf.math.add)");
    }
    const int64_t extent = xi == 1 ? yi : xi;
    r.output.push_back(extent);
    if (extent == 1) continue;  // size-1 output dimensions do not move any index
    const int64_t x_varies = xi == 1 ? 0 : 1, y_varies = yi == 1 ? 0 : 1;
    if (!r.dims.empty() && r.strides[0].back() == x_varies && r.strides[1].back() == y_varies) {
      r.dims.back() *= extent;  // no overflow: the product is checked below, and it bounds this
    } else {
      r.dims.push_back(extent);
      r.strides[0].push_back(x_varies);
      r.strides[1].push_back(y_varies);
    }
  }
  auto count = ElementCount(r.output);
  if (!count.ok()) return Status::Error(Code::kBadShape, shapes() + ": " + count.status().message());
  r.num_elements = count.value();
  if (r.num_elements == 0) {  // nothing to index
    r.dims.clear();
    for (auto &s : r.strides) s.clear();
    return Status::Ok();
  }
  for (std::vector<int64_t> &s : r.strides) {
    int64_t stride = 1;
    for (size_t k = r.dims.size(); k-- > 0;) {
      if (s[k] == 0) continue;  // broadcasts along k
      s[k] = stride;
      stride *= r.dims[k];
    }
  }
  return Status::Ok();
}

Result<ReducedBroadcast> ReduceBroadcast(const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  ReducedBroadcast r;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ReduceBroadcast(x, y, &r));
  return r;
}

Status ChooseKernel(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y,
                    KernelChoice *out) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1) {
    return Status::Error(Code::kInternal, op.type_name + ": broadcasting needs two inputs and one output");
  }
  // The reduction of this thread's last call, its lists reused (Execute runs on several threads).
  ReducedBroadcast &r = reductions.Get();
  TF_GE_CUSTOM_RETURN_IF_ERROR(ReduceBroadcast(x, y, &r));
  KernelChoice &c = *out;
  c.output = r.output;
  c.num_elements = r.num_elements;
  c.variant = nullptr;
  c.operands = {0, 1};
  if (r.num_elements == 0) {
    c.frame.clear();
    c.strides.clear();
    return Status::Ok();
  }
  const size_t rank = r.dims.size();
  if (rank > static_cast<size_t>(kMaxBroadcastRank)) {
    return Status::Error(Code::kUnsupported,
                         op.type_name + " cannot broadcast " + Shapes(op, x, y) + " on the NPU: after merging adjacent "
                         "dimensions that broadcast alike, " + std::to_string(rank) + " remain, more than the " +
                         std::to_string(kMaxBroadcastRank) + " its kernels handle (as tf.math.add's own kernels)");
  }
  // Each reduced dimension: does input 0 / input 1 vary along it?
  auto varies = [&](int input, size_t k) { return r.strides[input][k] != 0; };
  // The broadcast operand goes second: swap when the inputs' roles are the other way round.
  const size_t last = rank == 0 ? 0 : rank - 1;
  const bool swap = rank > 0 && (!varies(0, last) || (rank >= 2 && varies(1, last) && !varies(0, last - 1)));
  if (swap && !op.commutative) {
    return Status::Error(Code::kUnsupported, op.type_name + " has no kernel for " + Shapes(op, x, y) +
                                                 " (it would need its inputs in the other order)");
  }
  if (swap) c.operands = {1, 0};
  const std::vector<int64_t> &sa = r.strides[c.operands[0]], &sb = r.strides[c.operands[1]];
  Pattern pattern;
  if (rank == 0 || (rank == 1 && sa[0] != 0 && sb[0] != 0)) {
    pattern = Pattern::kEqual;  // both inputs have every element of the output, in order
  } else if (rank == 1) {
    pattern = Pattern::kScalar;  // b is one element
  } else if (sb[last] != 0) {
    pattern = Pattern::kRow;  // b varies along the columns, is the same for every row
  } else {
    pattern = sa[last - 1] != 0 ? Pattern::kCol : Pattern::kOuter;
  }
  c.strides.resize(2);
  if (pattern == Pattern::kEqual || pattern == Pattern::kScalar) {
    c.frame.assign(1, r.num_elements);
    c.strides[0].assign(1, 1);
    c.strides[1].assign(1, pattern == Pattern::kEqual ? 1 : 0);
  } else {
    const size_t pad = static_cast<size_t>(kMaxBroadcastRank) - rank;
    c.frame.assign(pad, 1);
    c.frame.insert(c.frame.end(), r.dims.begin(), r.dims.end());
    for (int k = 0; k < 2; ++k) {
      const std::vector<int64_t> &s = k == 0 ? sa : sb;
      c.strides[k].assign(pad, 0);
      c.strides[k].insert(c.strides[k].end(), s.begin(), s.end());
    }
  }
  // The candidates, widest block first (ties in table order); a narrower one must save a
  // quarter of the tiles. Walked in that order without building a list.
  auto before = [](const KernelVariantDefinition *a, const KernelVariantDefinition *b) {
    return a->block.back() > b->block.back() ||
           (a->block.back() == b->block.back() && std::less<const KernelVariantDefinition *>()(a, b));
  };
  auto tiles = [&](const KernelVariantDefinition *v) {
    if (!v->tiled()) return CeilDiv(c.frame.back(), v->block[0]);
    return CeilDiv(c.frame[c.frame.size() - 2], v->block[0]) * CeilDiv(c.frame.back(), v->block[1]);
  };
  const KernelVariantDefinition *walked = nullptr;  // the last candidate visited
  for (;;) {
    const KernelVariantDefinition *next = nullptr;  // the first candidate after `walked`
    for (const auto &v : op.variants) {
      if (v.pattern != pattern || (walked != nullptr && !before(walked, &v))) continue;
      if (next == nullptr || before(&v, next)) next = &v;
    }
    if (next == nullptr) break;
    if (c.variant == nullptr || 4 * tiles(next) < 3 * tiles(c.variant)) c.variant = next;
    walked = next;
  }
  if (c.variant == nullptr) {
    return Status::Error(Code::kUnsupported, op.type_name + " has no kernel variant of pattern " +
                                                 PatternName(pattern) + " for " + Shapes(op, x, y));
  }
  return Status::Ok();
}

Status ChooseKernel(const OpDefinition &op, const std::vector<std::vector<int64_t>> &shapes, KernelChoice *out) {
  if (shapes.size() != op.inputs.size() || op.outputs.size() != 1) {
    return Status::Error(Code::kInternal, op.type_name + ": " + std::to_string(shapes.size()) +
                                              " input shapes for its " + std::to_string(op.inputs.size()) + " inputs");
  }
  if (op.broadcasts) {
    if (shapes.size() != 2) return Status::Error(Code::kInternal, op.type_name + ": broadcasting needs two inputs");
    return ChooseKernel(op, shapes[0], shapes[1], out);
  }
  const auto named = [&] {
    std::string s;
    for (size_t i = 0; i < shapes.size(); ++i) s += (i ? " and " : "") + op.inputs[i] + " " + ShapeString(shapes[i]);
    return s;
  };
  // Every list below is assigned in place (no temporary): Execute's steady state allocates
  // nothing here, as with the two-shape form.
  static const std::vector<int64_t> kNoShape;
  const std::vector<int64_t> &first = shapes.empty() ? kNoShape : shapes[0];
  int64_t n = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i] != first) {
      return Status::Error(Code::kBadShape, op.type_name + " does not broadcast: its inputs must have one shape, "
                                                           "found " + named());
    }
  }
  for (const int64_t d : first) {
    if (d < 0) return Status::Error(Code::kBadShape, op.type_name + ": " + named() + " holds an unknown dimension");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return Status::Error(Code::kBadShape, op.type_name + ": " + named() + " has more than 2^63 elements");
    }
    n *= d;
  }
  KernelChoice &c = *out;
  c.output = first;
  c.num_elements = n;
  c.variant = nullptr;
  c.operands.resize(shapes.size());
  for (size_t k = 0; k < shapes.size(); ++k) c.operands[k] = static_cast<int>(k);
  c.frame.clear();
  if (n == 0) {
    c.strides.clear();
    return Status::Ok();
  }
  c.frame.assign(1, n);
  c.strides.resize(shapes.size());  // the inner lists keep their capacity
  for (auto &s : c.strides) s.assign(1, 1);
  for (const auto &v : op.variants) {
    if (v.pattern == Pattern::kEqual) {
      c.variant = &v;
      break;
    }
  }
  if (c.variant == nullptr) {
    return Status::Error(Code::kUnsupported, op.type_name + " has no kernel variant of pattern equal for " + named());
  }
  return Status::Ok();
}

Result<KernelChoice> ChooseKernel(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  KernelChoice c;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ChooseKernel(op, x, y, &c));
  return c;
}

}  // namespace core
}  // namespace tf_ge_custom
