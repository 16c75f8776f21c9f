// What Execute does after its input checks, against a recording runtime (a test double for
// ACL and the execution context): kernel choice, refusals, load-once, chunked launches with
// byte-exact arguments, workspace and lock buffers, and running from serialized kernels.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/op_checks.h"
#include "tf_ge_custom_core/outputs.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;

namespace {

struct RecordedLaunch {
  void *function;
  uint32_t block_dim;
  std::vector<uint8_t> args;
};

class RecordingRuntime : public DeviceRuntime {
 public:
  std::string soc = "Ascend910B1";
  int32_t device = 0;
  int load_error = 0, launch_error = 0;
  std::atomic<int> loads{0}, soc_calls{0}, ffts_calls{0};
  std::vector<uint64_t> workspace_requests;
  std::vector<std::string> fills;  // "address:bytes:value", in call order with launches
  std::vector<RecordedLaunch> launches;
  std::mutex mutex;

  Result<std::string> SocName() override {
    ++soc_calls;
    return soc;
  }
  Result<int32_t> DeviceId() override { return device; }
  Result<uint64_t> HardwareSyncAddress() override {
    ++ffts_calls;
    return uint64_t{0x00000000FF001000ull};
  }
  Result<uint64_t> AllocWorkspace(uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    workspace_requests.push_back(bytes);
    return uint64_t{0x7000000000ull} + 0x100000ull * workspace_requests.size();
  }
  Status FillBytes(uint64_t address, uint64_t bytes, uint8_t value) override {
    std::lock_guard<std::mutex> lock(mutex);
    fills.push_back(std::to_string(address) + ":" + std::to_string(bytes) + ":" + std::to_string(value) + "@" +
                    std::to_string(launches.size()));
    return Status::Ok();
  }
  Status Launch(const LoadedKernel &k, uint32_t block_dim, std::vector<uint8_t> *args) override {
    if (launch_error != 0) {
      return Status::ApiError("aclrtLaunchKernelWithHostArgs", "returned " + std::to_string(launch_error));
    }
    std::lock_guard<std::mutex> lock(mutex);
    launches.push_back({k.function, block_dim, *args});
    return Status::Ok();
  }
  Status LoadKernel(int32_t dev, const KernelBinary &k, LoadedKernel *out) override {
    if (load_error != 0) {
      return Status::ApiError("aclrtBinaryLoadFromData", "returned " + std::to_string(load_error));
    }
    ++loads;
    out->function = reinterpret_cast<void *>(static_cast<uintptr_t>(0xF00 + dev));
    return Status::Ok();
  }
};

// A call of x of shape xs and y of shape ys (the output's address is given, as after
// AllocateOutputs).
KernelCall Call(const std::string &dtype, const std::vector<int64_t> &xs, const std::vector<int64_t> &ys) {
  const OpDefinition &op = *FindOp("AddCustom");
  auto prepared = PrepareCall(op, *op.FindDType(dtype), xs, ys);
  if (!prepared.ok()) {
    std::fprintf(stderr, "test data error: %s\n", prepared.status().ToString().c_str());
    std::abort();
  }
  KernelCall c = std::move(prepared).value();
  c.inputs = {0x0000100000000000ull, 0x0000200000000000ull};
  c.outputs = {0x0000300000000000ull};
  return c;
}

// Equal shapes of n elements: the flat kernel.
KernelCall Call(const std::string &dtype, int64_t n) { return Call(dtype, {n}, {n}); }

uint64_t ReadLe(const std::vector<uint8_t> &b, size_t at, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

struct Fixture {
  test_support::TempDir opp;
  std::shared_ptr<KernelRegistry> registry;
  KernelCache cache;
  RecordingRuntime runtime;
  explicit Fixture(const std::vector<KernelSpec> &kernels, const std::string &soc = "Ascend910B1") {
    test_support::WriteOppKernels(opp, soc, kernels);
    registry = KernelRegistry::FromOppRoot(opp.path());
  }
  Status Run(const KernelCall &c) { return LaunchKernels(c, *registry, cache, runtime); }
};

KernelSpec Spec(const std::string &dtype, bool ffts = true) {
  KernelSpec k;
  k.dtype = dtype;
  k.has_ffts = ffts;
  return k;
}

}  // namespace

TEST(Executor, ZeroElementsLaunchNothingAndAskNothing) {
  Fixture f({Spec("float32")});
  REQUIRE_OK(f.Run(Call("float32", 0)));
  CHECK_EQ(f.runtime.soc_calls.load(), 0);
  CHECK_EQ(f.runtime.loads.load(), 0);
  CHECK_EQ(f.runtime.launches.size(), size_t{0});
}

TEST(Executor, OneLaunchWithTheA2ArgumentBytes) {
  Fixture f({Spec("float32")});
  REQUIRE_OK(f.Run(Call("float32", 5000)));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
  const RecordedLaunch &l = f.runtime.launches[0];
  CHECK_EQ(l.block_dim, 2u);
  const std::vector<unsigned char> expected = {
      0x00, 0x10, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00,  // ffts from aclrtGetHardwareSyncAddr
      0, 0, 0, 0, 0, 0, 0, 0,                          // no lock
      0, 0, 0, 0, 0, 0, 0, 0,                          // no workspace
      0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // x
      0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,  // y
      0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00,  // z
      0x88, 0x13, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,  // n = 5000, gridX = 2
      0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // gridY, gridZ
  };
  CHECK_EQ(l.args, expected);
  CHECK_EQ(f.runtime.ffts_calls.load(), 1);
}

TEST(Executor, LayoutWithoutFftsNeverAsksForIt) {
  Fixture f({Spec("int32", false)});
  REQUIRE_OK(f.Run(Call("int32", 3)));
  CHECK_EQ(f.runtime.ffts_calls.load(), 0);
  REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
  CHECK_EQ(f.runtime.launches[0].args.size(), size_t{56});
  CHECK_EQ(ReadLe(f.runtime.launches[0].args, 40, 4), uint64_t{3});
}

TEST(Executor, MoreThanTwoToThe31ElementsAreChunked) {
  Fixture f({Spec("float16")});
  const int64_t n = (int64_t{1} << 31) + 5;
  REQUIRE_OK(f.Run(Call("float16", n)));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{3});
  const uint64_t offsets[] = {0, uint64_t{1} << 31, uint64_t{1} << 32};  // elements x 2 bytes
  const uint64_t counts[] = {uint64_t{1} << 30, uint64_t{1} << 30, 5};
  const uint32_t grids[] = {40, 40, 1};
  for (int i = 0; i < 3; ++i) {
    const auto &a = f.runtime.launches[i].args;
    CHECK_EQ(ReadLe(a, 24, 8), 0x0000100000000000ull + offsets[i]);
    CHECK_EQ(ReadLe(a, 32, 8), 0x0000200000000000ull + offsets[i]);
    CHECK_EQ(ReadLe(a, 40, 8), 0x0000300000000000ull + offsets[i]);
    CHECK_EQ(ReadLe(a, 48, 4), counts[i]);
    CHECK_EQ(ReadLe(a, 52, 4), uint64_t{grids[i]});
    CHECK_EQ(f.runtime.launches[i].block_dim, grids[i]);
  }
  CHECK_EQ(f.runtime.loads.load(), 1);
}

