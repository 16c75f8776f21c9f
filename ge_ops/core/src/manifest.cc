#include "tf_ge_custom_core/manifest.h"

#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/elf_symbols.h"
#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/sha256.h"

namespace tf_ge_custom {
namespace core {

using Json = nlohmann::json;

const char *SlotRoleName(SlotRole role) {
  for (const auto &r : kSlotRoles) {
    if (r.role == role) return r.name;
  }
  return "?";
}

const KernelEntry *KernelManifest::Find(const std::string &op, const std::string &variant,
                                        const std::string &dtype) const {
  for (const auto &k : kernels) {
    if (k.op == op && k.variant == variant && k.dtype == dtype) return &k;
  }
  return nullptr;
}

namespace {

// Bytes of a manifest or binary we are willing to read: far above any real one, low
// enough that a wrong path to a huge file fails fast instead of exhausting memory.
constexpr uint64_t kMaxManifestBytes = 16ull << 20;
constexpr uint64_t kMaxBinaryBytes = 1ull << 30;
// PackHostArgs builds the struct on the host: a real one is 64 bytes.
constexpr int64_t kMaxArgsBytes = 1 << 16;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr const char *kFix = "; rebuild the kernels (tf-ge-custom build-kernels) and reinstall the package";

Status Invalid(const std::string &where, const std::string &what) {
  return Status::Error(Code::kBadManifest, (where.empty() ? "manifest: " : "manifest " + where + ": ") + what + kFix);
}

std::string Show(const Json &v) {
  std::string s = v.dump(-1, ' ', true, Json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// Typed access to the members of one JSON object; each refusal names the member.
class Fields {
 public:
  Fields(const Json &obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  Status Get(const char *key, const Json **out) const {
    const auto it = obj_.find(key);
    if (it == obj_.end()) return Invalid(where_, std::string("the key \"") + key + "\" is missing");
    *out = &*it;
    return Status::Ok();
  }
  Status Str(const char *key, std::string *out) const {
    const Json *v = nullptr;
    TF_GE_CUSTOM_RETURN_IF_ERROR(Get(key, &v));
    if (!v->is_string()) return Invalid(where_, std::string(key) + " must be a string, found " + Show(*v));
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status Int(const char *key, int64_t lo, int64_t hi, int64_t *out) const {
    const Json *v = nullptr;
    TF_GE_CUSTOM_RETURN_IF_ERROR(Get(key, &v));
    const bool fits = v->is_number_integer() && (!v->is_number_unsigned() || v->get<uint64_t>() <= uint64_t(kI64Max));
    if (!fits || v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
      return Invalid(where_, std::string(key) + " must be an integer in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "], found " + Show(*v));
    }
    *out = v->get<int64_t>();
    return Status::Ok();
  }
  Status Object(const char *key, const Json **out) const { return Typed(key, Json::value_t::object, "an object", out); }
  Status Array(const char *key, const Json **out) const { return Typed(key, Json::value_t::array, "an array", out); }

 private:
  Status Typed(const char *key, Json::value_t type, const char *what, const Json **out) const {
    TF_GE_CUSTOM_RETURN_IF_ERROR(Get(key, out));
    if ((*out)->type() != type) return Invalid(where_, std::string(key) + " must be " + what + ", found " + Show(**out));
    return Status::Ok();
  }
  const Json &obj_;
  std::string where_;
};

// The manifest's keys and JSON kinds, by the rules shared with the Python reader
// (kernel_contract.py's MANIFEST_FIELDS, generated into kernel_contract.h): an unknown key, a
// missing one, a value of another kind, a null where none may be, and a kernel whose binary,
// binary_size and sha256 are not all null or all set are each refused, naming the key.
const char *KindName(FieldKind kind) {
  switch (kind) {
    case FieldKind::kString: return "a string";
    case FieldKind::kSha256: return "64 lowercase hex digits (sha256)";
    case FieldKind::kInteger: return "an integer";
    case FieldKind::kBoolean: return "a boolean";
    case FieldKind::kArray: return "an array";
    case FieldKind::kObject: return "an object";
  }
  return "?";
}

bool IsSha256(const Json &v) {
  if (!v.is_string()) return false;
  const std::string &s = v.get_ref<const std::string &>();
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool HasKind(const Json &v, FieldKind kind) {
  switch (kind) {
    case FieldKind::kString: return v.is_string();
    case FieldKind::kSha256: return IsSha256(v);
    case FieldKind::kInteger:
      return v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(kI64Max));
    case FieldKind::kBoolean: return v.is_boolean();
    case FieldKind::kArray: return v.is_array();
    case FieldKind::kObject: return v.is_object();
  }
  return false;
}

Status CheckFields(const Json &obj, const std::string &object, const std::string &where) {
  if (!obj.is_object()) return Invalid(where, "must be an object, found " + Show(obj));
  std::string allowed;
  for (const auto &f : kManifestFields) {
    if (f.object == object) allowed += (allowed.empty() ? "" : ", ") + std::string(f.key);
  }
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const auto &f : kManifestFields) known = known || (f.object == object && it.key() == f.key);
    if (!known) return Invalid(where, "unknown key \"" + it.key() + "\"; allowed: " + allowed);
  }
  std::string ir_only;  // the ir_only keys, for the message
  int ir_only_null = 0, ir_only_set = 0;
  for (const auto &f : kManifestFields) {
    if (f.object != object) continue;
    const auto it = obj.find(f.key);
    if (it == obj.end()) {
      if (f.presence == FieldPresence::kOptional) continue;
      return Invalid(where, std::string("the key \"") + f.key + "\" is missing");
    }
    const bool may_be_null = f.presence == FieldPresence::kNullable || f.presence == FieldPresence::kIrOnly;
    if (f.presence == FieldPresence::kIrOnly) {
      ir_only += (ir_only.empty() ? "" : ", ") + std::string(f.key);
      ++(it->is_null() ? ir_only_null : ir_only_set);
    }
    if (it->is_null() && may_be_null) continue;
    if (!HasKind(*it, f.kind)) {
      return Invalid(where, std::string(f.key) + " must be " + KindName(f.kind) + (may_be_null ? " or null" : "") +
                                ", found " + Show(*it));
    }
    if (*f.holds == '\0') continue;
    // "toolchain", "kernels[2]" (as ReadKernel names it), "kernels[2].args.slots[0]".
    const std::string inner = where.empty() ? std::string(f.key) : where + "." + f.key;
    if (it->is_object()) {
      TF_GE_CUSTOM_RETURN_IF_ERROR(CheckFields(*it, f.holds, inner));
    } else {
      for (size_t i = 0; i < it->size(); ++i) {
        TF_GE_CUSTOM_RETURN_IF_ERROR(CheckFields((*it)[i], f.holds, inner + "[" + std::to_string(i) + "]"));
      }
    }
  }
  if (ir_only_null > 0 && ir_only_set > 0) {
    return Invalid(where, ir_only + " must be all null (a kernel without a binary) or all set");
  }
  return Status::Ok();
}

Status ReadSlot(const Json &raw, const std::string &where, const OpDefinition &op, int64_t args_size, ArgSlot *slot) {
  if (!raw.is_object()) return Invalid(where, "a slot must be an object, found " + Show(raw));
  const Fields f(raw, where);
  std::string role;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("name", &slot->name));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("role", &role));
  const SlotRoleInfo *info = nullptr;
  for (const auto &r : kSlotRoles) {
    if (role == r.name) info = &r;
  }
  if (info == nullptr) return Invalid(where, "unknown role \"" + role + "\"");
  slot->role = info->role;
  if (info->indexed) {
    const size_t count = info->role == SlotRole::kOutput ? op.outputs.size()
                         : info->role == SlotRole::kAttr ? op.attrs.size()
                                                         : op.inputs.size();
    TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("index", 0, static_cast<int64_t>(count) - 1, &slot->index));
  }
  if (info->has_dim) TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("dim", 0, kMaxBroadcastRank - 1, &slot->dim));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("size", 4, 8, &slot->size));
  if (slot->size != 4 && slot->size != 8) return Invalid(where, "size must be 4 or 8");
  if (info->pointer && slot->size != 8) return Invalid(where, role + " is a pointer: its size must be 8");
  if (info->role == SlotRole::kAttr && slot->size != op.attrs[static_cast<size_t>(slot->index)].word_bytes) {
    return Invalid(where, "the attribute " + op.attrs[static_cast<size_t>(slot->index)].name + " takes " +
                              std::to_string(op.attrs[static_cast<size_t>(slot->index)].word_bytes) + " bytes");
  }
  return f.Int("offset", 0, args_size - slot->size, &slot->offset);  // inside the struct
}

