#include "tf_ge_custom_core/compile_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/trust.h"

namespace tf_ge_custom {
namespace core {

bool IsCacheName(const std::string &name) {
  if (name.empty() || name[0] == '.' || name.size() > 200) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '+' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> CacheKeyDir(const CacheTarget &target, const std::string &soc) {
  if (target.cache_dir.empty() || target.cache_dir[0] != '/') {
    return Status::Error(Code::kInternal, "the kernel cache folder \"" + target.cache_dir + "\" is not absolute");
  }
  if (!IsCacheName(target.key)) {
    return Status::Error(Code::kInternal, "the kernel cache key \"" + target.key + "\" cannot name a folder");
  }
  if (!IsCacheName(soc)) {
    return Status::Error(Code::kUnknownSoc, "the SoC name \"" + soc + "\" cannot name a kernel cache folder");
  }
  return JoinPath(JoinPath(target.cache_dir, soc), target.key);
}

Result<std::string> CacheEntryDir(const CacheTarget &target, const std::string &soc, const std::string &op,
                                  const std::string &dtype) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::string key_dir, CacheKeyDir(target, soc));
  if (!IsCacheName(op)) {
    return Status::Error(Code::kInternal, "the op type \"" + op + "\" cannot name a kernel cache folder");
  }
  if (!IsCacheName(dtype)) {
    return Status::Error(Code::kBadDType, "the dtype \"" + dtype + "\" cannot name a kernel cache folder");
  }
  return JoinPath(JoinPath(key_dir, op), dtype);
}

bool CacheEntryPresent(const std::string &entry_dir) {
  struct stat st;
  return stat(JoinPath(entry_dir, kManifestFileName).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status MakeDirectories(const std::string &path) {
  if (path.empty() || IsDirectory(path)) return Status::Ok();
  const std::string parent = DirName(path);
  if (parent != path) TF_GE_CUSTOM_RETURN_IF_ERROR(MakeDirectories(parent));
  if (mkdir(path.c_str(), kPrivateFolderMode) == 0) {
    // The umask may have taken bits away; a private folder is exactly 0700 (trust.h).
    if (chmod(path.c_str(), kPrivateFolderMode) != 0) {
      return Status::Error(Code::kIo, "cannot set the mode of " + path + ": " + std::strerror(errno));
    }
  } else if (errno != EEXIST) {
    return Status::Error(Code::kIo, "cannot create the folder " + path + ": " + std::strerror(errno));
  }
  if (!IsDirectory(path)) return Status::Error(Code::kIo, path + " exists and is not a folder");
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
