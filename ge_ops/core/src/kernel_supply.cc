#include "tf_ge_custom_core/kernel_supply.h"

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/manifest.h"

namespace tf_ge_custom {
namespace core {
namespace {

// The registry's refusals that mean "not there", as opposed to "there but damaged".
bool IsAbsent(Code code) { return code == Code::kUnknownSoc || code == Code::kMissingDType || code == Code::kNoBinary; }

}  // namespace

const char *KernelOriginName(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kPackage:
      return "package";
    case KernelOrigin::kCache:
      return "cache";
    case KernelOrigin::kCompiled:
      return "compiled";
  }
  return "?";
}

size_t KernelSupply::compile_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

Result<KernelOrigin> KernelSupply::Ensure(KernelRegistry &registry, const std::string &soc, const std::string &op,
                                          const std::string &dtype) {
  const std::string key = soc + "\n" + op + "\n" + dtype;
  std::shared_ptr<Decision> decision;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = decisions_.find(key);
    if (it != decisions_.end()) {
      decision = it->second;
      decided_.wait(lock, [&] { return decision->done; });
      if (!decision->status.ok()) return decision->status;
      lock.unlock();
      // The registry may have been replaced since (a model's own kernels): choose again.
      if (registry.Choose(soc, op, dtype).ok()) return decision->origin;
      lock.lock();
      decisions_.erase(key);
    }
    decision = std::make_shared<Decision>();
    decisions_[key] = decision;
  }
  auto result = Decide(registry, soc, op, dtype);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    decision->done = true;
    decision->status = result.ok() ? Status::Ok() : result.status();
    if (result.ok()) decision->origin = result.value();
  }
  decided_.notify_all();
  return result;
}

Result<KernelOrigin> KernelSupply::Decide(KernelRegistry &registry, const std::string &soc, const std::string &op,
                                          const std::string &dtype) {
  // 1. The package's own kernel set (or a model's): every variant of (op, dtype), since Execute
  // picks one by the call's shapes. No toolchain, no cache, no child process.
  const Status packaged = registry.HasKernelSet(soc, op, dtype);
  if (packaged.ok()) {
    TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
    return KernelOrigin::kPackage;
  }
  if (!IsAbsent(packaged.code())) return packaged;  // damaged: say so, never paper over it
  if (!compiler_) return packaged;

  // 2. The per-user cache, under the current toolchain's key.
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const CacheTarget target, compiler_->Locate());
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::string entry, CacheEntryDir(target, soc, dtype));
  const std::string manifest = JoinPath(entry, kManifestFileName);
  if (CacheEntryPresent(entry)) {
    const Status added = registry.AddCompiled(soc, manifest);
    if (added.ok()) {
      TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
      return KernelOrigin::kCache;
    }
    // A damaged entry: the builder replaces it under its lock.
  }

  // 3. Compile on this host.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++compiles_;
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(compiler_->Compile(target, op, soc, dtype));
  const Status added = registry.AddCompiled(soc, manifest);
  if (!added.ok()) {
    return added.WithPrefix("the kernel compiled for SoC " + soc + ", dtype " + dtype + " does not verify");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Choose(soc, op, dtype));
  return KernelOrigin::kCompiled;
}

Result<KernelOrigin> PrepareKernel(KernelSupply &supply, KernelRegistry &registry, const OpDefinition &op,
                                   const std::string &soc, const std::string &npu_arch,
                                   const std::vector<TensorInfo> &inputs) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const DTypeDefinition *const dtype, CheckDTypes(op, inputs));
  if (soc.empty()) {
    return Status::Error(Code::kUnknownSoc, "GE names no target SoC for this graph (OptionalInfos::GetSocVersion and "
                                            "the platform resource version/SoC_version are empty" +
                                                (npu_arch.empty() ? std::string() : ", NpuArch " + npu_arch) + ")");
  }
  auto origin = supply.Ensure(registry, soc, op.type_name, dtype->name);
  if (!origin.ok() && !npu_arch.empty()) return origin.status().WithContext("target NpuArch " + npu_arch);
  return origin;
}

}  // namespace core
}  // namespace tf_ge_custom
