#include "fuzz_targets.h"

#include <algorithm>
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
    const OpDefinition &op = *FindOp("AddCustom");
    for (const auto &soc : registry.value()->Socs()) {
      for (const auto &dtype : op.dtypes) {
        for (const auto &variant : op.variants) (void)registry.value()->Find(soc, op.type_name, variant.name, dtype.name);
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
  // every launch of a chunked tensor packs into exactly args.size bytes, for the frame the
  // variant computes (flat: 2 launches and one element more; tiled: planes of two rows
  // chunked along the outer dimensions).
  for (const KernelEntry &e : m.value().kernels) {
    const OpDefinition *op = FindOp(e.op);
    const DTypeDefinition *dtype = op == nullptr ? nullptr : op->FindDType(e.dtype);
    const KernelVariantDefinition *variant = op == nullptr ? nullptr : op->FindVariant(e.variant);
    if (dtype == nullptr || variant == nullptr) Violated("manifest accepted a kernel of an unknown op, dtype or variant");
    const int64_t per = e.max_elements_per_launch;
    KernelChoice choice;
    choice.variant = variant;
    choice.operands = {0, 1};
    if (!variant->tiled()) {
      choice.frame = {per > (std::numeric_limits<int64_t>::max() - 1) / 2 ? std::numeric_limits<int64_t>::max() : 2 * per + 1};
      choice.strides = {{1}, {variant->pattern == Pattern::kScalar ? 0 : 1}};
    } else {
      const int64_t cols = std::min<int64_t>(per, int64_t{1} << 20);
      choice.frame = {1, 1, 3, 2, cols};
      const bool a_rows = variant->pattern != Pattern::kOuter, b_rows = variant->pattern != Pattern::kRow;
      choice.strides = {{0, 0, (a_rows ? 2 : 1) * cols, a_rows ? cols : 0, 1},
                        {0, 0, b_rows ? 2 : cols, b_rows ? 1 : 0, b_rows ? 0 : 1}};
    }
    auto plan = LaunchPlan::Make(choice, dtype->itemsize, e);
    if (!plan.ok()) continue;  // a byte size beyond 64 bits: refused, not packed
    HostArgValues values;
    values.inputs.assign(op->inputs.size(), 0x1000);
    values.outputs.assign(op->outputs.size(), 0x2000);
    for (int64_t i : {int64_t{0}, plan.value().launch_count() - 1}) {
      const Launch l = plan.value().launch(i);
      values.num_elements = l.num_elements;
      values.dims = l.dims;
      values.input_strides = l.input_strides;
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
