// The core's DeviceRuntime over ACL and one execution context: each method is one ACL or
// context call, and a failure is reported with that call's name and error code.
#ifndef TF_GE_CUSTOM_CANN_ACL_RUNTIME_H_
#define TF_GE_CUSTOM_CANN_ACL_RUNTIME_H_

#include "acl/acl_rt.h"
#include "exe_graph/runtime/eager_op_execution_context.h"
#include "tf_ge_custom_core/executor.h"

namespace tf_ge_custom {
namespace cann {

class AclRuntime final : public core::DeviceRuntime {
 public:
  explicit AclRuntime(gert::EagerOpExecutionContext *ctx) : ctx_(ctx) {}

  core::Result<std::string> SocName() override;
  core::Result<int32_t> DeviceId() override;
  core::Result<uint64_t> HardwareSyncAddress() override;
  core::Result<uint64_t> AllocWorkspace(uint64_t bytes) override;
  core::Status FillBytes(uint64_t address, uint64_t bytes, uint8_t value) override;
  core::Status Launch(const core::LoadedKernel &kernel, uint32_t block_dim, std::vector<uint8_t> *host_args) override;
  core::Status LoadKernel(int32_t device, const core::KernelBinary &kernel, core::LoadedKernel *out) override;
  // aclrtBinaryUnLoad: how the kernel cache frees a program when it forgets it (a device
  // reset) or when this copy of the library is unloaded.
  core::KernelUnloader Unloader() const override;
  // aclrtGetDeviceInfo(ACL_DEV_ATTR_VECTOR_CORE_NUM) and (ACL_DEV_ATTR_AICORE_CORE_NUM): the
  // cap on programs per launch; 0 when the query fails or the driver reports no count (ACL
  // answers success with 0 then).
  int64_t VectorCoreCount(int32_t device) override;
  int64_t AiCoreCount(int32_t device) override;
  // aclrtGetCurrentContext: the kernel cache's key (a reset device or a new aclInit loads again).
  core::Result<uint64_t> ContextId() override;
  // The last launch failed with ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_INVALID_RESOURCE_HANDLE
  // or ACL_ERROR_RT_CONTEXT_NULL.
  bool IsInvalidHandle(const core::Status &launch_failure) override;

 private:
  gert::EagerOpExecutionContext *ctx_;
  aclError last_launch_error_ = ACL_SUCCESS;
};

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_ACL_RUNTIME_H_
