// Broadcasting at run time: the output shape of two concrete input shapes (tf.math.add's
// rules), their reduction to the fewest dimensions that broadcast alike, and the kernel
// variant that computes that reduced shape (docs/kernels.md, "Broadcasting").
//
// The reduction is TensorFlow's BCast (tensorflow/core/util/bcast.h) without its fast
// paths: drop every output dimension of size 1, then merge adjacent dimensions in which
// each input either varies or broadcasts alike. What is left is the pattern a kernel
// variant computes: one flat range (equal shapes), a scalar operand, or a plane of rows and
// columns (row / col / outer) under up to kMaxBroadcastRank - 2 outer dimensions.
#ifndef TF_GE_CUSTOM_CORE_BROADCAST_H_
#define TF_GE_CUSTOM_CORE_BROADCAST_H_

#include <array>
#include <cstdint>
#include <vector>

#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

struct ReducedBroadcast {
  std::vector<int64_t> output;  // the output shape
  int64_t num_elements = 0;     // of the output
  // The reduced shape, outermost first (empty when the output has 0 or 1 elements), and each
  // input's element stride along it: 0 where that input broadcasts, else its row-major stride.
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, 2> strides;
};

// kBadShape naming both shapes when a dimension is unknown (< 0), when the shapes are not
// broadcast-compatible (each dimension equal, or 1 in one of them), or when the output has
// more than 2^63 elements.
Result<ReducedBroadcast> ReduceBroadcast(const std::vector<int64_t> &x, const std::vector<int64_t> &y);
// The same into *out, reusing its lists' capacity (no allocation once they are large enough);
// on a refusal *out is unspecified.
Status ReduceBroadcast(const std::vector<int64_t> &x, const std::vector<int64_t> &y, ReducedBroadcast *out);

// What Execute launches for one call.
struct KernelChoice {
  std::vector<int64_t> output;  // the output shape
  int64_t num_elements = 0;
  const KernelVariantDefinition *variant = nullptr;  // null: 0 elements, nothing to launch
  // Kernel operand i reads op input operands[i]: {1, 0} when the inputs were swapped (only
  // for a commutative op) so that the pattern has its broadcast operand second.
  std::vector<int> operands;
  // The launch frame: {n} for the flat patterns, kMaxBroadcastRank extents (leading 1s) for
  // the tiled ones; each kernel operand's element strides along it (0: broadcast).
  std::vector<int64_t> frame;
  std::vector<std::vector<int64_t>> strides;
};

// Broadcasts op's two inputs, reduces the shape and picks the variant: "equal" -> the flat
// kernel, "scalar", or a tiled pattern whose block shape fits the plane best (the widest
// block unless a narrower one needs under 3/4 of its tiles). A reduced rank above
// kMaxBroadcastRank is refused with kUnsupported naming both shapes, never computed wrong.
Result<KernelChoice> ChooseKernel(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y);
// The same into *out, reusing its lists' capacity: Execute's steady state, where the same
// shapes come back call after call, allocates nothing here. On a refusal *out is unspecified.
Status ChooseKernel(const OpDefinition &op, const std::vector<int64_t> &x, const std::vector<int64_t> &y,
                    KernelChoice *out);
// The same for op's own inputs, one shape each: a broadcasting op (OpDefinition::broadcasts)
// as above; any other op's inputs and output must have one shape (kBadShape naming them when
// they differ or hold an unknown dimension), which its "equal" variant computes as one flat
// range, operand k reading input k. kInternal when the shapes are not one per input.
Status ChooseKernel(const OpDefinition &op, const std::vector<std::vector<int64_t>> &shapes, KernelChoice *out);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_BROADCAST_H_
