#include "tf_ge_custom_core/kernel_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/files.h"

namespace tf_ge_custom {
namespace core {
namespace {

using Json = nlohmann::json;

constexpr const char *kPackageName = "tf_ge_custom";
constexpr const char *kBuildRecord = "build_info.json";

// Run by the Python as `python -c BOOTSTRAP <package_parent> <args>`: sys.path[0] ('' for
// -c, the working directory) becomes the package's own site-packages, so the child imports
// the package this library belongs to and not a source tree the process happens to run in;
// the builtin keeps `import tf_ge_custom` from importing TensorFlow (tf_ge_custom/__init__.py).
constexpr const char *kBootstrap =
    "import builtins, runpy, sys\n"
    "builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True\n"
    "sys.path[0] = sys.argv.pop(1)\n"
    "runpy.run_module('tf_ge_custom.kernels.compile_kernel', run_name='__main__', alter_sys=True)\n";

bool IsExecutableFile(const std::string &path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string Env(const EnvLookup &env, const char *name) {
  const char *v = env ? env(name) : nullptr;
  return v == nullptr ? std::string() : std::string(v);
}

// kernels.python of <package>/build_info.json, or "" (with why in *note).
std::string RecordedPython(const std::string &package_dir, std::string *note) {
  const std::string path = JoinPath(package_dir, kBuildRecord);
  std::vector<uint8_t> bytes;
  const Status read = ReadFileBytes(path, 4u << 20, &bytes);
  if (!read.ok()) {
    *note = "the build record cannot be read (" + read.message() + ")";
    return "";
  }
  const Json doc = Json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!doc.is_object() || !doc.contains("kernels") || !doc["kernels"].is_object() ||
      !doc["kernels"].contains("python") || !doc["kernels"]["python"].is_string()) {
    *note = "the build record " + path + " names no Python (kernels.python)";
    return "";
  }
  return doc["kernels"]["python"].get<std::string>();
}

// <prefix>/lib/pythonX.Y/site-packages (or .../python3/dist-packages) -> <prefix>/bin/pythonX.Y
// or <prefix>/bin/python3, whichever exists.
std::vector<std::string> PythonsBeside(const std::string &package_parent) {
  std::vector<std::string> found;
  const std::string base = BaseName(package_parent);
  const std::string version_dir = BaseName(DirName(package_parent));
  if ((base != "site-packages" && base != "dist-packages") || version_dir.compare(0, 6, "python") != 0) return found;
  const std::string prefix = DirName(DirName(DirName(package_parent)));
  for (const std::string &name : {version_dir, std::string("python3")}) {
    const std::string candidate = JoinPath(JoinPath(prefix, "bin"), name);
    if (IsExecutableFile(candidate)) found.push_back(candidate);
  }
  return found;
}

Result<int64_t> ParseTimeout(const std::string &text) {
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || end == nullptr || *end != '\0' || v < 1 || v > kMaxCompileTimeoutSeconds) {
    return Status::Error(Code::kOutOfRange, std::string(kCompileTimeoutEnv) + "=" + text +
                                                " is not a number of seconds in [1, " +
                                                std::to_string(kMaxCompileTimeoutSeconds) + "]");
  }
  return static_cast<int64_t>(v);
}

std::vector<std::string> Command(const BuilderSettings &s, std::vector<std::string> args) {
  std::vector<std::string> argv = {s.python, "-c", kBootstrap, s.package_parent};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string StringField(const Json &doc, const char *key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string JoinWords(const std::vector<std::string> &words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  return s;
}

}  // namespace

Result<BuilderSettings> FindBuilder(const std::string &opp_root, const EnvLookup &env) {
  BuilderSettings s;
  const std::string package_dir = DirName(opp_root);
  if (BaseName(package_dir) != kPackageName || !IsDirectory(JoinPath(package_dir, "kernels"))) {
    return Status::Error(Code::kLocation, "the OPP root " + opp_root + " is not inside an installed " + kPackageName +
                                              " package (no " + JoinPath(package_dir, "kernels") +
                                              "), so there is no kernel builder to run; install the package "
                                              "with pip instead of copying its OPP root");
  }
  s.package_parent = DirName(package_dir);
  const std::string timeout = Env(env, kCompileTimeoutEnv);
  if (!timeout.empty()) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(s.timeout_s, ParseTimeout(timeout));
  }
  const std::string explicit_python = Env(env, kPythonEnv);
  if (!explicit_python.empty()) {
    if (!IsExecutableFile(explicit_python)) {
      return Status::Error(Code::kLocation, std::string(kPythonEnv) + "=" + explicit_python +
                                                " is not an executable file; point it at the Python that has "
                                                "tf-ge-custom and triton-ascend installed");
    }
    s.python = explicit_python;
    s.python_from = kPythonEnv;
    return s;
  }
  std::string note;
  const std::string recorded = RecordedPython(package_dir, &note);
  if (!recorded.empty()) {
    if (IsExecutableFile(recorded)) {
      s.python = recorded;
      s.python_from = "the build record";
      return s;
    }
    note = "the build record names " + recorded + ", which is not an executable file here";
  }
  const std::vector<std::string> beside = PythonsBeside(s.package_parent);
  if (!beside.empty()) {
    s.python = beside.front();
    s.python_from = "beside the package";
    return s;
  }
  return Status::Error(Code::kLocation, std::string("no Python to run the kernel builder: ") + kPythonEnv + " is unset, " +
                                            note + ", and there is no bin/python3 beside " + s.package_parent +
                                            "; set " + kPythonEnv +
                                            " to the Python that has tf-ge-custom and triton-ascend installed");
}

std::vector<std::string> DescribeCommand(const BuilderSettings &settings) { return Command(settings, {"--describe"}); }

std::vector<std::string> CompileCommand(const BuilderSettings &settings, const CacheTarget &target,
                                        const std::string &soc, const std::string &dtype) {
  return Command(settings, {"--soc", soc, "--dtype", dtype, "--cache", target.cache_dir, "--key", target.key});
}

Result<BuilderResult> ParseBuilderResult(const std::string &output) {
  const std::string mark = std::string("\n") + kResultMark;
  const size_t at = ("\n" + output).rfind(mark);
  if (at == std::string::npos) {
    return Status::Error(Code::kCorrupt, "the kernel builder printed no result line");
  }
  const size_t begin = at + mark.size() - 1;  // ("\n" + output) is one longer
  const size_t end = output.find('\n', begin);
  const std::string text = output.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  const Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("ok") || !doc["ok"].is_boolean()) {
    return Status::Error(Code::kCorrupt, "the kernel builder's result line is not the expected JSON: " + text.substr(0, 200));
  }
  BuilderResult r;
  r.ok = doc["ok"].get<bool>();
  r.kind = StringField(doc, "kind");
  r.error = StringField(doc, "error");
  r.entry = StringField(doc, "entry");
  r.target.cache_dir = StringField(doc, "cache_dir");
  r.target.key = StringField(doc, "key");
  auto built = doc.find("built");
  r.built = built != doc.end() && built->is_boolean() && built->get<bool>();
  auto missing = doc.find("missing");
  if (missing != doc.end() && missing->is_array()) {
    for (const auto &m : *missing) {
      if (m.is_string()) r.missing.push_back(m.get<std::string>());
    }
  }
  for (char &c : r.error) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return r;
}

BuilderProcess::BuilderProcess(std::string opp_root, EnvLookup env, std::shared_ptr<ProcessRunner> runner)
    : opp_root_(std::move(opp_root)), env_(std::move(env)), runner_(std::move(runner)) {}

Result<BuilderSettings> BuilderProcess::Settings() { return FindBuilder(opp_root_, env_); }

Result<CacheTarget> BuilderProcess::Locate() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (located_) {
    if (!located_status_.ok()) return located_status_;
    return target_;
  }
  auto found = [&]() -> Result<CacheTarget> {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const BuilderSettings s, Settings());
    ProcessSpec spec;
    spec.argv = DescribeCommand(s);
    spec.env = {{"PYTHONUNBUFFERED", "1"}};
    spec.timeout_ms = kDescribeTimeoutSeconds * 1000;
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const ProcessOutcome outcome, runner_->Run(spec));
    const std::string where = "the kernel builder (" + s.python + ", from " + s.python_from + ")";
    auto result = ParseBuilderResult(outcome.output_tail);
    if (!result.ok()) {
      return Status::Error(Code::kRuntime, where + " could not say where the kernel cache is: it stopped (" +
                                               outcome.Describe() + ") and " + result.status().message() +
                                               "; its output ends: " + TailLines(outcome.output_tail, 4, 600, kResultMark));
    }
    if (!result.value().ok) {
      return Status::Error(Code::kRuntime, where + " could not say where the kernel cache is: " + result.value().error);
    }
    const CacheTarget t = result.value().target;
    auto checked = CacheKeyDir(t, "SoC");  // a folder name that joins the layout
    if (!checked.ok()) return checked.status().WithPrefix(where + " described an unusable cache");
    return t;
  }();
  located_ = true;
  if (!found.ok()) {
    located_status_ = found.status();
    return located_status_;
  }
  target_ = found.value();
  return target_;
}

