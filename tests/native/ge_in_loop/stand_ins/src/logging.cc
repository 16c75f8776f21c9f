// STAND-IN for the logger's CheckLogLevel (include/dlog_pub.h): errors and warnings on.
#include "dlog_pub.h"

extern "C" int CheckLogLevel(int, int level) { return level >= DLOG_WARN ? 1 : 0; }
