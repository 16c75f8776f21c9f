// The GE custom op AddCustom. REG_AUTO_MAPPING_OP registers the class under its own token,
// so the class is named exactly as the op type (no namespace) and the op type is checked
// against the op definition at compile time.
#include <cstring>

#include "ge_ops.inc"
#include "graph/custom_op.h"
#include "kernel_op.h"

class AddCustom final : public tf_ge_custom::cann::KernelOp {
 public:
  AddCustom() : KernelOp("AddCustom") {}
};

namespace {
#define TF_GE_CUSTOM_OP_NAME(op) #op,
constexpr const char *kDefinedOps[] = {TF_GE_CUSTOM_FOR_EACH_OP(TF_GE_CUSTOM_OP_NAME)};
#undef TF_GE_CUSTOM_OP_NAME
constexpr bool SameName(const char *a, const char *b) { return *a == *b && (*a == '\0' || SameName(a + 1, b + 1)); }
static_assert(sizeof(kDefinedOps) / sizeof(kDefinedOps[0]) == 1 && SameName(kDefinedOps[0], "AddCustom"),
              "tf_ge_custom/op_def.py defines other ops than this library registers: add a class per op");
}  // namespace

REG_AUTO_MAPPING_OP(AddCustom);
