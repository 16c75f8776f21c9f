// STAND-IN for GE's error manager (liberror_manager, a closed binary of the toolkit): the
// reports made through metadef's public error_manager.h (REPORT_INNER_ERROR, i.e.
// error_message::ReportInnerError) are RECORDED here and written to stderr prefixed
// "[GE stand-in error report]". A report whose text and appended location do not fit
// LIMIT_PER_MESSAGE is dropped, as GE's own stand-in for the manager drops it. Unproven: that
// the real manager keeps exactly what GE's stand-in keeps, and that GE hands it to TF Adapter.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_ERROR_MANAGER_STAND_IN_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_ERROR_MANAGER_STAND_IN_H_
#include <string>
#include <vector>

namespace error_manager_stand_in {

struct Report {
  std::string error_code;
  std::string message;   // the formatted text
  std::string location;  // "[FUNC:<function>][FILE:<file name>][LINE:<line>]", appended to it
};

// The reports kept since the last call, and forgets them.
std::vector<Report> Take();
// The sizes (text and location) of the reports dropped since the last call, and forgets them.
std::vector<size_t> TakeDropped();

}  // namespace error_manager_stand_in
#endif
