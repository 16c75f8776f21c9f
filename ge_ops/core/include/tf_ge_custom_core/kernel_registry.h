// Where the npubins come from: the package's OPP root on disk (opp/kernels/<SoC>/), or the
// bytes a model carried (Deserialize), and beside either the kernels compiled on this host
// for what the package lacks (the per-user cache, kernel_supply.h). Finding a kernel picks
// it for (SoC, op, variant, dtype), refuses precisely when it cannot, and verifies its
// checksum before anyone loads it.
//
// Compile works on kernel sets: every variant of the op table for one (SoC, op, dtype), the
// unit a build (and a cache entry) holds, since a call whose shapes need a missing variant
// is refused at Execute.
//
// Answers never change: once Find has answered (SoC, op, variant, dtype), it answers it with
// the same kernel for the life of the registry. Kernel sets are only ever added (a compile, a
// model's kernels), and a set added later answers only the kernels no earlier one holds; a
// board served by another SoC's kernels keeps the first SoC it was given. With every kernel's
// entry name its own (op table, manifest readers), one graph built for one SoC therefore
// declares each kernel name with one binary (declared_launch.h).
#ifndef TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_
#define TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Kernel bundles installed beside the package (tf-ge-custom build-kernels --bundle DIR):
// ':'-separated folders, each holding <SoC>/manifest.json like the package's opp/kernels/.
constexpr const char *kKernelsEnv = "TF_GE_CUSTOM_KERNELS";
std::vector<std::string> KernelBundleDirs(const char *value);  // null or empty: none

// One verified kernel: what the loader needs and the cache keys on.
struct KernelBinary {
  std::string soc;
  KernelEntry entry;
  std::shared_ptr<const std::vector<uint8_t>> bytes;  // size and sha256 already verified
};

class KernelRegistry {
 public:
  // Kernels under <opp_root>/kernels/<SoC>/manifest.json, then under each of bundle_dirs
  // (<dir>/<SoC>/manifest.json: a kernel bundle, TF_GE_CUSTOM_KERNELS), read when first
  // asked for: a SoC is taken from the first folder that has it. A bundle folder, and each
  // manifest and binary read from it, must pass the trust rule (trust.h); while a bundle
  // entry is refused (relative, missing, not a folder, not trusted), every lookup answers
  // that refusal (kUntrusted, naming the entry), so a wrong variable is never silently unused.
  static std::shared_ptr<KernelRegistry> FromOppRoot(const std::string &opp_root,
                                                     const std::vector<std::string> &bundle_dirs = {});
  // Kernels carried by a model; every manifest and binary is validated here, up front. The
  // boards the model's Compile served with another SoC's kernels are served again.
  static Result<std::shared_ptr<KernelRegistry>> FromSerialized(const std::vector<uint8_t> &bytes);
  // A model's kernels (the serialized format) added to this registry, which keeps its OPP
  // root, bundles and compiled sets: what PortableOp::Deserialize does on an instance that
  // also compiles, when the model's kernels agree with this registry's (HEAD's OM2 code
  // deserializes every model into the one instance GE's factory holds; model_kernels.h keeps a
  // model whose kernels differ apart). Everything is validated first (FromSerialized); then each of the
  // model's kernel sets is added when it holds a kernel the registry lacks (the package's set
  // of that SoC, read now, comes first: answers given before stay as they were), and each
  // served board the registry does not serve yet is served as the model says.
  Status AddSerialized(const std::vector<uint8_t> &bytes);

  // Refusals: kUnknownSoc, kMissingDType (no kernel of that variant and dtype), kNoBinary (an
  // IR-only manifest), the manifest's codes and kIo. The package's kernel comes first; the
  // compiled ones (AddCompiled) answer only what the package does not have.
  Result<KernelBinary> Find(const std::string &soc, const std::string &op, const std::string &variant,
                            const std::string &dtype);
  // The same into *out, reusing what it holds (Execute's per-thread copy: no allocation once
  // it has held that kernel).
  Status Find(const std::string &soc, const std::string &op, const std::string &variant, const std::string &dtype,
              KernelBinary *out);