std::string SlotKeyName(SlotRole role, int64_t index, int64_t dim) {
  std::string s = SlotRoleName(role);
  if (index >= 0) s += ":" + std::to_string(index);
  if (dim >= 0) s += ":" + std::to_string(dim);
  return s;
}

Status ReadArgs(const Json &raw, const std::string &where, const KernelVariantDefinition &variant, const OpDefinition &op,
                KernelEntry *e) {
  const Fields f(raw, where);
  const Json *slots = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("size", 0, kMaxArgsBytes, &e->args.size));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Array("slots", &slots));
  std::map<std::tuple<SlotRole, int64_t, int64_t>, int> count;
  for (size_t i = 0; i < slots->size(); ++i) {
    ArgSlot slot;
    TF_GE_CUSTOM_RETURN_IF_ERROR(ReadSlot((*slots)[i], where + ".slots[" + std::to_string(i) + "]", op, e->args.size, &slot));
    ++count[std::make_tuple(slot.role, slot.index, slot.dim)];
    e->args.slots.push_back(slot);
  }
  // What PackHostArgs fills must be there exactly once: the single roles and the variant's
  // own parameters; ffts at most once; nothing else.
  std::map<std::tuple<SlotRole, int64_t, int64_t>, int> expected;
  for (const auto &r : kSlotRoles) {
    if (r.single) expected[std::make_tuple(r.role, int64_t{-1}, int64_t{-1})] = 1;
  }
  for (const ParamSlot &p : variant.params) ++expected[std::make_tuple(p.role, p.index, p.dim)];
  const auto ffts = std::make_tuple(SlotRole::kFfts, int64_t{-1}, int64_t{-1});
  for (const auto &c : count) {
    if (c.first == ffts) {
      if (c.second > 1) return Invalid(where, "the role ffts appears more than once");
      continue;
    }
    const int want = expected.count(c.first) ? expected[c.first] : 0;
    if (want == 0) {
      return Invalid(where, "the role " + SlotKeyName(std::get<0>(c.first), std::get<1>(c.first), std::get<2>(c.first)) +
                                " is not a parameter of kernel variant " + variant.name);
    }
  }
  for (const auto &x : expected) {
    const int n = count.count(x.first) ? count[x.first] : 0;
    if (n != x.second) {
      return Invalid(where, "the role " + SlotKeyName(std::get<0>(x.first), std::get<1>(x.first), std::get<2>(x.first)) +
                                " must appear exactly once, found " + std::to_string(n));
    }
  }
  e->args.has_ffts = count.count(ffts) != 0;
  for (const auto &slot : e->args.slots) {
    // The kernel computes indices up to max_elements_per_launch + block * programs: with
    // 32-bit counts, extents and strides they must stay below the index limit, or they wrap.
    const bool integer = slot.role == SlotRole::kNumElements || slot.role == SlotRole::kDim ||
                         slot.role == SlotRole::kInputStride;
    if (integer && slot.size == 4 &&
        static_cast<__int128>(e->max_elements_per_launch) +
                static_cast<__int128>(variant.block_elements()) * static_cast<__int128>(e->max_programs) >=
            kIndexLimit) {
      return Invalid(where, std::string(SlotRoleName(slot.role)) + " is 32-bit, so max_elements_per_launch + block "
                            "elements * grid.max_programs must stay below 2^31");
    }
  }
  return Status::Ok();
}

