// Compiling a kernel on this host: the package's own Python builder, run in a child process
// (docs/kernels.md, "Compiled on first graph build"; docs/ge-library.md, "What Compile does").
//
// KernelCompiler is the small interface KernelSupply (kernel_supply.h) uses; BuilderProcess
// is the real one. Which Python runs the builder: TF_GE_CUSTOM_PYTHON when set (only it: an
// absolute path that passes the trust rule, trust.h);
// else the Python whose site-packages hold this package, then the one the build record
// names, then the builder venv `tf-ge-custom setup-builder` made (for Python 3.7 hosts,
// where triton-ascend has no build) -- each taken only when its --describe imports both
// tf_ge_custom and triton; a refusal names every candidate and why. Once per process (a
// timeout or crash of --describe is tried again, kMaxCompileTries times) it asks where the
// cache is and what the current toolchain's key is, and runs one compile per (SoC, dtype)
// with a timeout (TF_GE_CUSTOM_COMPILE_TIMEOUT seconds, default 900), its output kept in a
// log beside the entry and handed line by line to the progress sink (GE's log) as it runs.
// A failure is one message naming the SoC, the dtype, the missing tool (hivmc,
// bishengir-compile, triton-ascend) when that is why, the log and its last lines; a missing
// tool or a refused SoC is kUnsupported (definite), a timeout or crash kRuntime (retried).
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
  // Build op's kernel for (soc, dtype) into <cache>/<soc>/<key>/<op>/<dtype>; ok means the entry
  // is there (built now, or by another process meanwhile).
  virtual Status Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                         const std::string &dtype) = 0;
};

constexpr const char *kPythonEnv = "TF_GE_CUSTOM_PYTHON";
constexpr const char *kCompileTimeoutEnv = "TF_GE_CUSTOM_COMPILE_TIMEOUT";
constexpr int64_t kDefaultCompileTimeoutSeconds = 900;
constexpr int64_t kMaxCompileTimeoutSeconds = 24 * 3600;
constexpr int64_t kDescribeTimeoutSeconds = 120;
// Tries per process of a step that failed in a way worth retrying (a timeout, a crash): the
// builder's --describe, and each (SoC, op, dtype) compile (kernel_supply.h).
constexpr int kMaxCompileTries = 3;
// The last line the Python builder prints: the marker, then one JSON object.
constexpr const char *kResultMark = "TF_GE_CUSTOM_COMPILE ";
constexpr const char *kBuilderModule = "tf_ge_custom.kernels.compile_kernel";
// The builder venv of `tf-ge-custom setup-builder`: this folder, else
// $XDG_DATA_HOME/tf-ge-custom/builder, else $HOME/.local/share/tf-ge-custom/builder.
constexpr const char *kBuilderVenvEnv = "TF_GE_CUSTOM_BUILDER";
constexpr const char *kFromBuilderVenv = "the setup-builder venv";

// getenv, or a map in tests.
using EnvLookup = std::function<const char *(const char *)>;

struct BuilderCandidate {
  std::string python;
  std::string python_from;  // "TF_GE_CUSTOM_PYTHON", "beside the package", "the build record", kFromBuilderVenv
};

// How to run the builder.
struct BuilderSettings {
  std::string python;          // interpreter path (the first candidate, until Locate picks one)
  std::string python_from;     // where it came from (BuilderCandidate::python_from)
  // The folder holding tf_ge_custom/, first on the child's sys.path; empty for the builder
  // venv, which holds its own copy of the package's pure-Python builder.
  std::string package_parent;
  int64_t timeout_s = kDefaultCompileTimeoutSeconds;
  std::vector<BuilderCandidate> others;  // tried in order when the first fails its check
};

// The builder venv's Python (kBuilderVenvEnv, XDG_DATA_HOME, HOME), or "" when none can be named.
std::string BuilderVenvPython(const EnvLookup &env);

// From the OPP root this library sits in (<package_parent>/tf_ge_custom/opp) and the
// environment. Refuses (kLocation) when the OPP root is not inside the package, when no
// Python is found (naming each place looked at), a bad timeout value, a relative
// TF_GE_CUSTOM_PYTHON or TF_GE_CUSTOM_BUILDER; kUntrusted when TF_GE_CUSTOM_PYTHON fails the
// trust rule (trust.h). A builder venv Python that fails it is no candidate.
Result<BuilderSettings> FindBuilder(const std::string &opp_root, const EnvLookup &env);

// settings with candidate as the Python to run (package_parent cleared for the builder venv).
BuilderSettings WithCandidate(const BuilderSettings &settings, const BuilderCandidate &candidate,
                              const std::string &package_parent);

// The command lines: the Python with a -c bootstrap that puts package_parent first on
// sys.path, keeps TensorFlow out of the import and runs kBuilderModule with the arguments.
std::vector<std::string> DescribeCommand(const BuilderSettings &settings);
// The compile names the op (--op): its entry is <cache>/<SoC>/<key>/<op>/<dtype>.
std::vector<std::string> CompileCommand(const BuilderSettings &settings, const CacheTarget &target,
                                        const std::string &op, const std::string &soc, const std::string &dtype);

// The builder's last result line in output, as parsed JSON fields.
struct BuilderResult {
  bool ok = false;
  std::string kind;   // on failure: "toolchain", "build", "cache", "usage"
  std::string error;  // on failure: one line
  std::vector<std::string> missing;  // tools, when kind is "toolchain"
  std::string entry;  // on a compile's success
  bool built = false;
  CacheTarget target;  // --describe: cache_dir and key
  std::string python_version;  // --describe: "3.7.16"
  std::string triton_error;    // --describe: why `import triton` failed (empty: it imported)
};
// kCorrupt when there is no result line or it is not the expected JSON.
Result<BuilderResult> ParseBuilderResult(const std::string &output);

class BuilderProcess : public KernelCompiler {
 public:
  BuilderProcess(std::string opp_root, EnvLookup env, std::shared_ptr<ProcessRunner> runner);
  // Runs --describe with each candidate until one passes; keeps the answer, and a definite
  // refusal; a timeout or crash is tried again next call, kMaxCompileTries times in all.
  Result<CacheTarget> Locate() override;
  Status Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                 const std::string &dtype) override;
  // Each output line of a running compile, as it arrives (GE's log).
  void SetProgress(std::function<void(const std::string &)> progress) { progress_ = std::move(progress); }
  int describe_runs() const { return describe_runs_; }

 private:
  Result<BuilderSettings> Settings();

  const std::string opp_root_;
  const EnvLookup env_;
  const std::shared_ptr<ProcessRunner> runner_;
  std::function<void(const std::string &)> progress_;
  std::mutex mutex_;
  bool located_ = false;
  Status located_status_;
  int locate_tries_ = 0;
  int describe_runs_ = 0;
  CacheTarget target_;
  BuilderSettings chosen_;
};

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_KERNEL_COMPILER_H_
