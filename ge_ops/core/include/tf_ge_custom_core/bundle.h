// The serialized format PortableOp::Serialize writes into an OM and Deserialize reads back:
// every SoC's manifest text and npubins, and which SoC's kernels serve a board that has none
// of its own name, so that a model runs without the package on disk.
//
// Version 2, all integers little-endian:
//   0   8 bytes  magic "TFGEKRNL"
//   8   u32      format version (2; version 1 is read too)
//   12  u32      flags (0; anything else is refused)
//   16  u64      body size B
//   24  B bytes  body: u32 SoC count, then per SoC
//                  u32 manifest length, manifest JSON bytes,
//                  u32 binary count, then per binary: u16 name length, name, u64 size, bytes
//                then (version 2 only) u32 serving count, then per serving four strings,
//                  each u16 length and bytes: board, op, dtype, serving SoC
//   24+B 32 bytes sha256 of bytes [0, 24+B)
// Version 1 (written before boards were served) ends the body after the SoCs.
// Decoding checks, in order: size limit, magic, version, flags, exact length, checksum,
// then every length against what is left, and refuses trailing bytes.
#ifndef TF_GE_CUSTOM_CORE_BUNDLE_H_
#define TF_GE_CUSTOM_CORE_BUNDLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

constexpr char kBundleMagic[8] = {'T', 'F', 'G', 'E', 'K', 'R', 'N', 'L'};
constexpr uint32_t kBundleVersion = 2;
constexpr size_t kBundleHeaderBytes = 24;
constexpr size_t kBundleTrailerBytes = 32;
// Limits far above one op's kernels, so a corrupt length can never make us allocate wildly.
constexpr uint64_t kMaxBundleBytes = 1ull << 30;
constexpr uint32_t kMaxBundleSocs = 256;
constexpr uint32_t kMaxManifestBytesInBundle = 16u << 20;
constexpr uint32_t kMaxBinariesPerSoc = 1024;
constexpr uint32_t kMaxBundleServings = 4096;

struct BundleBinary {
  std::string name;
  std::vector<uint8_t> bytes;
};

struct BundleSoc {
  std::string manifest_json;
  std::vector<BundleBinary> binaries;
};

// A board (Ascend910B4-1) whose (op, dtype) kernels are another SoC's of its architecture
// (Ascend910B4), as Compile chose them (kernel_registry.h, Serve).
struct BundleServing {
  std::string board, op, dtype, soc;
};

// Refusal kinds of DecodeBundle: "oversized", "truncated", "magic", "version", "corrupt".
Result<std::vector<uint8_t>> EncodeBundle(const std::vector<BundleSoc> &socs,
                                          const std::vector<BundleServing> &serving = {});
// serving (when given) gets the servings; a version-1 bundle has none.
Status DecodeBundle(const uint8_t *data, size_t size, std::vector<BundleSoc> *out,
                    std::vector<BundleServing> *serving = nullptr);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_BUNDLE_H_
