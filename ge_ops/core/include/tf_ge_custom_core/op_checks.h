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

// InferShape: the output shape of the op's inputs (one shape each), with GE's unknown
// dimensions (-1) and unknown rank ({-2}) resolved as the TF op's shape function resolves them.
// An op that broadcasts (OpDefinition::broadcasts): the inputs broadcast as tf.math.add's do
// (BroadcastBinaryOpShapeFn in tensorflow/core/framework/common_shape_fns.cc; more than two
// fold from the left): an unknown rank gives an unknown rank; along one dimension a known size
// above 1 wins, a known 1 yields the other, anything else is unknown; known sizes that are
// neither equal nor 1 are refused. Any other op: every input has the output's shape, merged as
// InferenceContext::Merge does (UnchangedShape for one input): an input of unknown rank says
// nothing, a known size wins over an unknown one; different ranks or known sizes are refused.
// Refusals (kBadShape) name every input with its shape; a dimension below -1 is refused too.
Result<std::vector<int64_t>> InferOutputShape(const OpDefinition &op, const std::vector<TensorInfo> &inputs);

// Product of concrete dims, refusing negative dims and 64-bit overflow.
Result<int64_t> ElementCount(const std::vector<int64_t> &dims);

std::string ShapeString(const std::vector<int64_t> &dims);  // "[8, 2048]"

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OP_CHECKS_H_