Status ReadKernel(const Json &raw, const std::string &where, KernelEntry *e) {
  if (!raw.is_object()) return Invalid(where, "a kernel must be an object, found " + Show(raw));
  const Fields f(raw, where);
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("op", &e->op));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("variant", &e->variant));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("dtype", &e->dtype));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("entry", &e->entry));
  const OpDefinition *op = FindOp(e->op);
  if (op == nullptr) return Invalid(where, "unknown op \"" + e->op + "\"; the kernels were built for another package");
  const DTypeDefinition *dtype = op->FindDType(e->dtype);
  if (dtype == nullptr) return Invalid(where, op->type_name + " has no dtype \"" + e->dtype + "\"");
  const KernelVariantDefinition *variant = op->FindVariant(e->variant);
  if (variant == nullptr) return Invalid(where, op->type_name + " has no kernel variant \"" + e->variant + "\"");
  // GE launches a kernel by this name and keeps one binary per name in a model: only the op
  // table's own name of (variant, dtype) is read, so no two kernels of a set share one.
  const std::string entry_name = op->EntryName(e->variant, e->dtype);
  if (e->entry.size() > static_cast<size_t>(kMaxEntryName)) {
    // triton-ascend cuts a kernel's name to this many characters for the profiler.
    return Invalid(where, "entry " + Show(Json(e->entry)) + " has " + std::to_string(e->entry.size()) +
                              " characters, more than the " + std::to_string(kMaxEntryName) + " a kernel name may have");
  }
  if (e->entry != entry_name) {
    return Invalid(where, "entry must be \"" + entry_name + "\" (one name per kernel variant and dtype), found " +
                              Show(Json(e->entry)));
  }
  const Json *binary = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Get("binary", &binary));
  e->has_binary = !binary->is_null();
  if (e->has_binary) {
    TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("binary", &e->binary));
    // The name becomes a path beside the manifest: only the op definition's name is read.
    const std::string name = op->BinaryName(e->variant, e->dtype);
    if (e->binary != name) return Invalid(where, "binary must be \"" + name + "\"");
    TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("binary_size", 0, int64_t{1} << 30, &e->binary_size));
    TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("sha256", &e->sha256));
  }
  std::string mix_mode;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Str("mix_mode", &mix_mode));
  const MixModeInfo *mode = nullptr;
  for (const auto &m : kMixModes) {
    if (mix_mode == m.mix_mode) mode = &m;
  }
  if (mode == nullptr) return Invalid(where, "unknown mix_mode \"" + mix_mode + "\"");
  e->magic = mode->magic;
  e->entry_suffix = mode->entry_suffix;
  // The launch plan tiles with the op table's block: the binary must have been built with it.
  const Json *block = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Array("block", &block));
  if (*block != Json(variant->block)) {
    return Invalid(where, "block must be " + Json(variant->block).dump() + " for kernel variant " + variant->name +
                              ", found " + Show(*block));
  }
  e->block = variant->block;
  const Json *grid = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Object("grid", &grid));
  const Fields g(*grid, where + ".grid");
  TF_GE_CUSTOM_RETURN_IF_ERROR(g.Int("max_programs", 1, kI64Max, &e->max_programs));
  TF_GE_CUSTOM_RETURN_IF_ERROR(g.Int("max_grid", 1, kMaxGrid, &e->max_grid));
  TF_GE_CUSTOM_RETURN_IF_ERROR(
      f.Int("max_elements_per_launch", variant->block_elements(), kI64Max, &e->max_elements_per_launch));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("workspace_size", 0, kI64Max, &e->workspace_size));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("lock_num", 0, int64_t{1} << 40, &e->lock_num));
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Int("lock_init_val", std::numeric_limits<int64_t>::min(), kI64Max, &e->lock_init_val));
  const Json *args = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(f.Object("args", &args));
  return ReadArgs(*args, where + ".args", *variant, *op, e);
}

