// CPU kernels of AddCustom, one per dtype of the op definition (registered by the generated
// TF_GE_CUSTOM_REGISTER_CPU_KERNELS_AddCustom). Compute follows TensorFlow's BinaryOp
// (tensorflow/core/kernels/cwise_ops_common.h), which tf.math.add runs: the cheap cases
// first, then BCast (tensorflow/core/util/bcast.h) reduces both shapes to the fewest
// dimensions with the same broadcast pattern. Up to 5 of them -- every case tf.math.add
// itself computes -- the arithmetic is TensorFlow's own AddV2 CPU kernel, taken from the
// kernel registry, so that every bit of the result is AddV2's, NaN sign and payload included,
// on each of its paths (which do not all pass the same operand's NaN on: docs/tensorflow-op.md,
// "NaN bits"), at its speed. Beyond 5 (AddV2 fails there), and where a TensorFlow registers no
// AddV2 kernel for the dtype, the functor of add_custom_kernels.h evaluates the merged shape
// (TF_GE_CUSTOM_OWN_CPU_FUNCTORS=1 makes it compute every node: tensorflow_kernel.h).
// See docs/tensorflow-op.md.
#include "add_custom_kernels.h"

#include <memory>

#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/register_types.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/util/bcast.h"
#include "add_custom_registrations.h"
#include "tensorflow_kernel.h"

