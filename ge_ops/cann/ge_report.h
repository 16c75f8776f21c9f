// Where a GE user looks first: every refusal and failure of the GE library goes to GE's
// error manager (the message GE hands back to TF Adapter and writes to its log, plog) as well
// as to stderr; progress lines of a long kernel compile go to GE's log while it runs.
//
// The public API used: metadef's common/util/error_manager/error_manager.h (REPORT_INNER_ERROR,
// i.e. error_message::ReportInnerError), compile-checked against hicann/metadef v9.2.0-beta.1
// and HEAD. The code is EZ9999, GE's code for a failure inside an operator's own code (its
// infershape pass and tiling registry report an op's failing function so; GE's own checks use
// E19999): docs/ge-library.md, "Reports GE keeps". A toolkit whose include tree lacks that
// header builds with stderr only (TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER says which). GE's log
// macros (common/ge_common/debug/ge_log.h) need dlog_pub.h, which no public repository holds:
// they are used where the toolkit has both headers; GE in the loop compiles that branch
// against metadef's ge_log.h with a stand-in dlog_pub.h.
#ifndef TF_GE_CUSTOM_CANN_GE_REPORT_H_
#define TF_GE_CUSTOM_CANN_GE_REPORT_H_

#include <cstddef>
#include <string>

namespace tf_ge_custom {
namespace cann {

// What went wrong and where: the op type, the node (empty when GE gave none), the SoC (empty
// when unknown), the message (which names the fix).
struct Failure {
  std::string op_type;
  std::string node;
  std::string soc;
  std::string message;
};

// The most a report to GE's error manager holds. metadef's manager drops a report whose text
// and the "[FUNC:..][FILE:..][LINE:..]" it appends do not fit LIMIT_PER_MESSAGE (1024 bytes
// with the NUL): 800 leaves that suffix 223 bytes.
constexpr size_t kReportBytes = 800;

// "[tf-ge-custom] AddCustom node add_1 (SoC Ascend910B4-1): <message>": the full text.
std::string FailureLine(const Failure &failure);

// What GE's error manager gets: the full line when it fits kReportBytes on one line; else one
// line of at most kReportBytes naming the op, the node, the SoC, what failed (the message up
// to its builder and log details, cut), the builder's log when the message names one, and
// where the full text is.
std::string ReportLine(const Failure &failure);

// The full line to stderr (written at once, so concurrent nodes do not interleave) and to
// GE's log (in numbered pieces when long: GE's logger keeps one message of limited length);
// the short ReportLine to GE's error manager.
void ReportFailure(const Failure &failure);

// One progress line (a kernel compile's output, the kernel set chosen): GE's log at info
// level where the toolkit has its log header, and stderr.
void ReportProgress(const std::string &op_type, const std::string &line);

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_GE_REPORT_H_
