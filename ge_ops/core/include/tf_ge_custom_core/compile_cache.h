// The per-user kernel cache as the GE library reads it (docs/kernels.md, "Compiled on first
// graph build"): kernels compiled on this host for a SoC or dtype the package has no npubin
// for, one builder output per entry:
//
//   <cache>/<SoC>/<key>/<op>/<dtype>/manifest.json (+ its npubins)
//
// <op> is the op type (AddCustom), so two ops sharing a dtype never share an entry; an entry
// of the layout before op folders (<cache>/<SoC>/<key>/<dtype>/) is not read (a compile
// fills the op's own folder).
//
// The package's Python builder (tf_ge_custom.kernels.cache) is the one writer: it takes the
// entry's lock, builds aside and renames the finished folder into place, so a manifest.json
// here is always a whole entry. Where the cache is and the key of the current toolchain come
// from that builder too (--describe, kernel_compiler.h): this side only joins the layout,
// refuses names that would leave it, and never writes an entry. What it reads must pass the
// trust rule (trust.h): KernelSupply checks the cache folder, KernelRegistry::AddCompiled
// every file of an entry.
#ifndef TF_GE_CUSTOM_CORE_COMPILE_CACHE_H_
#define TF_GE_CUSTOM_CORE_COMPILE_CACHE_H_

#include <string>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Where entries of the current toolchain go.
struct CacheTarget {
  std::string cache_dir;  // absolute
  std::string key;        // <source sha[:16]>-triton_ascend_<v>-bishengir_<v>-cann_<v>
};

// A SoC, key, op type or dtype that can be one folder name: [A-Za-z0-9._+-]+, not starting with '.'.
bool IsCacheName(const std::string &name);

// <cache>/<SoC>/<key>. A target that is not absolute or a key that is not one folder name is
// kInternal, a SoC that cannot name a folder kUnknownSoc: never a path outside the cache.
Result<std::string> CacheKeyDir(const CacheTarget &target, const std::string &soc);
// <cache>/<SoC>/<key>/<op>/<dtype> (a dtype that cannot name a folder: kBadDType; an op type:
// kInternal, since op types come from the generated op table).
Result<std::string> CacheEntryDir(const CacheTarget &target, const std::string &soc, const std::string &op,
                                  const std::string &dtype);

// Whether <entry>/manifest.json is a regular file (the entry was renamed into place).
bool CacheEntryPresent(const std::string &entry_dir);

// mkdir -p, each new folder 0700 whatever the umask (kPrivateFolderMode, trust.h); kIo naming
// the folder that cannot be made.
Status MakeDirectories(const std::string &path);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_COMPILE_CACHE_H_
