// Packing the kernel's host arguments exactly as the manifest's layout says: one packed,
// little-endian struct whose bytes aclrtLaunchKernelWithHostArgs copies to the device.
#ifndef TF_GE_CUSTOM_CORE_HOST_ARGS_H_
#define TF_GE_CUSTOM_CORE_HOST_ARGS_H_

#include <cstdint>
#include <vector>

#include "tf_ge_custom_core/broadcast.h"
#include "tf_ge_custom_core/launch_plan.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

struct HostArgValues {
  uint64_t ffts = 0;             // aclrtGetHardwareSyncAddr, when the layout has the slot
  uint64_t sync_block_lock = 0;  // lock buffer or 0 (null)
  uint64_t workspace = 0;        // workspace buffer or 0 (null)
  std::vector<uint64_t> inputs;  // device addresses, already advanced to the launch's first element
  std::vector<uint64_t> outputs;
  int64_t num_elements = 0;
  std::vector<int64_t> dims;                        // the launch frame's extents (dim slots)
  std::vector<std::vector<int64_t>> input_strides;  // [operand][dim] (input_stride slots)
  // The op's attribute values (attr slots, by the attribute's index) as the bits of their
  // slot: a float attribute as its IEEE-754 binary32 bits, an int one as its int64 bits.
  std::vector<uint64_t> attrs;
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
};

// Fills out with layout.size bytes; unused (padding) bytes are zero. Refuses a value that
// does not fit its slot (e.g. more than 2^31-1 elements in a 32-bit num_elements, a negative
// extent or stride) and a slot whose value is not given; out's bytes are then unspecified.
// Reuses out's capacity: no allocation once it has held a struct of that size.
Status PackHostArgs(const ArgLayout &layout, const HostArgValues &values, std::vector<uint8_t> *out);

// The values of one launch of a plan: kernel operand k reads op input choice.operands[k]
// (its address in inputs, advanced to the launch's box), each output advanced likewise, and
// the box's element count, extents, strides and grid. The ffts, lock and workspace fields
// are left as they are. Execute (LaunchKernels) and the declared launch (DeclareLaunch) both
// fill their values here, so they pack the same struct. Reuses *values' lists' capacity.
void SetLaunchValues(const KernelChoice &choice, const std::vector<uint64_t> &inputs,
                     const std::vector<uint64_t> &outputs, const Launch &launch, HostArgValues *values);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_HOST_ARGS_H_
