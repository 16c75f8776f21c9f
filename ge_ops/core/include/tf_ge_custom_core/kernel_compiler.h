// Compiling a kernel on this host: the package's own Python builder, run in a child process
// (docs/kernels.md, "Compiled on first graph build"; docs/ge-library.md, "What Compile does").
//
// KernelCompiler is the small interface KernelSupply (kernel_supply.h) uses; BuilderProcess
// is the real one. It finds the Python (TF_GE_CUSTOM_PYTHON, else the one the build record
// names, else the one beside the package's site-packages), asks it once per process where
// the cache is and what the current toolchain's key is (--describe), and runs one compile
// per (SoC, dtype) with a timeout (TF_GE_CUSTOM_COMPILE_TIMEOUT seconds, default 900),
// its output kept in a log beside the entry. A failure is one message naming the SoC, the
// dtype, the missing tool (hivmc, bishengir-compile, triton-ascend) when that is why, the
// log and its last lines.
#ifndef TF_GE_CUSTOM_CORE_KERNEL_COMPILER_H_
#define TF_GE_CUSTOM_CORE_KERNEL_COMPILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tf_ge_custom_core/compile_cache.h"
#include "tf_ge_custom_core/process_runner.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  // Where the cache is, and the key under which the current toolchain's kernels go.
  virtual Result<CacheTarget> Locate() = 0;
  // Build op's kernel for (soc, dtype) into <cache>/<soc>/<key>/<dtype>; ok means the entry
  // is there (built now, or by another process meanwhile).
  virtual Status Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                         const std::string &dtype) = 0;
};

constexpr const char *kPythonEnv = "TF_GE_CUSTOM_PYTHON";
constexpr const char *kCompileTimeoutEnv = "TF_GE_CUSTOM_COMPILE_TIMEOUT";
constexpr int64_t kDefaultCompileTimeoutSeconds = 900;
constexpr int64_t kMaxCompileTimeoutSeconds = 24 * 3600;
constexpr int64_t kDescribeTimeoutSeconds = 120;
// The last line the Python builder prints: the marker, then one JSON object.
constexpr const char *kResultMark = "TF_GE_CUSTOM_COMPILE ";
constexpr const char *kBuilderModule = "tf_ge_custom.kernels.compile_kernel";

// getenv, or a map in tests.
using EnvLookup = std::function<const char *(const char *)>;

// How to run the builder.
struct BuilderSettings {
  std::string python;          // interpreter path
  std::string python_from;     // "TF_GE_CUSTOM_PYTHON", "the build record", "beside the package"
  std::string package_parent;  // the folder holding tf_ge_custom/, first on the child's sys.path
  int64_t timeout_s = kDefaultCompileTimeoutSeconds;
};

// From the OPP root this library sits in (<package_parent>/tf_ge_custom/opp) and the
// environment. Refuses (kLocation) when the OPP root is not inside the package, when no
// Python is found (naming each place looked at), or a bad timeout value.
Result<BuilderSettings> FindBuilder(const std::string &opp_root, const EnvLookup &env);

// The command lines: the Python with a -c bootstrap that puts package_parent first on
// sys.path, keeps TensorFlow out of the import and runs kBuilderModule with the arguments.
std::vector<std::string> DescribeCommand(const BuilderSettings &settings);
std::vector<std::string> CompileCommand(const BuilderSettings &settings, const CacheTarget &target,
                                        const std::string &soc, const std::string &dtype);

// The builder's last result line in output, as parsed JSON fields.
struct BuilderResult {
  bool ok = false;
  std::string kind;   // on failure: "toolchain", "build", "cache", "usage"
  std::string error;  // on failure: one line
  std::vector<std::string> missing;  // tools, when kind is "toolchain"
  std::string entry;  // on a compile's success
  bool built = false;
  CacheTarget target;  // --describe: cache_dir and key
};
// kCorrupt when there is no result line or it is not the expected JSON.
Result<BuilderResult> ParseBuilderResult(const std::string &output);

class BuilderProcess : public KernelCompiler {
 public:
  BuilderProcess(std::string opp_root, EnvLookup env, std::shared_ptr<ProcessRunner> runner);
  Result<CacheTarget> Locate() override;  // runs --describe once; later calls reuse it
  Status Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                 const std::string &dtype) override;

 private:
  Result<BuilderSettings> Settings();

  const std::string opp_root_;
  const EnvLookup env_;
  const std::shared_ptr<ProcessRunner> runner_;
  std::mutex mutex_;
  bool located_ = false;
  Status located_status_;
  CacheTarget target_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_COMPILER_H_