TEST(Executor, WorkspaceAndLocksAreAllocatedAndRefilledPerLaunch) {
  KernelSpec k = Spec("float32");
  k.workspace_size = 96;
  k.lock_num = 3;
  k.lock_init_val = -1;
  k.max_elements_per_launch = 4096 * 8;
  Fixture f({k});
  REQUIRE_OK(f.Run(Call("float32", 4096 * 8 + 1)));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{2});
  // Workspace for the largest grid (8 programs x 96 bytes), then 3 int64 locks.
  CHECK_EQ(f.runtime.workspace_requests, (std::vector<uint64_t>{768, 24}));
  const uint64_t ws = 0x7000000000ull + 0x100000ull, lock = 0x7000000000ull + 0x200000ull;
  CHECK_EQ(f.runtime.fills, (std::vector<std::string>{std::to_string(lock) + ":24:255@0",
                                                      std::to_string(lock) + ":24:255@1"}));
  for (const auto &l : f.runtime.launches) {
    CHECK_EQ(ReadLe(l.args, 8, 8), lock);
    CHECK_EQ(ReadLe(l.args, 16, 8), ws);
  }
  k.lock_init_val = 5;  // not a byte pattern: refused before any launch
  Fixture g({k});
  CHECK_EQ(g.Run(Call("float32", 10)).code(), Code::kUnsupported);
  CHECK_EQ(g.runtime.launches.size(), size_t{0});
}

