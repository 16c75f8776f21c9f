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
