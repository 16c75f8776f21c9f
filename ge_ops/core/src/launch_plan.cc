#include "tf_ge_custom_core/launch_plan.h"

#include <algorithm>
#include <limits>
#include <string>

namespace tf_ge_custom {
namespace core {

Result<LaunchPlan> LaunchPlan::Make(int64_t num_elements, int64_t itemsize, const KernelEntry &kernel) {
  if (num_elements < 0) {
    return Status::Error(Code::kOutOfRange, "element count " + std::to_string(num_elements) +
                                                " is negative (an unknown dimension reached Execute)");
  }
  if (itemsize <= 0 || kernel.block_size <= 0 || kernel.max_elements_per_launch < kernel.block_size ||
      kernel.max_programs <= 0 || kernel.max_grid <= 0) {
    return Status::Error(Code::kInternal, "kernel limits are not usable (validate the manifest first)");
  }
  if (num_elements > std::numeric_limits<int64_t>::max() / itemsize) {
    return Status::Error(Code::kOutOfRange, std::to_string(num_elements) + " elements of " + std::to_string(itemsize) +
                                                " bytes overflow a 64-bit byte size");
  }
  LaunchPlan p;
  p.num_elements_ = num_elements;
  p.itemsize_ = itemsize;
  p.block_size_ = kernel.block_size;
  // One program per block, capped by the kernel's program limit and the hardware grid limit.
  p.max_programs_ = std::min(kernel.max_programs, kernel.max_grid);
  p.max_per_launch_ = kernel.max_elements_per_launch;
  p.launch_count_ = num_elements / p.max_per_launch_ + (num_elements % p.max_per_launch_ != 0 ? 1 : 0);
  return p;
}

Launch LaunchPlan::launch(int64_t i) const {
  Launch l;
  l.first_element = i * max_per_launch_;
  l.num_elements = std::min(max_per_launch_, num_elements_ - l.first_element);
  l.byte_offset = static_cast<uint64_t>(l.first_element) * static_cast<uint64_t>(itemsize_);
  const int64_t blocks = l.num_elements / block_size_ + (l.num_elements % block_size_ != 0 ? 1 : 0);
  l.grid_x = static_cast<uint32_t>(std::max<int64_t>(1, std::min(blocks, max_programs_)));
  return l;
}

Result<uint64_t> WorkspaceBytes(const KernelEntry &kernel, uint32_t block_dim) {
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(static_cast<uint64_t>(kernel.workspace_size)) * block_dim;
  if (bytes > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) {
    return Status::Error(Code::kOutOfRange, "workspace of " + std::to_string(kernel.workspace_size) + " bytes x " +
                                                std::to_string(block_dim) + " programs overflows");
  }
  return static_cast<uint64_t>(bytes);
}

Result<uint8_t> LockFillByte(int64_t lock_init_val) {
  const auto v = static_cast<uint64_t>(lock_init_val);
  const auto b = static_cast<uint8_t>(v & 0xFF);
  for (int i = 1; i < 8; ++i) {
    if (static_cast<uint8_t>(v >> (8 * i)) != b) {
      return Status::Error(Code::kUnsupported, "lock_init_val " + std::to_string(lock_init_val) +
                                                   " cannot be written by a byte memset (its 8 bytes differ); this "
                                                   "library supports lock values such as 0 and -1");
    }
  }
  return b;
}

}  // namespace core
}  // namespace tf_ge_custom
