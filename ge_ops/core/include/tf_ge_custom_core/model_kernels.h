// The kernels of the models deserialized into an instance that has kernels of its own: GE's
// global-instance path (HEAD's OM2 generated code: CustomOpFactory::CreateOrGetCustomOp, then
// Deserialize for every model it loads, then Execute for every node of every model, on that
// one instance; hicann/ge base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc).
//
// A model whose kernels agree with what the instance already runs under each key (SoC or
// board, op, variant, dtype) simply joins its registry (KernelRegistry::AddSerialized). A model
// whose kernels differ from the instance's under some key (the package's npubins are of
// another build, or another model brought other binaries) must still run its own: it keeps a
// registry of its own, which answers the Execute of every node the model names (the bundle
// carries the nodes its Compile chose kernels for, bundle.h); a node's name is all GE's OM2
// code hands Execute about the model. Where that cannot tell the models apart, the model is
// refused with one line, never run on someone else's binaries: a model that names no nodes
// (serialized before models named them), a node name another such model or this instance's
// own graph builds already use.
#ifndef TF_GE_CUSTOM_CORE_MODEL_KERNELS_H_
#define TF_GE_CUSTOM_CORE_MODEL_KERNELS_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

class ModelKernels {
 public:
  // Deserialize of a model into the instance whose registry is shared. *note (when the model
  // gets a registry of its own) says so in one line. Refusals: the model's own
  // (KernelRegistry::FromSerialized), and kConflict when its kernels differ from shared's and
  // its nodes cannot say which are its own.
  Status Add(KernelRegistry &shared, const std::vector<uint8_t> &bytes, std::string *note);

  // The registry of the model that node belongs to when that model runs kernels of its own;
  // null when the instance's registry answers (no allocation: a lookup by the name's view).
  std::shared_ptr<KernelRegistry> ForNode(const char *node);
  // Whether node is a node of a model with kernels of its own (Compile refuses to build a
  // node of that name: its Execute would run the model's kernels).
  bool Owns(const std::string &node);

 private:
  std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::map<std::string, std::shared_ptr<KernelRegistry>, std::less<>> by_node_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_MODEL_KERNELS_H_
