#include "tf_ge_custom_core/model_kernels.h"

#include "tf_ge_custom_core/sha256.h"

namespace tf_ge_custom {
namespace core {
namespace {

// The model this thread loaded last, per instance: trivially destructible, so a thread that
// ends leaves nothing behind (a non-trivial thread_local would keep the library loaded).
struct LastLoaded {
  const ModelKernels *owner;
  const ModelKernels::Model *model;
};
thread_local LastLoaded last_loaded = {nullptr, nullptr};

std::string Short(const std::string &sha) { return sha.substr(0, 12); }

}  // namespace

Status ModelKernels::Add(KernelRegistry &shared, const std::vector<uint8_t> &bytes, std::string *note) {
  const std::string sha = Sha256Hex(bytes.data(), bytes.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto known = by_sha_.find(sha);
    if (known != by_sha_.end()) {  // the same model again: it runs what it ran before
      last_loaded = {this, known->second};
      if (note != nullptr) *note = "the model (sha256 " + Short(sha) + "...) was loaded before: it runs the same kernels";
      return Status::Ok();
    }
  }
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::shared_ptr<KernelRegistry> decoded, KernelRegistry::FromSerialized(bytes));
  std::string passed;  // the model's sets of another entry naming, passed over
  for (const auto &line : decoded->OutdatedSets()) passed += (passed.empty() ? "" : "; ") + line;
  size_t count = 0;
  const std::vector<std::string> differing = shared.DifferingAnswers(*decoded, 1, &count);
  auto model = std::make_unique<Model>();
  model->sha256 = sha;
  model->decoded = decoded;
  model->own_kernels = count != 0;
  const std::vector<std::pair<std::string, std::string>> nodes = decoded->Nodes();
  std::string what;
  if (model->own_kernels) {
    what = std::to_string(count) + " kernel(s) differ from the ones this process runs under the same key (first: " +
           differing.front() + ")";
    if (nodes.empty()) {
      return Status::Error(Code::kConflict, "the model's " + what + ", and the model names none of its nodes "
                                            "(serialized by an earlier tf-ge-custom), so its nodes could not be told "
                                            "from others and would run someone else's kernels: rebuild the model with "
                                            "this package, or load it in a process of its own");
    }
    for (const auto &n : nodes) {
      if (shared.HasNode(n.first)) {
        return Status::Error(Code::kConflict, "the model's " + what + ", and its node " + n.first +
                                                  " is also a node of a graph this process built: the two could not "
                                                  "be told apart, so the model is not loaded");
      }
    }
  } else {
    TF_GE_CUSTOM_RETURN_IF_ERROR(shared.AddSerialized(bytes));  // the same kernels: one registry serves all
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto raced = by_sha_.find(sha);  // another thread added the same bytes meanwhile
  if (raced != by_sha_.end()) {
    last_loaded = {this, raced->second};
    if (note != nullptr) *note = passed;
    return Status::Ok();
  }
  Model *kept = model.get();
  models_.push_back(std::move(model));
  by_sha_[sha] = kept;
  if (kept->own_kernels) {
    for (const auto &n : nodes) by_node_[n.first].push_back(kept);
  }
  last_loaded = {this, kept};
  any_.store(true);
  if (note != nullptr) {
    *note = kept->own_kernels ? "the model's " + what + ": its " + std::to_string(nodes.size()) +
                                    " node(s) run its own kernels" + (passed.empty() ? std::string() : "; " + passed)
                              : passed;
  }
  return Status::Ok();
}

Status ModelKernels::ForNode(const char *node, const Model **model) {
  *model = nullptr;
  if (!any_.load() || node == nullptr) return Status::Ok();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = by_node_.find(std::string_view(node));
  if (it == by_node_.end()) return Status::Ok();
  if (it->second.size() > 1) {
    return Status::Error(Code::kConflict, std::to_string(it->second.size()) +
                                              " models with kernels of their own name node " + std::string(node) +
                                              " (sha256 " + Short(it->second[0]->sha256) + "... and " +
                                              Short(it->second[1]->sha256) + "...), and GE did not say which model "
                                              "this Execute is for: give the nodes other names, or run the models "
                                              "through HEAD's OM2 loader or in processes of their own");
  }
  *model = it->second.front();
  return Status::Ok();
}

Status ModelKernels::ForOm2Node(const char *node, const Model **model) {
  *model = nullptr;
  if (!any_.load() || node == nullptr) return Status::Ok();
  if (last_loaded.owner == this && last_loaded.model != nullptr && last_loaded.model->decoded->HasNode(node)) {
    *model = last_loaded.model;
    return Status::Ok();
  }
  return ForNode(node, model);
}

bool ModelKernels::Owns(const std::string &node) {
  if (!any_.load()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return by_node_.count(node) != 0;
}

size_t ModelKernels::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  return models_.size();
}

}  // namespace core
}  // namespace tf_ge_custom
