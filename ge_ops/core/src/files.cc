#include "tf_ge_custom_core/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

Status OpenForWriting(const std::string &path, int flags, mode_t mode, int *fd) {
  *fd = -1;
  // O_TRUNC waits for the checks below: open would truncate whatever it reached first.
  const int opened = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (flags & O_APPEND),
                          mode);
  if (opened < 0) {
    const int error = errno;
    if (error == ELOOP) {
      return Status::Error(Code::kIo, path + " is a symbolic link; it is never written through (a link planted "
                                             "there would make this write into its target): remove it");
    }
    return Status::Error(Code::kIo, "cannot open " + path + " for writing: " + std::strerror(error));
  }
  struct stat st;
  std::string problem;
  if (fstat(opened, &st) != 0) {
    problem = std::string("cannot look at it: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "it is not a regular file";
  } else if (st.st_uid != geteuid()) {
    problem = "it belongs to uid " + std::to_string(st.st_uid) + ", not to this user";
  } else if (st.st_nlink != 1) {
    problem = "it has " + std::to_string(st.st_nlink) + " names (a hard link to another file would be written through)";
  } else if ((st.st_mode & 07777) != mode && fchmod(opened, mode) != 0) {
    problem = std::string("cannot set its mode: ") + std::strerror(errno);
  } else if ((flags & O_TRUNC) != 0 && ftruncate(opened, 0) != 0) {
    problem = std::string("cannot truncate it: ") + std::strerror(errno);
  }
  if (!problem.empty()) {
    close(opened);
    return Status::Error(Code::kIo, "refusing to write " + path + ": " + problem + "; remove it");
  }
  // O_NONBLOCK only kept the open from waiting on a FIFO (refused above); writes block as usual.
  fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK);
  *fd = opened;
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
