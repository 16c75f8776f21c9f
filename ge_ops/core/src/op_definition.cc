#include "tf_ge_custom_core/op_definition.h"

namespace tf_ge_custom {
namespace core {

int64_t KernelVariantDefinition::block_elements() const {
  int64_t n = 1;
  for (int64_t b : block) n *= b;
  return n;
}

const DTypeDefinition *OpDefinition::FindDType(const std::string &name) const {
  for (const auto &d : dtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const KernelVariantDefinition *OpDefinition::FindVariant(const std::string &name) const {
  for (const auto &v : variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

namespace {
// names[i] belongs to dtypes[i] (the generated table's order).
std::string PerDType(const std::vector<DTypeDefinition> &dtypes, const std::vector<std::string> &names,
                     const std::string &dtype) {
  for (size_t i = 0; i < dtypes.size() && i < names.size(); ++i) {
    if (dtypes[i].name == dtype) return names[i];
  }
  return "";
}
}  // namespace

std::string OpDefinition::BinaryName(const std::string &variant, const std::string &dtype) const {
  const KernelVariantDefinition *v = FindVariant(variant);
  return v == nullptr ? std::string() : PerDType(dtypes, v->binary_names, dtype);
}

std::string OpDefinition::EntryName(const std::string &variant, const std::string &dtype) const {
  const KernelVariantDefinition *v = FindVariant(variant);
  return v == nullptr ? std::string() : PerDType(dtypes, v->entry_names, dtype);
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

const char *PatternName(Pattern pattern) { return kPatternNames[static_cast<int>(pattern)]; }

}  // namespace core
}  // namespace tf_ge_custom