TEST(Executor, RefusesUnknownSocNamingSocAndDtype) {
  Fixture f({Spec("float32")});
  f.runtime.soc = "Ascend310P3";
  const Status st = f.Run(Call("float32", 10));
  CHECK_EQ(st.code(), Code::kUnknownSoc);
  CHECK_TRUE(st.message().find("Ascend310P3") != std::string::npos);
  CHECK_TRUE(st.message().find("available: Ascend910B1") != std::string::npos);
  CHECK_TRUE(st.message().find("dtype float32") != std::string::npos);
  CHECK_EQ(f.runtime.launches.size(), size_t{0});
}

TEST(Executor, RefusesMissingDtypeAndIrOnlyKernels) {
  KernelSpec ir = Spec("int32");
  ir.has_binary = false;
  Fixture f({Spec("float32"), ir});
  CHECK_EQ(f.Run(Call("bfloat16", 10)).code(), Code::kMissingDType);
  CHECK_EQ(f.Run(Call("int32", 10)).code(), Code::kNoBinary);
  CHECK_EQ(f.runtime.loads.load(), 0);
}

TEST(Executor, VerifiesTheChecksumBeforeTheFirstLoad) {
  Fixture f({Spec("float32")});
  auto bin = test_support::FakeBinary("Ascend910B1", "float32");
  bin[0] ^= 0xFF;
  f.opp.Write("kernels/Ascend910B1/add_custom_flat_float32.npubin", bin);
  const Status st = f.Run(Call("float32", 10));
  CHECK_EQ(st.code(), Code::kChecksum);
  CHECK_TRUE(st.message().find("sha256") != std::string::npos);
  CHECK_EQ(f.runtime.loads.load(), 0);
}

TEST(Executor, AclFailuresNameTheCallCodeSocAndDtype) {
  Fixture f({Spec("float32")});
  f.runtime.load_error = 107000;
  Status st = f.Run(Call("float32", 10));
  CHECK_EQ(st.code(), Code::kRuntime);
  CHECK_EQ(st.api(), std::string("aclrtBinaryLoadFromData"));
  CHECK_EQ(st.message(),
           std::string("aclrtBinaryLoadFromData returned 107000 (SoC Ascend910B1, kernel variant flat, dtype float32)"));
  f.runtime.load_error = 0;
  f.runtime.launch_error = 507015;
  st = f.Run(Call("float32", 10));
  CHECK_EQ(st.api(), std::string("aclrtLaunchKernelWithHostArgs"));
  CHECK_EQ(st.message(), std::string("aclrtLaunchKernelWithHostArgs returned 507015 (SoC Ascend910B1, kernel variant "
                                     "flat, dtype float32)"));
}

TEST(Executor, EightThreadsLoadOncePerDeviceAndDtype) {
  Fixture f({Spec("float32"), Spec("int32")});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (!f.Run(Call(i % 2 ? "int32" : "float32", 100 + i)).ok()) ++failures;
      }
    });
  }
  for (auto &t : threads) t.join();
  CHECK_EQ(failures.load(), 0);
  CHECK_EQ(f.runtime.launches.size(), size_t{200});
  CHECK_EQ(f.runtime.loads.load(), 2);  // one per (device 0, dtype)
  f.runtime.device = 1;
  REQUIRE_OK(f.Run(Call("float32", 1)));
  CHECK_EQ(f.runtime.loads.load(), 3);  // another device loads its own copy
}

TEST(Executor, RunsFromSerializedKernelsWithoutTheFilesOnDisk) {
  Fixture f({Spec("float32")});
  auto bytes = f.registry->Serialize();
  REQUIRE_OK(bytes);
  std::remove((f.opp.path() + "/kernels/Ascend910B1/add_custom_flat_float32.npubin").c_str());
  std::remove((f.opp.path() + "/kernels/Ascend910B1/manifest.json").c_str());
  auto restored = KernelRegistry::FromSerialized(bytes.value());
  REQUIRE_OK(restored);
  KernelCache cache;
  REQUIRE_OK(LaunchKernels(Call("float32", 10), *restored.value(), cache, f.runtime));
  CHECK_EQ(f.runtime.launches.size(), size_t{1});
}

