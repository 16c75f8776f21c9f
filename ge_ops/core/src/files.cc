#include "tf_ge_custom_core/files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tf_ge_custom {
namespace core {

Status ReadFileBytes(const std::string &path, uint64_t max_bytes, std::vector<uint8_t> *out) {
  out->clear();
  FILE *f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::Error(Code::kIo, "cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    return Status::Error(Code::kIo, path + " is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    std::fclose(f);
    return Status::Error(Code::kIo, path + " has " + std::to_string(st.st_size) + " bytes, more than the " +
                                        std::to_string(max_bytes) + " allowed");
  }
  out->resize(static_cast<size_t>(st.st_size));
  const size_t got = out->empty() ? 0 : std::fread(out->data(), 1, out->size(), f);
  const bool extra = std::fgetc(f) != EOF;  // the file grew while we read it
  std::fclose(f);
  if (got != out->size() || extra) {
    out->clear();
    return Status::Error(Code::kIo, "the size of " + path + " changed while it was read");
  }
  return Status::Ok();
}

std::string JoinPath(const std::string &a, const std::string &b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::string DirName(const std::string &path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string BaseName(const std::string &path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool IsDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> ListSubdirectories(const std::string &dir) {
  std::vector<std::string> names;
  DIR *d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const struct dirent *e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (IsDirectory(JoinPath(dir, name))) names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace core
}  // namespace tf_ge_custom
