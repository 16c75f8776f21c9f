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

// GE's code for a failure in an operator's own code (ge_report.h).
constexpr const char *kOperatorErrorCode = "EZ9999";

#ifdef TF_GE_CUSTOM_HAVE_GE_LOG
constexpr const char *kFullTextAt = "; full text on stderr and in GE's log";
#else
constexpr const char *kFullTextAt = "; full text on stderr";
#endif

// What the parts of a shortened report may take at most (the message gets the rest).
constexpr size_t kNodeBytes = 200, kSocBytes = 64, kLogPathBytes = 300;

void WriteLine(const std::string &line) {
  const std::string text = line + "\n";
  std::fputs(text.c_str(), stderr);
}

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// text as one line: line breaks and tabs become spaces.
std::string OneLine(std::string text) {
  for (char &c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

// At most max bytes: the front, "..." in place of the rest, never a UTF-8 sequence cut.
std::string KeepFront(const std::string &text, size_t max) {
  if (text.size() <= max) return text;
  if (max < 3) return std::string();
  size_t end = max - 3;
  while (end > 0 && IsContinuation(text[end])) --end;
  return text.substr(0, end) + "...";
}

// At most max bytes: "..." and the end (a scoped node name's last part, a path's file name).
std::string KeepBack(const std::string &text, size_t max) {
  if (text.size() <= max) return text;
  if (max < 3) return std::string();
  size_t start = text.size() - (max - 3);
  while (start < text.size() && IsContinuation(text[start])) ++start;
  return "..." + text.substr(start);
}

// The builder's log a compile failure names: "...; the log <path> ends: ..." (the wording of
// BuilderProcess::Compile, ge_ops/core/src/kernel_compiler.cc); empty when there is none.
std::string BuilderLogPath(const std::string &message) {
  const std::string before = "; the log ", after = " ends: ";
  const size_t at = message.find(before);
  if (at == std::string::npos) return std::string();
  const size_t start = at + before.size();
  const size_t end = message.find(after, start);
  if (end == std::string::npos || end == start) return std::string();
  return message.substr(start, end - start);
}

// What failed: the message without the builder and log details that follow it.
std::string WhatFailed(const std::string &message) {
  size_t end = message.size();
  for (const char *detail : {" (builder: ", "; the log "}) {
    const size_t at = message.find(detail);
    if (at != std::string::npos && at < end) end = at;
  }
  return message.substr(0, end);
}

std::string Where(const std::string &op_type, const std::string &node, const std::string &soc) {
  std::string where = op_type;
  if (!node.empty()) where += " node " + node;
  if (!soc.empty()) where += " (SoC " + soc + ")";
  return where;
}

#ifdef TF_GE_CUSTOM_HAVE_GE_LOG
// GE's logger keeps one message of limited length (MSG_LENGTH of dlog_pub.h); GE splits long
// text itself (te_fusion_log.h, guard_codegen.cc in hicann/ge): numbered pieces here.
void LogError(const std::string &text) {
  if (text.size() <= kReportBytes) {
    GELOGE(ge::FAILED, "%s", text.c_str());
    return;
  }
  const size_t pieces = (text.size() + kReportBytes - 1) / kReportBytes;
  for (size_t i = 0; i < pieces; ++i) {
    GELOGE(ge::FAILED, "(%zu/%zu) %s", i + 1, pieces, text.substr(i * kReportBytes, kReportBytes).c_str());
  }
}
#endif

}  // namespace

std::string FailureLine(const Failure &failure) {
  return "[tf-ge-custom] " + Where(failure.op_type, failure.node, failure.soc) + ": " + failure.message;
}

std::string ReportLine(const Failure &failure) {
  const std::string full = OneLine(FailureLine(failure));
  if (full.size() <= kReportBytes) return full;
  const std::string head = "[tf-ge-custom] " +
                           Where(KeepFront(OneLine(failure.op_type), kSocBytes), KeepBack(OneLine(failure.node), kNodeBytes),
                                 KeepFront(OneLine(failure.soc), kSocBytes)) +
                           ": ";
  const std::string log = BuilderLogPath(failure.message);
  const std::string tail =
      (log.empty() ? std::string() : "; builder log " + KeepBack(OneLine(log), kLogPathBytes)) + kFullTextAt;
  const size_t room = kReportBytes - head.size() - tail.size();  // >= 800 - 360 - 350 by the caps
  return head + KeepFront(OneLine(WhatFailed(failure.message)), room) + tail;
}

void ReportFailure(const Failure &failure) {
  const std::string line = FailureLine(failure);
  WriteLine(line);
#ifdef TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER
  // As data, never as a format: the message may hold '%'.
  const std::string report = ReportLine(failure);
  REPORT_INNER_ERROR(kOperatorErrorCode, "%s", report.c_str());
#else
  (void)kOperatorErrorCode;
#endif
#ifdef TF_GE_CUSTOM_HAVE_GE_LOG
  LogError(line);
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
