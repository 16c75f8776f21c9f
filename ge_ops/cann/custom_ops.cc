// The GE custom ops: one class per op of tf_ge_custom/op_def.py (TF_GE_CUSTOM_FOR_EACH_OP,
// generated), each a KernelOp. REG_AUTO_MAPPING_OP registers a class under its own token, so
// each class is named exactly as its op type (no namespace); the macro numbers its
// registrations with __COUNTER__, so it can be expanded once per op here.
#include "ge_ops.inc"
#include "graph/custom_op.h"
#include "kernel_op.h"

#define TF_GE_CUSTOM_DEFINE_OP(op)                     \
  class op final : public tf_ge_custom::cann::KernelOp { \
   public:                                             \
    op() : KernelOp(#op) {}                            \
  };                                                   \
  REG_AUTO_MAPPING_OP(op);
TF_GE_CUSTOM_FOR_EACH_OP(TF_GE_CUSTOM_DEFINE_OP)
#undef TF_GE_CUSTOM_DEFINE_OP