// A string member of a JSON object, or "" when it is absent or not a string.
std::string StringOr(const Json &obj, const char *key) {
  if (!obj.is_object()) return std::string();
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The entry naming of a manifest (kernel_contract.py, ENTRY_NAMING): its "entry_naming", or,
// for one written before the field, what its entries show: 1 when every kernel of a known
// op and variant is named after the variant's @triton.jit function (the first naming), else
// this library's (the entries are then checked one by one). 0: the field is not a count.
int64_t EntryNamingOf(const Json &doc) {
  const auto field = doc.find("entry_naming");
  if (field != doc.end()) {
    if (!field->is_number_integer() || (field->is_number_unsigned() && field->get<uint64_t>() > uint64_t(kI64Max)) ||
        field->get<int64_t>() < 1) {
      return 0;
    }
    return field->get<int64_t>();
  }
  const auto kernels = doc.find("kernels");
  if (kernels == doc.end() || !kernels->is_array() || kernels->empty()) return kEntryNaming;
  for (const auto &k : *kernels) {
    const OpDefinition *op = FindOp(StringOr(k, "op"));
    const KernelVariantDefinition *variant = op == nullptr ? nullptr : op->FindVariant(StringOr(k, "variant"));
    if (variant == nullptr || variant->function.empty() || StringOr(k, "entry") != variant->function) {
      return kEntryNaming;
    }
  }
  return 1;
}

}  // namespace

