#include "tf_ge_custom_core/op_checks.h"

#include <algorithm>
#include <limits>

namespace tf_ge_custom {
namespace core {

std::string ShapeString(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<const DTypeDefinition *> CheckDTypes(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  if (inputs.size() != op.inputs.size()) {
    return Status::Error(Code::kBadDType, op.type_name + " takes " + std::to_string(op.inputs.size()) + " inputs, got " +
                                              std::to_string(inputs.size()));
  }
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].dtype != inputs[0].dtype) {
      return Status::Error(Code::kBadDType, op.type_name + ": " + op.inputs[0] + " is " + inputs[0].dtype + " but " +
                                                op.inputs[i] + " is " + inputs[i].dtype + "; all inputs must share one dtype");
    }
  }
  const DTypeDefinition *d = inputs.empty() ? nullptr : op.FindDType(inputs[0].dtype);
  if (d == nullptr) {
    std::string supported;  // built only here: a passing check allocates nothing
    for (const auto &t : op.dtypes) supported += (supported.empty() ? "" : ", ") + t.name;
    return Status::Error(Code::kBadDType, op.type_name + " does not support dtype " +
                                              (inputs.empty() ? std::string("(none)") : inputs[0].dtype) +
                                              "; supported: " + supported);
  }
  return d;
}

Result<int64_t> ElementCount(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return Status::Error(Code::kBadShape, "shape " + ShapeString(dims) + " has an unknown or negative dimension at run time");
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return Status::Error(Code::kBadShape, "shape " + ShapeString(dims) + " has more than 2^63 elements");
    }
    n *= d;
  }
  return n;
}

namespace {

bool UnknownRank(const std::vector<int64_t> &d) { return d.size() == 1 && d[0] == kUnknownRank; }

// "x [3, 4] and y [3, 5]", "a [2], b [2] and c [3]": every input with its shape, for a refusal.
std::string NamedShapes(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == inputs.size() ? " and " : ", ") + op.inputs[i] + " " + ShapeString(inputs[i].dims);
  }
  return s;
}

// One output dimension of two broadcast dimensions (kUnknownDim where it cannot be known yet),
// as BroadcastBinaryOpShapeFn resolves it; false when both are known and neither is 1.
bool BroadcastDim(int64_t a, int64_t b, int64_t *out) {
  if (a == kUnknownDim || b == kUnknownDim) {
    if (a > 1 || b > 1) {
      *out = std::max(a, b);  // the known one: the unknown one must be 1 or equal to it
    } else if (a == 1 || b == 1) {
      *out = a == 1 ? b : a;
    } else {
      *out = kUnknownDim;
    }
  } else if (a == b || b == 1) {
    *out = a;
  } else if (a == 1) {
    *out = b;
  } else {
    return false;
  }
  return true;
}

// One dimension two inputs of one shape agree on, as InferenceContext::Merge resolves it: a
// known size wins over an unknown one; false when both are known and differ.
bool MergeDim(int64_t a, int64_t b, int64_t *out) {
  if (a == kUnknownDim || b == kUnknownDim || a == b) {
    *out = a == kUnknownDim ? b : a;
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  if (inputs.size() != op.inputs.size() || inputs.empty()) {
    return Status::Error(Code::kBadShape, op.type_name + " takes " + std::to_string(op.inputs.size()) +
                                              " inputs, got " + std::to_string(inputs.size()));
  }
  for (const TensorInfo &t : inputs) {
    if (UnknownRank(t.dims)) continue;
    for (int64_t d : t.dims) {
      if (d < 0 && d != kUnknownDim) {
        return Status::Error(Code::kBadShape, op.type_name + ": " + NamedShapes(op, inputs) +
                                                  (inputs.size() == 1 ? " holds" : " hold") + " a dimension below -1");
      }
    }
  }
  // Broadcasting, an unknown rank gives an unknown rank; else the inputs fold, in order, into
  // one shape.
  if (op.broadcasts) {
    for (const TensorInfo &t : inputs) {
      if (UnknownRank(t.dims)) return std::vector<int64_t>{kUnknownRank};
    }
  }
  std::vector<int64_t> out;
  bool have = false;
  for (const TensorInfo &t : inputs) {
    if (UnknownRank(t.dims)) continue;  // an input of unknown rank says nothing (not broadcasting)
    if (!have) {
      out = t.dims;
      have = true;
      continue;
    }
    const std::vector<int64_t> &y = t.dims;
    if (op.broadcasts) {
      // Right-aligned, as tf.math.add's shape function (BroadcastBinaryOpShapeFn).
      const std::vector<int64_t> x = out;
      const size_t rank = std::max(x.size(), y.size());
      out.assign(rank, 0);
      for (size_t i = 0; i < rank; ++i) {
        const int64_t dx = i + x.size() < rank ? 1 : x[i + x.size() - rank];
        const int64_t dy = i + y.size() < rank ? 1 : y[i + y.size() - rank];
        if (!BroadcastDim(dx, dy, &out[i])) {
          return Status::Error(Code::kBadShape, op.type_name + ": " + NamedShapes(op, inputs) +
                                                    " are not broadcast-compatible (as in tf.math.add, each dimension "
                                                    "must be equal, or 1 in one of them)");
        }
      }
    } else {
      // One shape for every input and the output, as the TF op's shape function merges them.
      bool merged = out.size() == y.size();
      for (size_t i = 0; merged && i < y.size(); ++i) merged = MergeDim(out[i], y[i], &out[i]);
      if (!merged) {
        return Status::Error(Code::kBadShape, op.type_name + " does not broadcast: its inputs must have one shape, "
                                                             "found " + NamedShapes(op, inputs));
      }
    }
  }
  if (!have) return std::vector<int64_t>{kUnknownRank};
  return out;
}

}  // namespace core
}  // namespace tf_ge_custom