Status BuilderProcess::Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                               const std::string &dtype) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const BuilderSettings s, Settings());
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::string entry, CacheEntryDir(target, soc, dtype));
  const std::string what = "cannot compile the " + op + " kernels for SoC " + soc + ", dtype " + dtype;
  const Status made = MakeDirectories(DirName(entry));
  if (!made.ok()) {
    return Status::Error(Code::kIo, what + ": " + made.message() + "; set TF_GE_CUSTOM_CACHE_DIR to a writable folder");
  }
  const std::string log = entry + "." + std::to_string(getpid()) + ".log";
  ProcessSpec spec;
  spec.argv = CompileCommand(s, target, soc, dtype);
  spec.env = {{"PYTHONUNBUFFERED", "1"}};
  spec.timeout_ms = s.timeout_s * 1000;
  spec.log_path = log;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const ProcessOutcome outcome, runner_->Run(spec));
  const std::string tail = "; the log " + log + " ends: " + TailLines(outcome.output_tail, 3, 600, kResultMark);
  const std::string builder = " (builder: " + s.python + ", from " + s.python_from + ")";
  if (outcome.timed_out) {
    return Status::Error(Code::kRuntime, what + ": the compile took longer than " + std::to_string(s.timeout_s) +
                                             " s and was stopped (" + kCompileTimeoutEnv + " sets the limit)" +
                                             builder + tail);
  }
  auto result = ParseBuilderResult(outcome.output_tail);
  if (!result.ok()) {
    return Status::Error(Code::kRuntime, what + ": the builder stopped (" + outcome.Describe() +
                                             ") without printing a result" + builder + tail);
  }
  const BuilderResult &r = result.value();
  if (!r.ok) {
    std::string why = r.error.empty() ? "the builder failed (" + outcome.Describe() + ")" : r.error;
    if (!r.missing.empty() && r.error.empty()) why = "missing " + JoinWords(r.missing);
    return Status::Error(Code::kRuntime, what + ": " + why + builder + tail);
  }
  if (r.entry != entry) {
    return Status::Error(Code::kInternal, what + ": the builder reports " + r.entry + " but the cache layout says " +
                                              entry + builder + tail);
  }
  std::remove(log.c_str());  // kept only when something went wrong
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
