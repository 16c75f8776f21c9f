// The load-once cache: N launches from 8 threads load exactly once per (device, kernel).
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "testing.h"
#include "tf_ge_custom_core/kernel_cache.h"

using namespace tf_ge_custom::core;

namespace {
class CountingLoader : public KernelLoader {
 public:
  Status LoadKernel(int32_t device, const KernelBinary &k, LoadedKernel *out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // widen the race window
    std::lock_guard<std::mutex> lock(mutex_);
    ++loads_[{device, k.entry.dtype}];
    if (fail_next_ > 0) {
      --fail_next_;
      return Status::ApiError("aclrtBinaryLoadFromData", "returned 107000");
    }
    out->function = reinterpret_cast<void *>(static_cast<uintptr_t>(0x1000 + device * 16 + k.entry.dtype.size()));
    return Status::Ok();
  }
  std::map<std::pair<int32_t, std::string>, int> loads_;
  int fail_next_ = 0;
  std::mutex mutex_;
};

KernelBinary Kernel(const std::string &dtype) {
  KernelBinary k;
  k.soc = "Ascend910B1";
  k.entry.op = "AddCustom";
  k.entry.dtype = dtype;
  k.entry.sha256 = std::string(64, dtype[0]);
  return k;
}
}  // namespace

TEST(KernelCache, EightThreadsLoadOncePerDeviceAndDtype) {
  KernelCache cache;
  CountingLoader loader;
  std::atomic<int> ok_calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const int32_t device = (t + i) % 2;
        auto r = cache.GetOrLoad(device, Kernel(i % 2 ? "float16" : "float32"), loader);
        if (r.ok() && r.value().function != nullptr) ++ok_calls;
      }
    });
  }
  for (auto &t : threads) t.join();
  CHECK_EQ(ok_calls.load(), 400);
  CHECK_EQ(loader.loads_.size(), size_t{4});
  for (const auto &l : loader.loads_) CHECK_EQ(l.second, 1);
  CHECK_EQ(cache.loaded_count(), size_t{4});
}

TEST(KernelCache, SameHandleEveryTimeAndRetryAfterFailure) {
  KernelCache cache;
  CountingLoader loader;
  loader.fail_next_ = 1;
  auto first = cache.GetOrLoad(0, Kernel("int32"), loader);
  CHECK_EQ(first.status().code(), Code::kRuntime);
  CHECK_EQ(first.status().api(), std::string("aclrtBinaryLoadFromData"));
  auto second = cache.GetOrLoad(0, Kernel("int32"), loader);
  REQUIRE_OK(second);
  auto third = cache.GetOrLoad(0, Kernel("int32"), loader);
  CHECK_TRUE(third.value().function == second.value().function);
  CHECK_EQ((loader.loads_[{0, "int32"}]), 2);  // one failed, one kept
  // New bytes under the same name are a new kernel.
  KernelBinary changed = Kernel("int32");
  changed.entry.sha256 = std::string(64, 'f');
  REQUIRE_OK(cache.GetOrLoad(0, changed, loader));
  CHECK_EQ((loader.loads_[{0, "int32"}]), 3);
}

TEST(KernelCache, EachContextLoadsItsOwnAndForgetDropsOneHandle) {
  KernelCache cache;
  CountingLoader loader;
  const KernelBinary k = Kernel("float32");
  REQUIRE_OK(cache.GetOrLoad(0, 0xC0, k, loader));
  REQUIRE_OK(cache.GetOrLoad(0, 0xC0, k, loader));
  REQUIRE_OK(cache.GetOrLoad(0, 0xC1, k, loader));  // a re-created context: loads again
  CHECK_EQ((loader.loads_[{0, "float32"}]), 2);
  cache.Forget(0, 0xC0, k);
  REQUIRE_OK(cache.GetOrLoad(0, 0xC1, k, loader));  // untouched
  CHECK_EQ((loader.loads_[{0, "float32"}]), 2);
  REQUIRE_OK(cache.GetOrLoad(0, 0xC0, k, loader));  // forgotten: loaded again
  CHECK_EQ((loader.loads_[{0, "float32"}]), 3);
}

namespace {
// Programs as a runtime keeps them: each load makes one, each unload frees one it made.
std::mutex programs_mutex;
std::map<void *, int> live_programs;  // handle -> loads outstanding
int unknown_unloads = 0;

void UnloadProgram(const LoadedKernel &k) {
  std::lock_guard<std::mutex> lock(programs_mutex);
  auto it = live_programs.find(k.binary);
  if (it == live_programs.end() || it->second == 0) {
    ++unknown_unloads;
    return;
  }
  if (--it->second == 0) live_programs.erase(it);
}

size_t LivePrograms() {
  std::lock_guard<std::mutex> lock(programs_mutex);
  return live_programs.size();
}

class ProgramLoader : public KernelLoader {
 public:
  Status LoadKernel(int32_t, const KernelBinary &, LoadedKernel *out) override {
    std::lock_guard<std::mutex> lock(programs_mutex);
    out->binary = reinterpret_cast<void *>(static_cast<uintptr_t>(0xB000 + 0x10 * ++next_));
    out->function = out->binary;
    ++live_programs[out->binary];
    return Status::Ok();
  }
  KernelUnloader Unloader() const override { return &UnloadProgram; }
  int next_ = 0;
};
}  // namespace

TEST(KernelCache, ForgetUnloadsTheStaleProgramAndTheCacheUnloadsTheRestWhenDestroyed) {
  const int unknown_before = unknown_unloads;
  ProgramLoader loader;
  {
    KernelCache cache;
    const KernelBinary a = Kernel("float32"), b = Kernel("float16");
    auto stale = cache.GetOrLoad(0, 0xC0, a, loader);
    REQUIRE_OK(stale);
    REQUIRE_OK(cache.GetOrLoad(0, 0xC0, b, loader));
    CHECK_EQ(LivePrograms(), size_t{2});
    // A device reset: the launch found the handle invalid, the executor forgets it and loads
    // under the new context. The stale program is freed, not leaked.
    cache.Forget(0, 0xC0, a);
    CHECK_EQ(LivePrograms(), size_t{1});
    auto fresh = cache.GetOrLoad(0, 0xC1, a, loader);
    REQUIRE_OK(fresh);
    CHECK_TRUE(fresh.value().binary != stale.value().binary);
    CHECK_EQ(LivePrograms(), size_t{2});
    cache.Forget(0, 0xC0, a);  // forgotten already: nothing more to free
    CHECK_EQ(LivePrograms(), size_t{2});
    CHECK_EQ(cache.loaded_count(), size_t{2});
  }
  // The cache is gone (as the library copy's is when it is unloaded): every program freed once.
  CHECK_EQ(LivePrograms(), size_t{0});
  CHECK_EQ(unknown_unloads, unknown_before);
}

TEST(KernelCache, ALoaderWithoutAnUnloaderLeavesItsProgramsAlone) {
  CountingLoader loader;  // no Unloader: a destroyed cache calls nothing for its programs
  {
    KernelCache cache;
    REQUIRE_OK(cache.GetOrLoad(0, 0xC0, Kernel("float32"), loader));
    cache.Forget(0, 0xC0, Kernel("float32"));
    REQUIRE_OK(cache.GetOrLoad(0, 0xC0, Kernel("float32"), loader));
  }
  CHECK_EQ((loader.loads_[{0, "float32"}]), 2);
}
