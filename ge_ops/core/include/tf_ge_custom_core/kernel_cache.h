// Load each kernel binary once per device and runtime context and keep it: concurrent first
// calls for the same (device, context, kernel) wait for one load instead of racing; a failed
// load is retried next call. A new ACL context (aclrtResetDevice, or aclFinalize then aclInit
// in one process) is a new key, so its first launch loads again; Forget drops a handle a
// launch found invalid (a context address reused after a reset), so the next call reloads.
#ifndef TF_GE_CUSTOM_CORE_KERNEL_CACHE_H_
#define TF_GE_CUSTOM_CORE_KERNEL_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Opaque runtime handles (aclrtBinHandle / aclrtFuncHandle in the CANN adapter).
struct LoadedKernel {
  void *binary = nullptr;
  void *function = nullptr;
};

// What the cache needs from the runtime; the CANN adapter implements it with ACL calls.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  // Load kernel's bytes onto device (the calling thread's current device).
  virtual Status LoadKernel(int32_t device, const KernelBinary &kernel, LoadedKernel *out) = 0;
};

// What one device reports under one runtime context, which cannot change while that context
// lives: asked of the runtime once per (device, context), then read from here, so a steady
// Execute asks ACL nothing about the device (docs/ge-library.md, "Programs per launch").
struct DeviceFacts {
  bool has_soc = false;
  std::string soc;  // aclrtGetSocName
  bool has_cores = false;
  int64_t vector_cores = 0;  // the program cap; 0: the device cannot say (executor.cc)
  bool has_sync = false;
  uint64_t sync_address = 0;  // aclrtGetHardwareSyncAddr: the ffts slot's value
};

class KernelCache {
 public:
  Result<LoadedKernel> GetOrLoad(int32_t device, uint64_t context, const KernelBinary &kernel, KernelLoader &loader);
  Result<LoadedKernel> GetOrLoad(int32_t device, const KernelBinary &kernel, KernelLoader &loader) {
    return GetOrLoad(device, 0, kernel, loader);
  }
  // Drops the handle kept for (device, context, kernel); never unloads it (a reset device
  // freed it already, and an unload could hit a handle of the new context).
  void Forget(int32_t device, uint64_t context, const KernelBinary &kernel);
  size_t loaded_count();

  // The facts kept for (device, context): the same object for the life of the cache (made on
  // first use, the only allocation), filled by the caller while it holds facts_mutex().
  DeviceFacts *Facts(int32_t device, uint64_t context);
  std::mutex &facts_mutex() { return facts_mutex_; }

  // The one cache of the process: every AddCustom instance (GE makes one per op type, and
  // one per loaded model) shares it, so a model reload never loads a binary again.
  static KernelCache &Process();

 private:
  // (device, context, SoC, op, dtype, sha256): new bytes under the same name are a new kernel.
  using Key = std::tuple<int32_t, uint64_t, std::string, std::string, std::string, std::string>;
  struct Slot {
    std::mutex mutex;
    bool loaded = false;
    LoadedKernel value;
    // The bytes stay alive as long as the loaded binary may refer to them.
    std::shared_ptr<const std::vector<uint8_t>> bytes;
  };
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<Slot>> slots_;
  std::mutex facts_mutex_;
  std::map<std::pair<int32_t, uint64_t>, std::unique_ptr<DeviceFacts>> facts_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_CACHE_H_