bool IsAbsent(Code code) {
  return code == Code::kUnknownSoc || code == Code::kMissingDType || code == Code::kNoBinary || code == Code::kOutdated;
}

Status VerifyBinary(const KernelEntry &e, const std::string &soc, const std::vector<uint8_t> &bytes) {
  const std::string what = "kernel " + e.binary + " (" + e.op + ", " + e.variant + ", " + e.dtype + ", " + soc + ")";
  if (static_cast<int64_t>(bytes.size()) != e.binary_size) {
    return Status::Error(Code::kChecksum, what + " has " + std::to_string(bytes.size()) + " bytes, the manifest says " +
                                          std::to_string(e.binary_size) +
                                          "; the file is damaged or stale: rebuild or reinstall the kernels");
  }
  const std::string sha = Sha256Hex(bytes.data(), bytes.size());
  if (sha != e.sha256) {
    return Status::Error(Code::kChecksum, what + " has sha256 " + sha + ", the manifest says " + e.sha256 +
                                          "; the file is damaged or stale: rebuild or reinstall the kernels");
  }
  // The runtime launches the function of the entry's name in this binary: a binary that does
  // not define it would be refused only when a model first runs.
  const std::vector<std::string> names = EntrySymbolNames(e.entry, e.magic == BinaryMagic::kElfVectorCore);
  const ElfLookup lookup = FindFunction(bytes.data(), bytes.size(), names);
  if (lookup.verdict != ElfVerdict::kFound) {
    return Status::Error(Code::kNoEntrySymbol, what + " " + DescribeMiss(lookup, names) +
                                                   "; it is not the kernel the manifest names: rebuild the kernels "
                                                   "(tf-ge-custom build-kernels)");
  }
  return Status::Ok();
}

bool IsArchitectureName(const std::string &name) {
  if (name.size() <= 4 || name.compare(0, 4, "dav-") != 0 || name.size() > 64) return false;
  for (size_t i = 4; i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  }
  return true;
}

std::string NormalizeArchitecture(const std::string &npu_arch) {
  if (npu_arch.empty()) return npu_arch;
  std::string a = npu_arch.compare(0, 4, "dav-") == 0 ? npu_arch : "dav-" + npu_arch;
  for (char &c : a) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return IsArchitectureName(a) ? a : std::string();
}

