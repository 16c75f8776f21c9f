// The XLA kernel of LeakyReluCustom, for tf.function(jit_compile=True), Keras'
// jit_compile=True and auto-clustering, in the XLA kernel library beside AddCustom's
// (add_custom_xla.cc says when that library is built).
//
// The computation is the one TensorFlow's own LeakyRelu XLA kernel builds: select(x > 0, x,
// x * alpha), with alpha a literal of the element type; the attribute is read and checked by
// the generated LeakyReluCustomAttrs, as in the CPU kernel.
#include "leaky_relu_custom_registrations.h"

#include "tensorflow/compiler/tf2xla/kernels/cwise_ops.h"
#include "tensorflow/compiler/tf2xla/xla_helpers.h"
#include "tensorflow/compiler/tf2xla/xla_op_registry.h"

namespace tf_ge_custom {

TF_GE_CUSTOM_DEFINE_ATTRS_LeakyReluCustom

class LeakyReluCustomXlaOp : public ::tensorflow::XlaOpKernel {
 public:
  explicit LeakyReluCustomXlaOp(::tensorflow::OpKernelConstruction* ctx)
      : XlaOpKernel(ctx), attrs_(ctx) {}

  void Compile(::tensorflow::XlaOpKernelContext* ctx) override {
    xla::XlaBuilder* b = ctx->builder();
    const ::tensorflow::DataType type = ctx->input_type(0);
    const xla::XlaOp x = ctx->Input(0);
    const xla::XlaOp alpha = ::tensorflow::XlaHelpers::FloatLiteral(b, type, attrs_.alpha);
    ctx->SetOutput(0, xla::Select(xla::Gt(x, ::tensorflow::XlaHelpers::Zero(b, type)), x,
                                  xla::Mul(x, alpha)));
  }

 private:
  const LeakyReluCustomAttrs attrs_;
};

TF_GE_CUSTOM_REGISTER_XLA_KERNEL_LeakyReluCustom(LeakyReluCustomXlaOp)

}  // namespace tf_ge_custom
