// The checks GE does not do for a custom op: dtype, element count, and the output shape /
// dtype rules of InferShape / InferDataType. Execute's run-time broadcasting is broadcast.h.
#ifndef TF_GE_CUSTOM_CORE_OP_CHECKS_H_
#define TF_GE_CUSTOM_CORE_OP_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

constexpr int64_t kUnknownDim = -1;   // GE: a dimension not known before run time
constexpr int64_t kUnknownRank = -2;  // GE: shape {-2}, rank not known

struct TensorInfo {
  std::string dtype;  // op-definition dtype name; anything else ("DT_DOUBLE", "DataType(12)") is refused
  std::vector<int64_t> dims;
};

// Every input has the same dtype, one the op supports; returns that dtype.
Result<const DTypeDefinition *> CheckDTypes(const OpDefinition &op, const std::vector<TensorInfo> &inputs);

// InferShape: the output shape of two inputs broadcast as tf.math.add does, with GE's unknown
// dimensions (-1) and unknown rank ({-2}) resolved as TensorFlow's shape function
// (BroadcastBinaryOpShapeFn in tensorflow/core/framework/common_shape_fns.cc) resolves them:
// an unknown rank gives an unknown rank; along one dimension a known size above 1 wins, a
// known 1 yields the other, anything else is unknown. Known sizes that are neither equal
// nor 1 are refused (kBadShape) with both shapes named.
Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs);

// Product of concrete dims, refusing negative dims and 64-bit overflow.
Result<int64_t> ElementCount(const std::vector<int64_t> &dims);

std::string ShapeString(const std::vector<int64_t> &dims);  // "[8, 2048]"

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OP_CHECKS_H_