TEST(Executor, AScalarOperandRunsTheScalarKernelWithTheOperandsInEitherOrder) {
  Fixture f(test_support::AllVariants("float32"));
  REQUIRE_OK(f.Run(Call("float32", {5000}, {})));
  REQUIRE_OK(f.Run(Call("float32", {}, {5000})));  // x is the scalar: the kernel gets y first
  REQUIRE_EQ(f.runtime.launches.size(), size_t{2});
  for (size_t i = 0; i < 2; ++i) {
    const auto &a = f.runtime.launches[i].args;
    CHECK_EQ(a.size(), size_t{64});
    CHECK_EQ(ReadLe(a, 24, 8), i == 0 ? 0x0000100000000000ull : 0x0000200000000000ull);  // a: the full operand
    CHECK_EQ(ReadLe(a, 32, 8), i == 0 ? 0x0000200000000000ull : 0x0000100000000000ull);  // b: the scalar
    CHECK_EQ(ReadLe(a, 40, 8), 0x0000300000000000ull);
    CHECK_EQ(ReadLe(a, 48, 4), uint64_t{5000});
  }
  CHECK_EQ(f.runtime.loads.load(), 1);  // the scalar kernel, loaded once
}

TEST(Executor, ABiasAddRunsTheRowKernelWithExtentsAndStrides) {
  // [1024, 1024] + [1024]: rows 1024 and columns 1024, y one row; the widest block fits.
  Fixture f(test_support::AllVariants("float32"));
  REQUIRE_OK(f.Run(Call("float32", {1024, 1024}, {1024})));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
  const auto &a = f.runtime.launches[0].args;
  REQUIRE_EQ(a.size(), size_t{104});
  CHECK_EQ(ReadLe(a, 24, 8), 0x0000100000000000ull);
  CHECK_EQ(ReadLe(a, 32, 8), 0x0000200000000000ull);
  const uint64_t dims[] = {1, 1, 1, 1024, 1024};
  for (int k = 0; k < 5; ++k) CHECK_EQ(ReadLe(a, 48 + 4 * k, 4), dims[k]);
  for (int k = 0; k < 6; ++k) CHECK_EQ(ReadLe(a, 68 + 4 * k, 4), uint64_t{0});  // no outer dimension
  CHECK_EQ(ReadLe(a, 92, 4), uint64_t{40});  // 64 x 4 tiles of 16 x 256, capped at 40 programs
  CHECK_EQ(f.cache.loaded_count(), size_t{1});
  auto k = f.registry->Find("Ascend910B1", "AddCustom", "row_16x256", "float32");
  REQUIRE_OK(k);
  CHECK_EQ(f.runtime.launches[0].function, reinterpret_cast<void *>(static_cast<uintptr_t>(0xF00)));
}

TEST(Executor, AnNchwBiasRunsTheColumnKernelOverItsOuterDimension) {
  // [8, 64, 56, 56] + [1, 64, 1, 1] -> (8, 64, 3136): x strides (200704, 3136, 1), y (0, 1, 0).
  Fixture f(test_support::AllVariants("float16"));
  REQUIRE_OK(f.Run(Call("float16", {8, 64, 56, 56}, {1, 64, 1, 1})));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
  const auto &a = f.runtime.launches[0].args;
  const uint64_t dims[] = {1, 1, 8, 64, 3136};
  for (int k = 0; k < 5; ++k) CHECK_EQ(ReadLe(a, 48 + 4 * k, 4), dims[k]);
  const uint64_t strides[] = {0, 0, 200704, 0, 0, 0};  // a's outer strides, then b's
  for (int k = 0; k < 6; ++k) CHECK_EQ(ReadLe(a, 68 + 4 * k, 4), strides[k]);
}

