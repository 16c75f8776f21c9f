// CPU kernels of AddCustom, one per dtype of the op definition.
#define EIGEN_USE_THREADS

#include "add_custom_kernels.h"

#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/framework/tensor.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {

using CPUDevice = Eigen::ThreadPoolDevice;

template <typename Device, typename T>
class AddCustomOp : public ::tensorflow::OpKernel {
 public:
  explicit AddCustomOp(::tensorflow::OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(::tensorflow::OpKernelContext* ctx) override {
    const ::tensorflow::Tensor& x = ctx->input(0);
    const ::tensorflow::Tensor& y = ctx->input(1);
    // The shape function cannot see run-time values of unknown dims: check again here.
    OP_REQUIRES(ctx, x.shape() == y.shape(),
                ::tensorflow::errors::InvalidArgument(
                    "AddCustom needs x and y of the same shape (it does not broadcast), "
                    "got x ",
                    x.shape().DebugString(), " and y ", y.shape().DebugString(),
                    " in node ", name()));
    ::tensorflow::Tensor* z = nullptr;
    // Reuse an input buffer when TensorFlow owns its last reference, as tf.math.add does.
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, x.shape(), &z));
    if (x.NumElements() == 0) return;
    functor::AddCustom<Device, T>()(ctx->eigen_device<Device>(), x.flat<T>(), y.flat<T>(),
                                    z->flat<T>());
  }
};

#define TF_GE_CUSTOM_REGISTER_CPU(T)                                              \
  REGISTER_KERNEL_BUILDER(                                                        \
      Name("AddCustom").Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      AddCustomOp<CPUDevice, T>);

TF_GE_CUSTOM_REGISTER_CPU(float);
TF_GE_CUSTOM_REGISTER_CPU(Eigen::half);
TF_GE_CUSTOM_REGISTER_CPU(::tensorflow::bfloat16);
TF_GE_CUSTOM_REGISTER_CPU(::tensorflow::int32);

#undef TF_GE_CUSTOM_REGISTER_CPU

}  // namespace tf_ge_custom
