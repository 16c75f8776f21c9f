#include "tf_ge_custom_core/node_attrs.h"

namespace tf_ge_custom {
namespace core {

bool AttrArea::HoldsOffsets(size_t count) const {
  if (size < kAttrAreaHeadBytes) return false;
  return count <= (size - kAttrAreaHeadBytes) / kAttrOffsetBytes;
}

bool AttrArea::Holds(const void *value, size_t bytes) const {
  if (begin == nullptr || value == nullptr) return false;
  const uintptr_t v = reinterpret_cast<uintptr_t>(value), b = reinterpret_cast<uintptr_t>(begin);
  if (v < b) return false;
  const uintptr_t offset = v - b;
  return offset <= size && bytes <= size - offset;
}

bool MeasureAttrArea(const void *attrs, const void *end, AttrArea *area) {
  *area = AttrArea();
  if (attrs == nullptr || end == nullptr) return false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(attrs), e = reinterpret_cast<uintptr_t>(end);
  if (e < a || e - a < kAttrAreaHeadBytes) return false;
  area->begin = static_cast<const uint8_t *>(attrs);
  area->size = static_cast<size_t>(e - a);
  return true;
}

Status NoAttrArea(const std::string &node) {
  return Status::Error(Code::kBadNodeInfo,
                       "GE's node-info block of node " + (node.empty() ? std::string("?") : node) +
                           " has no attribute area (HEAD's OM2 code builds it so), and the model recorded no "
                           "attribute words for the node (it was serialized by an earlier tf-ge-custom): rebuild "
                           "the model (OM) with this package, whose Compile records them");
}

}  // namespace core
}  // namespace tf_ge_custom
