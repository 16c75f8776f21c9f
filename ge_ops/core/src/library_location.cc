#include "tf_ge_custom_core/library_location.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <vector>

#include "tf_ge_custom_core/files.h"

namespace tf_ge_custom {
namespace core {

Result<std::string> FileContaining(const void *address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return Status::Error(Code::kLocation, "dladdr cannot name the file holding this library");
  }
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return std::string(info.dli_fname);
  return std::string(resolved);
}

Result<std::string> OppRootFromLibraryPath(const std::string &library_path) {
  // Walk up: <arch>, <os>, lib, op_graph.
  std::vector<std::string> parts;
  std::string dir = DirName(library_path);
  for (int i = 0; i < 4; ++i) {
    parts.push_back(BaseName(dir));
    dir = DirName(dir);
  }
  if (parts[2] != "lib" || parts[3] != "op_graph" || parts[0].empty() || parts[1].empty()) {
    return Status::Error(Code::kLocation, "the GE library " + library_path +
                                              " is not inside an OPP root (expected <root>/op_graph/lib/<os>/<arch>/); "
                                              "reinstall the package instead of copying the library");
  }
  return dir;
}

}  // namespace core
}  // namespace tf_ge_custom
