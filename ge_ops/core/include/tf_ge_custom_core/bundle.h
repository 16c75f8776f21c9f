// The serialized format PortableOp::Serialize writes into an OM and Deserialize reads back:
// every SoC's manifest text and npubins, and which SoC's kernels serve a board that has none
// of its own name, so that a model runs without the package on disk.
//
// Version 4, all integers little-endian:
//   0   8 bytes  magic "TFGEKRNL"
//   8   u32      format version (4; versions 1, 2 and 3 are read too)
//   12  u32      flags (0; anything else is refused)
//   16  u64      body size B
//   24  B bytes  body: u32 SoC count, then per SoC
//                  u32 manifest length, manifest JSON bytes,
//                  u32 binary count, then per binary: u16 name length, name, u64 size, bytes
//                then (from version 2) u32 serving count, then per serving four strings,
//                  each u16 length and bytes: board, op, dtype, serving SoC
//                then (from version 3) u32 node count, then per node two strings, each u16
//                  length and bytes: the graph node's name and its op type, then (from
//                  version 4) u32 word count and that many u64: the node's attribute words
//                  as Compile read them (executor.h, KernelCall::attrs)
//   24+B 32 bytes sha256 of bytes [0, 24+B)
// Version 1 (written before boards were served) ends the body after the SoCs, version 2
// (written before models named their nodes) after the servings; version 3 (written before
// nodes carried their attribute words) gives each node no words.
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
constexpr uint32_t kBundleVersion = 4;
constexpr size_t kBundleHeaderBytes = 24;
constexpr size_t kBundleTrailerBytes = 32;
// Limits far above one op's kernels, so a corrupt length can never make us allocate wildly.
constexpr uint64_t kMaxBundleBytes = 1ull << 30;
constexpr uint32_t kMaxBundleSocs = 256;
constexpr uint32_t kMaxManifestBytesInBundle = 16u << 20;
constexpr uint32_t kMaxBinariesPerSoc = 1024;
constexpr uint32_t kMaxBundleServings = 4096;
constexpr uint32_t kMaxBundleNodes = 1u << 20;
constexpr uint32_t kMaxNodeAttrWords = 256;

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

// A graph node whose Compile chose this model's kernels (kernel_registry.h, RecordNode): what
// lets an instance that serves several models tell which model a node's Execute belongs to
// (model_kernels.h). attrs: the node's attribute words as its Compile read them from GE's
// context, in op.attrs order: what Execute takes where GE's node-info block carries no
// attributes (HEAD's OM2 code; node_attrs.h).
struct BundleNode {
  std::string node, op;
  std::vector<uint64_t> attrs;
};

// Refusal kinds of DecodeBundle: "oversized", "truncated", "magic", "version", "corrupt".
Result<std::vector<uint8_t>> EncodeBundle(const std::vector<BundleSoc> &socs,
                                          const std::vector<BundleServing> &serving = {},
                                          const std::vector<BundleNode> &nodes = {});
// serving and nodes (when given) get the servings and nodes; a version-1 bundle has neither,
// a version-2 one no nodes, a version-3 one nodes without attribute words.
Status DecodeBundle(const uint8_t *data, size_t size, std::vector<BundleSoc> *out,
                    std::vector<BundleServing> *serving = nullptr, std::vector<BundleNode> *nodes = nullptr);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_BUNDLE_H_
