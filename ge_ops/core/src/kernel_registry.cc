#include "tf_ge_custom_core/kernel_registry.h"

#include <algorithm>
#include <set>

#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/trust.h"

namespace tf_ge_custom {
namespace core {
namespace {
constexpr uint64_t kMaxFileBytes = 1ull << 30;

std::string Join(const std::vector<std::string> &names) {
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}


bool HasBinary(const KernelManifest &m, const std::string &op, const std::string &variant, const std::string &dtype) {
  const KernelEntry *e = m.Find(op, variant, dtype);
  return e != nullptr && e->has_binary;
}

// The (op, dtype) pairs m holds npubins for, in file order, each once.
std::vector<std::pair<std::string, std::string>> KernelSetsOf(const KernelManifest &m) {
  std::vector<std::pair<std::string, std::string>> sets;
  for (const auto &e : m.kernels) {
    const auto key = std::make_pair(e.op, e.dtype);
    if (e.has_binary && std::find(sets.begin(), sets.end(), key) == sets.end()) sets.push_back(key);
  }
  return sets;
}
}  // namespace

std::vector<std::string> KernelBundleDirs(const char *value) {
  std::vector<std::string> dirs;
  if (value == nullptr) return dirs;
  const std::string text = value;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(':', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) dirs.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

std::shared_ptr<KernelRegistry> KernelRegistry::FromOppRoot(const std::string &opp_root,
                                                            const std::vector<std::string> &bundle_dirs) {
  std::shared_ptr<KernelRegistry> r(new KernelRegistry());
  r->opp_root_ = opp_root;
  r->origin_ = JoinPath(opp_root, "kernels");
  r->roots_.push_back(r->origin_);
  for (const auto &d : bundle_dirs) {
    if (d.empty()) continue;
    // Checked where it is read: a relative, missing, special or untrusted entry is refused by
    // name (lstat only, so a FIFO never blocks), and so is every lookup while it is there. A
    // trusted entry is read where the kernel resolves it ("/w/link/../bundle": up from the
    // link's target), as tf_ge_custom/kernels/kernel_sources.py reads it.
    const TrustVerdict verdict = CheckTrusted(d, TrustWant::kFolder);
    if (!verdict.trusted() && r->bundle_refusal_.ok()) {
      r->bundle_refusal_ = Status::Error(Code::kUntrusted, std::string(kKernelsEnv) + " entry " + Shown(d) +
                                                               " is refused: " + verdict.message);
    }
    const std::string root = verdict.trusted() ? ResolvePath(d) : d;
    if (std::find(r->roots_.begin(), r->roots_.end(), root) != r->roots_.end()) continue;
    r->roots_.push_back(root);
  }
  if (r->roots_.size() > 1) {
    std::vector<std::string> bundles(r->roots_.begin() + 1, r->roots_.end());
    r->origin_ += " and " + Join(bundles);
  }
  return r;
}

Result<std::shared_ptr<KernelRegistry>> KernelRegistry::FromSerialized(const std::vector<uint8_t> &bytes) {
  std::vector<BundleSoc> socs;
  std::vector<BundleServing> serving;
  std::vector<BundleNode> nodes;
  TF_GE_CUSTOM_RETURN_IF_ERROR(DecodeBundle(bytes.data(), bytes.size(), &socs, &serving, &nodes));
  std::shared_ptr<KernelRegistry> r(new KernelRegistry());
  for (const auto &n : nodes) {
    r->nodes_.emplace(n.node, n.op);
    if (!n.attrs.empty()) r->node_attrs_[n.node] = n.attrs;
  }
  r->origin_ = "the kernels serialized into the model";
  std::vector<std::string> skipped_socs;
  for (auto &soc : socs) {
    auto parsed = ParseManifest(soc.manifest_json, ManifestCheck());
    if (!parsed.ok() && parsed.status().code() == Code::kOutdated) {
      // Kernels an earlier release serialized, under names this library does not launch: not
      // damage, and not used; what they served falls through to this host's own kernels.
      const std::string name = ManifestSoc(soc.manifest_json);
      skipped_socs.push_back(name);
      r->outdated_.emplace(name.empty() ? "?" : name,
                           parsed.status().WithPrefix("the model's kernel set for SoC " + (name.empty() ? "?" : name)));
      continue;
    }
    if (!parsed.ok()) {
      return Status::Error(Code::kCorrupt, "a serialized kernel manifest is invalid: " + parsed.status().message());
    }
    SocKernels k;
    k.manifest_text = soc.manifest_json;
    k.manifest = std::move(parsed).value();
    k.source = "the model's own kernels";
    const std::string name = k.manifest.soc;
    for (auto &bin : soc.binaries) {
      const KernelEntry *owner = nullptr;
      for (const auto &e : k.manifest.kernels) {
        if (e.has_binary && e.binary == bin.name) owner = &e;
      }
      if (owner == nullptr) {
        return Status::Error(Code::kCorrupt, "serialized binary " + bin.name + " belongs to no kernel of " + name);
      }
      if (k.binaries.count(bin.name) != 0) {
        return Status::Error(Code::kCorrupt, "serialized binary " + bin.name + " appears twice");
      }
      const Status verified = VerifyBinary(*owner, name, bin.bytes);
      if (!verified.ok()) return Status::Error(Code::kCorrupt, verified.message());
      k.binaries[bin.name] = std::make_shared<const std::vector<uint8_t>>(std::move(bin.bytes));
    }
    for (const auto &e : k.manifest.kernels) {
      if (e.has_binary && k.binaries.count(e.binary) == 0) {
        return Status::Error(Code::kCorrupt, "the serialized kernels of " + name + " lack " + e.binary);
      }
    }
    if (r->socs_.count(name) == 0) {
      r->socs_.emplace(name, std::move(k));
    } else {
      // A SoC may come in several kernel sets (the package's and ones compiled on the host
      // that built the model), each bringing a kernel the earlier ones lack; Find answers
      // with the first set holding a kernel, as it did where the model was built.
      const Status adds = r->AddsAKernelSetLocked(name, k);
      if (!adds.ok()) return Status::Error(Code::kCorrupt, adds.message());
      r->compiled_[name].push_back(std::move(k));
    }
  }
  // The boards the model's Compile served with another SoC's kernels: that SoC's kernel set
  // must be in the model.
  for (const auto &s : serving) {
    if (std::find(skipped_socs.begin(), skipped_socs.end(), s.soc) != skipped_socs.end() &&
        r->socs_.count(s.soc) == 0) {
      continue;  // served by a set of another entry naming, which is not used
    }
    const OpDefinition *def = FindOp(s.op);
    if (def == nullptr || def->FindDType(s.dtype) == nullptr || s.board == s.soc) {
      return Status::Error(Code::kCorrupt, "the model serves board " + s.board + " with " + s.soc + "'s " + s.op +
                                               " " + s.dtype + " kernels, which this library does not define");
    }
    const Status held = r->HasKernelSetLocked(s.soc, s.op, s.dtype);
    if (!held.ok()) {
      return Status::Error(Code::kCorrupt, "the model serves board " + s.board + " with the " + s.op + " " + s.dtype +
                                               " kernels of " + s.soc + ", which it does not carry: " + held.message());
    }
    r->ServeLocked(s.board, s.op, s.dtype, s.soc);
  }
  return r;
}

Status KernelRegistry::AddSerialized(const std::vector<uint8_t> &bytes) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::shared_ptr<KernelRegistry> model, FromSerialized(bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  // Each SoC's sets in the model's order: its first set, then its later ones.
  std::vector<std::pair<std::string, SocKernels *>> sets;
  for (auto &s : model->socs_) sets.emplace_back(s.first, &s.second);
  for (auto &c : model->compiled_) {
    for (auto &k : c.second) sets.emplace_back(c.first, &k);
  }
  for (auto &set : sets) {
    const std::string &soc = set.first;
    // The package's (or a bundle's) set of that SoC, read now, answers first: anything Find
    // answered before keeps its answer. A SoC the package lacks, or a damaged set, leaves it to
    // the model's (the damage is reported where it is read).
    if (!opp_root_.empty()) (void)LoadSoc(soc);
    if (!AddsAKernelSetLocked(soc, *set.second).ok()) continue;  // nothing this registry lacks
    compiled_[soc].push_back(std::move(*set.second));
  }
  for (const auto &s : model->served_by_) {
    ServeLocked(std::get<0>(s.first), std::get<1>(s.first), std::get<2>(s.first), s.second);
  }
  return Status::Ok();
}

const std::string *KernelRegistry::ServedBy(const std::string &board, const std::string &op,
                                            const std::string &dtype) const {
  const auto it = served_by_.find(std::make_tuple(board, op, dtype));
  return it == served_by_.end() ? nullptr : &it->second;
}

void KernelRegistry::ServeLocked(const std::string &board, const std::string &op, const std::string &dtype,
                                 const std::string &soc) {
  if (board != soc) served_by_.emplace(std::make_tuple(board, op, dtype), soc);  // a board keeps its first SoC
}

void KernelRegistry::RecordNode(const std::string &node, const std::string &op, const std::vector<uint64_t> &attrs) {
  if (node.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  nodes_.emplace(node, op);
  if (attrs.empty()) {
    node_attrs_.erase(node);  // the node's latest Compile read none
  } else {
    node_attrs_[node] = attrs;
  }
}

bool KernelRegistry::NodeAttrWords(const char *node, std::vector<uint64_t> *words) {
  if (node == nullptr) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = node_attrs_.find(std::string_view(node));
  if (it == node_attrs_.end()) return false;
  words->assign(it->second.begin(), it->second.end());  // reuses *words' capacity
  return true;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::Nodes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::vector<std::pair<std::string, std::string>>(nodes_.begin(), nodes_.end());
}

bool KernelRegistry::HasNode(std::string_view node) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &n : nodes_) {
    if (n.first == node) return true;
  }
  return false;
}

std::vector<std::string> KernelRegistry::DifferingAnswers(KernelRegistry &model, size_t limit, size_t *count) {
  // Every key the model answers: its kernel sets' kernels, and its served boards' variants.
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> keys;
  {
    std::lock_guard<std::mutex> lock(model.mutex_);
    auto add_set = [&](const std::string &soc, const SocKernels &k) {
      for (const auto &e : k.manifest.kernels) {
        if (e.has_binary) keys.emplace_back(soc, e.op, e.variant, e.dtype);
      }
    };
    for (const auto &s : model.socs_) add_set(s.first, s.second);
    for (const auto &c : model.compiled_) {
      for (const auto &k : c.second) add_set(c.first, k);
    }
    for (const auto &s : model.served_by_) {
      const OpDefinition *def = FindOp(std::get<1>(s.first));
      if (def == nullptr) continue;
      for (const auto &v : def->variants) keys.emplace_back(std::get<0>(s.first), std::get<1>(s.first), v.name, std::get<2>(s.first));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::string> out;
  size_t n = 0;
  for (const auto &key : keys) {
    const std::string &soc = std::get<0>(key), &op = std::get<1>(key), &variant = std::get<2>(key),
                      &dtype = std::get<3>(key);
    auto theirs = model.Find(soc, op, variant, dtype);
    auto ours = Find(soc, op, variant, dtype);  // what this process would run under that key
    if (!theirs.ok() || !ours.ok() || theirs.value().entry.sha256 == ours.value().entry.sha256) continue;
    if (++n > limit) continue;
    out.push_back("SoC " + soc + " " + op + "/" + variant + "/" + dtype + ": the model's sha256 " +
                  theirs.value().entry.sha256.substr(0, 16) + "..., this process's " +
                  ours.value().entry.sha256.substr(0, 16) + "... from " + SourceOf(soc, op, dtype));
  }
  if (count != nullptr) *count = n;
  return out;
}

std::vector<std::string> KernelRegistry::OutdatedSets() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto &o : outdated_) out.push_back(o.second.message());
  return out;
}

std::vector<std::string> KernelRegistry::Socs() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> names;
  for (const auto &s : socs_) names.insert(s.first);
  for (const auto &s : compiled_) names.insert(s.first);
  for (const auto &root : roots_) {
    for (const auto &d : ListSubdirectories(root)) names.insert(d);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<KernelRegistry::SocKernels *> KernelRegistry::LoadSoc(const std::string &soc) {
  if (!bundle_refusal_.ok()) return bundle_refusal_;
  auto it = socs_.find(soc);
  if (it != socs_.end()) return &it->second;
  const auto outdated = outdated_.find(soc);
  if (outdated != outdated_.end()) return outdated->second;  // read once: the files do not change under us
  const bool usable_name = !soc.empty() && soc.find('/') == std::string::npos && soc[0] != '.';
  Status skipped;  // the first set of another entry naming: absent, and said
  for (size_t i = 0; usable_name && !opp_root_.empty() && i < roots_.size(); ++i) {
    const std::string dir = JoinPath(roots_[i], soc);
    if (!IsDirectory(dir)) continue;
    const std::string path = JoinPath(dir, kManifestFileName);
    // A bundle's files must pass the trust rule (the package's own are as trusted as this library).
    const bool bundle = i != 0;
    if (bundle) TF_GE_CUSTOM_RETURN_IF_ERROR(RequireTrusted("the kernel manifest", path, TrustWant::kFile));
    std::vector<uint8_t> text;
    TF_GE_CUSTOM_RETURN_IF_ERROR(ReadFileBytes(path, 16u << 20, &text).WithPrefix("kernel manifest"));
    const std::string manifest_text(text.begin(), text.end());
    ManifestCheck check;
    check.expected_soc = soc;
    auto parsed = ParseManifest(manifest_text, check);
    if (!parsed.ok() && parsed.status().code() == Code::kOutdated) {
      // A set of an earlier release is no kernel set of this library: the next folder may hold
      // one, else the lookup falls through to the cache or a compile (never a hard failure).
      if (skipped.ok()) skipped = parsed.status().WithPrefix(path);
      continue;
    }
    if (!parsed.ok()) return parsed.status().WithPrefix(path);
    SocKernels k{manifest_text, std::move(parsed).value(), dir,
                 bundle ? "the kernel bundle " + roots_[i] : "the package (" + roots_[0] + ")", {}};
    k.trust_rule = bundle;
    return &socs_.emplace(soc, std::move(k)).first->second;
  }
  if (!skipped.ok()) {
    outdated_.emplace(soc, skipped);
    return skipped;
  }
  std::vector<std::string> available;
  for (const auto &root : roots_) {
    for (const auto &d : ListSubdirectories(root)) available.push_back(d);
  }
  for (const auto &s : socs_) available.push_back(s.first);
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  return Status::Error(Code::kUnknownSoc, "no kernels for SoC \"" + soc + "\" in " + origin_ + " (available: " +
                                              Join(available) + "); build them with tf-ge-custom build-kernels --soc " +
                                              soc + " and reinstall the package");
}

Result<std::string> KernelRegistry::SameArchitecture(const std::string &board, const std::string &architecture,
                                                     const std::string &op, const std::string &dtype) {
  std::vector<std::string> names = Socs();
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> seen;
  for (const auto &soc : names) {
    if (soc == board) continue;
    std::string arch;
    auto loaded = LoadSoc(soc);
    if (loaded.ok()) arch = loaded.value()->manifest.architecture;
    auto compiled = compiled_.find(soc);
    if (arch.empty() && compiled != compiled_.end() && !compiled->second.empty()) {
      arch = compiled->second.front().manifest.architecture;
    }
    seen.push_back(soc + " (" + (arch.empty() ? std::string("no architecture recorded") : arch) + ")");
    if (architecture.empty() || arch != architecture) continue;
    if (HasKernelSetLocked(soc, op, dtype).ok()) return soc;
  }
  return Status::Error(Code::kUnknownSoc, "no kernel set of architecture " +
                                              (architecture.empty() ? std::string("(unknown)") : architecture) +
                                              " holds every " + op + " " + dtype + " variant for board " + board +
                                              " (kernel sets: " + Join(seen) + ")");
}

Status KernelRegistry::Serve(const std::string &board, const std::string &serving, const std::string &op,
                             const std::string &dtype) {
  std::lock_guard<std::mutex> lock(mutex_);
  TF_GE_CUSTOM_RETURN_IF_ERROR(HasKernelSetLocked(serving, op, dtype));
  ServeLocked(board, op, dtype, serving);
  return Status::Ok();
}

std::string KernelRegistry::SourceOf(const std::string &soc, const std::string &op, const std::string &dtype) {
  std::lock_guard<std::mutex> lock(mutex_);
  const OpDefinition *def = FindOp(op);
  if (def == nullptr || def->variants.empty()) return "";
  std::string name = soc;
  const std::string *served = ServedBy(soc, op, dtype);
  if (!HasLocked(soc, op, def->variants.front().name, dtype) && served != nullptr) name = *served;
  SocKernels *k = ProviderLocked(name, op, def->variants.front().name, dtype);
  return k == nullptr ? std::string() : k->source;
}

Result<KernelBinary> KernelRegistry::Find(const std::string &soc, const std::string &op, const std::string &variant,
                                          const std::string &dtype) {
  KernelBinary found;
  TF_GE_CUSTOM_RETURN_IF_ERROR(Find(soc, op, variant, dtype, &found));
  return found;
}

Status KernelRegistry::Find(const std::string &soc, const std::string &op, const std::string &variant,
                            const std::string &dtype, KernelBinary *out) {
  std::lock_guard<std::mutex> lock(mutex_);
  return FindLocked(soc, op, variant, dtype, out);
}

Status KernelRegistry::FindLocked(const std::string &soc, const std::string &op, const std::string &variant,
                                  const std::string &dtype, KernelBinary *out) {
  const Status packaged = FindPackagedLocked(soc, op, variant, dtype, out);
  if (packaged.ok() || !IsAbsent(packaged.code())) return packaged;
  SocKernels *compiled = CompiledWith(soc, op, variant, dtype);
  if (compiled == nullptr) {
    // A board Compile gave another SoC's kernel set of its architecture (Serve).
    const std::string *served = ServedBy(soc, op, dtype);
    if (served != nullptr && *served != soc) {
      const std::string serving = *served;
      if (FindLocked(serving, op, variant, dtype, out).ok()) return Status::Ok();
    }
    return packaged;  // the package's refusal names what is missing
  }
  const KernelEntry *e = compiled->manifest.Find(op, variant, dtype);
  Fill(soc, *e, compiled->binaries.at(e->binary), out);
  return Status::Ok();
}

bool KernelRegistry::HasLocked(const std::string &soc, const std::string &op, const std::string &variant,
                               const std::string &dtype) {
  KernelBinary scratch;
  return FindLocked(soc, op, variant, dtype, &scratch).ok();
}

Status KernelRegistry::HasKernelSet(const std::string &soc, const std::string &op, const std::string &dtype) {
  std::lock_guard<std::mutex> lock(mutex_);
  return HasKernelSetLocked(soc, op, dtype);
}

Status KernelRegistry::HasKernelSetLocked(const std::string &soc, const std::string &op, const std::string &dtype) {
  const OpDefinition *def = FindOp(op);
  if (def == nullptr) return Status::Error(Code::kInternal, "the op table has no op " + op);
  KernelBinary scratch;
  for (const auto &v : def->variants) TF_GE_CUSTOM_RETURN_IF_ERROR(FindLocked(soc, op, v.name, dtype, &scratch));
  return Status::Ok();
}

KernelRegistry::SocKernels *KernelRegistry::ProviderLocked(const std::string &soc, const std::string &op,
                                                           const std::string &variant, const std::string &dtype) {
  if (!HasLocked(soc, op, variant, dtype)) return nullptr;
  auto packaged = socs_.find(soc);
  if (packaged != socs_.end() && HasBinary(packaged->second.manifest, op, variant, dtype)) return &packaged->second;
  SocKernels *compiled = CompiledWith(soc, op, variant, dtype);
  if (compiled != nullptr) return compiled;
  const std::string *served = ServedBy(soc, op, dtype);
  if (served != nullptr && *served != soc) return ProviderLocked(*served, op, variant, dtype);
  return nullptr;
}

KernelRegistry::SocKernels *KernelRegistry::CompiledWith(const std::string &soc, const std::string &op,
                                                         const std::string &variant, const std::string &dtype) {
  auto it = compiled_.find(soc);
  if (it == compiled_.end()) return nullptr;
  for (auto &k : it->second) {
    if (HasBinary(k.manifest, op, variant, dtype)) return &k;
  }
  return nullptr;
}

Result<std::shared_ptr<const std::vector<uint8_t>>> KernelRegistry::BinaryOf(const std::string &soc, SocKernels &k,
                                                                             const KernelEntry &e) {
  auto it = k.binaries.find(e.binary);
  if (it != k.binaries.end()) return it->second;
  // Read and verify once; later calls reuse the verified bytes.
  const std::string path = JoinPath(k.dir.empty() ? JoinPath(origin_, soc) : k.dir, e.binary);
  if (k.trust_rule) TF_GE_CUSTOM_RETURN_IF_ERROR(RequireTrusted("kernel binary", path, TrustWant::kFile));
  std::vector<uint8_t> bytes;
  const Status read = ReadFileBytes(path, kMaxFileBytes, &bytes);
  if (!read.ok()) {
    return Status::Error(Code::kChecksum, "kernel binary " + path + " cannot be read (" + read.message() +
                                              "); reinstall the package");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(VerifyBinary(e, soc, bytes));
  return k.binaries.emplace(e.binary, std::make_shared<const std::vector<uint8_t>>(std::move(bytes))).first->second;
}

Status KernelRegistry::FindPackagedLocked(const std::string &soc, const std::string &op, const std::string &variant,
                                          const std::string &dtype, KernelBinary *out) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(SocKernels *const loaded, LoadSoc(soc));
  SocKernels &k = *loaded;
  const KernelEntry *e = k.manifest.Find(op, variant, dtype);
  if (e == nullptr) {
    std::vector<std::string> dtypes, variants;
    for (const auto &x : k.manifest.kernels) {
      if (x.op == op && x.variant == variant) dtypes.push_back(x.dtype);
      if (x.op == op && x.dtype == dtype) variants.push_back(x.variant);
    }
    return Status::Error(Code::kMissingDType, "the kernels for SoC " + soc + " in " + origin_ + " have no " + op + " " +
                                                  variant + " kernel for dtype " + dtype + " (" + variant +
                                                  " has dtypes: " + Join(dtypes) + "; " + dtype +
                                                  " has variants: " + Join(variants) +
                                                  "); rebuild the kernels with this package's tf-ge-custom "
                                                  "build-kernels, which builds every variant");
  }
  if (!e->has_binary) {
    return Status::Error(Code::kNoBinary, "the manifest for SoC " + soc + " lists " + op + "/" + variant + "/" + dtype +
                                              " without an npubin (built without CANN, IR only); build the kernels on "
                                              "a host with a CANN toolkit and reinstall the package");
  }
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(auto bytes, BinaryOf(soc, k, *e));
  Fill(soc, *e, std::move(bytes), out);
  return Status::Ok();
}

void KernelRegistry::Fill(const std::string &soc, const KernelEntry &entry,
                          std::shared_ptr<const std::vector<uint8_t>> bytes, KernelBinary *out) {
  // Assigned field by field: the strings and the slot list reuse what *out holds.
  out->soc = soc;
  out->entry = entry;
  out->bytes = std::move(bytes);
}

Status KernelRegistry::AddCompiled(const std::string &board, const std::string &manifest_path) {
  // The per-user cache: the manifest and every binary must pass the trust rule (trust.h).
  TF_GE_CUSTOM_RETURN_IF_ERROR(RequireTrusted("the kernel cache entry's manifest", manifest_path, TrustWant::kFile));
  std::vector<uint8_t> text;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ReadFileBytes(manifest_path, 16u << 20, &text).WithPrefix("kernel manifest"));
  auto parsed = ParseManifest(std::string(text.begin(), text.end()), ManifestCheck());
  if (!parsed.ok()) return parsed.status().WithPrefix(manifest_path);
  // A board name's cache entry (Ascend910B4-1) holds the kernels of the SoC the builder built
  // for it (Ascend910B4, kernels/socs.py): only with a recorded architecture, and served as such.
  const std::string soc = parsed.value().soc;
  if (soc != board && parsed.value().architecture.empty()) {
    return Status::Error(Code::kBadManifest, manifest_path + ": soc is \"" + soc + "\" but it is the cache entry of "
                                                 "SoC \"" + board + "\" and records no architecture");
  }
  SocKernels k;
  k.manifest_text.assign(text.begin(), text.end());
  k.manifest = std::move(parsed).value();
  const std::string dir = DirName(manifest_path);
  k.source = "the per-user kernel cache (" + dir + ")";
  size_t binaries = 0;
  for (const auto &e : k.manifest.kernels) {
    if (!e.has_binary) continue;
    std::vector<uint8_t> bytes;
    const std::string path = JoinPath(dir, e.binary);
    TF_GE_CUSTOM_RETURN_IF_ERROR(RequireTrusted("kernel binary", path, TrustWant::kFile));
    const Status read = ReadFileBytes(path, kMaxFileBytes, &bytes);
    if (!read.ok()) {
      return Status::Error(Code::kChecksum, "kernel binary " + path + " cannot be read (" + read.message() + ")");
    }
    TF_GE_CUSTOM_RETURN_IF_ERROR(VerifyBinary(e, soc, bytes).WithContext(path));
    k.binaries[e.binary] = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    ++binaries;
  }
  if (binaries == 0) {
    return Status::Error(Code::kNoBinary, manifest_path + " lists no npubin (built without CANN, IR only)");
  }
  // A build writes every variant of each (op, dtype) it builds; a set lacking one would
  // refuse the calls whose shapes need it, so it is no kernel set to use.
  for (const auto &set : KernelSetsOf(k.manifest)) {
    const OpDefinition *def = FindOp(set.first);  // ParseManifest checked the op table has it
    std::vector<std::string> missing;
    for (const auto &v : def->variants) {
      if (!HasBinary(k.manifest, set.first, v.name, set.second)) missing.push_back(v.name);
    }
    if (!missing.empty()) {
      return Status::Error(Code::kMissingDType, manifest_path + " lacks the " + set.first + " " + set.second +
                                                    " kernel variant(s) " + Join(missing) +
                                                    "; a compiled kernel set holds every variant");
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const Status adds = AddsAKernelSetLocked(soc, k);
  if (!adds.ok()) return adds.WithPrefix(manifest_path + " is not added");
  const auto sets = KernelSetsOf(k.manifest);
  compiled_[soc].push_back(std::move(k));
  for (const auto &set : sets) ServeLocked(board, set.first, set.second, soc);
  return Status::Ok();
}

Status KernelRegistry::AddsAKernelSetLocked(const std::string &soc, const SocKernels &k) {
  std::string first;
  for (const auto &e : k.manifest.kernels) {
    if (!e.has_binary) continue;
    if (!HasLocked(soc, e.op, e.variant, e.dtype)) return Status::Ok();  // a kernel it lacks
    if (first.empty()) first = e.op + "/" + e.variant + "/" + e.dtype;
  }
  std::string sets;
  for (const auto &set : KernelSetsOf(k.manifest)) sets += (sets.empty() ? "" : ", ") + set.first + "/" + set.second;
  return Status::Error(Code::kInternal, "the kernel set(s) " + (sets.empty() ? std::string("(none)") : sets) +
                                            " of SoC " + soc + " are there already (every kernel, " +
                                            (first.empty() ? std::string("none") : first) +
                                            " first): serialized twice or compiled again");
}

Status KernelRegistry::Choose(const std::string &soc, const std::string &op, const std::string &dtype) {
  std::lock_guard<std::mutex> lock(mutex_);
  TF_GE_CUSTOM_RETURN_IF_ERROR(HasKernelSetLocked(soc, op, dtype));
  for (const auto &v : FindOp(op)->variants) {
    ProviderLocked(soc, op, v.name, dtype)->chosen = true;  // HasKernelSetLocked found each
  }
  any_chosen_ = true;
  return Status::Ok();
}

Status KernelRegistry::LoadAllSocs() {
  if (opp_root_.empty()) return Status::Ok();
  for (const auto &root : roots_) {
    for (const auto &soc : ListSubdirectories(root)) {
      auto loaded = LoadSoc(soc);  // a set of another entry naming is none of the package's
      if (!loaded.ok() && loaded.status().code() != Code::kOutdated) return loaded.status();
    }
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> KernelRegistry::Serialize() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!any_chosen_) TF_GE_CUSTOM_RETURN_IF_ERROR(LoadAllSocs());
  std::vector<BundleSoc> socs;
  size_t binaries = 0;
  auto add = [&](const std::string &soc, SocKernels &k) -> Status {
    BundleSoc out;
    out.manifest_json = k.manifest_text;
    for (const auto &e : k.manifest.kernels) {
      if (!e.has_binary) continue;
      TF_GE_CUSTOM_ASSIGN_OR_RETURN(auto bytes, BinaryOf(soc, k, e));  // verifies the checksum
      out.binaries.push_back(BundleBinary{e.binary, *bytes});
      ++binaries;
    }
    socs.push_back(std::move(out));
    return Status::Ok();
  };
  for (auto &s : socs_) {
    if (!any_chosen_ || s.second.chosen) TF_GE_CUSTOM_RETURN_IF_ERROR(add(s.first, s.second));
  }
  for (auto &c : compiled_) {
    for (auto &k : c.second) {
      if (!any_chosen_ || k.chosen) TF_GE_CUSTOM_RETURN_IF_ERROR(add(c.first, k));
    }
  }
  // The boards served by a SoC whose kernel set goes into the model, so that the model runs
  // on the board it was built for (Find for the board after Deserialize).
  std::vector<BundleServing> serving;
  for (const auto &s : served_by_) {
    const OpDefinition *def = FindOp(std::get<1>(s.first));
    if (def == nullptr || def->variants.empty()) continue;
    SocKernels *k = ProviderLocked(s.second, std::get<1>(s.first), def->variants.front().name, std::get<2>(s.first));
    if (k != nullptr && (!any_chosen_ || k->chosen)) {
      serving.push_back(BundleServing{std::get<0>(s.first), std::get<1>(s.first), std::get<2>(s.first), s.second});
    }
  }
  if (binaries == 0) {
    return Status::Error(Code::kNoBinary, "there are no npubins in " + origin_ +
                                              " to put into the model; build the kernels on a host with a CANN toolkit "
                                              "(tf-ge-custom build-kernels) and reinstall the package, or build the "
                                              "model where the graph build can compile them (docs/kernels.md)");
  }
  std::vector<BundleNode> nodes;
  if (any_chosen_) {
    for (const auto &n : nodes_) {
      const auto words = node_attrs_.find(n.first);
      nodes.push_back(BundleNode{n.first, n.second,
                                 words == node_attrs_.end() ? std::vector<uint64_t>() : words->second});
    }
  }
  return EncodeBundle(socs, serving, nodes);
}

}  // namespace core
}  // namespace tf_ge_custom
