#include "tf_ge_custom_core/model_kernels.h"

namespace tf_ge_custom {
namespace core {

Status ModelKernels::Add(KernelRegistry &shared, const std::vector<uint8_t> &bytes, std::string *note) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::shared_ptr<KernelRegistry> model, KernelRegistry::FromSerialized(bytes));
  std::string passed;  // the model's sets of another entry naming, passed over
  for (const auto &line : model->OutdatedSets()) passed += (passed.empty() ? "" : "; ") + line;
  size_t count = 0;
  const std::vector<std::string> differing = shared.DifferingAnswers(*model, 1, &count);
  if (count == 0) {  // the same kernels: one registry serves all
    if (note != nullptr) *note = passed;
    return shared.AddSerialized(bytes);
  }
  const std::string what = std::to_string(count) + " kernel(s) differ from the ones this process runs under the same "
                           "key (first: " + differing.front() + ")";
  const std::vector<std::pair<std::string, std::string>> nodes = model->Nodes();
  if (nodes.empty()) {
    return Status::Error(Code::kConflict, "the model's " + what + ", and the model names none of its nodes "
                                          "(serialized by an earlier tf-ge-custom), so its nodes could not be told "
                                          "from others and would run someone else's kernels: rebuild the model with "
                                          "this package, or load it in a process of its own");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &n : nodes) {
    const auto bound = by_node_.find(n.first);
    if (bound != by_node_.end() && bound->second != model) {
      return Status::Error(Code::kConflict, "the model's " + what + ", and its node " + n.first +
                                                " is also a node of a model loaded before with kernels of its own: "
                                                "the two could not be told apart, so this one is not loaded (load "
                                                "it in a process of its own)");
    }
    if (shared.HasNode(n.first)) {
      return Status::Error(Code::kConflict, "the model's " + what + ", and its node " + n.first +
                                                " is also a node of a graph this process built: the two could not "
                                                "be told apart, so the model is not loaded");
    }
  }
  for (const auto &n : nodes) by_node_[n.first] = model;
  any_.store(true);
  if (note != nullptr) {
    *note = "the model's " + what + ": its " + std::to_string(nodes.size()) + " node(s) run its own kernels" +
            (passed.empty() ? std::string() : "; " + passed);
  }
  return Status::Ok();
}

std::shared_ptr<KernelRegistry> ModelKernels::ForNode(const char *node) {
  if (!any_.load() || node == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = by_node_.find(std::string_view(node));
  return it == by_node_.end() ? nullptr : it->second;
}

bool ModelKernels::Owns(const std::string &node) {
  if (!any_.load()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return by_node_.count(node) != 0;
}

}  // namespace core
}  // namespace tf_ge_custom
