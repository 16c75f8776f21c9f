// Where the kernels for (SoC, op, dtype) come from when GE builds a graph (CompilableOp::Compile,
// docs/ge-library.md "What Compile does"): the package's own npubins first, then the per-user
// cache, and only then a compile on this host. The unit is the kernel set: every variant of
// the op for that dtype (Execute picks one per call by its shapes), as one build and one
// cache entry hold it. The set chosen joins the registry that Execute and Serialize use, so
// an OM built for a SoC the package lacks carries it.
//
// A board without kernels of its own SoC name takes a kernel set of the same architecture
// (the manifests' "architecture", GE's NpuArch): the package's exact SoC first, then the
// per-user cache's exact SoC, then a package or bundle set of the same architecture, and only
// then a compile. Execute caps the programs by the running device's vector-core count.
//
// The cache is used only when it passes the trust rule (trust.h): a cache folder that fails it
// (another user's, writable by others) is neither read nor compiled into (kUntrusted, definite;
// a package or bundle set of the same architecture may still serve); an entry that fails it in
// a trusted cache is compiled again, which replaces it.
//
// Every (SoC, op, dtype) is decided once per KernelSupply: concurrent Compile calls (GE
// compiles several graphs in parallel) wait for the one that runs. Success and a definite
// refusal (IsDefiniteRefusal: no hivmc, an unsupported SoC, a damaged package) are
// remembered; a timeout, a crash or an I/O failure is tried again at the next graph build,
// at most kMaxCompileTries times per process. Concurrent processes are the builder's
// concern: it holds the cache entry's lock while it builds (compile_cache.h).
#ifndef TF_GE_CUSTOM_CORE_KERNEL_SUPPLY_H_
#define TF_GE_CUSTOM_CORE_KERNEL_SUPPLY_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tf_ge_custom_core/kernel_compiler.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/op_checks.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

enum class KernelOrigin {
  kPackage,           // the registry had it already: the package's npubin, or a model's own kernels
  kCache,             // the per-user cache had it
  kCompiled,          // compiled on this host now
  kSameArchitecture,  // another SoC's kernel set of the board's architecture (package or bundle)
};
// "package", "cache", "compiled", "same-architecture"
const char *KernelOriginName(KernelOrigin origin);

// A refusal a retry cannot change (kept for the life of the process): everything but a
// runtime failure (a child that timed out or crashed: kRuntime) and an I/O error (kIo).
bool IsDefiniteRefusal(const Status &status);

class KernelSupply {
 public:
  explicit KernelSupply(std::shared_ptr<KernelCompiler> compiler) : compiler_(std::move(compiler)) {}

  // Makes sure registry holds a verified kernel of every variant of (soc, op, dtype) (the
  // kernel set, KernelRegistry::HasKernelSet) and marks it as chosen
  // (KernelRegistry::Choose). Refusals: a damaged package (its own refusal, no compile), a
  // SoC or dtype that cannot name a cache folder, the compiler's refusal, a cache entry that
  // does not verify after a compile.
  // architecture: the board's (dav-<NpuArch>, NormalizeArchitecture), empty when GE names
  // none; *note (when given) gets one sentence saying which kernel set was taken and from where.
  Result<KernelOrigin> Ensure(KernelRegistry &registry, const std::string &soc, const std::string &op,
                              const std::string &dtype, const std::string &architecture = "",
                              std::string *note = nullptr);

  size_t compile_count();  // compiles started by this supply (tests)

 private:
  struct Decision {
    bool done = false;
    Status status;
    KernelOrigin origin = KernelOrigin::kPackage;
    std::string note;
    int tries = 0;  // failed tries worth retrying so far
  };
  Result<KernelOrigin> Decide(KernelRegistry &registry, const std::string &soc, const std::string &op,
                              const std::string &dtype, const std::string &architecture, std::string *note);

  const std::shared_ptr<KernelCompiler> compiler_;
  std::mutex mutex_;
  std::condition_variable decided_;
  std::map<std::string, std::shared_ptr<Decision>> decisions_;
  size_t compiles_ = 0;
};

// What Compile does for one node, after reading the target SoC and the input dtypes from GE:
// the dtype checks of Execute, then Ensure for that dtype. NpuArch only enriches messages.
Result<KernelOrigin> PrepareKernel(KernelSupply &supply, KernelRegistry &registry, const OpDefinition &op,
                                   const std::string &soc, const std::string &npu_arch,
                                   const std::vector<TensorInfo> &inputs, std::string *note = nullptr);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_SUPPLY_H_
