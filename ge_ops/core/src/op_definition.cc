#include "tf_ge_custom_core/op_definition.h"

namespace tf_ge_custom {
namespace core {

const DTypeDefinition *OpDefinition::FindDType(const std::string &name) const {
  for (const auto &d : dtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const std::vector<OpDefinition> &OpDefinitions() {
  static const std::vector<OpDefinition> ops = {
#include "op_definitions.inc"
  };
  return ops;
}

const OpDefinition *FindOp(const std::string &type_name) {
  for (const auto &op : OpDefinitions()) {
    if (op.type_name == type_name) return &op;
  }
  return nullptr;
}

}  // namespace core
}  // namespace tf_ge_custom
