#include "fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/json.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/manifest.h"

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
  ManifestCheck check;
  auto m = ParseManifest(text, check);
  if (!m.ok()) {
    static const char *kKinds[] = {kKindSyntax, kKindVersion, kKindSchema, kKindLayout, kKindMismatch};
    bool known = false;
    for (const char *k : kKinds) known = known || m.status().kind() == k;
    if (!known) Violated("manifest refusal of an unknown kind");
    return false;
  }
  // The normalized dump of a valid manifest is itself valid and normalizes to itself.
  const std::string n = m.value().Normalized();
  auto again = ParseManifest(n, check);
  if (!again.ok() || again.value().Normalized() != n) Violated("manifest normalization is not idempotent");
  return true;
}

bool FuzzJson(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  JsonValue v;
  if (!ParseJson(text, &v).ok()) return false;
  const std::string n = DumpNormalized(v);
  JsonValue w;
  if (!ParseJson(n, &w).ok() || DumpNormalized(w) != n) Violated("json dump does not read back");
  return true;
}

}  // namespace fuzz

#ifdef TF_GE_CUSTOM_LIBFUZZER
// clang -fsanitize=fuzzer: the first byte picks the target.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0: fuzz::FuzzBundle(data + 1, size - 1); break;
    case 1: fuzz::FuzzManifest(data + 1, size - 1); break;
    default: fuzz::FuzzJson(data + 1, size - 1); break;
  }
  return 0;
}
#endif
