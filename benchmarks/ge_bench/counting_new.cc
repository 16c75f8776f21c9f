// Every heap allocation of the process, counted: the global operator new and delete replaced
// (linked into each benchmark of this folder).
#include "counting_new.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_bytes{0};

void *Allocate(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}

void *AllocateAligned(std::size_t n, std::size_t alignment) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  void *p = nullptr;
  if (posix_memalign(&p, std::max(alignment, sizeof(void *)), n == 0 ? 1 : n) != 0) return nullptr;
  return p;
}
}  // namespace

void *operator new(std::size_t n) {
  void *p = Allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void *operator new[](std::size_t n) {
  void *p = Allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return Allocate(n); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return Allocate(n); }
void *operator new(std::size_t n, std::align_val_t a) {
  void *p = AllocateAligned(n, static_cast<std::size_t>(a));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void *operator new[](std::size_t n, std::align_val_t a) {
  void *p = AllocateAligned(n, static_cast<std::size_t>(a));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }


namespace bench {
uint64_t CountedAllocations() { return g_allocations.load(); }
uint64_t CountedBytes() { return g_bytes.load(); }
}  // namespace bench
