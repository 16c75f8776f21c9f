// STAND-IN for CANN's mmpa, the OS abstraction layer GE calls (closed source, in neither
// repository): the functions GE's custom-op library loader (base/common/helper/
// custom_op_so_loader.cc, custom_op_registry_builder.cc) and metadef's file utilities
// (base/utils/file_utils.cc) use, each a thin POSIX call with the return convention the
// sources test for (EN_OK on success). It leaves unproven everything mmpa does beyond that:
// its error codes, its Windows side, any check it adds before the call.
#ifndef GE_IN_LOOP_STAND_IN_MMPA_API_H_
#define GE_IN_LOOP_STAND_IN_MMPA_API_H_

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define EN_OK 0
#define EN_ERROR (-1)
#define EN_INVALID_PARAM (-2)
#define M_F_OK F_OK
#define M_R_OK R_OK
#define M_W_OK W_OK
#define M_X_OK X_OK
#define M_IRUSR S_IRUSR
#define M_IWUSR S_IWUSR
#define M_IXUSR S_IXUSR
#define M_IRGRP S_IRGRP
#define M_IWGRP S_IWGRP
#define M_IXGRP S_IXGRP
#define M_IROTH S_IROTH
#define M_IWOTH S_IWOTH
#define M_IXOTH S_IXOTH
#define M_RDONLY O_RDONLY
#define M_WRONLY O_WRONLY
#define M_RDWR O_RDWR
#define M_CREAT O_CREAT
#define M_BINARY 0
#define MMPA_MAX_PATH PATH_MAX
// Environment lookups by name (mmpa keys them by an enumerator; here the name itself).
#define MM_ENV_ASCEND_WORK_PATH "ASCEND_WORK_PATH"
#define MM_SYS_GET_ENV(name, var) ((var) = std::getenv(name))
#define MMPA_RTLD_NOW RTLD_NOW
#define MMPA_RTLD_GLOBAL RTLD_GLOBAL
#define MMPA_RTLD_LOCAL RTLD_LOCAL

typedef char CHAR;
typedef int32_t INT32;
typedef uint32_t UINT32;
typedef mode_t mmMode_t;
typedef ssize_t mmSsize_t;
typedef struct dirent mmDirent;
typedef int (*mmFilter)(const mmDirent *entry);
typedef int (*mmSort)(const mmDirent **a, const mmDirent **b);

inline void *mmDlopen(const CHAR *path, INT32 flags) { return dlopen(path, flags); }
inline void *mmDlsym(void *handle, const CHAR *name) { return dlsym(handle, name); }
inline INT32 mmDlclose(void *handle) { return dlclose(handle); }
inline CHAR *mmDlerror() { return dlerror(); }

inline INT32 mmClose(INT32 fd) { return close(fd) == 0 ? EN_OK : EN_ERROR; }
inline INT32 mmOpen2(const CHAR *path, INT32 flags, mmMode_t mode) { return open(path, flags, mode); }
inline mmSsize_t mmWrite(INT32 fd, void *buf, UINT32 size) { return write(fd, buf, size); }
inline INT32 mmAccess(const CHAR *path) { return access(path, F_OK) == 0 ? EN_OK : EN_ERROR; }
inline INT32 mmAccess2(const CHAR *path, INT32 mode) { return access(path, mode) == 0 ? EN_OK : EN_ERROR; }
inline INT32 mmIsDir(const CHAR *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? EN_OK : EN_ERROR;
}
inline INT32 mmMkdir(const CHAR *path, mmMode_t mode) { return mkdir(path, mode) == 0 ? EN_OK : EN_ERROR; }
inline INT32 mmRealPath(const CHAR *path, CHAR *resolved, INT32 size) {
  if (path == nullptr || resolved == nullptr || size < PATH_MAX) return EN_INVALID_PARAM;
  return realpath(path, resolved) != nullptr ? EN_OK : EN_ERROR;
}
inline INT32 mmScandir(const CHAR *path, mmDirent ***entries, mmFilter filter, mmSort sort) {
  return scandir(path, entries, filter, reinterpret_cast<int (*)(const mmDirent **, const mmDirent **)>(sort));
}
inline INT32 mmGetErrorCode() { return errno; }
inline CHAR *mmGetErrorFormatMessage(INT32 code, CHAR *buf, size_t size) {
  if (buf == nullptr || size == 0) return nullptr;
  std::snprintf(buf, size, "%s", strerror(code));
  return buf;
}

#endif  // GE_IN_LOOP_STAND_IN_MMPA_API_H_
