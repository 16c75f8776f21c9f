// A GE custom op that runs one of this package's Triton kernels: the thin adapter between
// GE's custom-op interfaces and the CANN-free core, which makes every decision.
//
// GE creates one instance per op type and shares it between all nodes and threads, so
// the only state (which kernels to use) sits behind a mutex.
#ifndef TF_GE_CUSTOM_CANN_KERNEL_OP_H_
#define TF_GE_CUSTOM_CANN_KERNEL_OP_H_

#include <memory>
#include <mutex>
#include <vector>

#include "graph/custom_op.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace cann {

class KernelOp : public ge::EagerExecuteOp, public ge::ShapeInferOp, public ge::PortableOp {
 public:
  explicit KernelOp(const char *op_type);

  // Checks dtypes (GE does not), broadcasts the shapes and picks the kernel variant
  // (core::PrepareCall), allocates the output, then launches the kernel for the current SoC
  // and dtype (core::LaunchKernels).
  ge::graphStatus Execute(gert::EagerOpExecutionContext *ctx) override;
  // The output takes the inputs' broadcast shape (tf.math.add's rules, with GE's unknown
  // dims and rank) and x's dtype; incompatible shapes and differing dtypes are refused.
  ge::graphStatus InferShape(gert::InferShapeContext *ctx) override;
  ge::graphStatus InferDataType(gert::InferDataTypeContext *ctx) override;
  // Every SoC's manifest and npubins, so an OM runs without this package on disk.
  ge::graphStatus Serialize(std::vector<uint8_t> &buffer) override;
  ge::graphStatus Deserialize(const std::vector<uint8_t> &buffer) override;

 private:
  // The kernels restored by Deserialize, or else those of the OPP root holding this library.
  core::Result<std::shared_ptr<core::KernelRegistry>> Registry();
  ge::graphStatus Fail(const char *node, const core::Status &status) const;

  const char *op_type_;
  const core::OpDefinition *op_;
  std::mutex mutex_;
  std::shared_ptr<core::KernelRegistry> registry_;
};

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_KERNEL_OP_H_
