// Per-thread scratch objects that never keep the library loaded.
//
// A C++ thread_local with a non-trivial destructor registers that destructor with glibc
// (__cxa_thread_atexit_impl), and glibc then refuses to unmap the library until every
// thread that touched it has ended: GE's OM loader closes a model's memfd copy of this
// library when the model unloads, and the copy would stay (docs/ge-library.md, "The copy
// leaves with its model"). ThreadScratch keeps each thread's object behind a POSIX key
// instead: a thread that ends frees its own object, and the ThreadScratch itself (a
// namespace-scope static of the library) frees every object still alive when the library
// is unloaded. No thread-local storage of the library is used at all.
#ifndef TF_GE_CUSTOM_CORE_THREAD_SCRATCH_H_
#define TF_GE_CUSTOM_CORE_THREAD_SCRATCH_H_

#include <pthread.h>

#include <cstddef>
#include <mutex>
#include <set>

namespace tf_ge_custom {
namespace core {

// The type-erased part: one POSIX key and the objects made under it.
class ThreadSlots {
 public:
  using Deleter = void (*)(void *);
  explicit ThreadSlots(Deleter deleter);
  ~ThreadSlots();  // deletes the key first (no thread-exit call after it), then every object
  ThreadSlots(const ThreadSlots &) = delete;
  ThreadSlots &operator=(const ThreadSlots &) = delete;

  // The calling thread's object, or null when it has none yet. Both throw std::runtime_error
  // when the process has no POSIX key left for it (the adapter reports it as the call's
  // failure).
  void *Get() const;
  // Makes object the calling thread's (owned from now on) and returns it.
  void *Adopt(void *object);
  // How many threads' objects are alive.
  size_t live() const;

 private:
  struct Entry;
  static void OnThreadExit(void *entry);
  void Release(Entry *entry);

  Deleter deleter_;
  pthread_key_t key_;
  bool has_key_ = false;
  mutable std::mutex mutex_;
  std::set<Entry *> entries_;
};

// One T per thread, made on the thread's first Get.
template <typename T>
class ThreadScratch {
 public:
  ThreadScratch() : slots_(&Delete) {}
  T &Get() {
    void *object = slots_.Get();
    if (object == nullptr) object = slots_.Adopt(new T());
    return *static_cast<T *>(object);
  }
  size_t live() const { return slots_.live(); }

 private:
  static void Delete(void *object) { delete static_cast<T *>(object); }
  ThreadSlots slots_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_THREAD_SCRATCH_H_
