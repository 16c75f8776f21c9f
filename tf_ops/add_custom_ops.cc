// The TensorFlow registration of AddCustom: its signature comes from tf_ge_custom/op_def.py
// (the generated TF_GE_CUSTOM_REGISTER_OP_AddCustom, see tf_ge_custom/_build/tf_codegen.py);
// this file adds the shape function and the documentation.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "add_custom_registrations.h"

namespace tf_ge_custom {

using ::tensorflow::shape_inference::InferenceContext;

namespace {

// A Status's text: message() since TensorFlow 2.13, error_message() before (1.15, 2.6).
template <typename S>
auto Message(const S& s, int) -> decltype(std::string(s.message())) {
  return std::string(s.message());
}
template <typename S>
std::string Message(const S& s, long) {  // NOLINT: the overload rank, not a size
  return s.error_message();
}

// tf.math.add's shape function itself (tensorflow/core/framework/common_shape_fns.h), so
// static and unknown dimensions and unknown ranks resolve exactly as for AddV2; a refusal
// names both shapes.
::tensorflow::Status AddCustomShape(InferenceContext* c) {
  const ::tensorflow::Status s = ::tensorflow::shape_inference::BroadcastBinaryOpShapeFn(c);
  if (s.ok()) return s;
  return ::tensorflow::errors::InvalidArgument(
      "AddCustom: x ", c->DebugString(c->input(0)), " and y ", c->DebugString(c->input(1)),
      " are not broadcast-compatible (as in tf.math.add, each dimension must be equal or 1 "
      "in one of them): ", Message(s, 0));
}

}  // namespace

TF_GE_CUSTOM_REGISTER_OP_AddCustom
    .SetShapeFn(AddCustomShape)
    .Doc(R"doc(
Element-wise z = x + y, broadcasting as tf.math.add does.

On an Ascend NPU, TF Adapter hands this node to GE, which runs a Triton kernel; elsewhere
this library's CPU kernel runs.
)doc");

}  // namespace tf_ge_custom
