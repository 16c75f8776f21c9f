// The TensorFlow parser plugin (installed into opp/framework/tensorflow/): maps each TF op
// of the op definition onto the GE op of the same name for the file-based parse
// (atc --framework=3, aclgrphParseTensorFlow), copying inputs, outputs and attrs as they are.
#include "ge_ops.inc"
#include "register/register.h"

namespace domi {
// The same registration GE writes itself for an auto-mapped op in the online path.
#define TF_GE_CUSTOM_REGISTER_TF_PARSER(op)      \
  REGISTER_CUSTOM_OP(#op)                         \
      .FrameworkType(TENSORFLOW)                  \
      .OriginOpType(#op)                          \
      .ParseParamsByOperatorFn(AutoMappingByOpFn) \
      .ImplyType(ImplyType::CUSTOM);
TF_GE_CUSTOM_FOR_EACH_OP(TF_GE_CUSTOM_REGISTER_TF_PARSER)
#undef TF_GE_CUSTOM_REGISTER_TF_PARSER
}  // namespace domi
