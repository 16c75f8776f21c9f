// The checks GE does not do for a custom op: dtype, equal shapes, element count, and the
// output shape/dtype rules of InferShape / InferDataType.
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

// Execute: every input has the same concrete shape; returns its element count.
Result<int64_t> CheckSameShapeAndCount(const OpDefinition &op, const std::vector<TensorInfo> &inputs);

// InferShape: the output shape from the inputs' (possibly partly unknown) shapes, merging
// unknown dims as TensorFlow's shape function does; known dims that differ are refused.
Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs);

// Product of concrete dims, refusing negative dims and 64-bit overflow.
Result<int64_t> ElementCount(const std::vector<int64_t> &dims);

std::string ShapeString(const std::vector<int64_t> &dims);  // "[8, 2048]"

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OP_CHECKS_H_
