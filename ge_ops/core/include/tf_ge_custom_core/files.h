// Small file-system helpers shared by the manifest reader and the kernel registry.
#ifndef TF_GE_CUSTOM_CORE_FILES_H_
#define TF_GE_CUSTOM_CORE_FILES_H_

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

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_FILES_H_
