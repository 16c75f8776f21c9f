// STAND-IN for GE's error manager: error_message::ReportInnerError as metadef's public
// common/util/error_manager/error_manager.h declares it, recording each report
// (include/error_manager_stand_in.h). It keeps what the real manager keeps: the text is
// formatted into LIMIT_PER_MESSAGE bytes (the header's constant, NUL included) and
// "[FUNC:<function>][FILE:<file name>][LINE:<line>]" appended in the same bytes; a report for
// which either does not fit is dropped, as GE's own stand-in for the manager does
// (tests/depends/error_manager/src/error_manager_stub.cc in hicann/ge, ReportInnerErrorMessage).
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "common/util/error_manager/error_manager.h"
#include "error_manager_stand_in.h"

namespace error_manager_stand_in {
namespace {
std::mutex &Mutex() {
  static std::mutex m;
  return m;
}
std::vector<Report> &Reports() {
  static std::vector<Report> r;
  return r;
}
std::vector<size_t> &Dropped() {
  static std::vector<size_t> d;
  return d;
}
}  // namespace

std::vector<Report> Take() {
  std::lock_guard<std::mutex> lock(Mutex());
  std::vector<Report> out;
  out.swap(Reports());
  return out;
}

std::vector<size_t> TakeDropped() {
  std::lock_guard<std::mutex> lock(Mutex());
  std::vector<size_t> out;
  out.swap(Dropped());
  return out;
}

void Add(const std::string &code, const std::string &message, const std::string &location) {
  std::fprintf(stderr, "[GE stand-in error report] %s %s%s\n", code.c_str(), message.c_str(), location.c_str());
  std::lock_guard<std::mutex> lock(Mutex());
  Reports().push_back({code, message, location});
}

void Drop(const std::string &code, size_t bytes) {
  std::fprintf(stderr, "[GE stand-in error report] %s dropped: %zu bytes with its location, over LIMIT_PER_MESSAGE %zu\n",
               code.c_str(), bytes, LIMIT_PER_MESSAGE);
  std::lock_guard<std::mutex> lock(Mutex());
  Dropped().push_back(bytes);
}

}  // namespace error_manager_stand_in

namespace error_message {

void ReportInnerError(const char_t *file_name, const char_t *func, uint32_t line, const std::string error_code,
                      const char_t *format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(size > 0 ? static_cast<size_t>(size) : 0u, '\0');
  if (size > 0) std::vsnprintf(&text[0], text.size() + 1, format, again);
  va_end(again);
  std::string file = file_name != nullptr ? file_name : "";
  const size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);  // TrimPath
  const std::string location = "[FUNC:" + std::string(func != nullptr ? func : "") + "][FILE:" + file +
                               "][LINE:" + std::to_string(line) + "]";
  // Text, location and the NUL in LIMIT_PER_MESSAGE bytes, or nothing is kept.
  if (size < 0 || text.size() + location.size() + 1 > LIMIT_PER_MESSAGE) {
    error_manager_stand_in::Drop(error_code, text.size() + location.size());
    return;
  }
  error_manager_stand_in::Add(error_code, text, location);
}

}  // namespace error_message
