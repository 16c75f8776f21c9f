#include "acl_runtime.h"

#include <string>

#include "acl/acl_rt.h"

namespace tf_ge_custom {
namespace cann {
namespace {

core::Status AclError(const char *call, aclError code) {
  return core::Status::ApiError(call, "returned " + std::to_string(code));
}

// The load magic of each core::BinaryMagic, named alike (generated from kernel_contract.py):
// "aiv" kernels load as vector-core ELF, "aic"/"mix" as AI-core ELF (docs/ascend-stack.md,
// "Kernel metadata").
uint32_t LoadMagic(core::BinaryMagic magic) {
  switch (magic) {
#define TF_GE_CUSTOM_MAGIC_CASE(enumerator, acl_suffix) \
  case core::BinaryMagic::enumerator:                  \
    return ACL_RT_BINARY_MAGIC_##acl_suffix;
    TF_GE_CUSTOM_FOR_EACH_BINARY_MAGIC(TF_GE_CUSTOM_MAGIC_CASE)
#undef TF_GE_CUSTOM_MAGIC_CASE
  }
  return ACL_RT_BINARY_MAGIC_ELF_AICORE;  // not reached: every enumerator has its case
}

// A count of the device's cores, 0 when unknown: a failed query is no failure of the call
// (the core falls back), and no message is made for it.
int64_t CoreCount(int32_t device, aclrtDevAttr attribute) {
  int64_t count = 0;
  if (aclrtGetDeviceInfo(static_cast<uint32_t>(device), attribute, &count) != ACL_SUCCESS) return 0;
  return count > 0 ? count : 0;
}

// Frees one program; a failure is ignored (the runtime already gone at process exit, or a
// program a device reset invalidated): there is nothing else to do with it.
void UnloadProgram(const core::LoadedKernel &kernel) {
  if (kernel.binary != nullptr) (void)aclrtBinaryUnLoad(static_cast<aclrtBinHandle>(kernel.binary));
}

}  // namespace

core::KernelUnloader AclRuntime::Unloader() const { return &UnloadProgram; }

core::Result<std::string> AclRuntime::SocName() {
  const char *soc = aclrtGetSocName();
  if (soc == nullptr || soc[0] == '\0') {
    return core::Status::ApiError("aclrtGetSocName", "returned no name (is a device set?)");
  }
  return std::string(soc);
}

core::Result<int32_t> AclRuntime::DeviceId() {
  int32_t device = -1;
  const aclError ret = aclrtGetDevice(&device);
  if (ret != ACL_SUCCESS) return AclError("aclrtGetDevice", ret);
  return device;
}

core::Result<uint64_t> AclRuntime::HardwareSyncAddress() {
  void *addr = nullptr;
  const aclError ret = aclrtGetHardwareSyncAddr(&addr);
  if (ret != ACL_SUCCESS) return AclError("aclrtGetHardwareSyncAddr", ret);
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(addr));
}

core::Result<uint64_t> AclRuntime::AllocWorkspace(uint64_t bytes) {
  void *ws = ctx_->MallocWorkSpace(static_cast<size_t>(bytes));
  if (ws == nullptr) {
    return core::Status::ApiError("MallocWorkSpace", "returned null for " + std::to_string(bytes) + " bytes");
  }
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ws));
}

core::Status AclRuntime::FillBytes(uint64_t address, uint64_t bytes, uint8_t value) {
  // On the op's stream, so it is ordered before the launch that reads it (and recorded
  // with it when GE captures the stream into a model).
  const aclError ret = aclrtMemsetAsync(reinterpret_cast<void *>(static_cast<uintptr_t>(address)),
                                        static_cast<size_t>(bytes), value, static_cast<size_t>(bytes),
                                        ctx_->GetStream());
  if (ret != ACL_SUCCESS) return AclError("aclrtMemsetAsync", ret);
  return core::Status::Ok();
}

core::Status AclRuntime::Launch(const core::LoadedKernel &kernel, uint32_t block_dim, std::vector<uint8_t> *host_args) {
  const aclError ret = aclrtLaunchKernelWithHostArgs(static_cast<aclrtFuncHandle>(kernel.function), block_dim,
                                                     ctx_->GetStream(), nullptr, host_args->data(), host_args->size(),
                                                     nullptr, 0);
  last_launch_error_ = ret;
  if (ret != ACL_SUCCESS) return AclError("aclrtLaunchKernelWithHostArgs", ret);
  return core::Status::Ok();
}

int64_t AclRuntime::VectorCoreCount(int32_t device) { return CoreCount(device, ACL_DEV_ATTR_VECTOR_CORE_NUM); }

int64_t AclRuntime::AiCoreCount(int32_t device) { return CoreCount(device, ACL_DEV_ATTR_AICORE_CORE_NUM); }

core::Result<uint64_t> AclRuntime::ContextId() {
  aclrtContext context = nullptr;
  const aclError ret = aclrtGetCurrentContext(&context);
  if (ret != ACL_SUCCESS) return AclError("aclrtGetCurrentContext", ret);
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(context));
}

bool AclRuntime::IsInvalidHandle(const core::Status &launch_failure) {
  return !launch_failure.ok() && (last_launch_error_ == ACL_ERROR_RT_INVALID_HANDLE ||
                                  last_launch_error_ == ACL_ERROR_INVALID_RESOURCE_HANDLE ||
                                  last_launch_error_ == ACL_ERROR_RT_CONTEXT_NULL);
}

core::Status AclRuntime::LoadKernel(int32_t device, const core::KernelBinary &kernel, core::LoadedKernel *out) {
  aclrtBinaryLoadOption option;
  option.type = ACL_RT_BINARY_LOAD_OPT_MAGIC;
  option.value.magic = LoadMagic(kernel.entry.magic);
  aclrtBinaryLoadOptions options;
  options.options = &option;
  options.numOpt = 1;
  aclrtBinHandle binary = nullptr;
  aclError ret = aclrtBinaryLoadFromData(kernel.bytes->data(), kernel.bytes->size(), &options, &binary);
  if (ret != ACL_SUCCESS) return AclError("aclrtBinaryLoadFromData", ret);
  aclrtFuncHandle function = nullptr;
  ret = aclrtBinaryGetFunction(binary, kernel.entry.entry.c_str(), &function);
  if (ret != ACL_SUCCESS) {
    (void)aclrtBinaryUnLoad(binary);
    return AclError("aclrtBinaryGetFunction", ret);
  }
  out->binary = binary;
  out->function = function;
  return core::Status::Ok();
}

}  // namespace cann
}  // namespace tf_ge_custom
