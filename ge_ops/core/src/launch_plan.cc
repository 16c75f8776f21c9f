#include "tf_ge_custom_core/launch_plan.h"

#include <algorithm>
#include <limits>
#include <string>

namespace tf_ge_custom {
namespace core {
namespace {
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
}  // namespace

Result<LaunchPlan> LaunchPlan::Flat(int64_t num_elements, int64_t itemsize, const KernelEntry &kernel) {
  KernelChoice c;
  c.num_elements = num_elements;
  c.frame = {num_elements};
  c.strides = {{1}, {1}};
  static const KernelVariantDefinition flat{"flat", Pattern::kEqual, {1}, {}, {}, {}, ""};
  c.variant = &flat;  // only its presence is read: the block comes from the kernel entry
  return Make(c, itemsize, kernel);
}

Result<LaunchPlan> LaunchPlan::Make(const KernelChoice &choice, int64_t itemsize, const KernelEntry &kernel) {
  LaunchPlan p;
  TF_GE_CUSTOM_RETURN_IF_ERROR(Make(choice, itemsize, kernel, &p));
  return p;
}

Status LaunchPlan::Make(const KernelChoice &choice, int64_t itemsize, const KernelEntry &kernel, LaunchPlan *out) {
  int64_t n = 1;
  for (int64_t d : choice.frame) {
    if (d < 0) {
      return Status::Error(Code::kOutOfRange, "extent " + std::to_string(d) +
                                                  " is negative (an unknown dimension reached Execute)");
    }
    n = d == 0 || n == 0 ? 0 : (n > std::numeric_limits<int64_t>::max() / d ? -1 : n * d);
    if (n < 0) return Status::Error(Code::kOutOfRange, "the launch frame holds more than 2^63 elements");
  }
  int64_t block_elements = 1;
  for (int64_t b : kernel.block) block_elements = b > 0 ? block_elements * b : 0;
  if (choice.variant == nullptr || choice.frame.empty() || choice.strides.empty() || itemsize <= 0 ||
      kernel.block.empty() || kernel.block.size() > choice.frame.size() || block_elements <= 0 ||
      kernel.max_elements_per_launch < block_elements || kernel.max_programs <= 0 || kernel.max_grid <= 0) {
    return Status::Error(Code::kInternal, "kernel choice or limits are not usable (validate the manifest first)");
  }
  for (const auto &s : choice.strides) {
    if (s.size() != choice.frame.size()) return Status::Error(Code::kInternal, "strides do not match the frame");
  }
  if (n > std::numeric_limits<int64_t>::max() / itemsize) {
    return Status::Error(Code::kOutOfRange, std::to_string(n) + " elements of " + std::to_string(itemsize) +
                                                " bytes overflow a 64-bit byte size");
  }
  // Assigned member by member: the lists reuse what *out holds.
  LaunchPlan &p = *out;
  p.frame_ = choice.frame;
  p.strides_ = choice.strides;
  p.block_ = kernel.block;
  p.itemsize_ = itemsize;
  // One program per block or tile, capped by the kernel's program limit and the grid limit.
  p.max_programs_ = std::min(kernel.max_programs, kernel.max_grid);
  p.split_ = 0;
  p.chunk_ = 1;
  p.chunks_ = 0;
  p.launch_count_ = 0;
  if (n == 0) return Status::Ok();
  // The split: the outermost dimension whose inner dimensions fit one launch.
  const int64_t limit = kernel.max_elements_per_launch;
  const int64_t rank = static_cast<int64_t>(p.frame_.size());
  int64_t inner = n;  // product of the dimensions after `split`
  for (p.split_ = 0; p.split_ < rank; ++p.split_) {
    inner /= p.frame_[p.split_];
    if (inner <= limit) break;
  }
  p.chunk_ = std::min(p.frame_[p.split_], limit / inner);
  p.chunks_ = CeilDiv(p.frame_[p.split_], p.chunk_);
  p.launch_count_ = p.chunks_;
  for (int64_t d = 0; d < p.split_; ++d) p.launch_count_ *= p.frame_[d];
  return Status::Ok();
}

Launch LaunchPlan::launch(int64_t i) const {
  Launch l;
  launch(i, &l);
  return l;
}

void LaunchPlan::launch(int64_t i, Launch *out) const {
  const int64_t rank = static_cast<int64_t>(frame_.size());
  Launch &l = *out;
  l.dims = frame_;
  for (int64_t d = 0; d < split_; ++d) l.dims[d] = 1;
  const int64_t split_start = (i % chunks_) * chunk_;  // the box's corner along the split
  l.dims[split_] = std::min(chunk_, frame_[split_] - split_start);
  l.num_elements = 1;
  for (int64_t d : l.dims) l.num_elements *= d;
  // The box's corner, innermost dimension first: 0 after the split, split_start at it, and
  // before it the digits of i / chunks_ in the frame's mixed radix. The output is contiguous
  // over the frame; the inputs follow their strides.
  l.input_offsets.assign(strides_.size(), 0);
  uint64_t z = 0, z_stride = 1;
  int64_t rest = i / chunks_;
  for (int64_t d = rank; d-- > 0;) {
    int64_t corner = 0;
    if (d == split_) {
      corner = split_start;
    } else if (d < split_) {
      corner = rest % frame_[d];
      rest /= frame_[d];
    }
    z += static_cast<uint64_t>(corner) * z_stride;
    z_stride *= static_cast<uint64_t>(frame_[d]);
    for (size_t k = 0; k < strides_.size(); ++k) {
      l.input_offsets[k] += static_cast<uint64_t>(corner) * static_cast<uint64_t>(strides_[k][d]);
    }
  }
  l.output_offset = z * static_cast<uint64_t>(itemsize_);
  l.input_strides.resize(strides_.size());
  for (size_t k = 0; k < strides_.size(); ++k) {
    l.input_offsets[k] *= static_cast<uint64_t>(itemsize_);
    std::vector<int64_t> &box_strides = l.input_strides[k];
    box_strides = strides_[k];
    for (int64_t d = 0; d < split_; ++d) box_strides[d] = 0;  // extent 1: folded into the pointer
  }
  l.grid_x = GridX(l.dims[split_]);
  l.grid_y = 1;
  l.grid_z = 1;
}

uint32_t LaunchPlan::GridX(int64_t split_extent) const {
  // Blocks (flat) or tiles (the last two dimensions in rows x cols, the ones before whole).
  const int64_t rank = static_cast<int64_t>(frame_.size());
  const int64_t tiled = static_cast<int64_t>(block_.size());
  int64_t work = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t extent = d < split_ ? 1 : d == split_ ? split_extent : frame_[d];
    const int64_t t = d - (rank - tiled);
    work *= t < 0 ? extent : CeilDiv(extent, block_[t]);
  }
  return static_cast<uint32_t>(std::max<int64_t>(1, std::min(work, max_programs_)));
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
