// STAND-IN for GE's error manager: error_message::ReportInnerError as metadef's public
// common/util/error_manager/error_manager.h declares it, recording each report
// (include/error_manager_stand_in.h).
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
}  // namespace

std::vector<Report> Take() {
  std::lock_guard<std::mutex> lock(Mutex());
  std::vector<Report> out;
  out.swap(Reports());
  return out;
}

void Add(const std::string &code, const std::string &message) {
  std::fprintf(stderr, "[GE stand-in error report] %s %s\n", code.c_str(), message.c_str());
  std::lock_guard<std::mutex> lock(Mutex());
  Reports().push_back({code, message});
}

}  // namespace error_manager_stand_in

namespace error_message {

void ReportInnerError(const char_t *, const char_t *, uint32_t, const std::string error_code, const char_t *format,
                      ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(size > 0 ? static_cast<size_t>(size) : 0u, '\0');
  if (size > 0) std::vsnprintf(&text[0], text.size() + 1, format, again);
  va_end(again);
  error_manager_stand_in::Add(error_code, text);
}

}  // namespace error_message
