// The kernel manifest (docs/kernel-manifest.md, format version 1): reading, validating and
// classifying refusals exactly as the Python reader does (tf_ge_custom/kernel_manifest.py).
#ifndef TF_GE_CUSTOM_CORE_MANIFEST_H_
#define TF_GE_CUSTOM_CORE_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tf_ge_custom_core/json.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

constexpr const char *kManifestFormat = "tf-ge-custom-kernel-manifest";
constexpr int64_t kManifestVersion = 1;
constexpr const char *kManifestFileName = "manifest.json";
// Refusal kinds, in the order the checks run (the first failing phase names the kind).
constexpr const char *kKindSyntax = "syntax";
constexpr const char *kKindVersion = "version";
constexpr const char *kKindSchema = "schema";
constexpr const char *kKindLayout = "layout";
constexpr const char *kKindMismatch = "mismatch";
constexpr const char *kKindChecksum = "checksum";
constexpr const char *kKindIo = "io";  // the manifest file itself cannot be read

enum class SlotRole { kFfts, kSyncBlockLock, kWorkspace, kInput, kOutput, kNumElements, kGridX, kGridY, kGridZ };
const char *SlotRoleName(SlotRole role);

struct ArgSlot {
  std::string name;
  SlotRole role = SlotRole::kInput;
  int64_t index = -1;  // for kInput / kOutput only
  int64_t offset = 0;
  int64_t size = 0;
};

struct ArgLayout {
  int64_t size = 0;  // bytes of the packed host-argument struct
  bool has_ffts = false;
  std::vector<ArgSlot> slots;  // increasing offset
};

enum class BinaryMagic { kElfVectorCore, kElfAicore };

struct KernelEntry {
  std::string op;
  std::string dtype;
  std::string entry;
  bool has_binary = false;  // false in an IR-only manifest
  std::string binary;
  int64_t binary_size = 0;
  std::string sha256;
  std::string mix_mode;
  BinaryMagic magic = BinaryMagic::kElfVectorCore;
  int64_t block_size = 0;
  int64_t max_programs = 0;
  int64_t max_grid = 0;
  int64_t max_elements_per_launch = 0;
  int64_t workspace_size = 0;  // bytes per program
  int64_t lock_num = 0;
  int64_t lock_init_val = 0;
  ArgLayout args;
};

struct KernelManifest {
  std::string soc;
  int64_t vector_core_count = 0;
  std::string triton_ascend, bishengir;
  bool has_cann = false;
  std::string cann;
  std::string kernel_source_sha256;
  std::vector<KernelEntry> kernels;
  JsonValue document;

  // json.dumps(document, sort_keys=True, separators=(",", ":"))
  std::string Normalized() const { return DumpNormalized(document); }
  const KernelEntry *Find(const std::string &op, const std::string &dtype) const;
};

struct ManifestCheck {
  // The SoC folder the manifest sits in; empty: no folder check (a manifest held in memory,
  // or a fixture not named manifest.json).
  std::string expected_soc;
  // Folder holding the binaries; empty: do not look at them (no "checksum" check).
  std::string binary_dir;
};

// Parse and validate manifest text. Refusals carry one of the kinds above.
Result<KernelManifest> ParseManifest(const std::string &text, const ManifestCheck &check);

// Read and validate a manifest file. For <dir>/manifest.json the folder name must equal
// "soc" and the binaries sit beside it; for any other <dir>/<name>.json (the shared test
// fixtures) there is no folder check and the binaries sit in <dir>/<name>/.
Result<KernelManifest> LoadManifest(const std::string &path, bool check_files);

// Where LoadManifest looks: {expected_soc, binary_dir} for a manifest path.
ManifestCheck CheckForPath(const std::string &path, bool check_files);

// Size and sha256 of bytes against an entry; a "checksum" refusal names what differs.
Status VerifyBinary(const KernelEntry &entry, const std::string &soc, const std::vector<uint8_t> &bytes);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_MANIFEST_H_