TEST(Executor, BroadcastsBeyondTwoToThe31ElementsAreChunkedAlongTheReducedShape) {
  // [3, 2^30] + [3, 1] (float16): col pattern with rows 3, columns 2^30: one row per launch,
  // the output and x advancing by a row of 2^31 bytes, y by one element.
  Fixture f(test_support::AllVariants("float16"));
  const int64_t cols = int64_t{1} << 30;
  REQUIRE_OK(f.Run(Call("float16", {3, cols}, {3, 1})));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{3});
  for (uint64_t i = 0; i < 3; ++i) {
    const auto &a = f.runtime.launches[i].args;
    CHECK_EQ(ReadLe(a, 24, 8), 0x0000100000000000ull + (i << 31));
    CHECK_EQ(ReadLe(a, 32, 8), 0x0000200000000000ull + 2 * i);
    CHECK_EQ(ReadLe(a, 40, 8), 0x0000300000000000ull + (i << 31));
    CHECK_EQ(ReadLe(a, 60, 4), uint64_t{1});              // rows in this launch
    CHECK_EQ(ReadLe(a, 64, 4), static_cast<uint64_t>(cols));  // columns
  }
}

TEST(Executor, RefusesAMissingVariantNamingIt) {
  Fixture f({Spec("float32")});  // only the flat kernel
  const Status st = f.Run(Call("float32", {4, 5}, {5}));
  CHECK_EQ(st.code(), Code::kMissingDType);
  CHECK_TRUE(st.message().find("row_") != std::string::npos);
  CHECK_TRUE(st.message().find("rebuild the kernels") != std::string::npos);
  CHECK_EQ(f.runtime.launches.size(), size_t{0});
}

TEST(Executor, PrepareCallRefusesShapesItCannotComputeNamingBoth) {
  const OpDefinition &op = *FindOp("AddCustom");
  auto bad = PrepareCall(op, *op.FindDType("float32"), {2, 5}, {3});
  CHECK_EQ(bad.status().code(), Code::kBadShape);
  CHECK_TRUE(bad.status().message().find("[2, 5]") != std::string::npos);
  CHECK_TRUE(bad.status().message().find("[3]") != std::string::npos);
  auto deep = PrepareCall(op, *op.FindDType("float32"), {2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2});
  CHECK_EQ(deep.status().code(), Code::kUnsupported);
  CHECK_TRUE(deep.status().message().find("[2, 1, 2, 1, 2, 1]") != std::string::npos);
  CHECK_TRUE(deep.status().message().find("6 remain") != std::string::npos);
  CHECK_TRUE(PrepareCall(op, *op.FindDType("float32"), {2, 1, 2, 1, 2}, {1, 2, 1, 2, 1}).ok());  // 5: the bound
}

namespace {

// A recorder for MallocOutputTensor: what each output was asked for, and a distinct address.
class RecordingOutputs : public OutputAllocator {
 public:
  std::vector<std::string> requests;  // "<index>:as-shaped" or "<index>:one-element"
  int fail_at = -1;
  Result<uint64_t> AllocOutput(size_t index, OutputSize size) override {
    requests.push_back(std::to_string(index) + (size == OutputSize::kOneElement ? ":one-element" : ":as-shaped"));
    if (static_cast<int>(index) == fail_at) {
      return Status::ApiError("MallocOutputTensor", "returned null for output " + std::to_string(index));
    }
    return uint64_t{0x0000900000000000ull} + index;
  }
};

}  // namespace

// GE's eager context refuses a 0-byte MallocOutputTensor (its allocator wants a size > 0), so an
// empty output must be asked for as one element; then nothing else happens (docs/ge-library.md).
TEST(Executor, ZeroElementOutputsAreAllocatedAsOneElementAndNothingRuns) {
  Fixture f({Spec("float32")});
  KernelCall c = Call("float32", 0);
  RecordingOutputs outputs;
  REQUIRE_OK(AllocateOutputs(&c, outputs));
  CHECK_EQ(outputs.requests, std::vector<std::string>{"0:one-element"});
  CHECK_EQ(c.outputs, std::vector<uint64_t>{0x0000900000000000ull});
  REQUIRE_OK(f.Run(c));
  CHECK_EQ(f.runtime.soc_calls.load(), 0);
  CHECK_EQ(f.runtime.loads.load(), 0);
  CHECK_EQ(f.runtime.workspace_requests.size(), size_t{0});
  CHECK_EQ(f.runtime.launches.size(), size_t{0});
}

TEST(Executor, OutputsWithElementsAreAllocatedAsShapedAndLaunchedInto) {
  Fixture f({Spec("bfloat16")});
  KernelCall c = Call("bfloat16", 1);
  RecordingOutputs outputs;
  REQUIRE_OK(AllocateOutputs(&c, outputs));
  CHECK_EQ(outputs.requests, std::vector<std::string>{"0:as-shaped"});
  REQUIRE_OK(f.Run(c));
  REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
  CHECK_EQ(ReadLe(f.runtime.launches[0].args, 40, 8), uint64_t{0x0000900000000000ull});  // z slot
}

