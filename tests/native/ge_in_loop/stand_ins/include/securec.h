// STAND-IN, not CANN's secure C library (the real one is in neither public repository): the
// bounds-checked calls GE's headers make, written from their use there. Unproven: the real
// library's exact refusal codes and limits (SECUREC_MEM_MAX_LEN's value is chosen here);
// the adapter itself calls none of them.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_SECUREC_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_SECUREC_H_
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

typedef int errno_t;
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#ifndef EOK
#define EOK 0
#endif

// A count beyond the destination is refused (non-zero), the destination left untouched.
inline errno_t memcpy_s(void *dest, size_t dest_max, const void *src, size_t count) {
  if (dest == nullptr || src == nullptr || count > dest_max) return 1;
  if (count != 0) std::memcpy(dest, src, count);
  return EOK;
}
inline errno_t memmove_s(void *dest, size_t dest_max, const void *src, size_t count) {
  if (dest == nullptr || src == nullptr || count > dest_max) return 1;
  if (count != 0) std::memmove(dest, src, count);
  return EOK;
}
inline errno_t memset_s(void *dest, size_t dest_max, int c, size_t count) {
  if (dest == nullptr || count > dest_max) return 1;
  if (count != 0) std::memset(dest, c, count);
  return EOK;
}
// Copies src with its terminator; refused when it does not fit.
inline errno_t strcpy_s(char *dest, size_t dest_max, const char *src) {
  if (dest == nullptr || src == nullptr || std::strlen(src) + 1 > dest_max) return 1;
  std::memcpy(dest, src, std::strlen(src) + 1);
  return EOK;
}
// At most count characters and a terminator into dest; -1 when they do not fit.
inline int vsnprintf_s(char *dest, size_t dest_max, size_t count, const char *format, va_list args) {
  if (dest == nullptr || format == nullptr || dest_max == 0 || count >= dest_max) return -1;
  const int n = std::vsnprintf(dest, count + 1, format, args);
  return (n < 0 || static_cast<size_t>(n) > count) ? -1 : n;
}
#endif