Result<KernelManifest> ParseManifest(const std::string &text, const ManifestCheck &check) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Error(Code::kBadManifest, "the kernel manifest is not a JSON object" + std::string(kFix));
  }
  const auto format = doc.find("format");
  const auto version = doc.find("version");
  if (format == doc.end() || *format != kManifestFormat || version == doc.end() || !version->is_number_integer() ||
      version->get<int64_t>() != kManifestVersion) {
    return Status::Error(Code::kBadVersion, std::string("this library reads \"format\": \"") + kManifestFormat +
                                            "\", \"version\": " + std::to_string(kManifestVersion) +
                                            "; the manifest has " +
                                            (format == doc.end() ? std::string("no format") : Show(*format)) + ", " +
                                            (version == doc.end() ? std::string("no version") : Show(*version)) +
                                            "; rebuild the kernels with this package's builder");
  }
  const int64_t naming = EntryNamingOf(doc);
  if (naming == 0) {
    return Status::Error(Code::kBadManifest, "manifest: entry_naming must be an integer >= 1, found " +
                                                 Show(doc["entry_naming"]) + std::string(kFix));
  }
  if (naming != kEntryNaming) {
    // Not damaged: kernels of another naming are launched under names this library does not
    // declare, so the set is treated as absent (the caller falls through to the cache or a compile).
    return Status::Error(Code::kOutdated,
                         "the kernel set was built under entry naming " + std::to_string(naming) +
                             (naming < kEntryNaming ? " (each dtype's kernel named after its @triton.jit function, "
                                                      "by an earlier tf-ge-custom)"
                                                    : " (by a newer tf-ge-custom)") +
                             ", and this library launches kernels under entry naming " + std::to_string(kEntryNaming) +
                             " (tf_ge_custom_<op>_<variant>_<dtype>); it is not used: rebuild it with this package's "
                             "tf-ge-custom build-kernels");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(CheckFields(doc, "manifest", ""));
  KernelManifest m;
  m.entry_naming = naming;
  const Fields top(doc, "");
  const Json *kernels = nullptr;
  TF_GE_CUSTOM_RETURN_IF_ERROR(top.Str("soc", &m.soc));
  // Optional (manifests written before it lack it): what lets a board of the same
  // architecture take these kernels (kernel_registry.h).
  const auto arch = doc.find("architecture");
  if (arch != doc.end()) {
    if (!arch->is_string() || !IsArchitectureName(arch->get<std::string>())) {
      return Status::Error(Code::kBadManifest, "manifest: architecture must be dav-<NpuArch> (e.g. dav-2201), found " +
                                                   Show(*arch) + std::string(kFix));
    }
    m.architecture = arch->get<std::string>();
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(top.Array("kernels", &kernels));
  std::map<std::string, size_t> entries;  // entry name -> first kernel holding it
  for (size_t i = 0; i < kernels->size(); ++i) {
    KernelEntry e;
    const std::string where = "kernels[" + std::to_string(i) + "]";
    TF_GE_CUSTOM_RETURN_IF_ERROR(ReadKernel((*kernels)[i], where, &e));
    // Two kernels under one name would make one node run the other's code in a GE model.
    const auto first = entries.emplace(e.entry, i);
    if (!first.second) {
      return Invalid(where, "entry name \"" + e.entry + "\" is also the entry of kernels[" +
                                std::to_string(first.first->second) + "]; every kernel of a set needs its own");
    }
    m.kernels.push_back(std::move(e));
  }
  // Kernels built for one SoC must never be loaded on another.
  if (!check.expected_soc.empty() && m.soc != check.expected_soc) {
    return Status::Error(Code::kBadManifest, "manifest: soc is \"" + m.soc + "\" but it sits in the folder of SoC \"" +
                                             check.expected_soc + "\"; move it or rebuild the kernels for that SoC");
  }
  if (!check.binary_dir.empty()) {
    for (const auto &e : m.kernels) {
      if (!e.has_binary) continue;
      std::vector<uint8_t> bytes;
      const std::string path = JoinPath(check.binary_dir, e.binary);
      const Status read = ReadFileBytes(path, kMaxBinaryBytes, &bytes);
      if (!read.ok()) {
        return Status::Error(Code::kChecksum, "kernel binary " + path + " cannot be read (" + read.message() +
                                              "); rebuild or reinstall the kernels");
      }
      TF_GE_CUSTOM_RETURN_IF_ERROR(VerifyBinary(e, m.soc, bytes));
    }
  }
  return m;
}

int64_t ParseCount(const std::string &text) {
  if (text.empty() || text.size() > 10) return 0;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v >= 1 && v < (int64_t{1} << 31) ? v : 0;
}

std::string ManifestSoc(const std::string &text) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? std::string() : StringOr(doc, "soc");
}

ManifestCheck CheckForPath(const std::string &path, bool check_files) {
  ManifestCheck check;
  const std::string dir = DirName(path);
  const std::string base = BaseName(path);
  std::string binary_dir;
  if (base == kManifestFileName) {
    check.expected_soc = BaseName(dir);
    binary_dir = dir;
  } else {
    const size_t dot = base.rfind('.');
    binary_dir = JoinPath(dir, dot == std::string::npos ? base : base.substr(0, dot));
  }
  if (check_files) check.binary_dir = binary_dir;
  return check;
}

Result<KernelManifest> LoadManifest(const std::string &path, bool check_files) {
  std::vector<uint8_t> bytes;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ReadFileBytes(path, kMaxManifestBytes, &bytes).WithPrefix("kernel manifest"));
  return ParseManifest(std::string(bytes.begin(), bytes.end()), CheckForPath(path, check_files));
}

}  // namespace core
}  // namespace tf_ge_custom
