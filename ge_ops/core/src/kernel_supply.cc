#include "tf_ge_custom_core/kernel_supply.h"

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/trust.h"

namespace tf_ge_custom {
namespace core {
namespace {


}  // namespace

const char *KernelOriginName(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kPackage:
      return "package";
    case KernelOrigin::kCache:
      return "cache";
    case KernelOrigin::kCompiled:
      return "compiled";
    case KernelOrigin::kSameArchitecture:
      return "same-architecture";
  }
  return "?";
}

bool IsDefiniteRefusal(const Status &status) {
  return !status.ok() && status.code() != Code::kRuntime && status.code() != Code::kIo;
}

size_t KernelSupply::compile_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

Result<KernelOrigin> KernelSupply::Ensure(KernelRegistry &registry, const std::string &soc, const std::string &op,
                                          const std::string &dtype, const std::string &architecture,
                                          std::string *note) {
  const std::string key = soc + "\n" + op + "\n" + dtype;
  std::shared_ptr<Decision> decision;
  int tries = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = decisions_.find(key);
    if (it != decisions_.end()) {
      decision = it->second;
      decided_.wait(lock, [&] { return decision->done; });
      const bool retry = !decision->status.ok() && !IsDefiniteRefusal(decision->status) &&
                         decision->tries < kMaxCompileTries && decisions_[key] == decision;
      if (!decision->status.ok() && !retry) {
        if (decision->tries >= kMaxCompileTries) {
          return decision->status.WithContext("gave up after " + std::to_string(decision->tries) +
                                              " tries in this process; restart it to try again");
        }
        return decision->status;
      }
      if (decision->status.ok()) {
        lock.unlock();
        // The registry may have been replaced since (a model's own kernels): choose again.
        if (registry.Choose(soc, op, dtype).ok()) {
          if (note != nullptr) *note = decision->note;
          return decision->origin;
        }
        lock.lock();
      }
      tries = decision->tries;
      decisions_.erase(key);
    }
    decision = std::make_shared<Decision>();
    decision->tries = tries;
    decisions_[key] = decision;
  }
  std::string said;
  auto result = Decide(registry, soc, op, dtype, architecture, &said);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    decision->done = true;
    decision->status = result.ok() ? Status::Ok() : result.status();
    if (result.ok()) decision->origin = result.value();
    if (!result.ok() && !IsDefiniteRefusal(result.status())) ++decision->tries;
    decision->note = said;
  }
  decided_.notify_all();
  if (note != nullptr) *note = said;
  return result;
}

Result<KernelOrigin> KernelSupply::Decide(KernelRegistry &registry, const std::string &soc, const std::string &op,
                                          const std::string &dtype, const std::string &architecture,
                                          std::string *note) {
  const std::string what = op + " " + dtype + " for SoC " + soc;
  // 1. The package's own kernel set (or a model's, or a bundle's) for this SoC: every variant of
  // (op, dtype), since Execute picks one by the call's shapes. No toolchain, no child process.
  const Status packaged = registry.HasKernelSet(soc, op, dtype);
  if (packaged.ok()) {
    TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
    *note = what + ": " + registry.SourceOf(soc, op, dtype);
    return KernelOrigin::kPackage;
  }
  if (!IsAbsent(packaged.code())) return packaged;  // damaged: say so, never paper over it

  // 2. The per-user cache, under the current toolchain's key (when there is a builder).
  Result<CacheTarget> located = compiler_ ? compiler_->Locate()
                                          : Result<CacheTarget>(Status::Error(Code::kUnsupported, "no compiler"));
  std::string manifest;
  Status distrusted;  // the cache itself fails the trust rule: nothing read from it, nothing compiled into it
  if (located.ok()) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::string entry, CacheEntryDir(located.value(), soc, op, dtype));
    manifest = JoinPath(entry, kManifestFileName);
    const std::string &cache_dir = located.value().cache_dir;
    const TrustVerdict verdict = CheckTrusted(cache_dir, TrustWant::kFolder);
    // Missing: the builder makes it, private; a file in its way: the compile says it cannot make it.
    const bool structural = verdict.reason == TrustReason::kMissing || verdict.reason == TrustReason::kNotAFolder ||
                            verdict.reason == TrustReason::kSpecial;
    if (!verdict.trusted() && !structural) {
      distrusted = Status::Error(Code::kUntrusted,
                                 "the kernel cache " + Shown(cache_dir) + " is not trusted, so no kernel is read from "
                                 "it or compiled into it: " + verdict.message +
                                     "; or start a fresh cache: export TF_GE_CUSTOM_CACHE_DIR=<a new folder of your own>");
    } else if (CacheEntryPresent(entry)) {
      const Status added = registry.AddCompiled(soc, manifest);
      if (added.ok()) {
        TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
        *note = what + ": " + registry.SourceOf(soc, op, dtype);
        return KernelOrigin::kCache;
      }
      // A damaged or untrusted entry in a trusted cache: the builder replaces it under its lock.
    }
  }

  // 3. Another SoC's kernel set of the same architecture: an npubin targets the architecture
  // (docs/kernels.md, "Which kernels a board takes"); the launch caps its programs by the
  // running device's own vector-core count.
  if (!architecture.empty()) {
    auto same = registry.SameArchitecture(soc, architecture, op, dtype);
    if (same.ok()) {
      TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Serve(soc, same.value(), op, dtype));
      TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
      *note = what + ": no kernels of its own name, so the " + same.value() + " kernels of the same architecture " +
              architecture + " from " + registry.SourceOf(same.value(), op, dtype) +
              " (programs capped by the device's own vector-core count)";
      return KernelOrigin::kSameArchitecture;
    }
  }
  if (!compiler_) return packaged;
  if (!located.ok()) return located.status();
  if (!distrusted.ok()) return distrusted;

  // 4. Compile on this host.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++compiles_;
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(compiler_->Compile(located.value(), op, soc, dtype));
  const Status added = registry.AddCompiled(soc, manifest);
  if (!added.ok()) {
    return added.WithPrefix("the kernel compiled for SoC " + soc + ", dtype " + dtype + " does not verify");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
  *note = what + ": compiled on this host into " + registry.SourceOf(soc, op, dtype);
  return KernelOrigin::kCompiled;
}

Result<KernelOrigin> PrepareKernel(KernelSupply &supply, KernelRegistry &registry, const OpDefinition &op,
                                   const std::string &soc, const std::string &npu_arch,
                                   const std::vector<TensorInfo> &inputs, std::string *note) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const DTypeDefinition *const dtype, CheckDTypes(op, inputs));
  if (soc.empty()) {
    return Status::Error(Code::kUnknownSoc, "GE names no target SoC for this graph (OptionalInfos::GetSocVersion and "
                                            "the platform resource version/SoC_version are empty" +
                                                (npu_arch.empty() ? std::string() : ", NpuArch " + npu_arch) + ")");
  }
  auto origin = supply.Ensure(registry, soc, op.type_name, dtype->name, NormalizeArchitecture(npu_arch), note);
  if (!origin.ok() && !npu_arch.empty()) return origin.status().WithContext("target NpuArch " + npu_arch);
  return origin;
}

}  // namespace core
}  // namespace tf_ge_custom
