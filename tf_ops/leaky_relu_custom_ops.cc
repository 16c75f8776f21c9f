// The TensorFlow registration of LeakyReluCustom: its signature (the alpha attr and its
// default included) and its shape function (one input, not broadcast: TensorFlow's
// UnchangedShape, as LeakyRelu's) come from tf_ge_custom/op_def.py through the generated
// TF_GE_CUSTOM_REGISTER_OP_LeakyReluCustom and TF_GE_CUSTOM_SHAPE_FN_LeakyReluCustom
// (tf_ge_custom/_build/tf_codegen.py); this file adds the documentation.
#include "leaky_relu_custom_registrations.h"

#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace tf_ge_custom {

TF_GE_CUSTOM_REGISTER_OP_LeakyReluCustom
    .SetShapeFn(TF_GE_CUSTOM_SHAPE_FN_LeakyReluCustom)
    .Doc(R"doc(
Element-wise y = x where x > 0, else x * alpha: tf.nn.leaky_relu(x, alpha).

On an Ascend NPU, TF Adapter hands this node to GE, which runs a Triton kernel; elsewhere
this library's CPU kernel runs.
)doc");

}  // namespace tf_ge_custom
