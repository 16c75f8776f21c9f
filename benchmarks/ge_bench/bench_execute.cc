// The host cost of AddCustom's Execute in the CANN-free core: nanoseconds per call and heap
// allocations per call, with a recording runtime in place of ACL (no device, no CANN).
//
// Per call, as ge_ops/cann/kernel_op.cc runs it after reading the tensors from GE: the dtype
// check, the broadcast and kernel variant choice (PrepareCall), the output allocation
// decision, then LaunchKernels (device and context, what the device reports, kernel lookup in
// the registry, the load-once cache, the launch plan, the packed host arguments, the launch).
// Every allocation is counted by the replaced global operator new below, and every question
// to the runtime: about the device (SoC, vector and AI cores, ffts address: asked once per
// device and context, kernel_cache.h DeviceFacts) and which device and context the thread is
// on (asked every call). Scenarios:
//   steady        float32 [8, 2048] + [8, 2048] (the flat kernel), one launch; the caller's
//                 inputs and KernelCall are reused (PrepareCall into it)
//   steady_broadcast float32 [8, 2048] + [2048] (a row variant: extents and strides in the
//                 host arguments), one launch, reused as in "steady"
//   steady_chunked float16 2^31 + 5 elements: three launches of at most 2^30 elements
//   steady_vector_cores_unknown  float32 [64, 8192] (128 blocks) on a device whose vector-core
//                 count is 0 (ACL's answer where the driver has none): 2 x 24 AI cores = 48
//   steady_core_counts_unknown   the same with no AI-core count either: the manifest's 40
//   adapter        as "steady", plus what kernel_op.cc's Execute does around the core: the
//                  dtype names and one dims list per input read into its per-thread lists,
//                  the call prepared in place (PrepareCall's list form), the node's attribute
//                  words (none for AddCustom) (adapter_broadcast: the same for [8, 2048] + [2048])
//   adapter_fresh_lists  the adapter before its per-thread lists: inputs, addresses and the
//                  KernelCall built anew on every call (the adapter's share, reported apart)
//   reload_every_call  a fresh registry and cache each call: manifest read and parsed,
//                  npubin read and its sha256 checked, "loaded" again (what a library without
//                  the load-once cache pays; the official sample reads and loads the npubin
//                  on every call), with every variant of 4 dtypes in the manifest (44 kernels)
//                  and 32 KiB npubins
// Prints one JSON line per scenario, then "bench: ok" (exit 0) or the failed self-check
// (exit 1). benchmarks/bench_ge_execute.py builds this binary and reads its lines.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "counting_new.h"
#include "test_support.h"
#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/kernel_cache.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/op_checks.h"
#include "tf_ge_custom_core/outputs.h"

using namespace tf_ge_custom::core;

namespace {

const char kSoc[] = "Ascend910B1";

// ACL and the execution context, recorded: what the launches were asked, nothing copied.
class RecordingRuntime : public DeviceRuntime {
 public:
  std::string soc = kSoc;
  uint64_t launches = 0, loads = 0, arg_checksum = 0;
  int64_t last_num_elements = -1;
  uint32_t last_block_dim = 0;
  size_t last_args_bytes = 0;

