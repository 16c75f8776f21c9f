// The ops this package ships, as tf_ge_custom/op_def.py defines them. The table is generated
// from that file at build time (codegen/generate_op_sources.py); nothing here restates it.
#ifndef TF_GE_CUSTOM_CORE_OP_DEFINITION_H_
#define TF_GE_CUSTOM_CORE_OP_DEFINITION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tf_ge_custom {
namespace core {

struct DTypeDefinition {
  std::string name;         // "float32": TensorFlow / numpy / manifest spelling
  std::string ge_enum;      // "DT_FLOAT": the ge::DataType enumerator
  int64_t itemsize = 0;     // bytes per element
  std::string binary_name;  // npubin file of this op's kernel for this dtype
};

struct OpDefinition {
  std::string type_name;  // TF op type == GE REG_OP name == REG_AUTO_MAPPING_OP class
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<DTypeDefinition> dtypes;  // in registration order
  std::string entry;                    // kernel symbol in the npubin
  int64_t block_size = 0;

  const DTypeDefinition *FindDType(const std::string &name) const;
};

const std::vector<OpDefinition> &OpDefinitions();
const OpDefinition *FindOp(const std::string &type_name);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OP_DEFINITION_H_
