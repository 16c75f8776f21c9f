// Status and Result: how every core function reports a refusal without exceptions, so the
// CANN adapter can turn any of them into one log line and GRAPH_FAILED.
#ifndef TF_GE_CUSTOM_CORE_STATUS_H_
#define TF_GE_CUSTOM_CORE_STATUS_H_

#include <string>
#include <utility>

namespace tf_ge_custom {
namespace core {

class Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  // kind: a short machine-readable class ("schema", "truncated", ...); message: what was
  // expected, what was found, what to do.
  static Status Error(std::string kind, std::string message) {
    Status s;
    s.ok_ = false;
    s.kind_ = std::move(kind);
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return ok_; }
  const std::string &kind() const { return kind_; }
  const std::string &message() const { return message_; }
  std::string ToString() const { return ok_ ? std::string("ok") : kind_ + ": " + message_; }

 private:
  bool ok_ = true;
  std::string kind_;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }
  const T &value() const { return value_; }
  T &value() { return value_; }

 private:
  Status status_;
  T value_{};
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_STATUS_H_
