#include "fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/launch_plan.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/op_definition.h"

namespace fuzz {
namespace {
void Violated(const char *what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}
}  // namespace

using namespace tf_ge_custom::core;

bool FuzzBundle(const uint8_t *data, size_t size) {
  std::vector<BundleSoc> socs;
  const Status st = DecodeBundle(data, size, &socs);
  // Whatever decodes must encode back to the very same bytes.
  if (st.ok()) {
    auto again = EncodeBundle(socs);
    if (!again.ok() || again.value() != std::vector<uint8_t>(data, data + size)) Violated("bundle round trip");
  }
  auto registry = KernelRegistry::FromSerialized(std::vector<uint8_t>(data, data + size));
  if (registry.ok() && !st.ok()) Violated("registry accepted what the decoder refused");
  if (registry.ok()) {
    for (const auto &soc : registry.value()->Socs()) {
      for (const char *dtype : {"float32", "float16", "bfloat16", "int32"}) {
        (void)registry.value()->Find(soc, "AddCustom", dtype);
      }
    }
  }
  return st.ok();
}

bool FuzzManifest(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  auto m = ParseManifest(text, ManifestCheck());
  if (!m.ok()) {
    const Code code = m.status().code();
    if (code != Code::kBadManifest && code != Code::kBadVersion) Violated("manifest refusal of an unexpected code");
    return false;
  }
  // What the reader accepts, the launch plan and the argument packing must take as it is:
  // every launch of a chunked tensor packs into exactly args.size bytes.
  for (const KernelEntry &e : m.value().kernels) {
    const OpDefinition *op = FindOp(e.op);
    const DTypeDefinition *dtype = op == nullptr ? nullptr : op->FindDType(e.dtype);
    if (dtype == nullptr) Violated("manifest accepted a kernel of an unknown op or dtype");
    // Two full launches and one element more (or as many as int64 holds).
    const int64_t per = e.max_elements_per_launch;
    const int64_t n = per > (std::numeric_limits<int64_t>::max() - 1) / 2 ? std::numeric_limits<int64_t>::max() : 2 * per + 1;
    auto plan = LaunchPlan::Make(n, dtype->itemsize, e);
    if (!plan.ok()) continue;  // a byte size beyond 64 bits: refused, not packed
    HostArgValues values;
    values.inputs.assign(op->inputs.size(), 0x1000);
    values.outputs.assign(op->outputs.size(), 0x2000);
    for (int64_t i : {int64_t{0}, plan.value().launch_count() - 1}) {
      const Launch l = plan.value().launch(i);
      values.num_elements = l.num_elements;
      values.grid_x = l.grid_x;
      if (l.grid_x < 1 || l.grid_x > kMaxGrid) Violated("launch grid outside [1, MAX_GRID]");
      std::vector<uint8_t> args;
      if (!PackHostArgs(e.args, values, &args).ok() || static_cast<int64_t>(args.size()) != e.args.size) {
        Violated("an accepted manifest's arguments do not pack");
      }
    }
  }
  return true;
}

}  // namespace fuzz

#ifdef TF_GE_CUSTOM_LIBFUZZER
// clang -fsanitize=fuzzer: the first byte picks the target.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    fuzz::FuzzBundle(data + 1, size - 1);
  } else {
    fuzz::FuzzManifest(data + 1, size - 1);
  }
  return 0;
}
#endif
