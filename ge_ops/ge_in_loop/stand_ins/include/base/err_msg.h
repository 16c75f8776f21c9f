// STAND-IN, not metadef's base/err_msg.h (its implementation, the error manager, is not
// among the sources built here): the report macros GE's checker.h and ge_log.h expand to.
// A report is written to stderr prefixed "[GE stand-in error report]"; unproven: how the
// real error manager collects, formats and hands reports to the user.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_BASE_ERR_MSG_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_BASE_ERR_MSG_H_
#include <cstdarg>  // GE's checker.h uses va_list and relies on this header for it
#include <cstdio>
#include <string>
#include <vector>

#define REPORT_INNER_ERR_MSG(code, fmt, ...) \
  (void)std::fprintf(stderr, "[GE stand-in error report] %s " fmt "\n", (code), ##__VA_ARGS__)
#define REPORT_INNER_ERROR REPORT_INNER_ERR_MSG
#define REPORT_CALL_ERROR REPORT_INNER_ERR_MSG
#define REPORT_PREDEFINED_ERR_MSG(code, keys, values) \
  (void)std::fprintf(stderr, "[GE stand-in error report] %s (predefined)\n", (code))
#define REPORT_INPUT_ERROR REPORT_PREDEFINED_ERR_MSG
#define REPORT_ENV_ERROR REPORT_PREDEFINED_ERR_MSG
#endif
