// The host cost of AddCustom's DeclareLaunchArgs in the CANN-free core: nanoseconds per call
// and heap allocations per call, with a recording stand-in for GE's annotated context (no
// device, no CANN). GE calls DeclareLaunchArgs once per node when it builds a static graph's
// model; at run time it refreshes the declared address words itself and calls nothing of this
// library, so this is the whole host cost of the sunk path.
//
// Per call, as ge_ops/cann/kernel_op.cc runs it after reading the tensors from GE: the dtype
// check, PrepareCall into the kept call, then DeclareLaunch into the kept declaration (kernel
// lookup in the registry, the launch plan, the packed struct cut into
// argument words). Scenarios (the benchmark's own shapes):
//   declare            float32 [4096, 4096] + [4096, 4096]: the flat kernel, 8 words
//   declare_broadcast  float32 [4096, 4096] + [4096]: a row variant, 13 words
//   declare_workspace  as "declare" with a kernel asking 512 bytes of workspace per program
// Prints one JSON line per scenario, then "bench: ok" (exit 0) or the failed self-check (exit 1).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "counting_new.h"
#include "test_support.h"
#include "tf_ge_custom_core/declared_launch.h"
#include "tf_ge_custom_core/op_checks.h"

using namespace tf_ge_custom::core;

namespace {

const char kSoc[] = "Ascend910B1";

// GE's MallocWorkSpace, recorded.
class RecordingWorkspaces : public DeclarationRuntime {
 public:
  uint64_t requests = 0, last_bytes = 0;
  Result<Workspace> AllocWorkspace(uint64_t bytes) override {
    ++requests;
    last_bytes = bytes;
    Workspace w;
    w.address = 0x7000000000ull;
    return w;
  }
};

struct Scenario {
  const char *name;
  std::vector<int64_t> x, y;
  int64_t workspace_size;
};

struct Measured {
  bool ok = false;
  double ns_median = 0, ns_min = 0, allocations_per_call = 0;
  uint64_t first_call_allocations = 0, calls = 0;
  size_t words = 0;
  uint32_t block_dim = 0;
  uint64_t workspace_bytes = 0;
};

Measured Run(const Scenario &s, int rounds, double round_seconds) {
  using Clock = std::chrono::steady_clock;
  test_support::TempDir opp;
  std::vector<test_support::KernelSpec> kernels = test_support::AllVariants("float32");
  for (auto &k : kernels) k.workspace_size = s.workspace_size;
  test_support::WriteOppKernels(opp, kSoc, kernels);
  auto registry = KernelRegistry::FromOppRoot(opp.path());
  const OpDefinition &op = *FindOp("AddCustom");
  RecordingWorkspaces workspaces;
  const std::string soc = kSoc;  // the adapter's copy of Compile's SoC
  std::vector<TensorInfo> inputs(2);
  std::vector<std::vector<int64_t>> shapes(2);
  KernelCall call;
  LaunchDeclaration d;
  const auto once = [&]() -> bool {
    for (size_t i = 0; i < 2; ++i) {  // kernel_op.cc: names and one dims list per input, kept
      if (inputs[i].dtype != "float32") inputs[i].dtype = "float32";
      shapes[i].clear();
      for (int64_t v : i == 0 ? s.x : s.y) shapes[i].push_back(v);
    }
    call.inputs.resize(2);
    call.inputs[0] = 0x0000100000000000ull;
    call.inputs[1] = 0x0000200000000000ull;
    call.outputs.resize(1);
    call.outputs[0] = 0x0000300000000000ull;
    auto dtype = CheckDTypes(op, inputs);
    if (!dtype.ok()) return false;
    if (!PrepareCall(op, *dtype.value(), shapes, &call).ok()) return false;  // the list form, as kernel_op.cc
    const Status st = DeclareLaunch(call, soc, *registry, workspaces, &d);
    if (!st.ok()) std::fprintf(stderr, "DeclareLaunch: %s\n", st.ToString().c_str());
    return st.ok();
  };
  Measured m;
  const uint64_t a0 = bench::CountedAllocations();
  m.ok = once();
  m.first_call_allocations = bench::CountedAllocations() - a0;
  for (int i = 0; i < 200 && m.ok; ++i) m.ok = once();
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
  const uint64_t before = bench::CountedAllocations();
  for (int r = 0; r < rounds && m.ok; ++r) {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < per_round; ++i) m.ok &= once();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / per_round);
    m.calls += per_round;
  }
  m.allocations_per_call = static_cast<double>(bench::CountedAllocations() - before) / std::max<uint64_t>(1, m.calls);
  std::sort(ns.begin(), ns.end());
  m.ns_median = ns.empty() ? 0 : ns[ns.size() / 2];
  m.ns_min = ns.empty() ? 0 : ns.front();
  if (m.ok && !d.launches.empty()) {
    m.words = d.launches[0].words.size();
    m.block_dim = d.launches[0].block_dim;
  }
  m.workspace_bytes = workspaces.last_bytes;
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
  const int rounds = static_cast<int>(ArgDouble(argc, argv, "--rounds", 15));
  const double round_seconds = ArgDouble(argc, argv, "--round-seconds", 0.05);
  const std::vector<Scenario> scenarios = {
      {"declare", {4096, 4096}, {4096, 4096}, 0},
      {"declare_broadcast", {4096, 4096}, {4096}, 0},
      {"declare_workspace", {4096, 4096}, {4096, 4096}, 512},
  };
  bool ok = true;
  for (const Scenario &s : scenarios) {
    const Measured m = Run(s, rounds, round_seconds);
    // By hand: the flat struct is 64 bytes (8 words), the tiled one 104 (13); 2^24 elements in
    // blocks of 4096 cap the grid at the fixtures' 40 programs; 512 bytes x 40 programs of
    // workspace; no allocation once the kept lists have seen the call.
    const size_t want_words = s.x == s.y ? 8 : 13;
    const bool checks = m.ok && m.words == want_words && m.block_dim == 40 &&
                        m.workspace_bytes == static_cast<uint64_t>(s.workspace_size) * 40 &&
                        m.allocations_per_call == 0;
    ok &= checks;
    std::printf(
        "{\"scenario\": \"%s\", \"words\": %zu, \"block_dim\": %u, \"ns_per_call_median\": %.1f, "
        "\"ns_per_call_min\": %.1f, \"allocations_per_call\": %.3f, \"first_call_allocations\": %llu, "
        "\"calls\": %llu, \"rounds\": %d, \"checks\": %s}\n",
        s.name, m.words, m.block_dim, m.ns_median, m.ns_min, m.allocations_per_call,
        static_cast<unsigned long long>(m.first_call_allocations), static_cast<unsigned long long>(m.calls), rounds,
        checks ? "true" : "false");
  }
  std::printf(ok ? "bench: ok\n" : "bench: a self-check failed\n");
  return ok ? 0 : 1;
}
