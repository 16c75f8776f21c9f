// STAND-IN for ACL's runtime: records each call (include/recording_acl.h).
#include "recording_acl.h"

#include <set>

#include "acl/acl_rt.h"

namespace recording_acl {
namespace {
// Never destroyed (allocated once): a library copy's statics may unload programs during the
// process's exit, after this file's statics would be gone.
std::mutex &Mutex() {
  static std::mutex *m = new std::mutex();
  return *m;
}
Settings &Current() {
  static Settings *s = new Settings();
  return *s;
}
Record &Log() {
  static Record *r = new Record();
  return *r;
}
struct Programs {
  size_t made = 0;  // every load so far: the next handle's number
  std::set<void *> live;
  size_t unknown_unloads = 0;
};
Programs &AllPrograms() {
  static Programs *p = new Programs();
  return *p;
}
// Handles are distinct fake addresses, never dereferenced by anyone.
void *Handle(uint64_t base, size_t n) { return reinterpret_cast<void *>(static_cast<uintptr_t>(base + 0x100 * n)); }
}  // namespace

void Reset(const Settings &settings) {
  std::lock_guard<std::mutex> lock(Mutex());
  Current() = settings;
  Log() = Record();
}

Record Take() {
  std::lock_guard<std::mutex> lock(Mutex());
  return Log();
}

size_t LivePrograms() {
  std::lock_guard<std::mutex> lock(Mutex());
  return AllPrograms().live.size();
}

size_t UnknownUnloads() {
  std::lock_guard<std::mutex> lock(Mutex());
  return AllPrograms().unknown_unloads;
}

}  // namespace recording_acl

using recording_acl::Current;
using recording_acl::Log;
using recording_acl::Mutex;

extern "C" {

const char *aclrtGetSocName(void) {
  std::lock_guard<std::mutex> lock(Mutex());
  ++Log().soc_calls;
  return Current().soc.empty() ? nullptr : Current().soc.c_str();
}

aclError aclrtGetDevice(int32_t *device_id) {
  std::lock_guard<std::mutex> lock(Mutex());
  ++Log().device_calls;
  if (Current().get_device_error != 0) return Current().get_device_error;
  *device_id = Current().device;
  return ACL_SUCCESS;
}

aclError aclrtGetHardwareSyncAddr(void **addr) {
  std::lock_guard<std::mutex> lock(Mutex());
  ++Log().sync_calls;
  if (Current().sync_error != 0) return Current().sync_error;
  *addr = reinterpret_cast<void *>(static_cast<uintptr_t>(Current().sync_address));
  return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
  std::lock_guard<std::mutex> lock(Mutex());
  ++Log().context_calls;
  if (Current().context_error != 0) return Current().context_error;
  *context = reinterpret_cast<aclrtContext>(static_cast<uintptr_t>(Current().context));
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceInfo(uint32_t device_id, aclrtDevAttr attr, int64_t *value) {
  std::lock_guard<std::mutex> lock(Mutex());
  Log().device_info_devices.push_back(device_id);
  Log().device_info_attrs.push_back(static_cast<int>(attr));
  const recording_acl::Settings &s = Current();
  const bool vector = attr == ACL_DEV_ATTR_VECTOR_CORE_NUM, ai = attr == ACL_DEV_ATTR_AICORE_CORE_NUM;
  const int error = s.device_info_error != 0 ? s.device_info_error
                    : vector                 ? s.vector_cores_error
                    : ai                     ? s.ai_cores_error
                                             : 0;
  if (error != 0) {
    *value = 4096;  // not an answer: a caller that uses it after the failure launches 4096 programs
    return error;
  }
  *value = vector ? s.vector_cores : ai ? s.ai_cores : 0;
  return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void *dev_ptr, size_t max_count, int32_t value, size_t count, aclrtStream stream) {
  std::lock_guard<std::mutex> lock(Mutex());
  if (Current().memset_error != 0) return Current().memset_error;
  Log().memsets.push_back({static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dev_ptr)), max_count, count, value, stream,
                           Log().launches.size()});
  return ACL_SUCCESS;
}

aclError aclrtBinaryLoadFromData(const void *data, size_t length, const aclrtBinaryLoadOptions *options,
                                 aclrtBinHandle *bin_handle) {
  std::lock_guard<std::mutex> lock(Mutex());
  if (Current().load_error != 0) return Current().load_error;
  recording_acl::Load load;
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  load.bytes.assign(bytes, bytes + length);
  if (options != nullptr) {
    for (size_t i = 0; i < options->numOpt; ++i) {
      load.option_types.push_back(static_cast<uint32_t>(options->options[i].type));
      load.option_magics.push_back(options->options[i].value.magic);
    }
  }
  load.binary = recording_acl::Handle(0xB1000000ull, ++recording_acl::AllPrograms().made);
  recording_acl::AllPrograms().live.insert(load.binary);
  *bin_handle = load.binary;
  Log().loads.push_back(load);
  return ACL_SUCCESS;
}

aclError aclrtBinaryGetFunction(const aclrtBinHandle bin_handle, const char *kernel_name, aclrtFuncHandle *func_handle) {
  std::lock_guard<std::mutex> lock(Mutex());
  if (Current().get_function_error != 0) return Current().get_function_error;
  void *function = recording_acl::Handle(0xF1000000ull, Log().functions.size() + 1);
  Log().functions.push_back({bin_handle, kernel_name, function});
  *func_handle = function;
  return ACL_SUCCESS;
}

aclError aclrtBinaryUnLoad(aclrtBinHandle bin_handle) {
  std::lock_guard<std::mutex> lock(Mutex());
  Log().unloads.push_back(bin_handle);
  if (recording_acl::AllPrograms().live.erase(bin_handle) == 0) {
    ++recording_acl::AllPrograms().unknown_unloads;
    return ACL_ERROR_RT_INVALID_HANDLE;
  }
  return ACL_SUCCESS;
}

aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle func_handle, uint32_t block_dim, aclrtStream stream,
                                       aclrtLaunchKernelCfg *cfg, void *host_args, size_t args_size,
                                       aclrtPlaceHolderInfo *place_holder_array, size_t place_holder_num) {
  std::lock_guard<std::mutex> lock(Mutex());
  if (Current().launch_error != 0) return Current().launch_error;
  const uint8_t *args = static_cast<const uint8_t *>(host_args);
  Log().launches.push_back({func_handle, block_dim, stream, cfg == nullptr, place_holder_array == nullptr,
                            place_holder_num, std::vector<uint8_t>(args, args + args_size)});
  return ACL_SUCCESS;
}

aclError aclrtFree(void *) { return ACL_SUCCESS; }
aclError aclrtFreeHost(void *) { return ACL_SUCCESS; }
aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }

}  // extern "C"
