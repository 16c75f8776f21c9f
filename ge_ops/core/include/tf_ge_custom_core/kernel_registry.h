// Where the npubins come from: the package's OPP root on disk (opp/kernels/<SoC>/), or the
// bytes a model carried (Deserialize). Finding a kernel picks it for (SoC, op, variant, dtype),
// refuses precisely when it cannot, and verifies its checksum before anyone loads it.
#ifndef TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_
#define TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// One verified kernel: what the loader needs and the cache keys on.
struct KernelBinary {
  std::string soc;
  KernelEntry entry;
  std::shared_ptr<const std::vector<uint8_t>> bytes;  // size and sha256 already verified
};

class KernelRegistry {
 public:
  // Kernels under <opp_root>/kernels/<SoC>/manifest.json, read when first asked for.
  static std::shared_ptr<KernelRegistry> FromOppRoot(const std::string &opp_root);
  // Kernels carried by a model; every manifest and binary is validated here, up front.
  static Result<std::shared_ptr<KernelRegistry>> FromSerialized(const std::vector<uint8_t> &bytes);

  // Refusals: kUnknownSoc, kMissingDType (no kernel of that variant and dtype), kNoBinary (an
  // IR-only manifest), the manifest's codes and kIo.
  Result<KernelBinary> Find(const std::string &soc, const std::string &op, const std::string &variant,
                            const std::string &dtype);
  // The same into *out, reusing what it holds (Execute's per-thread copy: no allocation once
  // it has held that kernel).
  Status Find(const std::string &soc, const std::string &op, const std::string &variant, const std::string &dtype,
              KernelBinary *out);

  // Every SoC's manifest and binaries (all verified) in the serialized format.
  Result<std::vector<uint8_t>> Serialize();

  std::vector<std::string> Socs();  // sorted
  const std::string &origin() const { return origin_; }  // for messages

 private:
  struct SocKernels {
    std::string manifest_text;
    KernelManifest manifest;
    std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> binaries;  // by file name
  };
  KernelRegistry() = default;
  Result<SocKernels *> LoadSoc(const std::string &soc);  // with mutex_ held
  Status LoadAllSocs();

  std::mutex mutex_;
  std::string origin_;
  std::string opp_root_;  // empty for a deserialized registry
  std::map<std::string, SocKernels> socs_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_
