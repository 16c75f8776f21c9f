// Load each kernel binary once per device and runtime context and keep it: concurrent first
// calls for the same (device, context, kernel) wait for one load instead of racing; a failed
// load is retried next call. A new ACL context (aclrtResetDevice, or aclFinalize then aclInit
// in one process) is a new key, so its first launch loads again; Forget unloads and drops a
// handle a launch found invalid (a context address reused after a reset), so the next call
// reloads. A cache unloads every program it holds when it is destroyed: the process's cache
// is a static of the library, so each copy of the library (a model's memfd copy) frees its
// programs when it is unloaded (docs/ge-library.md, "The copy leaves with its model").
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

// Frees one loaded program (aclrtBinaryUnLoad in the CANN adapter); its failure is ignored:
// nothing is left to do with a program that cannot be freed.
using KernelUnloader = void (*)(const LoadedKernel &kernel);

// What the cache needs from the runtime; the CANN adapter implements it with ACL calls.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  // Load kernel's bytes onto device (the calling thread's current device).
  virtual Status LoadKernel(int32_t device, const KernelBinary &kernel, LoadedKernel *out) = 0;
  // How a program this loader loaded is freed, kept with it by the cache (which may outlive
  // the loader); null: never freed.
  virtual KernelUnloader Unloader() const { return nullptr; }
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
  KernelCache() = default;
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;
  ~KernelCache();  // unloads every program still held

  Result<LoadedKernel> GetOrLoad(int32_t device, uint64_t context, const KernelBinary &kernel, KernelLoader &loader);
  Result<LoadedKernel> GetOrLoad(int32_t device, const KernelBinary &kernel, KernelLoader &loader) {
    return GetOrLoad(device, 0, kernel, loader);
  }
  // Unloads and drops the handle kept for (device, context, kernel): the runtime keeps a
  // program object per load even after a device reset, so a reload without it would leak
  // one per reset.
  void Forget(int32_t device, uint64_t context, const KernelBinary &kernel);
  size_t loaded_count();

  // The facts kept for (device, context): the same object for the life of the cache (made on
  // first use, the only allocation), filled by the caller while it holds facts_mutex().
  DeviceFacts *Facts(int32_t device, uint64_t context);
  std::mutex &facts_mutex() { return facts_mutex_; }

  // The one cache of this copy of the library: every instance of its ops (GE makes one per
  // op type, and one per loaded model) shares it, so a model reloaded while the copy stays
  // loads no binary again. It is a static of the library, destroyed (every program unloaded)
  // when the copy is unloaded; another copy (a model's memfd copy) has its own.
  static KernelCache &Process();

 private:
  // (device, context, SoC, op, dtype, sha256): new bytes under the same name are a new kernel.
  using Key = std::tuple<int32_t, uint64_t, std::string, std::string, std::string, std::string>;
  struct Slot {
    std::mutex mutex;
    bool loaded = false;
    bool forgotten = false;  // dropped by Forget: no longer the cache's
    LoadedKernel value;
    KernelUnloader unload = nullptr;  // the loader's, kept: the loader is gone by the unload
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
