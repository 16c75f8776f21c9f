// How many launches, over which elements, with which grid: the host side of the kernel's
// loop (docs/kernel-manifest.md, "grid" and "max_elements_per_launch").
#ifndef TF_GE_CUSTOM_CORE_LAUNCH_PLAN_H_
#define TF_GE_CUSTOM_CORE_LAUNCH_PLAN_H_

#include <cstdint>

#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

struct Launch {
  int64_t first_element = 0;   // of the whole tensor
  int64_t num_elements = 0;    // handled by this launch
  uint64_t byte_offset = 0;    // first_element * itemsize: how far the pointers advance
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_dim() const { return grid_x * grid_y * grid_z; }
};

// Launches are computed on demand, so a plan for 2^40 elements costs nothing to hold.
class LaunchPlan {
 public:
  // Refuses a negative count and a tensor whose byte size overflows 64 bits.
  static Result<LaunchPlan> Make(int64_t num_elements, int64_t itemsize, const KernelEntry &kernel);

  int64_t launch_count() const { return launch_count_; }
  Launch launch(int64_t i) const;
  // The largest grid of any launch (the first one's): what workspace is sized for.
  uint32_t max_block_dim() const { return launch_count_ == 0 ? 0 : launch(0).block_dim(); }

 private:
  int64_t num_elements_ = 0;
  int64_t itemsize_ = 0;
  int64_t block_size_ = 1;
  int64_t max_programs_ = 1;
  int64_t max_per_launch_ = 1;
  int64_t launch_count_ = 0;
};

// Bytes of workspace for one launch of block_dim programs (workspace_size per program).
Result<uint64_t> WorkspaceBytes(const KernelEntry &kernel, uint32_t block_dim);
// The byte a memset must write so every int64 lock reads lock_init_val; refuses a value
// whose eight bytes differ (a memset on the stream is the only fill that runs inside a
// captured model each time, see docs/ge-library.md).
Result<uint8_t> LockFillByte(int64_t lock_init_val);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_LAUNCH_PLAN_H_
