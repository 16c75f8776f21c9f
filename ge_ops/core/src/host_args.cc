#include "tf_ge_custom_core/host_args.h"

#include <limits>
#include <string>

namespace tf_ge_custom {
namespace core {
namespace {

void PutLittleEndian(uint64_t value, int64_t size, uint8_t *dst) {
  for (int64_t i = 0; i < size; ++i) dst[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace

Status PackHostArgs(const ArgLayout &layout, const HostArgValues &v, std::vector<uint8_t> *out) {
  if (layout.size < 0 || layout.size > (1 << 16)) {
    return Status::Error(Code::kOutOfRange, "host-argument size " + std::to_string(layout.size) + " is out of range");
  }
  // Into the caller's buffer, whose capacity survives from call to call (no allocation once
  // it has held one struct); on a refusal its bytes are unspecified.
  std::vector<uint8_t> &bytes = *out;
  bytes.assign(static_cast<size_t>(layout.size), 0);
  for (const ArgSlot &slot : layout.slots) {
    if (slot.offset < 0 || slot.size <= 0 || slot.offset + slot.size > layout.size) {
      return Status::Error(Code::kOutOfRange, "slot " + slot.name + " lies outside the " + std::to_string(layout.size) +
                                                  "-byte argument struct");
    }
    uint64_t value = 0;
    switch (slot.role) {
      case SlotRole::kFfts: value = v.ffts; break;
      case SlotRole::kSyncBlockLock: value = v.sync_block_lock; break;
      case SlotRole::kWorkspace: value = v.workspace; break;
      case SlotRole::kInput:
      case SlotRole::kOutput: {
        const auto &list = slot.role == SlotRole::kInput ? v.inputs : v.outputs;
        if (slot.index < 0 || static_cast<size_t>(slot.index) >= list.size()) {
          return Status::Error(Code::kOutOfRange, std::string("the layout wants ") + SlotRoleName(slot.role) + " " +
                                                      std::to_string(slot.index) + " but the op has " +
                                                      std::to_string(list.size()));
        }
        value = list[static_cast<size_t>(slot.index)];
        break;
      }
      case SlotRole::kNumElements:
      case SlotRole::kDim:
      case SlotRole::kInputStride: {
        int64_t n = v.num_elements;
        const char *what = "element count";
        if (slot.role != SlotRole::kNumElements) {
          const std::vector<int64_t> *list = &v.dims;
          what = "extent";
          if (slot.role == SlotRole::kInputStride) {
            what = "stride";
            list = slot.index >= 0 && static_cast<size_t>(slot.index) < v.input_strides.size()
                       ? &v.input_strides[static_cast<size_t>(slot.index)]
                       : nullptr;
          }
          if (list == nullptr || slot.dim < 0 || static_cast<size_t>(slot.dim) >= list->size()) {
            return Status::Error(Code::kOutOfRange, std::string("the layout wants the ") + what + " of " +
                                                        SlotRoleName(slot.role) + " slot " + slot.name +
                                                        " but the launch has none");
          }
          n = (*list)[static_cast<size_t>(slot.dim)];
        }
        const int64_t limit = slot.size == 4 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
        if (n < 0 || n > limit) {
          return Status::Error(Code::kOutOfRange, std::string(what) + " " + std::to_string(n) + " does not fit the " +
                                                      std::to_string(8 * slot.size) + "-bit " + slot.name + " argument");
        }
        value = static_cast<uint64_t>(n);
        break;
      }
      case SlotRole::kAttr: {
        if (slot.index < 0 || static_cast<size_t>(slot.index) >= v.attrs.size()) {
          return Status::Error(Code::kOutOfRange, "the layout wants attribute " + std::to_string(slot.index) + " (" +
                                                      slot.name + ") but the call has " +
                                                      std::to_string(v.attrs.size()));
        }
        value = v.attrs[static_cast<size_t>(slot.index)];
        if (slot.size == 4 && value > std::numeric_limits<uint32_t>::max()) {
          return Status::Error(Code::kOutOfRange, "attribute word " + std::to_string(value) + " does not fit the 32-bit " +
                                                      slot.name + " argument");
        }
        break;
      }
      case SlotRole::kGridX:
      case SlotRole::kGridY:
      case SlotRole::kGridZ: {
        const uint32_t g = slot.role == SlotRole::kGridX ? v.grid_x : slot.role == SlotRole::kGridY ? v.grid_y : v.grid_z;
        if (g < 1 || g > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
          return Status::Error(Code::kOutOfRange, std::string(SlotRoleName(slot.role)) + " " + std::to_string(g) +
                                                      " is not a positive int32");
        }
        value = g;
        break;
      }
    }
    PutLittleEndian(value, slot.size, bytes.data() + slot.offset);
  }
  return Status::Ok();
}

void SetLaunchValues(const KernelChoice &choice, const std::vector<uint64_t> &inputs,
                     const std::vector<uint64_t> &outputs, const Launch &l, HostArgValues *v) {
  v->inputs.clear();
  v->outputs.clear();
  for (size_t k = 0; k < choice.operands.size(); ++k) {
    v->inputs.push_back(inputs[static_cast<size_t>(choice.operands[k])] + l.input_offsets[k]);
  }
  for (uint64_t a : outputs) v->outputs.push_back(a + l.output_offset);
  v->num_elements = l.num_elements;
  v->dims = l.dims;  // copy-assigned: capacity reused
  v->input_strides = l.input_strides;
  v->grid_x = l.grid_x;
  v->grid_y = l.grid_y;
  v->grid_z = l.grid_z;
}

}  // namespace core
}  // namespace tf_ge_custom
