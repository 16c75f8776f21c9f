// A TensorFlow kernel taken from the kernel registry, for an op of this package whose
// arithmetic is exactly one of TensorFlow's own ops (AddCustom's is AddV2's, LeakyReluCustom's
// LeakyRelu's): the op's kernel runs TensorFlow's kernel on its own OpKernelContext, so every
// bit, the thread pool's sharding and the speed are that op's. A kernel reads only the inputs,
// outputs and allocators of the context it is given, which the two ops' signatures share.
#ifndef TF_GE_CUSTOM_TF_OPS_TENSORFLOW_KERNEL_H_
#define TF_GE_CUSTOM_TF_OPS_TENSORFLOW_KERNEL_H_

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace tf_ge_custom {

// TF_GE_CUSTOM_OWN_CPU_FUNCTORS=1 in the environment when a kernel is made: the op computes
// with its own functor, as in a TensorFlow without TensorFlow's kernel for the dtype (for the
// tests: docs/tensorflow-op.md).
inline bool OwnCpuFunctorsOnly() {
  const char* value = std::getenv("TF_GE_CUSTOM_OWN_CPU_FUNCTORS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// A NodeDef of TensorFlow's op `op` named `<node>/<op>` with `inputs` inputs (NodeDef
// validation counts them; the context supplies the tensors): the caller sets its attrs.
inline ::tensorflow::NodeDef TensorFlowNode(const std::string& node, const std::string& op,
                                            int inputs) {
  ::tensorflow::NodeDef def;
  def.set_name(node + "/" + op);
  def.set_op(op);
  for (int i = 0; i < inputs; ++i) def.add_input("input_" + std::to_string(i));
  return def;
}

// TensorFlow's kernel for `def` on the constructing kernel's device; null when TensorFlow
// registers none (then the op computes with its own functor).
inline std::unique_ptr<::tensorflow::OpKernel> TensorFlowKernel(
    ::tensorflow::OpKernelConstruction* ctx, const ::tensorflow::NodeDef& def) {
  ::tensorflow::Status status;
  std::unique_ptr<::tensorflow::OpKernel> kernel = ::tensorflow::CreateOpKernel(
      ctx->device_type(), ctx->device(),
      ctx->device()->GetAllocator(::tensorflow::AllocatorAttributes()), def,
      ctx->graph_def_version(), &status);
  return status.ok() ? std::move(kernel) : nullptr;
}

}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_TF_OPS_TENSORFLOW_KERNEL_H_
