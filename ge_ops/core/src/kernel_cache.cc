#include "tf_ge_custom_core/kernel_cache.h"

namespace tf_ge_custom {
namespace core {

Result<LoadedKernel> KernelCache::GetOrLoad(int32_t device, uint64_t context, const KernelBinary &kernel,
                                            KernelLoader &loader) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto &s = slots_[Key(device, context, kernel.soc, kernel.entry.op, kernel.entry.dtype, kernel.entry.sha256)];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  // Held across the load: a second caller for the same kernel waits, then finds it loaded.
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (!slot->loaded) {
    LoadedKernel loaded;
    Status st = loader.LoadKernel(device, kernel, &loaded);
    if (!st.ok()) return st;
    slot->value = loaded;
    slot->bytes = kernel.bytes;
    slot->loaded = true;
  }
  return slot->value;
}

void KernelCache::Forget(int32_t device, uint64_t context, const KernelBinary &kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  slots_.erase(Key(device, context, kernel.soc, kernel.entry.op, kernel.entry.dtype, kernel.entry.sha256));
}

size_t KernelCache::loaded_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (auto &s : slots_) {
    std::lock_guard<std::mutex> slot_lock(s.second->mutex);
    n += s.second->loaded ? 1 : 0;
  }
  return n;
}

DeviceFacts *KernelCache::Facts(int32_t device, uint64_t context) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto &facts = facts_[std::make_pair(device, context)];
  if (!facts) facts.reset(new DeviceFacts());
  return facts.get();
}

KernelCache &KernelCache::Process() {
  // Never destroyed: the handles stay valid until the process ends, and no unload runs
  // after the runtime has shut down.
  static KernelCache *cache = new KernelCache();
  return *cache;
}

}  // namespace core
}  // namespace tf_ge_custom