TEST(Executor, AFailedOutputAllocationNamesTheOutputDtypeAndCount) {
  KernelCall c = Call("int32", 0);
  RecordingOutputs outputs;
  outputs.fail_at = 0;
  const Status st = AllocateOutputs(&c, outputs);
  CHECK_FALSE(st.ok());
  CHECK_TRUE(st.code() == Code::kRuntime);
  CHECK_EQ(st.api(), std::string("MallocOutputTensor"));
  CHECK_EQ(st.message(), std::string("MallocOutputTensor returned null for output 0 (output 0, dtype int32, 0 elements)"));
  CHECK_TRUE(OutputAllocation(0) == OutputSize::kOneElement);
  CHECK_TRUE(OutputAllocation(1) == OutputSize::kAsShaped);
  CHECK_TRUE(OutputAllocation(int64_t{1} << 40) == OutputSize::kAsShaped);
}

// --- Device lifecycle (finding 4) and the program cap (finding 1), through the recording
// runtime: a reset device, a re-initialised runtime, a handle kept across a reset.

namespace {

// The recording runtime with ACL's lifecycle: handles belong to the context they were loaded
// in and die with aclrtResetDevice; a launch of a dead handle fails as ACL does (107017,
// ACL_ERROR_RT_INVALID_HANDLE).
class LifecycleRuntime : public RecordingRuntime {
 public:
  uint64_t context = 0xC0;
  int64_t cores = 0;         // the vector-core count answered (0: the device does not say)
  int64_t ai_cores = 0;      // the AI-core count answered (0: the device does not say)
  std::vector<std::string> core_queries;  // "vector", "ai": in the order asked
  bool loads_dead = false;   // every load gives a handle that is already invalid
  std::vector<uint64_t> loaded_in;
  std::set<void *> alive;
  int failed_launches = 0;

  void ResetDevice() { alive.clear(); }  // aclrtResetDevice: every handle of the device dies
  int64_t VectorCoreCount(int32_t) override {
    core_queries.push_back("vector");
    return cores;
  }
  int64_t AiCoreCount(int32_t) override {
    core_queries.push_back("ai");
    return ai_cores;
  }
  Result<uint64_t> ContextId() override { return context; }
  bool IsInvalidHandle(const Status &s) override { return s.message().find("returned 107017") != std::string::npos; }
  Status LoadKernel(int32_t, const KernelBinary &, LoadedKernel *out) override {
    ++loads;
    loaded_in.push_back(context);
    out->function = reinterpret_cast<void *>(static_cast<uintptr_t>(0x100000 * (context & 0xFF) + loads.load()));
    if (!loads_dead) alive.insert(out->function);
    return Status::Ok();
  }
  Status Launch(const LoadedKernel &k, uint32_t block_dim, std::vector<uint8_t> *args) override {
    if (alive.count(k.function) == 0) {
      ++failed_launches;
      return Status::ApiError("aclrtLaunchKernelWithHostArgs", "returned 107017");
    }
    return RecordingRuntime::Launch(k, block_dim, args);
  }
};

struct LifecycleFixture {
  test_support::TempDir opp;
  std::shared_ptr<KernelRegistry> registry;
  KernelCache cache;
  LifecycleRuntime runtime;
  explicit LifecycleFixture(bool every_variant = false) {
    test_support::WriteOppKernels(opp, "Ascend910B1",
                                  every_variant ? test_support::AllVariants("float32") : std::vector<KernelSpec>{Spec("float32")});
    registry = KernelRegistry::FromOppRoot(opp.path());
  }
  Status Run(int64_t n = 5000) { return LaunchKernels(Call("float32", n), *registry, cache, runtime); }
};

}  // namespace

