// Where a GE user looks first: every refusal and failure of the GE library goes to GE's
// error manager (the message GE hands back to TF Adapter and writes to its log, plog) as well
// as to stderr; progress lines of a long kernel compile go to GE's log while it runs.
//
// The public API used: metadef's common/util/error_manager/error_manager.h (REPORT_INNER_ERROR,
// i.e. error_message::ReportInnerError, with GE's inner-error code E19999), compile-checked
// against hicann/metadef v9.2.0-beta.1 and HEAD. A toolkit whose include tree lacks that
// header builds with stderr only (TF_GE_CUSTOM_HAVE_GE_ERROR_MANAGER says which). GE's log
// macros (common/ge_common/debug/ge_log.h) need dlog_pub.h, which no public repository holds:
// they are used where the toolkit has both headers, and that branch is not syntax-checked here.
#ifndef TF_GE_CUSTOM_CANN_GE_REPORT_H_
#define TF_GE_CUSTOM_CANN_GE_REPORT_H_

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

// "[tf-ge-custom] AddCustom node add_1 (SoC Ascend910B4-1): <message>"
std::string FailureLine(const Failure &failure);

// The line to stderr (written at once, so concurrent nodes do not interleave) and to GE's
// error manager.
void ReportFailure(const Failure &failure);

// One progress line (a kernel compile's output, the kernel set chosen): GE's log at info
// level where the toolkit has its log header, and stderr.
void ReportProgress(const std::string &op_type, const std::string &line);

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_GE_REPORT_H_