  // What the device is asked (aclrtGetSocName, aclrtGetDeviceInfo, aclrtGetHardwareSyncAddr)
  // and which device and context the thread is on (aclrtGetDevice, aclrtGetCurrentContext).
  uint64_t device_queries = 0, identity_queries = 0;
  Result<std::string> SocName() override {
    ++device_queries;
    return soc;
  }
  Result<int32_t> DeviceId() override {
    ++identity_queries;
    return 0;
  }
  Result<uint64_t> HardwareSyncAddress() override {
    ++device_queries;
    return uint64_t{0xFF001000ull};
  }
  Result<uint64_t> AllocWorkspace(uint64_t bytes) override { return uint64_t{0x7000000000ull}; }
  Status FillBytes(uint64_t, uint64_t, uint8_t) override { return Status::Ok(); }
  // As ge_ops/cann/acl_runtime.cc answers them (aclrtGetDeviceInfo, aclrtGetCurrentContext);
  // vector_cores 0 is a driver that cannot say (ACL's success with 0): twice the AI cores.
  int64_t vector_cores = 48, ai_cores = 24;
  int64_t VectorCoreCount(int32_t) override {
    ++device_queries;
    return vector_cores;
  }
  int64_t AiCoreCount(int32_t) override {
    ++device_queries;
    return ai_cores;
  }
  Result<uint64_t> ContextId() override {
    ++identity_queries;
    return uint64_t{0xC0DE0000ull};
  }
  Status Launch(const LoadedKernel &kernel, uint32_t block_dim, std::vector<uint8_t> *args) override {
    ++launches;
    last_block_dim = block_dim;
    last_args_bytes = args->size();
    // After the six 8-byte slots of the A2/A3 layouts (test_support::ArgsJson): the flat
    // kernels' int32 n_elements (a 64-byte struct), or the tiled ones' 5 int32 extents (104).
    const int extents = args->size() == 104 ? 5 : 1;
    int64_t n = 1;
    for (int k = 0; k < extents; ++k) {
      int32_t d = 0;
      std::memcpy(&d, args->data() + 48 + 4 * k, sizeof(d));
      n *= d;
    }
    last_num_elements = n;
    for (uint8_t b : *args) arg_checksum = arg_checksum * 31 + b;
    return Status::Ok();
  }
  Status LoadKernel(int32_t, const KernelBinary &kernel, LoadedKernel *out) override {
    ++loads;
    out->binary = const_cast<uint8_t *>(kernel.bytes->data());
    out->function = out->binary;
    return Status::Ok();
  }
};

// GE's MallocOutputTensor, recorded: one fixed device address.
class FixedOutputs : public OutputAllocator {
 public:
  Result<uint64_t> AllocOutput(size_t, OutputSize) override { return uint64_t{0x0000300000000000ull}; }
};

// What kernel_op.cc's Execute hands the core, per input: GE's dtype as the op table names it
// (DTypeName returns a std::string made from a literal), and the storage shape's dims.
std::vector<TensorInfo> InputsAsTheAdapterBuildsThem(const char *dtype, const std::vector<int64_t> &x,
                                                    const std::vector<int64_t> &y) {
  std::vector<TensorInfo> inputs;
  for (const std::vector<int64_t> *shape : {&x, &y}) {
    std::vector<int64_t> dims;
    for (int64_t d : *shape) dims.push_back(d);
    inputs.push_back({std::string(dtype), dims});
  }
  return inputs;
}

// Execute after the adapter has read the tensors: the dtype check, the broadcast and variant
// choice into *call (its addresses kept), the outputs, LaunchKernels.
bool ExecuteInCore(const OpDefinition &op, const std::vector<TensorInfo> &inputs, KernelCall *call,
                   KernelRegistry &registry, KernelCache &cache, RecordingRuntime &runtime, FixedOutputs &outputs) {
  auto dtype = CheckDTypes(op, inputs);
  if (!dtype.ok()) return false;
  if (!PrepareCall(op, *dtype.value(), inputs[0].dims, inputs[1].dims, call).ok()) return false;
  if (!AllocateOutputs(call, outputs).ok()) return false;
  const Status st = LaunchKernels(*call, registry, cache, runtime);
  if (!st.ok()) {
    std::fprintf(stderr, "LaunchKernels: %s\n", st.message().c_str());
    return false;
  }
  return true;
}

// A node without attributes, as GE's RuntimeAttrs of an AddCustom node reads (kernel_op.cc).
struct NoAttrs : AttrValues {
  const float *Float(size_t) const override { return nullptr; }
  const int64_t *Int(size_t) const override { return nullptr; }
};

KernelCall CallWithInputs(const OpDefinition &op) {
  KernelCall call;
  call.op = &op;
  call.inputs = {0x0000100000000000ull, 0x0000200000000000ull};
  call.outputs.reserve(op.outputs.size());
  return call;
}

struct Scenario {
  const char *name;
  const char *dtype;
  std::vector<int64_t> x, y;
  enum Kind { kSteady, kAdapter, kAdapterFresh, kReloadEveryCall } kind;
  int64_t vector_cores = 48, ai_cores = 24;  // what the device reports (0: cannot say)
  uint32_t want_grid = 0;                    // the programs of the last launch (0: not checked)
};

struct Measured {
  double ns_median = 0, ns_min = 0, allocations_per_call = 0, bytes_per_call = 0;
  double device_queries_per_call = 0, identity_queries_per_call = 0;
  uint64_t first_call_device_queries = 0;
  uint64_t first_call_allocations = 0, calls = 0, launches_per_call = 0, loads = 0;
  uint32_t last_block_dim = 0;
  int64_t last_num_elements = 0;
  size_t last_args_bytes = 0;
  bool ok = true;
};

using Clock = std::chrono::steady_clock;

Measured Run(const Scenario &s, const std::string &opp_root, int rounds, double round_seconds) {
  const OpDefinition &op = *FindOp("AddCustom");
  RecordingRuntime runtime;
  runtime.vector_cores = s.vector_cores;
  runtime.ai_cores = s.ai_cores;
  FixedOutputs outputs;
  std::shared_ptr<KernelRegistry> registry = KernelRegistry::FromOppRoot(opp_root);
  KernelCache cache;
  const std::vector<TensorInfo> prepared = InputsAsTheAdapterBuildsThem(s.dtype, s.x, s.y);
  KernelCall reused = CallWithInputs(op);
  std::vector<TensorInfo> scratch_inputs;  // the adapter's per-thread scratch (kAdapter)
  std::vector<std::vector<int64_t>> scratch_shapes;
  KernelCall scratch_call;
  const NoAttrs no_attrs;

  auto once = [&]() -> bool {
    switch (s.kind) {
      case Scenario::kSteady:
        return ExecuteInCore(op, prepared, &reused, *registry, cache, runtime, outputs);
      case Scenario::kAdapterFresh: {
        // The adapter before its per-thread scratch: the inputs and addresses read into fresh
        // lists, a fresh KernelCall, on every call.
        const std::vector<TensorInfo> inputs = InputsAsTheAdapterBuildsThem(s.dtype, s.x, s.y);
        std::vector<uint64_t> addresses;
        addresses.push_back(0x0000100000000000ull);
        addresses.push_back(0x0000200000000000ull);
        auto dtype = CheckDTypes(op, inputs);
        if (!dtype.ok()) return false;
        auto prepared = PrepareCall(op, *dtype.value(), inputs[0].dims, inputs[1].dims);
        if (!prepared.ok()) return false;
        KernelCall call = std::move(prepared).value();
        call.inputs = addresses;
        return AllocateOutputs(&call, outputs).ok() && LaunchKernels(call, *registry, cache, runtime).ok();
      }
      case Scenario::kAdapter: {
        // kernel_op.cc's Execute as written: the dtype names and one dims list per input read
        // into kept lists (the dims element by element, as from a gert::Shape), the kept call
        // prepared in place by PrepareCall's list form, the node's attribute words.
        scratch_inputs.resize(2);
        scratch_shapes.resize(2);
        scratch_call.inputs.resize(2);
        const std::vector<int64_t> *shapes[2] = {&s.x, &s.y};
        for (size_t i = 0; i < 2; ++i) {
          if (scratch_inputs[i].dtype != s.dtype) scratch_inputs[i].dtype = s.dtype;  // SetDTypeName
          scratch_shapes[i].clear();
          for (int64_t d : *shapes[i]) scratch_shapes[i].push_back(d);
          scratch_call.inputs[i] = i == 0 ? 0x0000100000000000ull : 0x0000200000000000ull;
        }
        auto dtype = CheckDTypes(op, scratch_inputs);
        if (!dtype.ok()) return false;
        if (!PrepareCall(op, *dtype.value(), scratch_shapes, &scratch_call).ok()) return false;
        if (!SetAttrWords(op, no_attrs, &scratch_call.attrs).ok()) return false;
        return AllocateOutputs(&scratch_call, outputs).ok() &&
               LaunchKernels(scratch_call, *registry, cache, runtime).ok();
      }
      case Scenario::kReloadEveryCall: {
        std::shared_ptr<KernelRegistry> fresh = KernelRegistry::FromOppRoot(opp_root);
        KernelCache fresh_cache;
        return ExecuteInCore(op, prepared, &reused, *fresh, fresh_cache, runtime, outputs);
      }
    }
    return false;
  };

  Measured m;
  const uint64_t a0 = bench::CountedAllocations();
  m.ok = once();
  m.first_call_allocations = bench::CountedAllocations() - a0;
  m.first_call_device_queries = runtime.device_queries;
  m.launches_per_call = runtime.launches;
  for (int i = 0; i < 200 && m.ok; ++i) m.ok = once();  // warm-up

  // Calls per round: enough for round_seconds.
  uint64_t per_round = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < per_round; ++i) once();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (seconds >= round_seconds / 4 || per_round >= (uint64_t{1} << 26)) {
      per_round = std::max<uint64_t>(1, static_cast<uint64_t>(per_round * (round_seconds / std::max(seconds, 1e-9))));
      break;
    }
    per_round *= 4;
  }
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(std::max(rounds, 0)));  // no allocation of the bench's own in the window
  const uint64_t allocations_before = bench::CountedAllocations(), bytes_before = bench::CountedBytes();
  const uint64_t device_before = runtime.device_queries, identity_before = runtime.identity_queries;
  for (int r = 0; r < rounds && m.ok; ++r) {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < per_round; ++i) m.ok &= once();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / per_round);
    m.calls += per_round;
  }
  m.allocations_per_call = static_cast<double>(bench::CountedAllocations() - allocations_before) / std::max<uint64_t>(1, m.calls);
  m.bytes_per_call = static_cast<double>(bench::CountedBytes() - bytes_before) / std::max<uint64_t>(1, m.calls);
  m.device_queries_per_call =
      static_cast<double>(runtime.device_queries - device_before) / std::max<uint64_t>(1, m.calls);
  m.identity_queries_per_call =
      static_cast<double>(runtime.identity_queries - identity_before) / std::max<uint64_t>(1, m.calls);
  std::sort(ns.begin(), ns.end());
  m.ns_median = ns.empty() ? 0 : ns[ns.size() / 2];
  m.ns_min = ns.empty() ? 0 : ns.front();
  m.loads = runtime.loads;
  m.last_num_elements = runtime.last_num_elements;
  m.last_args_bytes = runtime.last_args_bytes;
  m.last_block_dim = runtime.last_block_dim;
  return m;
}

