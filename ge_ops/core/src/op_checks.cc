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

Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  if (inputs.size() != 2) {
    return Status::Error(Code::kBadShape, op.type_name + " broadcasts two inputs, got " + std::to_string(inputs.size()));
  }
  const std::vector<int64_t> &x = inputs[0].dims, &y = inputs[1].dims;
  auto unknown_rank = [](const std::vector<int64_t> &d) { return d.size() == 1 && d[0] == kUnknownRank; };
  if (unknown_rank(x) || unknown_rank(y)) return std::vector<int64_t>{kUnknownRank};
  const size_t rank = std::max(x.size(), y.size());
  std::vector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dx = i + x.size() < rank ? 1 : x[i + x.size() - rank];
    const int64_t dy = i + y.size() < rank ? 1 : y[i + y.size() - rank];
    if ((dx < 0 && dx != kUnknownDim) || (dy < 0 && dy != kUnknownDim)) {
      return Status::Error(Code::kBadShape, op.type_name + ": " + op.inputs[0] + " " + ShapeString(x) + " and " +
                                                op.inputs[1] + " " + ShapeString(y) + " hold a dimension below -1");
    }
    if (dx == kUnknownDim || dy == kUnknownDim) {
      if (dx > 1 || dy > 1) {
        out.push_back(std::max(dx, dy));  // the known one: the unknown one must be 1 or equal to it
      } else if (dx == 1 || dy == 1) {
        out.push_back(dx == 1 ? dy : dx);
      } else {
        out.push_back(kUnknownDim);
      }
    } else if (dx == dy || dy == 1) {
      out.push_back(dx);
    } else if (dx == 1) {
      out.push_back(dy);
    } else {
      return Status::Error(Code::kBadShape, op.type_name + ": " + op.inputs[0] + " " + ShapeString(x) + " and " +
                                                op.inputs[1] + " " + ShapeString(y) +
                                                " are not broadcast-compatible (as in tf.math.add, each dimension "
                                                "must be equal, or 1 in one of them)");
    }
  }
  return out;
}

}  // namespace core
}  // namespace tf_ge_custom
