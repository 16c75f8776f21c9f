// The XLA kernel of AddCustom, for tf.function(jit_compile=True), Keras' jit_compile=True
// and auto-clustering. Built into its own library (libtf_ge_custom_xla.so) only where the
// TensorFlow wheel ships the tf2xla headers and a library exporting their symbols; the op
// library itself never depends on it (docs/tensorflow-op.md).
//
// XlaBinaryOp (tensorflow/compiler/tf2xla/kernels/cwise_ops.h) is the base of every
// TensorFlow binary op's XLA kernel: it checks and broadcasts the operands with BCast as
// tf.math.add's XLA kernel does; the computation is one xla::Add.
#include "tensorflow/compiler/tf2xla/kernels/cwise_ops.h"
#include "tensorflow/compiler/tf2xla/xla_op_registry.h"
#include "add_custom_registrations.h"

namespace tf_ge_custom {

class AddCustomXlaOp : public ::tensorflow::XlaBinaryOp {
 public:
  explicit AddCustomXlaOp(::tensorflow::OpKernelConstruction* ctx) : XlaBinaryOp(ctx) {}

  xla::XlaOp Computation(::tensorflow::XlaOpKernelContext*, const xla::XlaOp& lhs,
                         const absl::Span<const int64_t>&, const xla::XlaOp& rhs,
                         const absl::Span<const int64_t>&, const ::tensorflow::BCast&,
                         const std::vector<int64_t>& extend_dimensions) override {
    return xla::Add(lhs, rhs, extend_dimensions);
  }
};

TF_GE_CUSTOM_REGISTER_XLA_KERNEL_AddCustom(AddCustomXlaOp)

}  // namespace tf_ge_custom