namespace tf_ge_custom {

using ::tensorflow::BCast;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;

// Dimensions left after BCast merged the adjacent ones with the same pattern. TensorFlow's
// own CPU binary ops stop at 5 (and fail beyond); 8 is BroadcastTo's limit, which add_custom
// reached when it broadcast with BroadcastTo in front of the node.
constexpr int kMaxBroadcastDims = 8;
constexpr int kAddV2MaxBroadcastDims = 5;  // tf.math.add's CPU kernel: BinaryOp's cases 2 to 5

template <typename Device, typename T>
class AddCustomOp : public ::tensorflow::OpKernel {
 public:
  explicit AddCustomOp(::tensorflow::OpKernelConstruction* ctx)
      : OpKernel(ctx), add_v2_(OwnCpuFunctorsOnly() ? nullptr : AddV2Kernel(ctx, name())) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (add_v2_ != nullptr && (x.shape() == y.shape() || x.dims() == 0 || y.dims() == 0)) {
      add_v2_->Compute(ctx);  // BinaryOp's cheap cases, before any BCast
      return;
    }
    const Device& d = ctx->eigen_device<Device>();
    Tensor* z = nullptr;
    // As in BinaryOp: equal shapes and a scalar operand before building a BCast. Each
    // reuses an input buffer when TensorFlow holds its only reference.
    if (x.shape() == y.shape()) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, x.shape(), &z));
      if (z->NumElements() > 0) {
        functor::AddFunctor<Device, T, 1>()(d, z->flat<T>(), x.flat<T>(), y.flat<T>(), nullptr);
      }
      return;
    }
    if (x.dims() == 0) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1}, 0, y.shape(), &z));
      if (z->NumElements() > 0) {
        functor::AddFunctor<Device, T, 1>().Left(d, z->flat<T>(), Scalar(x), y.flat<T>(), nullptr);
      }
      return;
    }
    if (y.dims() == 0) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &z));
      if (z->NumElements() > 0) {
        functor::AddFunctor<Device, T, 1>().Right(d, z->flat<T>(), x.flat<T>(), Scalar(y), nullptr);
      }
      return;
    }

    const BCast bcast(BCast::FromShape(x.shape()), BCast::FromShape(y.shape()));
    OP_REQUIRES(ctx, bcast.IsValid(),
                ::tensorflow::errors::InvalidArgument(
                    "Incompatible shapes: ", x.shape().DebugString(), " vs. ",
                    y.shape().DebugString(), " (AddCustom broadcasts as tf.math.add: each "
                    "dimension must be equal, or 1 in one operand), in node ", name()));
    const int ndims = static_cast<int>(bcast.x_reshape().size());
    if (add_v2_ != nullptr && ndims <= kAddV2MaxBroadcastDims) {
      add_v2_->Compute(ctx);  // the shapes checked above, with this op's wording
      return;
    }
    OP_REQUIRES(ctx, ndims <= kMaxBroadcastDims,
                ::tensorflow::errors::InvalidArgument(
                    "AddCustom cannot broadcast x ", x.shape().DebugString(), " and y ",
                    y.shape().DebugString(), ": after merging adjacent dimensions that "
                    "broadcast alike, ", ndims, " remain, more than the ", kMaxBroadcastDims,
                    " its CPU kernel handles (tf.math.add's handles 5), in node ", name()));
    // A forwarded input has the output's element count, so it is not broadcast itself.
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(
                            {0, 1}, 0, BCast::ToShape(bcast.output_shape()), &z));
    if (z->NumElements() == 0) return;
    switch (ndims) {
      case 0:
      case 1:
        Flat(d, x, y, z);
        return;
      case 2: Broadcast<2>(d, bcast, x, y, z); return;
      case 3: Broadcast<3>(d, bcast, x, y, z); return;
      case 4: Broadcast<4>(d, bcast, x, y, z); return;
      case 5: Broadcast<5>(d, bcast, x, y, z); return;
      default: Broadcast<kMaxBroadcastDims>(d, bcast, x, y, z); return;  // 6 to 8
    }
  }

 private:
  // TensorFlow's AddV2 kernel for this device and T (the one tf.math.add runs; a kernel
  // reads only the inputs and outputs of the context it is given, which this op's signature
  // shares); null when none is registered, then the functor computes every case.
  static std::unique_ptr<::tensorflow::OpKernel> AddV2Kernel(::tensorflow::OpKernelConstruction* ctx,
                                                             const std::string& name) {
    ::tensorflow::NodeDef def;
    def.set_name(name + "/AddV2");
    def.set_op("AddV2");
    def.add_input("x");  // NodeDef validation counts them; the context supplies the tensors
    def.add_input("y");
    (*def.mutable_attr())["T"].set_type(::tensorflow::DataTypeToEnum<T>::v());
    ::tensorflow::Status status;
    std::unique_ptr<::tensorflow::OpKernel> kernel = ::tensorflow::CreateOpKernel(
        ctx->device_type(), ctx->device(), ctx->device()->GetAllocator(::tensorflow::AllocatorAttributes()),
        def, ctx->graph_def_version(), &status);
    return status.ok() ? std::move(kernel) : nullptr;
  }

  static typename ::tensorflow::TTypes<T>::ConstScalar Scalar(const Tensor& t) {
    return typename ::tensorflow::TTypes<T>::ConstScalar(t.flat<T>().data());
  }

  // One merged dimension: the shapes differ only by leading 1s, or one operand holds a
  // single element.
  static void Flat(const Device& d, const Tensor& x, const Tensor& y, Tensor* z) {
    if (y.NumElements() == 1) {
      functor::AddFunctor<Device, T, 1>().Right(d, z->flat<T>(), x.flat<T>(), Scalar(y), nullptr);
    } else if (x.NumElements() == 1) {
      functor::AddFunctor<Device, T, 1>().Left(d, z->flat<T>(), Scalar(x), y.flat<T>(), nullptr);
    } else {
      functor::AddFunctor<Device, T, 1>()(d, z->flat<T>(), x.flat<T>(), y.flat<T>(), nullptr);
    }
  }

  // N merged dimensions, as BinaryOp does for 2 to 5; fewer are padded with leading 1s
  // (one instantiation serves 6 to 8 dimensions: each costs compile time and code size).
  template <int N>
  static void Broadcast(const Device& d, const BCast& b, const Tensor& x, const Tensor& y,
                        Tensor* z) {
    functor::AddFunctor<Device, T, N>().BCast(
        d, z->shaped<T, N>(Padded<N>(b.result_shape())), x.shaped<T, N>(Padded<N>(b.x_reshape())),
        BCast::ToIndexArray<N>(Padded<N>(b.x_bcast())), y.shaped<T, N>(Padded<N>(b.y_reshape())),
        BCast::ToIndexArray<N>(Padded<N>(b.y_bcast())), nullptr);
  }

  template <int N>
  static BCast::Vec Padded(const BCast::Vec& dims) {
    BCast::Vec out(N - dims.size(), 1);
    out.insert(out.end(), dims.begin(), dims.end());
    return out;
  }

  const std::unique_ptr<::tensorflow::OpKernel> add_v2_;
};

TF_GE_CUSTOM_REGISTER_CPU_KERNELS_AddCustom(AddCustomOp)

}  // namespace tf_ge_custom
