// ThreadScratch: one object per thread, freed when the thread ends or, for the threads still
// alive, when the ThreadScratch is destroyed (as the library's statics are when a copy of
// the library is unloaded); and no thread_local of the library is involved.
#include <atomic>
#include <thread>
#include <vector>

#include "testing.h"
#include "tf_ge_custom_core/thread_scratch.h"

using namespace tf_ge_custom::core;

namespace {
std::atomic<int> alive{0};

struct Counted {
  Counted() { ++alive; }
  ~Counted() { --alive; }
  Counted(const Counted &) = delete;
  Counted &operator=(const Counted &) = delete;
  std::vector<int> values;
};
}  // namespace

TEST(ThreadScratch, EachThreadHasItsOwnObjectKeptFromCallToCall) {
  const int before = alive.load();
  {
    ThreadScratch<Counted> scratch;
    Counted *mine = &scratch.Get();
    mine->values.push_back(7);
    CHECK_TRUE(&scratch.Get() == mine);  // the same object on the next call
    CHECK_EQ(scratch.Get().values.size(), size_t{1});
    Counted *theirs = nullptr;
    std::thread([&] { theirs = &scratch.Get(); }).join();
    CHECK_TRUE(theirs != nullptr && theirs != mine);
    // The other thread ended: its object is freed, only this thread's remains.
    CHECK_EQ(scratch.live(), size_t{1});
    CHECK_EQ(alive.load(), before + 1);
  }
  CHECK_EQ(alive.load(), before);  // this thread's freed with the scratch
}

TEST(ThreadScratch, ObjectsOfThreadsStillRunningAreFreedWithTheScratch) {
  const int before = alive.load();
  std::atomic<bool> release{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  auto *scratch = new ThreadScratch<Counted>();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      scratch->Get().values.assign(1000, 1);
      ++ready;
      while (!release.load()) std::this_thread::yield();
    });
  }
  while (ready.load() < 4) std::this_thread::yield();
  CHECK_EQ(scratch->live(), size_t{4});
  CHECK_EQ(alive.load(), before + 4);
  // Destroyed while its threads run (a model's library copy unloaded under GE's thread pool):
  // every object is freed now, and the threads' ends later call nothing of it.
  delete scratch;
  CHECK_EQ(alive.load(), before);
  release = true;
  for (auto &t : threads) t.join();
  CHECK_EQ(alive.load(), before);
}