  // Whether Find answers every variant the op table has for (op, dtype) with a verified
  // binary: ok, or the first variant's refusal (an op the table lacks is kInternal).
  Status HasKernelSet(const std::string &soc, const std::string &op, const std::string &dtype);

  // Kernels compiled on this host: the manifest at manifest_path (an entry of the per-user
  // cache, compile_cache.h) and every binary it names, read and verified now, so that later
  // changes to the files cannot reach Execute. Each file must pass the trust rule first
  // (kUntrusted: another user's, writable by others, ...). Refuses another SoC's manifest, a manifest
  // lacking a variant of an (op, dtype) it carries (kMissingDType: not a usable kernel set),
  // and one whose kernel sets this registry has whole already (kInternal).
  // A board name's entry (Ascend910B4-1) may hold the manifest of the SoC built for it
  // (Ascend910B4) when that records an architecture: added under that SoC and served to the
  // board (Serve).
  Status AddCompiled(const std::string &soc, const std::string &manifest_path);

  // Compile picked (soc, op, dtype) for a graph (HasKernelSet must hold): marks the kernel
  // set(s) providing its variants. Once anything is chosen, Serialize carries those sets,
  // not every SoC of the package.
  Status Choose(const std::string &soc, const std::string &op, const std::string &dtype);

  // What Compile chose (each kernel set whole: its manifest and every binary it names,
  // verified), or, when nothing was chosen, every kernel set of the registry, in the
  // serialized format. A SoC appears once per kernel set. A kernel appears twice only where a
  // compiled set completes a package set that lacks variants; the first set answers Find.
  Result<std::vector<uint8_t>> Serialize();

  // A board without kernels of its own name: the SoC (sorted first) of a kernel set of the
  // same architecture (the manifests' "architecture", dav-<NpuArch>) that holds every
  // variant of (op, dtype). kUnknownSoc when there is none, naming what there is.
  Result<std::string> SameArchitecture(const std::string &board, const std::string &architecture,
                                       const std::string &op, const std::string &dtype);
  // From now on Find for board's (op, dtype) answers with serving's kernels where board has none
  // of its own (Compile chose them); kInternal when serving lacks the kernel set. A board
  // served already keeps its SoC (answers never change). Serialize carries the serving.
  Status Serve(const std::string &board, const std::string &serving, const std::string &op, const std::string &dtype);
  // "the package (<dir>)", "the kernel bundle <dir>", "the per-user cache (<dir>)", "the model"
  // for the kernel set answering (soc, op, dtype), or "" when none does.
  std::string SourceOf(const std::string &soc, const std::string &op, const std::string &dtype);

  // The graph node `node` of op type `op` took the kernels Compile chose for it: Serialize
  // names it in the model (bundle.h, BundleNode), so that an instance serving several models
  // can tell which model a node belongs to (model_kernels.h). attrs: the node's attribute
  // words as Compile read them from GE's context (KernelCall::attrs; empty for an op without
  // attributes): Serialize carries them, for an Execute whose node-info block has none
  // (node_attrs.h).
  void RecordNode(const std::string &node, const std::string &op, const std::vector<uint64_t> &attrs = {});
  // *words = the attribute words recorded for node (RecordNode, or the model's bundle), reusing
  // its capacity; false (words untouched) when none are.
  bool NodeAttrWords(const char *node, std::vector<uint64_t> *words);
  // The nodes recorded (RecordNode), or those a deserialized model names: (node, op), sorted.
  std::vector<std::pair<std::string, std::string>> Nodes();
  bool HasNode(std::string_view node);  // no allocation

  // Where this registry and model answer one (SoC or board, op, variant, dtype) with
  // different bytes, one phrase each ("SoC Ascend910B1 AddCustom/flat/float32: the model's
  // sha256 1a2b3c4d..., this process's 5e6f7a8b... from the package (...)"), at most `limit`;
  // *count gets how many there are. Keys only one of the two answers are no difference.
  std::vector<std::string> DifferingAnswers(KernelRegistry &model, size_t limit, size_t *count);

