// Small file-system helpers shared by the manifest reader, the kernel registry and every
// file the core writes.
#ifndef TF_GE_CUSTOM_CORE_FILES_H_
#define TF_GE_CUSTOM_CORE_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Whole file, refusing anything larger than max_bytes (kind "io").
Status ReadFileBytes(const std::string &path, uint64_t max_bytes, std::vector<uint8_t> *out);
std::string JoinPath(const std::string &a, const std::string &b);
std::string DirName(const std::string &path);   // "a/b/c" -> "a/b"; "c" -> "."
std::string BaseName(const std::string &path);  // "a/b/c" -> "c"
bool IsDirectory(const std::string &path);
// Sorted names of the sub-folders of dir (empty when dir cannot be read).
std::vector<std::string> ListSubdirectories(const std::string &dir);

// The one way the core opens a file to write (a log, a lock): never through a symbolic
// link at its last component (O_NOFOLLOW: a link planted there would make us write into its
// target), and only a regular file of this user with one name (a hard link to another file
// would be written through as well). Created with mode (whatever the umask) when absent;
// flags adds O_APPEND or O_TRUNC. The same rule as atomic_files.open_no_follow in Python.
// *fd is the caller's to close.
Status OpenForWriting(const std::string &path, int flags, mode_t mode, int *fd);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_FILES_H_
