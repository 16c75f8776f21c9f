#include "tf_ge_custom_core/kernel_registry.h"

#include <algorithm>
#include <set>

#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/files.h"

namespace tf_ge_custom {
namespace core {
namespace {
constexpr uint64_t kMaxFileBytes = 1ull << 30;

std::string Join(const std::vector<std::string> &names) {
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}
}  // namespace

std::shared_ptr<KernelRegistry> KernelRegistry::FromOppRoot(const std::string &opp_root) {
  std::shared_ptr<KernelRegistry> r(new KernelRegistry());
  r->opp_root_ = opp_root;
  r->origin_ = JoinPath(opp_root, "kernels");
  return r;
}

Result<std::shared_ptr<KernelRegistry>> KernelRegistry::FromSerialized(const std::vector<uint8_t> &bytes) {
  std::vector<BundleSoc> socs;
  TF_GE_CUSTOM_RETURN_IF_ERROR(DecodeBundle(bytes.data(), bytes.size(), &socs));
  std::shared_ptr<KernelRegistry> r(new KernelRegistry());
  r->origin_ = "the kernels serialized into the model";
  for (auto &soc : socs) {
    auto parsed = ParseManifest(soc.manifest_json, ManifestCheck());
    if (!parsed.ok()) {
      return Status::Error(Code::kCorrupt, "a serialized kernel manifest is invalid: " + parsed.status().message());
    }
    SocKernels k;
    k.manifest_text = soc.manifest_json;
    k.manifest = std::move(parsed).value();
    const std::string name = k.manifest.soc;
    if (r->socs_.count(name) != 0) return Status::Error(Code::kCorrupt, "SoC " + name + " is serialized twice");
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
    r->socs_.emplace(name, std::move(k));
  }
  return r;
}

std::vector<std::string> KernelRegistry::Socs() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> names;
  for (const auto &s : socs_) names.insert(s.first);
  if (!opp_root_.empty()) {
    for (const auto &d : ListSubdirectories(origin_)) names.insert(d);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<KernelRegistry::SocKernels *> KernelRegistry::LoadSoc(const std::string &soc) {
  auto it = socs_.find(soc);
  if (it != socs_.end()) return &it->second;
  std::vector<std::string> available;
  if (!opp_root_.empty()) available = ListSubdirectories(origin_);
  for (const auto &s : socs_) available.push_back(s.first);
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  const std::string dir = JoinPath(origin_, soc);
  if (opp_root_.empty() || soc.empty() || soc.find('/') != std::string::npos || soc[0] == '.' || !IsDirectory(dir)) {
    return Status::Error(Code::kUnknownSoc, "no kernels for SoC \"" + soc + "\" in " + origin_ + " (available: " +
                                                Join(available) + "); build them with tf-ge-custom build-kernels --soc " +
                                                soc + " and reinstall the package");
  }
  const std::string path = JoinPath(dir, kManifestFileName);
  std::vector<uint8_t> text;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ReadFileBytes(path, 16u << 20, &text).WithPrefix("kernel manifest"));
  const std::string manifest_text(text.begin(), text.end());
  ManifestCheck check;
  check.expected_soc = soc;
  auto parsed = ParseManifest(manifest_text, check);
  if (!parsed.ok()) return parsed.status().WithPrefix(path);
  SocKernels k{manifest_text, std::move(parsed).value(), {}};
  return &socs_.emplace(soc, std::move(k)).first->second;
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
  auto it = k.binaries.find(e->binary);
  if (it == k.binaries.end()) {
    // Read and verify once; later calls reuse the verified bytes.
    const std::string path = JoinPath(JoinPath(origin_, soc), e->binary);
    std::vector<uint8_t> bytes;
    const Status read = ReadFileBytes(path, kMaxFileBytes, &bytes);
    if (!read.ok()) {
      return Status::Error(Code::kChecksum, "kernel binary " + path + " cannot be read (" + read.message() +
                                                "); reinstall the package");
    }
    TF_GE_CUSTOM_RETURN_IF_ERROR(VerifyBinary(*e, soc, bytes));
    it = k.binaries.emplace(e->binary, std::make_shared<const std::vector<uint8_t>>(std::move(bytes))).first;
  }
  // Assigned field by field: the strings and the slot list reuse what *out holds.
  out->soc = soc;
  out->entry = *e;
  out->bytes = it->second;
  return Status::Ok();
}

Status KernelRegistry::LoadAllSocs() {
  if (opp_root_.empty()) return Status::Ok();
  for (const auto &soc : ListSubdirectories(origin_)) TF_GE_CUSTOM_RETURN_IF_ERROR(LoadSoc(soc));
  return Status::Ok();
}

Result<std::vector<uint8_t>> KernelRegistry::Serialize() {
  std::vector<std::pair<std::string, std::vector<const KernelEntry *>>> wanted;  // soc -> entries with binaries
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TF_GE_CUSTOM_RETURN_IF_ERROR(LoadAllSocs());
    for (const auto &s : socs_) {
      std::vector<const KernelEntry *> keys;  // socs_ entries are never erased: the pointers stay valid
      for (const auto &e : s.second.manifest.kernels) {
        if (e.has_binary) keys.push_back(&e);
      }
      wanted.emplace_back(s.first, keys);
    }
  }
  std::vector<BundleSoc> socs;
  size_t binaries = 0;
  for (const auto &w : wanted) {
    BundleSoc soc;
    for (const KernelEntry *e : w.second) {
      // Find verifies the checksum.
      TF_GE_CUSTOM_ASSIGN_OR_RETURN(const KernelBinary k, Find(w.first, e->op, e->variant, e->dtype));
      soc.binaries.push_back(BundleBinary{k.entry.binary, *k.bytes});
      ++binaries;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    soc.manifest_json = socs_.at(w.first).manifest_text;
    socs.push_back(std::move(soc));
  }
  if (binaries == 0) {
    return Status::Error(Code::kNoBinary, "there are no npubins in " + origin_ +
                                              " to put into the model; build the kernels on a host with a CANN toolkit "
                                              "(tf-ge-custom build-kernels) and reinstall the package");
  }
  return EncodeBundle(socs);
}

}  // namespace core
}  // namespace tf_ge_custom
