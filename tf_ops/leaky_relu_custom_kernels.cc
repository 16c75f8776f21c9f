// CPU kernels of LeakyReluCustom, one per dtype of the op definition (registered by the
// generated TF_GE_CUSTOM_REGISTER_CPU_KERNELS_LeakyReluCustom). y = x > 0 ? x : x * alpha, tf.nn.leaky_relu's meaning:
// the arithmetic is TensorFlow's own LeakyRelu CPU kernel, taken from the kernel registry with
// this node's alpha (tensorflow_kernel.h, as AddCustom takes AddV2's), so that every bit of
// the result is tf.nn.leaky_relu's, at its speed. Where a TensorFlow registers no LeakyRelu
// kernel for the dtype, the functor of leaky_relu_custom_functor.h computes the same
// expression (TF_GE_CUSTOM_OWN_CPU_FUNCTORS=1 in the environment makes it compute every node,
// so that the tests compare that path too). The attribute is read, and checked against op_def.py's range for it, by the
// generated LeakyReluCustomAttrs. See docs/tensorflow-op.md.
#include "leaky_relu_custom_registrations.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "leaky_relu_custom_functor.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow_kernel.h"

namespace tf_ge_custom {

TF_GE_CUSTOM_DEFINE_ATTRS_LeakyReluCustom

template <typename Device, typename T>
class LeakyReluCustomOp : public ::tensorflow::OpKernel {
 public:
  explicit LeakyReluCustomOp(::tensorflow::OpKernelConstruction* ctx)
      : OpKernel(ctx), attrs_(ctx), alpha_(static_cast<T>(attrs_.alpha)),
        leaky_relu_(OwnCpuFunctorsOnly() ? nullptr : LeakyReluKernel(ctx, name(), attrs_.alpha)) {}

  void Compute(::tensorflow::OpKernelContext* ctx) override {
    if (leaky_relu_ != nullptr) {
      leaky_relu_->Compute(ctx);
      return;
    }
    const ::tensorflow::Tensor& x = ctx->input(0);
    ::tensorflow::Tensor* y = nullptr;
    // reuses x's buffer when TensorFlow holds its only reference, as LeakyRelu does
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    if (y->NumElements() == 0) return;
    functor::LeakyReluFunctor<Device, T>()(ctx->eigen_device<Device>(), x.flat<T>(), alpha_,
                                           y->flat<T>());
  }

 private:
  static std::unique_ptr<::tensorflow::OpKernel> LeakyReluKernel(
      ::tensorflow::OpKernelConstruction* ctx, const std::string& name, float alpha) {
    ::tensorflow::NodeDef def = TensorFlowNode(name, "LeakyRelu", 1);
    (*def.mutable_attr())["T"].set_type(::tensorflow::DataTypeToEnum<T>::v());
    (*def.mutable_attr())["alpha"].set_f(alpha);
    return TensorFlowKernel(ctx, def);
  }

  const LeakyReluCustomAttrs attrs_;
  const T alpha_;  // the attr in the element type, as TensorFlow's LeakyRelu kernel holds it
  const std::unique_ptr<::tensorflow::OpKernel> leaky_relu_;
};

TF_GE_CUSTOM_REGISTER_CPU_KERNELS_LeakyReluCustom(LeakyReluCustomOp)

}  // namespace tf_ge_custom
