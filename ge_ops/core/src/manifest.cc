#include "tf_ge_custom_core/manifest.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/sha256.h"

namespace tf_ge_custom {
namespace core {

const char *SlotRoleName(SlotRole role) {
  switch (role) {
    case SlotRole::kFfts: return "ffts";
    case SlotRole::kSyncBlockLock: return "sync_block_lock";
    case SlotRole::kWorkspace: return "workspace";
    case SlotRole::kInput: return "input";
    case SlotRole::kOutput: return "output";
    case SlotRole::kNumElements: return "num_elements";
    case SlotRole::kGridX: return "grid_x";
    case SlotRole::kGridY: return "grid_y";
    case SlotRole::kGridZ: return "grid_z";
  }
  return "?";
}

const KernelEntry *KernelManifest::Find(const std::string &op, const std::string &dtype) const {
  for (const auto &k : kernels) {
    if (k.op == op && k.dtype == dtype) return &k;
  }
  return nullptr;
}

namespace {

// Bytes of a manifest or binary we are willing to read: far above any real one, low
// enough that a wrong path to a huge file fails fast instead of exhausting memory.
constexpr uint64_t kMaxManifestBytes = 16ull << 20;
constexpr uint64_t kMaxBinaryBytes = 1ull << 30;
constexpr const char *kFix = "; rebuild the kernels (tf-ge-custom build-kernels) or fix the manifest";

bool IsLowerHex64(const std::string &s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool IsSocName(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

const char *TypeName(const JsonValue &v) {
  switch (v.type()) {
    case JsonValue::Type::kNull: return "null";
    case JsonValue::Type::kBool: return "a boolean";
    case JsonValue::Type::kInteger: return "an integer";
    case JsonValue::Type::kBigInteger: return "an integer beyond 64 bits";
    case JsonValue::Type::kFloat: return "a float";
    case JsonValue::Type::kString: return "a string";
    case JsonValue::Type::kArray: return "an array";
    case JsonValue::Type::kObject: return "an object";
  }
  return "?";
}

std::string Show(const JsonValue &v) {
  std::string s = DumpNormalized(v);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// Reads typed fields of one JSON object, recording the first schema refusal.
class ObjectReader {
 public:
  ObjectReader(const JsonValue &obj, std::string path, Status *status)
      : obj_(obj), path_(std::move(path)), status_(status) {}

  // Exactly these keys (plus the optional ones), no other.
  bool Keys(std::initializer_list<const char *> required, std::initializer_list<const char *> optional = {}) {
    if (!status_->ok()) return false;
    std::set<std::string> allowed;
    for (const char *k : required) {
      allowed.insert(k);
      if (obj_.Find(k) == nullptr) return Fail("the key \"" + std::string(k) + "\" is missing");
    }
    for (const char *k : optional) allowed.insert(k);
    for (const auto &m : obj_.members()) {
      if (allowed.count(m.first) == 0) {
        std::string names;
        for (const auto &a : allowed) names += (names.empty() ? "" : ", ") + a;
        return Fail("unknown key " + QuoteJsonString(m.first) + " (allowed: " + names + ")");
      }
    }
    return true;
  }

  const JsonValue *Get(const char *key) const { return obj_.Find(key); }

  bool Int(const char *key, int64_t lo, int64_t hi, int64_t *out) {
    if (!status_->ok()) return false;
    const JsonValue *v = obj_.Find(key);
    if (!v->is_integer()) return Fail(Field(key) + " must be an integer, found " + TypeName(*v));
    if (v->int_value() < lo || v->int_value() > hi) {
      return Fail(Field(key) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], found " +
                  std::to_string(v->int_value()));
    }
    *out = v->int_value();
    return true;
  }

  bool Str(const char *key, std::string *out) {
    if (!status_->ok()) return false;
    const JsonValue *v = obj_.Find(key);
    if (!v->is_string()) return Fail(Field(key) + " must be a string, found " + TypeName(*v));
    *out = v->string_value();
    return true;
  }

  bool OneOf(const char *key, std::initializer_list<const char *> values, std::string *out) {
    if (!Str(key, out)) return false;
    std::string names;
    for (const char *v : values) {
      if (*out == v) return true;
      names += (names.empty() ? "" : ", ") + std::string(v);
    }
    return Fail(Field(key) + " must be one of " + names + ", found " + QuoteJsonString(*out));
  }

  bool Object(const char *key) {
    if (!status_->ok()) return false;
    const JsonValue *v = obj_.Find(key);
    if (!v->is_object()) return Fail(Field(key) + " must be an object, found " + TypeName(*v));
    return true;
  }

  bool Array(const char *key) {
    if (!status_->ok()) return false;
    const JsonValue *v = obj_.Find(key);
    if (!v->is_array()) return Fail(Field(key) + " must be an array, found " + TypeName(*v));
    return true;
  }

  bool Fail(const std::string &what) {
    const std::string where = path_ == "<top>" ? std::string("manifest: ") : "manifest " + path_ + ": ";
    if (status_->ok()) *status_ = Status::Error(kKindSchema, where + what + kFix);
    return false;
  }

  std::string Field(const char *key) const { return key; }

 private:
  const JsonValue &obj_;
  std::string path_;
  Status *status_;
};

constexpr int64_t kI64Max = INT64_MAX;
constexpr int64_t kI64Min = INT64_MIN;

Status CheckVersion(const JsonValue &doc) {
  const JsonValue *f = doc.Find("format");
  if (f != nullptr && !(f->is_string() && f->string_value() == kManifestFormat)) {
    return Status::Error(kKindVersion, std::string("manifest: \"format\" must be \"") + kManifestFormat +
                                           "\", found " + Show(*f) + "; this is not a tf-ge-custom kernel manifest");
  }
  const JsonValue *v = doc.Find("version");
  if (v != nullptr && !(v->is_integer() && v->int_value() == kManifestVersion)) {
    return Status::Error(kKindVersion, "manifest: this reader understands version " +
                                           std::to_string(kManifestVersion) + ", the manifest has version " +
                                           Show(*v) + "; rebuild the kernels with this package's builder");
  }
  return Status::Ok();
}

bool ParseRole(const std::string &s, SlotRole *role) {
  static const std::pair<const char *, SlotRole> kRoles[] = {
      {"ffts", SlotRole::kFfts},       {"sync_block_lock", SlotRole::kSyncBlockLock},
      {"workspace", SlotRole::kWorkspace}, {"input", SlotRole::kInput},
      {"output", SlotRole::kOutput},   {"num_elements", SlotRole::kNumElements},
      {"grid_x", SlotRole::kGridX},    {"grid_y", SlotRole::kGridY},
      {"grid_z", SlotRole::kGridZ}};
  for (const auto &r : kRoles) {
    if (s == r.first) {
      *role = r.second;
      return true;
    }
  }
  return false;
}

// Schema phase for args: types only; the role names and every rule are the layout phase's.
struct RawSlot {
  std::string name, role;
  bool has_index = false;
  int64_t index = 0, offset = 0, size = 0;
};
struct RawArgs {
  int64_t size = 0;
  bool has_ffts = false;
  std::vector<RawSlot> slots;
};

void ReadArgs(const JsonValue &args, const std::string &path, RawArgs *out, Status *status) {
  ObjectReader r(args, path, status);
  if (!r.Keys({"size", "has_ffts", "slots"}) || !r.Int("size", kI64Min, kI64Max, &out->size)) return;
  const JsonValue *ffts = r.Get("has_ffts");
  if (!ffts->is_bool()) {
    r.Fail(std::string("has_ffts must be a boolean, found ") + TypeName(*ffts));
    return;
  }
  out->has_ffts = ffts->bool_value();
  if (!r.Array("slots")) return;
  const auto &slots = r.Get("slots")->items();
  for (size_t i = 0; i < slots.size() && status->ok(); ++i) {
    const std::string spath = path + ".slots[" + std::to_string(i) + "]";
    if (!slots[i].is_object()) {
      r.Fail(spath + " must be an object, found " + TypeName(slots[i]));
      return;
    }
    ObjectReader s(slots[i], spath, status);
    RawSlot raw;
    if (!s.Keys({"name", "role", "offset", "size"}, {"index"}) || !s.Str("name", &raw.name) ||
        !s.Str("role", &raw.role) || !s.Int("offset", kI64Min, kI64Max, &raw.offset) ||
        !s.Int("size", kI64Min, kI64Max, &raw.size)) {
      return;
    }
    if (s.Get("index") != nullptr) {
      raw.has_index = true;
      if (!s.Int("index", kI64Min, kI64Max, &raw.index)) return;
    }
    out->slots.push_back(raw);
  }
}

struct RawKernel {
  KernelEntry entry;
  RawArgs args;
};

void ReadKernel(const JsonValue &k, const std::string &path, RawKernel *out, Status *status) {
  ObjectReader r(k, path, status);
  KernelEntry &e = out->entry;
  if (!r.Keys({"op", "dtype", "entry", "binary", "binary_size", "sha256", "mix_mode", "magic", "block_size", "grid",
               "max_elements_per_launch", "workspace_size", "lock_num", "lock_init_val", "args"}) ||
      !r.Str("op", &e.op) || !r.Str("dtype", &e.dtype) || !r.Str("entry", &e.entry)) {
    return;
  }
  const JsonValue *binary = r.Get("binary");
  const JsonValue *binary_size = r.Get("binary_size");
  const JsonValue *sha = r.Get("sha256");
  e.has_binary = !binary->is_null();
  if (e.has_binary) {
    if (!r.Str("binary", &e.binary) || !r.Int("binary_size", 0, kI64Max, &e.binary_size) ||
        !r.Str("sha256", &e.sha256)) {
      return;
    }
    if (!IsLowerHex64(e.sha256)) {
      r.Fail("sha256 must be 64 lowercase hex digits, found " + Show(*sha));
      return;
    }
  } else if (!binary_size->is_null() || !sha->is_null()) {
    r.Fail("\"binary\" is null, so \"binary_size\" and \"sha256\" must be null too (found " +
           Show(*binary_size) + " and " + Show(*sha) + ")");
    return;
  }
  std::string magic;
  if (!r.OneOf("mix_mode", {"aiv", "aic", "mix"}, &e.mix_mode) ||
      !r.OneOf("magic", {"ELF_VECTOR_CORE", "ELF_AICORE"}, &magic)) {
    return;
  }
  // The load magic follows from mix_mode (FACTS 5): "aiv" runs on vector cores.
  const std::string implied = e.mix_mode == "aiv" ? "ELF_VECTOR_CORE" : "ELF_AICORE";
  if (magic != implied) {
    r.Fail("magic must be \"" + implied + "\" for mix_mode \"" + e.mix_mode + "\", found \"" + magic + "\"");
    return;
  }
  e.magic = magic == "ELF_VECTOR_CORE" ? BinaryMagic::kElfVectorCore : BinaryMagic::kElfAicore;
  if (!r.Int("block_size", 1, kI64Max, &e.block_size) || !r.Object("grid")) return;
  ObjectReader g(*r.Get("grid"), path + ".grid", status);
  if (!g.Keys({"max_programs", "max_grid"}) || !g.Int("max_programs", 1, kI64Max, &e.max_programs) ||
      !g.Int("max_grid", 1, 65535, &e.max_grid)) {
    return;
  }
  if (!r.Int("max_elements_per_launch", e.block_size, kI64Max, &e.max_elements_per_launch)) return;
  if (e.max_elements_per_launch % e.block_size != 0) {
    r.Fail("max_elements_per_launch must be a multiple of block_size " + std::to_string(e.block_size) +
           ", found " + std::to_string(e.max_elements_per_launch));
    return;
  }
  if (!r.Int("workspace_size", 0, kI64Max, &e.workspace_size) || !r.Int("lock_num", 0, kI64Max, &e.lock_num) ||
      !r.Int("lock_init_val", kI64Min, kI64Max, &e.lock_init_val) || !r.Object("args")) {
    return;
  }
  ReadArgs(*r.Get("args"), path + ".args", &out->args, status);
}

Status LayoutError(const std::string &path, const std::string &what) {
  return Status::Error(kKindLayout, "manifest " + path + ": " + what + kFix);
}

// The layout rules of docs/kernel-manifest.md. op may be null (unknown op: the mismatch
// phase reports it), then input/output index coverage is not checked.
Status CheckLayout(const RawArgs &raw, const KernelEntry &e, const OpDefinition *op, const std::string &path,
                   ArgLayout *layout) {
  layout->size = raw.size;
  layout->has_ffts = raw.has_ffts;
  std::map<SlotRole, int> count;
  std::map<std::pair<SlotRole, int64_t>, int> index_count;
  int64_t end = 0;
  const int64_t kPtr = 8;
  for (size_t i = 0; i < raw.slots.size(); ++i) {
    const RawSlot &s = raw.slots[i];
    const std::string spath = path + ".slots[" + std::to_string(i) + "]";
    ArgSlot slot;
    slot.name = s.name;
    if (!ParseRole(s.role, &slot.role)) {
      return LayoutError(spath, "unknown role " + QuoteJsonString(s.role) +
                                    " (ffts, sync_block_lock, workspace, input, output, num_elements, grid_x, "
                                    "grid_y, grid_z)");
    }
    const bool indexed = slot.role == SlotRole::kInput || slot.role == SlotRole::kOutput;
    if (indexed != s.has_index) {
      return LayoutError(spath, indexed ? "an " + s.role + " slot needs an \"index\""
                                        : "only input and output slots have an \"index\", not " + s.role);
    }
    if (indexed && s.index < 0) return LayoutError(spath, "index must be >= 0, found " + std::to_string(s.index));
    slot.index = indexed ? s.index : -1;
    switch (slot.role) {
      case SlotRole::kNumElements:
        if (s.size != 4 && s.size != 8) {
          return LayoutError(spath, "num_elements has size 4 or 8, found " + std::to_string(s.size));
        }
        break;
      case SlotRole::kGridX:
      case SlotRole::kGridY:
      case SlotRole::kGridZ:
        if (s.size != 4) return LayoutError(spath, s.role + " has size 4, found " + std::to_string(s.size));
        break;
      default:
        if (s.size != kPtr) {
          return LayoutError(spath, "a pointer slot (" + s.role + ") has size 8, found " + std::to_string(s.size));
        }
    }
    if (s.offset < 0 || s.offset % s.size != 0) {
      return LayoutError(spath, "offset must be a non-negative multiple of the slot size " + std::to_string(s.size) +
                                    ", found " + std::to_string(s.offset));
    }
    if (s.offset < end) {
      return LayoutError(spath, "offset " + std::to_string(s.offset) +
                                    " overlaps or precedes the previous slot, which ends at " + std::to_string(end));
    }
    if (s.offset > (int64_t{1} << 40)) return LayoutError(spath, "offset " + std::to_string(s.offset) + " out of range");
    end = s.offset + s.size;
    if (slot.role == SlotRole::kFfts && i != 0) return LayoutError(spath, "the ffts slot must be the first slot");
    ++count[slot.role];
    if (indexed) ++index_count[{slot.role, slot.index}];
    slot.offset = s.offset;
    slot.size = s.size;
    layout->slots.push_back(slot);
  }
  const int64_t rounded = end % 8 == 0 ? end : end + (8 - end % 8);
  if (raw.size != rounded) {
    return LayoutError(path, "size must be the end of the last slot rounded up to 8, i.e. " + std::to_string(rounded) +
                                 ", found " + std::to_string(raw.size));
  }
  const bool ffts = count[SlotRole::kFfts] > 0;
  if (raw.has_ffts != ffts) {
    return LayoutError(path, std::string("has_ffts is ") + (raw.has_ffts ? "true" : "false") + " but there is " +
                                 (ffts ? "an" : "no") + " ffts slot");
  }
  for (SlotRole role : {SlotRole::kNumElements, SlotRole::kGridX, SlotRole::kGridY, SlotRole::kGridZ,
                        SlotRole::kSyncBlockLock, SlotRole::kWorkspace}) {
    if (count[role] != 1) {
      return LayoutError(path, std::string("the role ") + SlotRoleName(role) + " must appear exactly once, found " +
                                   std::to_string(count[role]));
    }
  }
  if (op != nullptr) {
    for (SlotRole role : {SlotRole::kInput, SlotRole::kOutput}) {
      const size_t n = role == SlotRole::kInput ? op->inputs.size() : op->outputs.size();
      for (size_t i = 0; i < n; ++i) {
        const int c = index_count[{role, static_cast<int64_t>(i)}];
        if (c != 1) {
          return LayoutError(path, std::string(SlotRoleName(role)) + " " + std::to_string(i) + " of " + op->type_name +
                                       " must appear exactly once, found " + std::to_string(c));
        }
      }
      if (static_cast<size_t>(count[role]) != n) {
        return LayoutError(path, op->type_name + " has " + std::to_string(n) + " " + SlotRoleName(role) +
                                     "(s); the layout has " + std::to_string(count[role]) + " such slots");
      }
    }
  }
  for (const auto &slot : layout->slots) {
    if (slot.role == SlotRole::kNumElements && slot.size == 4) {
      // The kernel computes indices up to max_elements_per_launch + block_size * programs in int32.
      const __int128 reach = static_cast<__int128>(e.max_elements_per_launch) +
                             static_cast<__int128>(e.block_size) * static_cast<__int128>(e.max_programs);
      if (reach >= (static_cast<__int128>(1) << 31)) {
        return LayoutError(path, "num_elements is 32-bit, so max_elements_per_launch + block_size * "
                                 "grid.max_programs must stay below 2^31");
      }
    }
  }
  return Status::Ok();
}

Status MismatchError(const std::string &path, const std::string &what) {
  return Status::Error(kKindMismatch, "manifest " + path + ": " + what +
                                          "; the kernels were built for another op definition: rebuild them");
}

}  // namespace

Status VerifyBinary(const KernelEntry &e, const std::string &soc, const std::vector<uint8_t> &bytes) {
  const std::string what = "kernel " + e.binary + " (" + e.op + ", " + e.dtype + ", " + soc + ")";
  if (static_cast<int64_t>(bytes.size()) != e.binary_size) {
    return Status::Error(kKindChecksum, what + " has " + std::to_string(bytes.size()) +
                                            " bytes, the manifest says " + std::to_string(e.binary_size) +
                                            "; the file is damaged or stale: rebuild or reinstall the kernels");
  }
  const std::string sha = Sha256Hex(bytes.data(), bytes.size());
  if (sha != e.sha256) {
    return Status::Error(kKindChecksum, what + " has sha256 " + sha + ", the manifest says " + e.sha256 +
                                            "; the file is damaged or stale: rebuild or reinstall the kernels");
  }
  return Status::Ok();
}

// NaN and Infinity are not JSON (RFC 8259), although Python's json reads them: a manifest
// holding one is refused as syntax, as the Python reader does.
static bool HoldsNonFinite(const JsonValue &v) {
  if (v.type() == JsonValue::Type::kFloat) {
    const std::string &t = v.number_text();
    return t == "NaN" || t == "Infinity" || t == "-Infinity";
  }
  for (const JsonValue &item : v.items()) {
    if (HoldsNonFinite(item)) return true;
  }
  for (const auto &member : v.members()) {
    if (HoldsNonFinite(member.second)) return true;
  }
  return false;
}

Result<KernelManifest> ParseManifest(const std::string &text, const ManifestCheck &check) {
  KernelManifest m;
  Status st = ParseJson(text, &m.document);
  if (!st.ok()) {
    if (st.kind() == "duplicate_key") return Status::Error(kKindSchema, "manifest: " + st.message());
    return Status::Error(kKindSyntax, "manifest is not valid JSON: " + st.message());
  }
  if (HoldsNonFinite(m.document)) {
    return Status::Error(kKindSyntax, "manifest is not valid JSON: it holds NaN or Infinity");
  }
  const JsonValue &doc = m.document;
  if (!doc.is_object()) {
    return Status::Error(kKindSyntax, std::string("manifest must be a JSON object, found ") + TypeName(doc));
  }
  st = CheckVersion(doc);
  if (!st.ok()) return st;

  // Schema phase.
  ObjectReader r(doc, "<top>", &st);
  std::string ignored;
  int64_t version = 0;
  r.Keys({"format", "version", "soc", "vector_core_count", "toolchain", "kernel_source_sha256", "kernels"});
  r.Str("format", &ignored);
  r.Int("version", kManifestVersion, kManifestVersion, &version);
  if (r.Str("soc", &m.soc) && !IsSocName(m.soc)) r.Fail("soc must match [A-Za-z0-9_]+, found " + QuoteJsonString(m.soc));
  r.Int("vector_core_count", 1, kI64Max, &m.vector_core_count);
  if (r.Object("toolchain")) {
    ObjectReader t(*doc.Find("toolchain"), "toolchain", &st);
    if (t.Keys({"triton_ascend", "bishengir", "cann"}) && t.Str("triton_ascend", &m.triton_ascend) &&
        t.Str("bishengir", &m.bishengir)) {
      m.has_cann = !t.Get("cann")->is_null();
      if (m.has_cann) t.Str("cann", &m.cann);
    }
  }
  if (r.Str("kernel_source_sha256", &m.kernel_source_sha256) && !IsLowerHex64(m.kernel_source_sha256)) {
    r.Fail("kernel_source_sha256 must be 64 lowercase hex digits, found " + QuoteJsonString(m.kernel_source_sha256));
  }
  std::vector<RawKernel> raw;
  if (r.Array("kernels")) {
    const auto &items = doc.Find("kernels")->items();
    if (items.empty()) r.Fail("kernels must list at least one kernel");
    std::set<std::pair<std::string, std::string>> seen;
    for (size_t i = 0; i < items.size() && st.ok(); ++i) {
      const std::string path = "kernels[" + std::to_string(i) + "]";
      if (!items[i].is_object()) {
        r.Fail(path + " must be an object, found " + TypeName(items[i]));
        break;
      }
      RawKernel k;
      ReadKernel(items[i], path, &k, &st);
      if (st.ok() && !seen.insert({k.entry.op, k.entry.dtype}).second) {
        r.Fail(path + " repeats (op, dtype) = (" + k.entry.op + ", " + k.entry.dtype + ")");
      }
      raw.push_back(std::move(k));
    }
  }
  if (!st.ok()) return st;

  // Layout phase.
  for (size_t i = 0; i < raw.size(); ++i) {
    st = CheckLayout(raw[i].args, raw[i].entry, FindOp(raw[i].entry.op),
                     "kernels[" + std::to_string(i) + "].args", &raw[i].entry.args);
    if (!st.ok()) return st;
  }

  // Mismatch phase: the op definition and the folder.
  for (size_t i = 0; i < raw.size(); ++i) {
    const KernelEntry &e = raw[i].entry;
    const std::string path = "kernels[" + std::to_string(i) + "]";
    const OpDefinition *op = FindOp(e.op);
    if (op == nullptr) return MismatchError(path, "unknown op " + QuoteJsonString(e.op));
    const DTypeDefinition *dt = op->FindDType(e.dtype);
    if (dt == nullptr) return MismatchError(path, op->type_name + " has no dtype " + QuoteJsonString(e.dtype));
    if (e.entry != op->entry) {
      return MismatchError(path, "entry must be \"" + op->entry + "\", found " + QuoteJsonString(e.entry));
    }
    if (e.block_size != op->block_size) {
      return MismatchError(path, "block_size must be " + std::to_string(op->block_size) + ", found " +
                                     std::to_string(e.block_size));
    }
    if (e.has_binary && e.binary != dt->binary_name) {
      return MismatchError(path, "binary must be \"" + dt->binary_name + "\", found " + QuoteJsonString(e.binary));
    }
  }
  if (!check.expected_soc.empty() && m.soc != check.expected_soc) {
    return Status::Error(kKindMismatch, "manifest: soc is \"" + m.soc + "\" but it sits in the folder of SoC \"" +
                                            check.expected_soc + "\"; move it or rebuild the kernels for that SoC");
  }
  for (auto &k : raw) m.kernels.push_back(std::move(k.entry));

  // Checksum phase.
  if (!check.binary_dir.empty()) {
    for (const auto &e : m.kernels) {
      if (!e.has_binary) continue;
      std::vector<uint8_t> bytes;
      const std::string path = JoinPath(check.binary_dir, e.binary);
      st = ReadFileBytes(path, kMaxBinaryBytes, &bytes);
      if (!st.ok()) {
        return Status::Error(kKindChecksum, "kernel binary " + path + " cannot be read (" + st.message() +
                                                "); rebuild or reinstall the kernels");
      }
      st = VerifyBinary(e, m.soc, bytes);
      if (!st.ok()) return st;
    }
  }
  return m;
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
  Status st = ReadFileBytes(path, kMaxManifestBytes, &bytes);
  if (!st.ok()) return Status::Error(kKindIo, "kernel manifest " + path + ": " + st.message());
  return ParseManifest(std::string(bytes.begin(), bytes.end()), CheckForPath(path, check_files));
}

}  // namespace core
}  // namespace tf_ge_custom
