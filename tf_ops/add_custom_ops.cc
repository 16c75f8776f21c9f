// The TensorFlow registration of AddCustom. Must agree with tf_ge_custom/op_def.py
// (tests/test_op_registration.py reads back the OpDef this library registers).
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace tf_ge_custom {

using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

// x and y must have equal shapes: the NPU kernel works on flat buffers and cannot
// broadcast. Unknown dimensions merge with known ones; tf_ge_custom.add_custom broadcasts
// in front of the node, so user code never reaches this check with unequal shapes.
static ::tensorflow::Status AddCustomShape(InferenceContext* c) {
  ShapeHandle z;
  if (!c->Merge(c->input(0), c->input(1), &z).ok()) {
    return ::tensorflow::errors::InvalidArgument(
        "AddCustom needs x and y of the same shape (it does not broadcast), got x ",
        c->DebugString(c->input(0)), " and y ", c->DebugString(c->input(1)),
        "; tf_ge_custom.add_custom broadcasts its arguments before this op");
  }
  c->set_output(0, z);
  return ::tensorflow::Status();
}

REGISTER_OP("AddCustom")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {float, half, bfloat16, int32}")
    .SetShapeFn(AddCustomShape)
    .Doc(R"doc(
Element-wise z = x + y over tensors of equal shape.

On an Ascend NPU, TF Adapter hands this node to GE, which runs a Triton kernel; elsewhere
this library's CPU kernel runs.
)doc");

}  // namespace tf_ge_custom