TEST(DeviceLifecycle, ANewContextAfterAResetLoadsAgain) {
  LifecycleFixture f;
  REQUIRE_OK(f.Run());
  REQUIRE_OK(f.Run());
  CHECK_EQ(f.runtime.loads.load(), 1);  // load once ...
  f.runtime.ResetDevice();              // aclrtResetDevice, then aclrtSetDevice: a new context
  f.runtime.context = 0xC1;
  REQUIRE_OK(f.Run());                  // ... and again in the new context, before any launch
  CHECK_EQ(f.runtime.loads.load(), 2);
  CHECK_EQ(f.runtime.failed_launches, 0);
  CHECK_EQ(f.runtime.loaded_in, (std::vector<uint64_t>{0xC0, 0xC1}));
  CHECK_EQ(f.runtime.launches.size(), size_t{3});
}

TEST(DeviceLifecycle, AStaleHandleUnderAReusedContextIsReloadedOnceAndRetried) {
  LifecycleFixture f;
  REQUIRE_OK(f.Run());
  f.runtime.ResetDevice();  // aclFinalize + aclInit: the new context got the old address
  REQUIRE_OK(f.Run());
  CHECK_EQ(f.runtime.failed_launches, 1);
  CHECK_EQ(f.runtime.loads.load(), 2);
  CHECK_EQ(f.runtime.launches.size(), size_t{2});
  REQUIRE_OK(f.Run());  // the reloaded handle is kept
  CHECK_EQ(f.runtime.loads.load(), 2);
}

TEST(DeviceLifecycle, AHandleStillInvalidAfterOneReloadIsTheError) {
  LifecycleFixture f;
  f.runtime.loads_dead = true;
  const Status st = f.Run();
  REQUIRE_TRUE(!st.ok());
  CHECK_EQ(f.runtime.loads.load(), 2);  // once, then one reload: no loop
  CHECK_EQ(f.runtime.failed_launches, 2);
  CHECK_TRUE(st.message().find("returned 107017") != std::string::npos);
  CHECK_TRUE(st.message().find("after reloading the kernel once") != std::string::npos);
  CHECK_TRUE(st.message().find("SoC Ascend910B1") != std::string::npos);
}

TEST(DeviceLifecycle, ProgramsPerLaunchAreCappedByTheDevicesOwnVectorCores) {
  // 100 blocks of work; the manifest says 40 programs (Spec's max_programs). A device that
  // reports its vector cores is not asked for its AI cores.
  for (const auto &c : std::vector<std::pair<int64_t, uint32_t>>{{48, 48}, {24, 24}, {1, 1}}) {
    LifecycleFixture f;
    f.runtime.cores = c.first;
    f.runtime.ai_cores = 7;  // never used while the vector count is known
    REQUIRE_OK(f.Run(4096 * 100));
    REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
    CHECK_EQ(f.runtime.launches[0].block_dim, c.second);
    CHECK_EQ(ReadLe(f.runtime.launches[0].args, 52, 4), uint64_t{c.second});  // gridX
    CHECK_EQ(f.runtime.core_queries, std::vector<std::string>{"vector"});
  }
}

TEST(DeviceLifecycle, AnUnknownVectorCoreCountFallsBackToTwiceTheAiCoresThenToTheManifest) {
  // ACL answers ACL_DEV_ATTR_VECTOR_CORE_NUM with success and 0 where the driver has no count
  // (the runtime gives 0 for a failed query too). triton-ascend sizes grids as 2 x AI cores;
  // with neither count the manifest's 40 stays. Never a refusal. 100 blocks of work.
  struct Case {
    int64_t vector_cores, ai_cores;
    uint32_t grid;
    std::vector<std::string> asked;
  };
  const std::vector<Case> cases = {
      {0, 24, 48, {"vector", "ai"}},   // Ascend910B1: 24 AI cores, 48 vector cores
      {0, 20, 40, {"vector", "ai"}},   // Ascend910B4
      {0, 10, 20, {"vector", "ai"}},   // fewer than the manifest's 40
      {0, 0, 40, {"vector", "ai"}},    // neither known: the manifest's max_programs
      {-1, -3, 40, {"vector", "ai"}},  // nonsense counts are unknown too
  };
  for (const Case &c : cases) {
    LifecycleFixture f;
    f.runtime.cores = c.vector_cores;
    f.runtime.ai_cores = c.ai_cores;
    REQUIRE_OK(f.Run(4096 * 100));
    REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
    CHECK_EQ(f.runtime.launches[0].block_dim, c.grid);
    CHECK_EQ(ReadLe(f.runtime.launches[0].args, 52, 4), uint64_t{c.grid});  // gridX
    CHECK_EQ(f.runtime.core_queries, c.asked);
  }
}

