#include "tf_ge_custom_core/thread_scratch.h"

#include <stdexcept>

namespace tf_ge_custom {
namespace core {

// What the key holds for one thread: its object and the slots that own it.
struct ThreadSlots::Entry {
  ThreadSlots *owner;
  void *object;
};

ThreadSlots::ThreadSlots(Deleter deleter) : deleter_(deleter) {
  has_key_ = pthread_key_create(&key_, &ThreadSlots::OnThreadExit) == 0;
}

ThreadSlots::~ThreadSlots() {
  // After pthread_key_delete no thread that ends calls OnThreadExit (whose code leaves with
  // this library); the objects still alive are freed here instead.
  if (has_key_) (void)pthread_key_delete(key_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry *entry : entries_) {
    deleter_(entry->object);
    delete entry;
  }
  entries_.clear();
}

void *ThreadSlots::Get() const {
  // Only when the process has used up its POSIX keys (PTHREAD_KEYS_MAX): the caller reports it.
  if (!has_key_) throw std::runtime_error("pthread_key_create failed: no per-thread scratch for this call");
  const Entry *entry = static_cast<const Entry *>(pthread_getspecific(key_));
  return entry == nullptr ? nullptr : entry->object;
}

void *ThreadSlots::Adopt(void *object) {
  Entry *entry = nullptr;
  try {
    entry = new Entry{this, object};
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.insert(entry);
  } catch (...) {  // std::bad_alloc: the object is not kept, so it is freed here
    delete entry;
    deleter_(object);
    throw;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (pthread_setspecific(key_, entry) != 0) {
    entries_.erase(entry);
    deleter_(object);
    delete entry;
    throw std::runtime_error("pthread_setspecific failed: no per-thread scratch for this call");
  }
  return object;
}

size_t ThreadSlots::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void ThreadSlots::OnThreadExit(void *entry) {
  Entry *e = static_cast<Entry *>(entry);
  e->owner->Release(e);
}

void ThreadSlots::Release(Entry *entry) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.erase(entry) == 0) return;
  }
  deleter_(entry->object);
  delete entry;
}

}  // namespace core
}  // namespace tf_ge_custom
