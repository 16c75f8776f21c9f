#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

const char *CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kBadDType: return "dtype";
    case Code::kBadShape: return "shape";
    case Code::kUnknownSoc: return "unknown_soc";
    case Code::kMissingDType: return "missing_dtype";
    case Code::kNoBinary: return "no_binary";
    case Code::kIo: return "io";
    case Code::kBadManifest: return "manifest";
    case Code::kChecksum: return "checksum";
    case Code::kNoEntrySymbol: return "entry_symbol";
    case Code::kOutdated: return "outdated";
    case Code::kOversized: return "oversized";
    case Code::kTruncated: return "truncated";
    case Code::kBadMagic: return "magic";
    case Code::kBadVersion: return "version";
    case Code::kCorrupt: return "corrupt";
    case Code::kOutOfRange: return "out_of_range";
    case Code::kUnsupported: return "unsupported";
    case Code::kLocation: return "location";
    case Code::kConflict: return "conflict";
    case Code::kUntrusted: return "untrusted";
    case Code::kBadNodeInfo: return "bad_node_info";
    case Code::kRuntime: return "runtime";
    case Code::kInternal: return "internal";
  }
  return "?";
}

Status Status::Error(Code code, std::string message) {
  Status s;
  s.code_ = code == Code::kOk ? Code::kInternal : code;  // an error is never ok
  s.message_ = std::move(message);
  return s;
}

Status Status::ApiError(std::string api, const std::string &what) {
  Status s = Error(Code::kRuntime, api + " " + what);
  s.api_ = std::move(api);
  return s;
}

std::string Status::ToString() const { return ok() ? std::string("ok") : std::string(CodeName(code_)) + ": " + message_; }

Status Status::WithContext(const std::string &context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ += " (" + context + ")";
  return s;
}

Status Status::WithPrefix(const std::string &prefix) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = prefix + ": " + s.message_;
  return s;
}

}  // namespace core
}  // namespace tf_ge_custom
