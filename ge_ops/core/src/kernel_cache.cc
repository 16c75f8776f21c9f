#include "tf_ge_custom_core/kernel_cache.h"

namespace tf_ge_custom {
namespace core {

Result<LoadedKernel> KernelCache::GetOrLoad(int32_t device, uint64_t context, const KernelBinary &kernel,
                                            KernelLoader &loader) {
  const Key key(device, context, kernel.soc, kernel.entry.op, kernel.entry.dtype, kernel.entry.sha256);
  std::shared_ptr<Slot> slot;
  std::unique_lock<std::mutex> lock;
  for (;;) {
    {
      std::lock_guard<std::mutex> map_lock(mutex_);
      auto &s = slots_[key];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    // Held across the load: a second caller for the same kernel waits, then finds it loaded.
    lock = std::unique_lock<std::mutex>(slot->mutex);
    // A slot Forget dropped while this call waited is no longer the cache's: a program loaded
    // into it would never be unloaded. Take the cache's current slot instead.
    if (!slot->forgotten) break;
  }
  if (!slot->loaded) {
    LoadedKernel loaded;
    Status st = loader.LoadKernel(device, kernel, &loaded);
    if (!st.ok()) return st;
    slot->value = loaded;
    slot->unload = loader.Unloader();
    slot->bytes = kernel.bytes;
    slot->loaded = true;
  }
  return slot->value;
}

namespace {

// Frees the slot's program, if it holds one (the caller holds the slot's mutex).
template <typename Slot>
void Unload(Slot &slot) {
  if (slot.loaded && slot.unload != nullptr) slot.unload(slot.value);
  slot.loaded = false;
  slot.value = LoadedKernel();
  slot.bytes.reset();
}

}  // namespace

KernelCache::~KernelCache() {
  for (auto &s : slots_) {
    std::lock_guard<std::mutex> slot_lock(s.second->mutex);
    Unload(*s.second);
  }
}

void KernelCache::Forget(int32_t device, uint64_t context, const KernelBinary &kernel) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = slots_.find(Key(device, context, kernel.soc, kernel.entry.op, kernel.entry.dtype, kernel.entry.sha256));
    if (it == slots_.end()) return;
    slot = it->second;
    slots_.erase(it);
  }
  // A caller that took the slot before the erase and waits on its mutex sees it forgotten and
  // takes the cache's new slot for the key.
  std::lock_guard<std::mutex> slot_lock(slot->mutex);
  Unload(*slot);
  slot->forgotten = true;
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

namespace {
// A namespace-scope static, not a function-local one: destroyed when this copy of the library
// is unloaded (or the process ends), which unloads its programs.
KernelCache process_cache;
}  // namespace

KernelCache &KernelCache::Process() { return process_cache; }

}  // namespace core
}  // namespace tf_ge_custom