  // Why each kernel set of another entry naming was passed over (manifest.h, kOutdated), one
  // line per SoC: the package's or a bundle's sets read so far, or a model's.
  std::vector<std::string> OutdatedSets();

  std::vector<std::string> Socs();  // sorted
  const std::string &origin() const { return origin_; }  // for messages

 private:
  struct SocKernels {
    std::string manifest_text;
    KernelManifest manifest;
    std::string dir;     // the folder its binaries are read from (empty: all in memory)
    std::string source;  // for messages: where the set came from
    std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> binaries;  // by file name
    bool chosen = false;
    bool trust_rule = false;  // a bundle's set: each binary is checked by the trust rule when read
  };
  KernelRegistry() = default;
  Result<SocKernels *> LoadSoc(const std::string &soc);  // with mutex_ held
  Status LoadAllSocs();
  // With mutex_ held: the package's (or model's first) kernel set, then the compiled ones.
  Status FindLocked(const std::string &soc, const std::string &op, const std::string &variant,
                    const std::string &dtype, KernelBinary *out);
  bool HasLocked(const std::string &soc, const std::string &op, const std::string &variant, const std::string &dtype);
  Status FindPackagedLocked(const std::string &soc, const std::string &op, const std::string &variant,
                            const std::string &dtype, KernelBinary *out);
  static void Fill(const std::string &soc, const KernelEntry &entry, std::shared_ptr<const std::vector<uint8_t>> bytes,
                   KernelBinary *out);
  Status HasKernelSetLocked(const std::string &soc, const std::string &op, const std::string &dtype);
  // The kernel set answering Find for (soc, op, variant, dtype), nullptr when none does.
  SocKernels *ProviderLocked(const std::string &soc, const std::string &op, const std::string &variant,
                             const std::string &dtype);
  SocKernels *CompiledWith(const std::string &soc, const std::string &op, const std::string &variant,
                           const std::string &dtype);
  // With mutex_ held: ok when k (a kernel set of soc about to be added) brings a kernel set
  // the registry lacks, else kInternal naming what is there already.
  Status AddsAKernelSetLocked(const std::string &soc, const SocKernels &k);
  // e's bytes from k (read from the package folder and verified on first use).
  Result<std::shared_ptr<const std::vector<uint8_t>>> BinaryOf(const std::string &soc, SocKernels &k,
                                                                const KernelEntry &e);
  // With mutex_ held: the SoC serving board's (op, dtype), or nullptr.
  const std::string *ServedBy(const std::string &board, const std::string &op, const std::string &dtype) const;
  // With mutex_ held: serves board's (op, dtype) with soc unless it is served already.
  void ServeLocked(const std::string &board, const std::string &op, const std::string &dtype, const std::string &soc);

  std::mutex mutex_;
  std::string origin_;
  std::string opp_root_;  // empty for a deserialized registry
  std::vector<std::string> roots_;  // <opp_root>/kernels, then the bundle folders
  Status bundle_refusal_;  // the first refused bundle entry (ok: none)
  // (board, op, dtype) -> the SoC whose kernel set it takes (Serve, AddCompiled, a model's)
  std::map<std::tuple<std::string, std::string, std::string>, std::string> served_by_;
  std::map<std::string, SocKernels> socs_;
  // SoCs whose only kernel sets are of another entry naming (manifest.h, kOutdated): absent.
  std::map<std::string, Status> outdated_;
  // Further kernel sets per SoC: compiled on this host, or a model's later sections.
  std::map<std::string, std::vector<SocKernels>> compiled_;
  bool any_chosen_ = false;
  std::set<std::pair<std::string, std::string>> nodes_;  // (node, op): RecordNode, or a model's
  // node -> its attribute words (RecordNode, or a model's), for nodes that have some
  std::map<std::string, std::vector<uint64_t>, std::less<>> node_attrs_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_REGISTRY_H_
