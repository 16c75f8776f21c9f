// How Execute gets its output tensors from GE, including the rule for an output with no
// elements (docs/ge-library.md, "Zero elements").
//
// GE never gives a tensor a 0-byte buffer: its eager execution context refuses a 0-byte
// allocation, its static memory plan gives an empty tensor 32 bytes, and for its own kernels
// whose outputs are all empty it allocates those outputs and launches nothing. Execute does
// the same: an output with no elements is allocated as one element of its dtype, keeps its
// real, empty shape, and no kernel is launched (LaunchKernels returns at 0 elements).
#ifndef TF_GE_CUSTOM_CORE_OUTPUTS_H_
#define TF_GE_CUSTOM_CORE_OUTPUTS_H_

#include <cstddef>
#include <cstdint>

#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

enum class OutputSize {
  kAsShaped,    // the buffer the output's own shape and dtype need
  kOneElement,  // one element of its dtype; the tensor then gets its real (empty) shape back
};

// What to ask GE for, for an output of num_elements elements.
OutputSize OutputAllocation(int64_t num_elements);

// The CANN adapter implements this with EagerOpExecutionContext::MallocOutputTensor; tests
// with a recorder.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  // Allocates output `index` sized as `size` says, describes it with the inputs' shape, format
  // and dtype, and returns its device address. A failing call is Status::ApiError("<api>", ...).
  virtual Result<uint64_t> AllocOutput(size_t index, OutputSize size) = 0;
};

// Allocates every output of call->op for call->num_elements elements and stores their
// addresses in call->outputs, in order. A failure names the output, the dtype and the count.
Status AllocateOutputs(KernelCall *call, OutputAllocator &allocator);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_OUTPUTS_H_
