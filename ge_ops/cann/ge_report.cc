#include "ge_report.h"

#include <cstdio>

// The build sets TF_GE_CUSTOM_GE_ERROR_MANAGER=0 when the toolkit has no liberror_manager to
// link (ge_ops/CMakeLists.txt): then the header is not used either.
#if !defined(TF_GE_CUSTOM_GE_ERROR_MANAGER)
#define TF_GE_CUSTOM_GE_ERROR_MANAGER 1
#endif
#if defined(__has_include)
#if TF_GE_CUSTOM_GE_ERROR_MANAGER && __has_include("common/util/error_manager/error_manager.h")
#include "common/util/error_manager/error_manager.h"
#define TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER 1
#endif
#if __has_include("dlog_pub.h") && __has_include("common/ge_common/debug/ge_log.h")
#include "common/ge_common/debug/ge_log.h"
#define TF_GE_CUSTOM_HAVE_GE_LOG 1
#endif
#endif

// The syntax check sets this to prove the error-manager branch is the one compiled.
#if defined(TF_GE_CUSTOM_REQUIRE_GE_ERROR_MANAGER) && !defined(TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER)
#error "common/util/error_manager/error_manager.h is not on the include path"
#endif

namespace tf_ge_custom {
namespace cann {
namespace {

// GE's code for an error inside a component (the one its own REPORT_INNER_ERROR calls use).
constexpr const char *kInnerErrorCode = "E19999";

void WriteLine(const std::string &line) {
  const std::string text = line + "\n";
  std::fputs(text.c_str(), stderr);
}

}  // namespace

std::string FailureLine(const Failure &failure) {
  std::string where = failure.op_type;
  if (!failure.node.empty()) where += " node " + failure.node;
  if (!failure.soc.empty()) where += " (SoC " + failure.soc + ")";
  return "[tf-ge-custom] " + where + ": " + failure.message;
}

void ReportFailure(const Failure &failure) {
  const std::string line = FailureLine(failure);
  WriteLine(line);
#ifdef TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER
  // As data, never as a format: the message may hold '%'.
  REPORT_INNER_ERROR(kInnerErrorCode, "%s", line.c_str());
#else
  (void)kInnerErrorCode;
#endif
#ifdef TF_GE_CUSTOM_HAVE_GE_LOG
  GELOGE(ge::FAILED, "%s", line.c_str());
#endif
}

void ReportProgress(const std::string &op_type, const std::string &line) {
  const std::string text = "[tf-ge-custom] " + op_type + ": " + line;
  WriteLine(text);
#ifdef TF_GE_CUSTOM_HAVE_GE_LOG
  GELOGI("%s", text.c_str());
#endif
}

}  // namespace cann
}  // namespace tf_ge_custom
