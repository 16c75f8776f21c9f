// The attribute area of GE's node-info block, measured before anything in it is read.
//
// GE hands a custom op's Execute a node-info block (metadef inc/external/exe_graph/runtime/
// compute_node_info.h, ComputeNodeInfo): a fixed head, then an instance record per IR input,
// a tensor description per input and output, then the attribute area (RuntimeAttrs: a count,
// reserved bytes, one offset per attribute, then the values), then an instance record per IR
// output. The head's accessors only add sizes: GetAttrs() is where the area would start and
// GetOutputInstanceInfo(0) is where it ends, and nothing checks that the block holds either.
//
// GE's graph runtime builds the whole block (bg_kernel_context_extend.cc), so the area is
// there, at least its head. HEAD's OM2 generated code allocates the head alone (88 bytes,
// stable_part_provider.cc, BuildKernelContextHolder) and names no IR outputs: GetAttrs() then
// points past the block and there is no end to measure against. Reading the count there is
// a read out of bounds; this header says so instead, and the adapter takes the attribute words
// Compile recorded for the node (bundle.h, BundleNode::attrs).
#ifndef TF_GE_CUSTOM_CORE_NODE_ATTRS_H_
#define TF_GE_CUSTOM_CORE_NODE_ATTRS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// The head of the attribute area (metadef runtime_attrs_def.h, RuntimeAttrsDef): the count
// (8 bytes) and 40 reserved bytes; one 8-byte offset per attribute follows.
constexpr size_t kAttrAreaHeadBytes = 48;
constexpr size_t kAttrOffsetBytes = 8;

struct AttrArea {
  const uint8_t *begin = nullptr;
  size_t size = 0;

  // Whether the area holds its head and the offsets of `count` attributes.
  bool HoldsOffsets(size_t count) const;
  // Whether [value, value + bytes) lies inside the area.
  bool Holds(const void *value, size_t bytes) const;
};

// The area from attrs (GetAttrs()) to end (GetOutputInstanceInfo(0)) into *area. False, and
// *area left empty, when the block has none: end is null (the block names no IR outputs), end
// lies before attrs, or the bytes between cannot hold the area's head. No allocation.
bool MeasureAttrArea(const void *attrs, const void *end, AttrArea *area);

// The refusal for a node whose block has no attribute area and for which no attribute words
// were recorded (a model serialized before nodes carried them): kBadNodeInfo, naming the node
// and what to do.
Status NoAttrArea(const std::string &node);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_NODE_ATTRS_H_
