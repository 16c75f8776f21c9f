// The models deserialized into an instance that has kernels of its own: GE's global-instance
// path (HEAD's OM2 generated code: CustomOpFactory::CreateOrGetCustomOp, then Deserialize for
// every model it loads, then Execute for every node of every model, on that one instance;
// hicann/ge base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc).
//
// A model is known by what it holds: the sha256 of its serialized bytes. The same bytes loaded
// again (a second instance of one OM, an unload then a reload) are the same model; a rebuilt
// model is another one, whatever its nodes are named. Node names are weak as an identity
// (models share "add", "add_1"), so they only route what nothing else can:
//
// - A node whose node-info block has no attribute area is a node of HEAD's OM2 code, which runs
//   a model's nodes on the thread that loaded it: such a node is served by the model this thread
//   loaded last when that model names it (ForOm2Node).
// - Otherwise, and for GE's graph runtime, a node named by exactly one model whose kernels differ
//   from the instance's runs that model's kernels; a name two such models use is refused at
//   Execute (kConflict), never run on either's binaries.
//
// A model whose kernels agree with what the instance already runs under each key (SoC or board,
// op, variant, dtype) joins its registry (KernelRegistry::AddSerialized); a model whose kernels
// differ keeps its own. Either way its decoded registry keeps its nodes' attribute words
// (bundle.h), which Execute takes where GE's node-info block has none (node_attrs.h).
// Refused in one line: a differing model that names no nodes (serialized before models named
// them), one naming a node this instance's own graph builds use.
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
  struct Model {
    std::string sha256;                       // of the serialized bytes: the model's identity
    std::shared_ptr<KernelRegistry> decoded;  // its kernels, nodes and their attribute words
    bool own_kernels = false;                 // its kernels differ from the instance's: its nodes run decoded's
  };

  // Deserialize of a model into the instance whose registry is shared, on this thread (which
  // becomes this thread's last loaded model). *note says in one line when the model runs
  // kernels of its own, or was loaded before. Refusals: the model's own
  // (KernelRegistry::FromSerialized), and kConflict when its kernels differ from shared's and
  // its nodes cannot say which are its own.
  Status Add(KernelRegistry &shared, const std::vector<uint8_t> &bytes, std::string *note);

  // The model serving node's Execute in GE's graph runtime: the one model with kernels of its
  // own that names node; null when the instance's registry answers; kConflict when several
  // such models name it. No allocation on success.
  Status ForNode(const char *node, const Model **model);
  // The same for a node of HEAD's OM2 code (no attribute area): the model this thread loaded
  // last when it names node (whether or not its kernels differ), else ForNode.
  Status ForOm2Node(const char *node, const Model **model);
  // Whether node is a node of a model with kernels of its own (Compile refuses to build a
  // node of that name: its Execute would run the model's kernels).
  bool Owns(const std::string &node);
  // How many distinct models (by sha256) were loaded.
  size_t size();

 private:
  std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::vector<std::unique_ptr<Model>> models_;  // never removed: Execute keeps plain pointers
  std::map<std::string, Model *> by_sha_;
  // node -> the models with kernels of their own that name it
  std::map<std::string, std::vector<const Model *>, std::less<>> by_node_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_MODEL_KERNELS_H_
