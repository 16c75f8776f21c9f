// Status and Result: how every core function reports a refusal without exceptions, so the
// CANN adapter can turn any of them into one log line and GRAPH_FAILED.
//
// A refusal has a code from the closed set below, a message (what was expected, what was
// found, what to do) and, for a failing runtime call, that call's name as a separate field.
// Both types are [[nodiscard]]: a Status nobody looks at is a bug the compiler reports.
#ifndef TF_GE_CUSTOM_CORE_STATUS_H_
#define TF_GE_CUSTOM_CORE_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace tf_ge_custom {
namespace core {

enum class Code {
  kOk = 0,
  kBadDType,      // the op's inputs have a dtype it does not support, or differ
  kBadShape,      // the op's inputs have shapes the kernel cannot take
  kUnknownSoc,    // no kernels for the device's SoC
  kMissingDType,  // the SoC's kernels lack this dtype
  kNoBinary,      // the manifest lists the kernel without an npubin (built IR only)
  kIo,            // a file cannot be read
  kBadManifest,   // a kernel manifest this library cannot use
  kChecksum,      // a kernel binary's size or sha256 differs from its manifest
  kNoEntrySymbol, // a kernel binary that defines no global function named its entry (elf_symbols.h)
  kOutdated,      // a kernel set or model written under an earlier entry naming: treated as absent
  kOversized,     // serialized kernels beyond the size limits
  kTruncated,     // serialized kernels cut short
  kBadMagic,      // serialized data that is not this package's kernels
  kBadVersion,    // a format version this library does not read (manifest, serialized kernels)
  kCorrupt,       // serialized kernels damaged or inconsistent
  kOutOfRange,    // a count, size or grid that does not fit what the kernel or launch takes
  kUnsupported,   // valid, but beyond what this library does (e.g. a lock value memset cannot write)
  kLocation,      // the GE library is not where an OPP root keeps it
  kConflict,      // two models' kernels under one key that the library cannot keep apart (model_kernels.h)
  kUntrusted,     // a path the trust rule refuses (trust.h): another user's, writable by others, ...
  kBadNodeInfo,   // GE's node-info block has no attribute area, or one too small for what it claims (node_attrs.h)
  kRuntime,       // a runtime call (ACL, GE's execution context) failed: api() names it
  kInternal,      // a broken invariant or an exception
};

// "unknown_soc", "checksum", ...: the code as messages and tests spell it.
const char *CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  static Status Error(Code code, std::string message);
  // A failing runtime call: code kRuntime, api() == api, message "<api> <what>".
  static Status ApiError(std::string api, const std::string &what);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string &api() const { return api_; }
  const std::string &message() const { return message_; }
  std::string ToString() const;  // "ok", or "<code name>: <message>"

  // The same refusal, its message followed by " (<context>)" / preceded by "<prefix>: ".
  Status WithContext(const std::string &context) const;
  Status WithPrefix(const std::string &prefix) const;

 private:
  Code code_ = Code::kOk;
  std::string api_;
  std::string message_;
};

// A value, or the Status that says why there is none. T needs no default constructor.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::Error(Code::kInternal, "a Result was made from an ok Status without a value");
  }
  bool ok() const { return value_.has_value(); }
  const Status &status() const { return status_; }
  // Only when ok(); otherwise std::bad_optional_access (the CANN adapter catches it).
  const T &value() const & { return value_.value(); }
  T &value() & { return value_.value(); }
  T &&value() && { return std::move(value_.value()); }

 private:
  Status status_;
  std::optional<T> value_;
};

inline const Status &StatusOf(const Status &status) { return status; }
template <typename T>
const Status &StatusOf(const Result<T> &result) {
  return result.status();
}

}  // namespace core
}  // namespace tf_ge_custom

// Propagation: return the refusal of expr (a Status or a Result) from the calling function.
// Context is added once, where it is known (Status::WithContext), not at every return.
#define TF_GE_CUSTOM_RETURN_IF_ERROR(expr)                                                  \
  do {                                                                                      \
    const ::tf_ge_custom::core::Status tgc_status_ = ::tf_ge_custom::core::StatusOf(expr); \
    if (!tgc_status_.ok()) return tgc_status_;                                              \
  } while (0)
// TF_GE_CUSTOM_ASSIGN_OR_RETURN(auto x, F()): x is F()'s value, or F()'s Status is returned.
#define TF_GE_CUSTOM_ASSIGN_OR_RETURN(decl, expr) \
  TF_GE_CUSTOM_ASSIGN_OR_RETURN_IMPL_(TF_GE_CUSTOM_CONCAT_(tgc_result_, __LINE__), decl, expr)
#define TF_GE_CUSTOM_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                         \
  if (!tmp.ok()) return tmp.status();                        \
  decl = std::move(tmp).value()
#define TF_GE_CUSTOM_CONCAT_(a, b) TF_GE_CUSTOM_CONCAT_IMPL_(a, b)
#define TF_GE_CUSTOM_CONCAT_IMPL_(a, b) a##b

#endif  // TF_GE_CUSTOM_CORE_STATUS_H_
