// How many launches, over which part of the output, with which arguments and grid: the host
// side of the kernels' grid-stride loops (docs/kernel-manifest.md, "grid" and
// "max_elements_per_launch"; docs/kernels.md, "Broadcasting").
//
// A launch covers a box of the choice's frame: the box fixes the dimensions before one
// split dimension (folded into the pointers), takes a chunk of the split dimension and the
// whole of every dimension after it, so that the output stays contiguous inside the box and
// no box holds more than max_elements_per_launch elements. The split dimension is the
// outermost one whose inner dimensions fit; for a frame within the limit there is one
// launch. Pointers advance in 64-bit arithmetic; every extent and stride the kernel gets
// stays below the limit, so its 32-bit index arithmetic cannot wrap.
#ifndef TF_GE_CUSTOM_CORE_LAUNCH_PLAN_H_
#define TF_GE_CUSTOM_CORE_LAUNCH_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tf_ge_custom_core/broadcast.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

struct Launch {
  std::vector<uint64_t> input_offsets;  // bytes each kernel operand's pointer advances
  uint64_t output_offset = 0;           // bytes the output pointer advances
  int64_t num_elements = 0;             // of the output, written by this launch
  // The box: the frame's extents for this launch (the flat kernels' n_elements is dims[0]),
  // and each kernel operand's element strides along the frame (0 before the split).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> input_strides;
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_dim() const { return grid_x * grid_y * grid_z; }
};

// Launches are computed on demand, so a plan for 2^40 elements costs nothing to hold.
class LaunchPlan {
 public:
  // Refuses a choice without a variant, a negative extent and a tensor whose byte size
  // overflows 64 bits.
  static Result<LaunchPlan> Make(const KernelChoice &choice, int64_t itemsize, const KernelEntry &kernel);
  // The same into *out, reusing its lists' capacity (Execute's per-thread plan: no allocation
  // once it has held a plan of that rank). On a refusal *out is unspecified.
  static Status Make(const KernelChoice &choice, int64_t itemsize, const KernelEntry &kernel, LaunchPlan *out);
  // The flat kernel over n elements (equal shapes).
  static Result<LaunchPlan> Flat(int64_t num_elements, int64_t itemsize, const KernelEntry &kernel);

  int64_t launch_count() const { return launch_count_; }
  Launch launch(int64_t i) const;
  // The same into *out, reusing its lists' capacity (no allocation once they are large enough).
  void launch(int64_t i, Launch *out) const;
  // The largest grid of any launch (the first one's): what workspace is sized for.
  uint32_t max_block_dim() const { return launch_count_ == 0 ? 0 : GridX(std::min(chunk_, frame_[split_])); }
  int64_t split_dim() const { return split_; }  // the dimension launches are chunked along

 private:
  // The grid of a launch whose split dimension has this extent (those before it have 1).
  uint32_t GridX(int64_t split_extent) const;

  std::vector<int64_t> frame_;
  std::vector<std::vector<int64_t>> strides_;  // per kernel operand
  std::vector<int64_t> block_;
  int64_t itemsize_ = 0;
  int64_t max_programs_ = 1;
  int64_t split_ = 0;
  int64_t chunk_ = 1;   // extent of the split dimension per launch
  int64_t chunks_ = 0;  // launches per index of the dimensions before the split
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
