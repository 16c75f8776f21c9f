// The kernel manifest as the GE library reads it (docs/kernel-manifest.md).
//
// The full validator is the Python one (tf_ge_custom/kernel_manifest.py): the builder, the
// install step, list-kernels and doctor run it. This reader takes the typed fields the GE
// library uses and keeps only the checks its own safety rests on: the format and version,
// a kernel variant of the op table with its block shape, the op table's entry name of each
// (variant, dtype) and no entry name twice in a set (GE keeps one binary per kernel name in a
// model), each slot the variant's parameters and the packing need present exactly once (and no other), every slot inside the argument
// struct, the limits PackHostArgs and LaunchPlan rely on, a binary name that stays beside
// the manifest, the SoC folder, and the checksum. Unknown keys are ignored here.
#ifndef TF_GE_CUSTOM_CORE_MANIFEST_H_
#define TF_GE_CUSTOM_CORE_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_contract.h"  // generated from tf_ge_custom/kernel_contract.py
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

const char *SlotRoleName(SlotRole role);

struct ArgSlot {
  std::string name;
  SlotRole role = SlotRole::kInput;
  int64_t index = -1;  // the kernel operand, for kInput / kOutput / kInputStride only
  int64_t dim = -1;    // the frame dimension, for kDim / kInputStride only
  int64_t offset = 0;
  int64_t size = 0;
};

struct ArgLayout {
  int64_t size = 0;  // bytes of the packed host-argument struct
  bool has_ffts = false;
  std::vector<ArgSlot> slots;
};

struct KernelEntry {
  std::string op;
  std::string variant;  // a kernel variant of the op table
  std::string dtype;
  std::string entry;
  bool has_binary = false;  // false in an IR-only manifest
  std::string binary;
  int64_t binary_size = 0;
  std::string sha256;
  BinaryMagic magic = BinaryMagic::kElfVectorCore;  // from mix_mode (kMixModes)
  // The runtime also finds the entry under entry + this (kMixModes): "_mix_aiv" for aiv.
  const char *entry_suffix = "_mix_aiv";
  std::vector<int64_t> block;  // the variant's: {elements} or {rows, cols} per loop iteration
  int64_t max_programs = 0;
  int64_t max_grid = 0;
  int64_t max_elements_per_launch = 0;
  int64_t workspace_size = 0;  // bytes per program
  int64_t lock_num = 0;
  int64_t lock_init_val = 0;
  ArgLayout args;
};

struct KernelManifest {
  // How its entries are named (kernel_contract.py, ENTRY_NAMING): the field "entry_naming",
  // else read from the entries themselves. ParseManifest returns only this library's naming.
  int64_t entry_naming = kEntryNaming;
  std::string soc;
  std::string architecture;  // "dav-2201"; empty when the manifest does not record it
  std::vector<KernelEntry> kernels;
  const KernelEntry *Find(const std::string &op, const std::string &variant, const std::string &dtype) const;
};

struct ManifestCheck {
  // The SoC folder the manifest sits in; empty: no folder check (a manifest held in memory,
  // or a fixture not named manifest.json).
  std::string expected_soc;
  // Folder holding the binaries; empty: do not look at them (no checksum check).
  std::string binary_dir;
};

// Read manifest text. Refusals: kBadVersion (format or version), kOutdated (a set written
// under another entry naming: "entry_naming" other than kEntryNaming, or, without the field,
// every entry named as the first naming named it, after its @triton.jit function; a caller
// treats it as absent), kBadManifest, and with a binary_dir kChecksum and kNoEntrySymbol.
Result<KernelManifest> ParseManifest(const std::string &text, const ManifestCheck &check);

// The "soc" of manifest text, or "" when the text has none (for messages about a set that
// ParseManifest refused).
std::string ManifestSoc(const std::string &text);

// Read a manifest file (kIo when it cannot be read). For <dir>/manifest.json the folder name
// must equal "soc" and the binaries sit beside it; for any other <dir>/<name>.json (the
// shared test fixtures) there is no folder check and the binaries sit in <dir>/<name>/.
Result<KernelManifest> LoadManifest(const std::string &path, bool check_files);

// Where LoadManifest looks: {expected_soc, binary_dir} for a manifest path.
ManifestCheck CheckForPath(const std::string &path, bool check_files);

// "dav-" then lowercase letters and digits (the manifest's architecture field).
bool IsArchitectureName(const std::string &name);
// GE's NpuArch platform resource ("2201", or already "dav-2201") as a manifest spells it;
// empty when it is empty or not such a name.
std::string NormalizeArchitecture(const std::string &npu_arch);

// A count as a platform resource spells it ("40"): decimal digits only, in [1, 2^31); 0 for
// anything else (empty, signed, spaced, too large), which callers read as "not said".
int64_t ParseCount(const std::string &text);

// Size and sha256 of bytes against an entry (a kChecksum refusal names what differs), then
// the entry's own symbol in them (elf_symbols.h; kNoEntrySymbol says what the binary has).
Status VerifyBinary(const KernelEntry &entry, const std::string &soc, const std::vector<uint8_t> &bytes);

// Whether a refusal means "the kernels are not there" (unknown SoC, missing dtype or
// variant, IR only, written under another entry naming) rather than "there but damaged".
bool IsAbsent(Code code);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_MANIFEST_H_
