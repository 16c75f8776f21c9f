// STAND-IN, not CANN's logging header (dlog_pub.h ships with the closed "toolchain"
// component): the module id and the four log calls GE's ge_log.h expands to. Errors and
// warnings GE logs go to stderr prefixed "[GE stand-in log]" (so a test can read what GE
// itself refused); info and debug are dropped. Unproven: the real logger's levels and sinks.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_DLOG_PUB_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_DLOG_PUB_H_
#include <cstdint>
#include <cstdio>

// Values invented: only their use as a module id matters here.
enum { GE = 45 };
#define RUN_LOG_MASK 0x01000000
#define DLOG_DEBUG 0
#define DLOG_INFO 1
#define DLOG_WARN 2
#define DLOG_ERROR 3

extern "C" int CheckLogLevel(int module_id, int level);

#define TF_GE_CUSTOM_STAND_IN_LOG(level, module_id, fmt, ...)                   \
  do {                                                                          \
    if (CheckLogLevel((module_id), (level)) == 1) {                             \
      std::fprintf(stderr, "[GE stand-in log] " fmt "\n", ##__VA_ARGS__);       \
    }                                                                           \
  } while (0)
#define dlog_error(module_id, fmt, ...) TF_GE_CUSTOM_STAND_IN_LOG(DLOG_ERROR, module_id, fmt, ##__VA_ARGS__)
#define dlog_warn(module_id, fmt, ...) TF_GE_CUSTOM_STAND_IN_LOG(DLOG_WARN, module_id, fmt, ##__VA_ARGS__)
#define dlog_info(module_id, fmt, ...) TF_GE_CUSTOM_STAND_IN_LOG(DLOG_INFO, module_id, fmt, ##__VA_ARGS__)
#define dlog_debug(module_id, fmt, ...) TF_GE_CUSTOM_STAND_IN_LOG(DLOG_DEBUG, module_id, fmt, ##__VA_ARGS__)
#endif
