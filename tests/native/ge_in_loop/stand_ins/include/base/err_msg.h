// STAND-IN, not the toolkit's base/err_msg.h (in neither public repository): the report macros
// GE's checker.h and ge_log.h expand to. REPORT_INNER_ERROR and REPORT_CALL_ERROR come from
// metadef's public common/util/error_manager/error_manager.h (error_message::ReportInnerError,
// which the error-manager stand-in, src/error_manager.cc, implements); the other macros this
// header is expected to give write to stderr prefixed "[GE stand-in error report]".
// Unproven: how the real error manager collects, formats and hands reports to the user.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_BASE_ERR_MSG_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_BASE_ERR_MSG_H_
#include <cstdarg>  // GE's checker.h uses va_list and relies on this header for it
#include <cstdio>
#include <string>
#include <vector>

#include "common/util/error_manager/error_manager.h"

#ifndef REPORT_INNER_ERR_MSG
#define REPORT_INNER_ERR_MSG REPORT_INNER_ERROR
#endif
#ifndef REPORT_PREDEFINED_ERR_MSG
#define REPORT_PREDEFINED_ERR_MSG(code, keys, values) \
  (void)std::fprintf(stderr, "[GE stand-in error report] %s (predefined)\n", (code))
#endif
#endif
