#include "tf_ge_custom_core/outputs.h"

#include <string>

namespace tf_ge_custom {
namespace core {

OutputSize OutputAllocation(int64_t num_elements) {
  return num_elements == 0 ? OutputSize::kOneElement : OutputSize::kAsShaped;
}

Status AllocateOutputs(KernelCall *call, OutputAllocator &allocator) {
  const OutputSize size = OutputAllocation(call->num_elements);
  call->outputs.clear();
  for (size_t i = 0; i < call->op->outputs.size(); ++i) {
    auto address = allocator.AllocOutput(i, size);
    if (!address.ok()) {
      return address.status().WithContext("output " + std::to_string(i) + ", dtype " + call->dtype->name + ", " +
                                          std::to_string(call->num_elements) + " elements");
    }
    call->outputs.push_back(address.value());
  }
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