TEST(DeviceLifecycle, ABoardServedByAnotherSocsKernelsUsesTheDevicesOwnCount) {
  // Each count on a device of its own (what a device reports is asked once per device and
  // context, below).
  struct Case {
    int64_t vector_cores, ai_cores;
    uint32_t grid;
  };
  for (const Case &c : std::vector<Case>{{36, 0, 36}, {0, 16, 32}, {0, 0, 40}}) {
    LifecycleFixture f(/*every_variant=*/true);
    REQUIRE_OK(f.registry->Serve("Ascend910B4-1", "Ascend910B1", "AddCustom", "float32"));
    f.runtime.soc = "Ascend910B4-1";
    f.runtime.cores = c.vector_cores;  // 36: the board's own count, not B1's manifest
    f.runtime.ai_cores = c.ai_cores;   // the driver cannot say: 2 x 16 AI cores; neither: B1's 40
    REQUIRE_OK(f.Run(4096 * 100));
    REQUIRE_EQ(f.runtime.launches.size(), size_t{1});
    CHECK_EQ(f.runtime.launches.back().block_dim, c.grid);
  }
}

TEST(DeviceLifecycle, WhatADeviceReportsIsAskedOncePerDeviceAndContext) {
  // The SoC, the vector (and AI) cores and the ffts address cannot change while a context
  // lives: the first call asks, the steady ones ask nothing, a new context asks again, and
  // another device answers for itself.
  LifecycleFixture f;
  f.runtime.cores = 0;
  f.runtime.ai_cores = 20;  // unknown vector cores: both questions on the first call
  for (int i = 0; i < 5; ++i) REQUIRE_OK(f.Run(4096 * 100));
  CHECK_EQ(f.runtime.soc_calls.load(), 1);
  CHECK_EQ(f.runtime.ffts_calls.load(), 1);
  CHECK_EQ(f.runtime.core_queries, (std::vector<std::string>{"vector", "ai"}));
  for (const auto &l : f.runtime.launches) CHECK_EQ(l.block_dim, 40u);
  CHECK_EQ(ReadLe(f.runtime.launches.back().args, 0, 8), uint64_t{0x00000000FF001000ull});  // the kept ffts
  f.runtime.ResetDevice();
  f.runtime.context = 0xC1;
  f.runtime.ai_cores = 12;
  REQUIRE_OK(f.Run(4096 * 100));
  CHECK_EQ(f.runtime.soc_calls.load(), 2);
  CHECK_EQ(f.runtime.launches.back().block_dim, 24u);  // the new context's answer
  f.runtime.device = 3;
  f.runtime.cores = 48;
  REQUIRE_OK(f.Run(4096 * 100));
  REQUIRE_OK(f.Run(4096 * 100));
  CHECK_EQ(f.runtime.soc_calls.load(), 3);
  CHECK_EQ(f.runtime.core_queries, (std::vector<std::string>{"vector", "ai", "vector", "ai", "vector"}));
  CHECK_EQ(f.runtime.launches.back().block_dim, 48u);
  CHECK_EQ(f.cache.loaded_count(), size_t{3});
}

TEST(DeviceLifecycle, AFailedQueryIsNotKeptAndAskedAgain) {
  // A failing aclrtGetSocName refuses the call (SoC unknown) and is asked again next time.
  LifecycleFixture f;
  struct Failing : LifecycleRuntime {
    int fail = 1;
    Result<std::string> SocName() override {
      ++soc_calls;
      if (fail-- > 0) return Status::ApiError("aclrtGetSocName", "returned no name (is a device set?)");
      return std::string("Ascend910B1");
    }
  } runtime;
  runtime.cores = 48;
  const Status first = LaunchKernels(Call("float32", 5000), *f.registry, f.cache, runtime);
  REQUIRE_TRUE(!first.ok());
  CHECK_TRUE(first.message().find("aclrtGetSocName returned no name (is a device set?) (SoC unknown,") == 0);
  REQUIRE_OK(LaunchKernels(Call("float32", 5000), *f.registry, f.cache, runtime));
  CHECK_EQ(runtime.soc_calls.load(), 2);
  CHECK_EQ(runtime.launches.size(), size_t{1});
}

