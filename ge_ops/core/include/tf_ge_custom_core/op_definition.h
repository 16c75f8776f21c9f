// The ops this package ships, as tf_ge_custom/op_def.py defines them. The table is generated
// from that file at build time (codegen/generate_op_sources.py); nothing here restates it.
#ifndef TF_GE_CUSTOM_CORE_OP_DEFINITION_H_
#define TF_GE_CUSTOM_CORE_OP_DEFINITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_contract.h"  // generated from tf_ge_custom/kernel_contract.py

namespace tf_ge_custom {
namespace core {

struct DTypeDefinition {
  std::string name;      // "float32": TensorFlow / numpy / manifest spelling
  std::string ge_enum;   // "DT_FLOAT": the ge::DataType enumerator
  int64_t itemsize = 0;  // bytes per element
};

// One attribute of the op (op_def.OpAttr): a TF attr that GE's parser maps onto the node and
// the kernel takes as a scalar (an "attr" slot).
struct AttrDefinition {
  std::string name;           // "alpha": TF attr == GE ATTR == kernel parameter
  std::string type;           // "float" (passed as fp32) or "int" (as int64): op_def.ATTR_TYPES
  int64_t word_bytes = 0;     // bytes of its host-argument slot: 4 for a float, 8 for an int
  double default_value = 0;  // what a node without the attr gets
  // op_def.OpAttr's inclusive bounds, compared in the attribute's own type (a float bound as
  // the float it rounds to, as TensorFlow's kernel compares it): a value outside, a NaN
  // included, is refused. None on a side: unbounded there.
  bool has_minimum = false;
  double minimum = 0;
  bool has_maximum = false;
  double maximum = 0;
  std::string range;  // the bounds in words, as the TF op says them: "in [0.0, 1.0]", ">= 0"
};

// One runtime parameter of a kernel variant: the host-argument slot it becomes.
struct ParamSlot {
  SlotRole role = SlotRole::kInput;
  // the kernel operand (input / output / input_stride), the attribute's position in the
  // op's attrs (attr), else -1
  int64_t index = -1;
  int64_t dim = -1;    // the frame dimension (dim / input_stride), else -1
};

// One compiled form of the op's kernel (op_def.KernelVariant).
struct KernelVariantDefinition {
  std::string name;            // "flat", "row_16x256": the manifest's "variant"
  Pattern pattern = Pattern::kEqual;
  std::vector<int64_t> block;  // {elements} or {rows, cols} per loop iteration
  std::vector<ParamSlot> params;
  std::vector<std::string> binary_names;  // npubin file per dtype, in the op's dtype order
  // The kernel's symbol in the npubin per dtype, in the op's dtype order: one name per
  // (op, variant, dtype), since a GE model keeps one binary per kernel name.
  std::vector<std::string> entry_names;
  // The @triton.jit function computing the variant: under the first entry naming
  // (kernel_contract.py, ENTRY_NAMING) every dtype's kernel of the variant had this name.
  std::string function;

  int64_t block_elements() const;
  bool tiled() const { return block.size() == 2; }
};

struct OpDefinition {
  std::string type_name;  // TF op type == GE REG_OP name == REG_AUTO_MAPPING_OP class
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<DTypeDefinition> dtypes;  // in registration order
  std::vector<KernelVariantDefinition> variants;  // "flat" first
  bool commutative = false;  // the kernel may take the inputs in either order
  // The inputs broadcast against each other (tf.math.add's rules); false: every input and
  // the output have one shape and only "equal" variants exist.
  bool broadcasts = false;
  std::vector<AttrDefinition> attrs;  // in op_def order: an attr slot's index

  const DTypeDefinition *FindDType(const std::string &name) const;
  const KernelVariantDefinition *FindVariant(const std::string &name) const;
  // The npubin file of (variant, dtype), or "" when either is unknown.
  std::string BinaryName(const std::string &variant, const std::string &dtype) const;
  // The kernel's entry symbol for (variant, dtype), or "" when either is unknown.
  std::string EntryName(const std::string &variant, const std::string &dtype) const;
};

const std::vector<OpDefinition> &OpDefinitions();
const OpDefinition *FindOp(const std::string &type_name);
const char *PatternName(Pattern pattern);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OP_DEFINITION_H_
