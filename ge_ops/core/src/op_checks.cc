#include "tf_ge_custom_core/op_checks.h"

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

Result<int64_t> CheckSameShapeAndCount(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  if (inputs.empty()) return Status::Error(Code::kBadShape, op.type_name + " has no inputs");
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].dims != inputs[0].dims) {
      return Status::Error(Code::kBadShape, op.type_name + " needs inputs of the same shape (the kernel does not "
                                                           "broadcast), got " + op.inputs[0] + " " +
                                                ShapeString(inputs[0].dims) + " and " + op.inputs[i] + " " +
                                                ShapeString(inputs[i].dims));
    }
  }
  return ElementCount(inputs[0].dims);
}

Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs) {
  if (inputs.empty()) return Status::Error(Code::kBadShape, op.type_name + " has no inputs");
  auto unknown_rank = [](const std::vector<int64_t> &d) { return d.size() == 1 && d[0] == kUnknownRank; };
  std::vector<int64_t> out = inputs[0].dims;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const auto &d = inputs[i].dims;
    if (unknown_rank(d)) continue;
    if (unknown_rank(out)) {
      out = d;
      continue;
    }
    bool ok = d.size() == out.size();
    for (size_t k = 0; ok && k < d.size(); ++k) {
      if (out[k] == kUnknownDim) {
        out[k] = d[k];
      } else if (d[k] != kUnknownDim && d[k] != out[k]) {
        ok = false;
      }
    }
    if (!ok) {
      return Status::Error(Code::kBadShape, op.type_name + " needs inputs of the same shape (the kernel does not "
                                                           "broadcast), got " + op.inputs[0] + " " +
                                                ShapeString(inputs[0].dims) + " and " + op.inputs[i] + " " + ShapeString(d));
    }
  }
  return out;
}

}  // namespace core
}  // namespace tf_ge_custom
