// STAND-IN for GE's error manager (liberror_manager, a closed binary of the toolkit): the
// reports made through metadef's public error_manager.h (REPORT_INNER_ERROR, i.e.
// error_message::ReportInnerError) are RECORDED here and written to stderr prefixed
// "[GE stand-in error report]". Unproven: what the real manager keeps, how it formats a report,
// and that GE hands it to TF Adapter.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_ERROR_MANAGER_STAND_IN_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_ERROR_MANAGER_STAND_IN_H_
#include <string>
#include <vector>

namespace error_manager_stand_in {

struct Report {
  std::string error_code;
  std::string message;  // the formatted text
};

// The reports since the last call, and forgets them.
std::vector<Report> Take();

}  // namespace error_manager_stand_in
#endif
