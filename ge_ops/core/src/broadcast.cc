#include "tf_ge_custom_core/broadcast.h"

#include <algorithm>
#include <string>

#include "tf_ge_custom_core/op_checks.h"

namespace tf_ge_custom {
namespace core {
namespace {

// How the inputs relate along one reduced dimension.
enum class Along { kBoth, kFirstBroadcasts, kSecondBroadcasts };

std::string Shapes(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  return op.inputs[0] + " " + ShapeString(x) + " and " + op.inputs[1] + " " + ShapeString(y);
}

int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

Result<ReducedBroadcast> ReduceBroadcast(const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  const auto shapes = [&] { return "x " + ShapeString(x) + " and y " + ShapeString(y); };
  const size_t rank = std::max(x.size(), y.size());
  ReducedBroadcast r;
  std::vector<Along> along;
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
    const int64_t out = xi == 1 ? yi : xi;
    r.output.push_back(out);
    if (out == 1) continue;  // size-1 output dimensions do not move any index
    const Along a = xi == yi ? Along::kBoth : xi == 1 ? Along::kFirstBroadcasts : Along::kSecondBroadcasts;
    if (!along.empty() && along.back() == a) {
      r.dims.back() *= out;  // no overflow: the product is checked below, and it bounds this
    } else {
      r.dims.push_back(out);
      along.push_back(a);
    }
  }
  auto count = ElementCount(r.output);
  if (!count.ok()) return Status::Error(Code::kBadShape, shapes() + ": " + count.status().message());
  r.num_elements = count.value();
  if (r.num_elements == 0) {  // nothing to index
    r.dims.clear();
    return r;
  }
  for (int input = 0; input < 2; ++input) {
    const Along broadcasts = input == 0 ? Along::kFirstBroadcasts : Along::kSecondBroadcasts;
    std::vector<int64_t> &s = r.strides[input];
    s.assign(r.dims.size(), 0);
    int64_t stride = 1;
    for (size_t k = r.dims.size(); k-- > 0;) {
      if (along[k] == broadcasts) continue;
      s[k] = stride;
      stride *= r.dims[k];
    }
  }
  return r;
}

Result<KernelChoice> ChooseKernel(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1) {
    return Status::Error(Code::kInternal, op.type_name + ": broadcasting needs two inputs and one output");
  }
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const ReducedBroadcast r, ReduceBroadcast(x, y));
  KernelChoice c;
  c.output = r.output;
  c.num_elements = r.num_elements;
  c.operands = {0, 1};
  if (r.num_elements == 0) return c;
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
  if (pattern == Pattern::kEqual || pattern == Pattern::kScalar) {
    c.frame = {r.num_elements};
    c.strides = {{1}, {pattern == Pattern::kEqual ? 1 : 0}};
  } else {
    const size_t pad = static_cast<size_t>(kMaxBroadcastRank) - rank;
    c.frame.assign(pad, 1);
    c.frame.insert(c.frame.end(), r.dims.begin(), r.dims.end());
    for (const auto *s : {&sa, &sb}) {
      std::vector<int64_t> padded(pad, 0);
      padded.insert(padded.end(), s->begin(), s->end());
      c.strides.push_back(padded);
    }
  }
  // The candidates, widest block first; a narrower one must save a quarter of the tiles.
  std::vector<const KernelVariantDefinition *> candidates;
  for (const auto &v : op.variants) {
    if (v.pattern == pattern) candidates.push_back(&v);
  }
  if (candidates.empty()) {
    return Status::Error(Code::kUnsupported, op.type_name + " has no kernel variant of pattern " +
                                                 PatternName(pattern) + " for " + Shapes(op, x, y));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const KernelVariantDefinition *a, const KernelVariantDefinition *b) {
                     return a->block.back() > b->block.back();
                   });
  auto tiles = [&](const KernelVariantDefinition *v) {
    if (!v->tiled()) return CeilDiv(c.frame.back(), v->block[0]);
    return CeilDiv(c.frame[c.frame.size() - 2], v->block[0]) * CeilDiv(c.frame.back(), v->block[1]);
  };
  c.variant = candidates[0];
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (4 * tiles(candidates[i]) < 3 * tiles(c.variant)) c.variant = candidates[i];
  }
  return c;
}

}  // namespace core
}  // namespace tf_ge_custom