double ArgDouble(int argc, char **argv, const char *name, double fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atof(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char **argv) {
  // --rounds N (default 15), --round-seconds S (default 0.05): --rounds 3 --round-seconds 0.01 is quick.
  const int rounds = static_cast<int>(ArgDouble(argc, argv, "--rounds", 15));
  const double round_seconds = ArgDouble(argc, argv, "--round-seconds", 0.05);

  test_support::TempDir opp;
  std::vector<test_support::KernelSpec> kernels;
  for (const char *dtype : {"float32", "float16", "bfloat16", "int32"}) {
    for (test_support::KernelSpec k : test_support::AllVariants(dtype)) {
      // a 32 KiB npubin defining its entry: what is read, hashed and checked on a reload
      std::string code(32 * 1024, '\0');
      for (size_t i = 0; i < code.size(); ++i) {
        code[i] = static_cast<char>(i * 131 + std::strlen(dtype) + 7 * k.variant.size());
      }
      k.binary = test_support::ElfObject({{test_support::EntryName(k.variant, dtype)}}, code);
      kernels.push_back(k);
    }
  }
  test_support::WriteOppKernels(opp, kSoc, kernels);

  const int64_t chunked = (int64_t{1} << 31) + 5;
  const std::vector<Scenario> scenarios = {
      {"steady", "float32", {8, 2048}, {8, 2048}, Scenario::kSteady},
      {"steady_broadcast", "float32", {8, 2048}, {2048}, Scenario::kSteady},
      {"steady_chunked", "float16", {chunked}, {chunked}, Scenario::kSteady},
      {"steady_vector_cores_unknown", "float32", {64, 8192}, {64, 8192}, Scenario::kSteady, 0, 24, 48},
      {"steady_core_counts_unknown", "float32", {64, 8192}, {64, 8192}, Scenario::kSteady, 0, 0, 40},
      {"adapter", "float32", {8, 2048}, {8, 2048}, Scenario::kAdapter},
      {"adapter_broadcast", "float32", {8, 2048}, {2048}, Scenario::kAdapter},
      {"adapter_fresh_lists", "float32", {8, 2048}, {8, 2048}, Scenario::kAdapterFresh},
      {"reload_every_call", "float32", {8, 2048}, {8, 2048}, Scenario::kReloadEveryCall},
  };
  bool ok = true;
  for (const Scenario &s : scenarios) {
    const Measured m = Run(s, opp.path(), rounds, round_seconds);
    // Self-checks against numbers worked out by hand: [8, 2048] (also with a [2048] row
    // broadcast) is one launch of 16384 elements, [64, 8192] one of 524288 elements in
    // programs of the grid asked; 2^31 + 5 elements make launches of 2^30, 2^30 and 5
    // elements; the load-once cache loads once, a fresh cache on every call.
    const bool is_chunked = s.x.size() == 1;
    const int64_t elements = is_chunked ? chunked : s.x[0] * s.x[1];
    const uint64_t want_launches = is_chunked ? 3 : 1;
    const int64_t want_last = is_chunked ? 5 : elements;
    const size_t want_args_bytes = s.x == s.y ? 64 : 104;  // the flat kernel, or a tiled variant
    const bool checks = m.ok && m.launches_per_call == want_launches && m.last_num_elements == want_last &&
                        m.last_args_bytes == want_args_bytes &&
                        (s.want_grid == 0 || m.last_block_dim == s.want_grid) &&
                        (s.kind == Scenario::kReloadEveryCall ? m.loads > 1 : m.loads == 1) &&
                        // the device is asked once per device and context, never on a steady call
                        (s.kind == Scenario::kReloadEveryCall || m.device_queries_per_call == 0);
    ok &= checks;
    std::printf(
        "{\"scenario\": \"%s\", \"dtype\": \"%s\", \"elements\": %lld, \"launches_per_call\": %llu, "
        "\"ns_per_call_median\": %.1f, \"ns_per_call_min\": %.1f, \"allocations_per_call\": %.3f, "
        "\"bytes_per_call\": %.1f, \"first_call_allocations\": %llu, \"loads\": %llu, \"calls\": %llu, "
        "\"rounds\": %d, \"args_bytes\": %zu, \"block_dim\": %u, \"device_queries_per_call\": %.3f, "
        "\"first_call_device_queries\": %llu, \"identity_queries_per_call\": %.3f, \"checks\": %s}\n",
        s.name, s.dtype, static_cast<long long>(elements),
        static_cast<unsigned long long>(m.launches_per_call), m.ns_median, m.ns_min, m.allocations_per_call,
        m.bytes_per_call, static_cast<unsigned long long>(m.first_call_allocations),
        static_cast<unsigned long long>(m.loads), static_cast<unsigned long long>(m.calls), rounds,
        m.last_args_bytes, m.last_block_dim, m.device_queries_per_call,
        static_cast<unsigned long long>(m.first_call_device_queries), m.identity_queries_per_call,
        checks ? "true" : "false");
    std::fflush(stdout);
  }
  std::printf(ok ? "bench: ok\n" : "bench: a self-check failed\n");
  return ok ? 0 : 1;
}
