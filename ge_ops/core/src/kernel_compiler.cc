#include "tf_ge_custom_core/kernel_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/trust.h"

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
// An empty <package_parent> (the builder venv, which holds its own copy) drops the working
// directory from sys.path and keeps the venv's own site-packages.
constexpr const char *kBootstrap =
    "import builtins, runpy, sys\n"
    "builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True\n"
    "p = sys.argv.pop(1)\n"
    "if p: sys.path[0] = p\n"
    "else: del sys.path[0]\n"
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

std::string BuilderVenvPython(const EnvLookup &env) {
  std::string venv = Env(env, kBuilderVenvEnv);
  if (venv.empty()) {
    const std::string data = Env(env, "XDG_DATA_HOME");
    const std::string home = Env(env, "HOME");
    if (!data.empty() && data[0] == '/') {
      venv = JoinPath(JoinPath(data, "tf-ge-custom"), "builder");
    } else if (!home.empty() && home[0] == '/') {
      venv = JoinPath(JoinPath(JoinPath(home, ".local/share"), "tf-ge-custom"), "builder");
    }
  }
  return venv.empty() ? std::string() : JoinPath(JoinPath(venv, "bin"), "python");
}

BuilderSettings WithCandidate(const BuilderSettings &settings, const BuilderCandidate &candidate,
                              const std::string &package_parent) {
  BuilderSettings s = settings;
  s.python = candidate.python;
  s.python_from = candidate.python_from;
  s.package_parent = candidate.python_from == kFromBuilderVenv ? std::string() : package_parent;
  s.others.clear();
  return s;
}

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
    // Checked where it is read, by the trust rule (trust.h): a relative name would be run from
    // the training job's working folder (./python3), not found on PATH as a shell finds it.
    const TrustVerdict verdict = CheckTrusted(explicit_python, TrustWant::kExecutable);
    const std::string named = std::string(kPythonEnv) + "=" + Shown(explicit_python);
    switch (verdict.reason) {
      case TrustReason::kTrusted:
        break;
      case TrustReason::kRelative:
        return Status::Error(Code::kLocation, named + " is not an absolute path: the GE library would run it from "
                                                      "each training job's working folder, not from PATH; name the "
                                                      "interpreter absolutely, e.g. " + kPythonEnv +
                                                      "=$(command -v " + Shown(explicit_python) + ")");
      case TrustReason::kMissing:
      case TrustReason::kNotAFile:
      case TrustReason::kSpecial:
      case TrustReason::kNotAFolder:
      case TrustReason::kNotExecutable:
        return Status::Error(Code::kLocation, named + " is not an executable file (" + verdict.message +
                                                  "); point it at the Python that has tf-ge-custom and "
                                                  "triton-ascend installed");
      default:
        return Status::Error(Code::kUntrusted, named + " is not trusted, so the GE library does not run it: " +
                                                   verdict.message);
    }
    s.python = explicit_python;
    s.python_from = kPythonEnv;
    return s;
  }
  const std::string venv_root = Env(env, kBuilderVenvEnv);
  if (!venv_root.empty() && venv_root[0] != '/') {
    return Status::Error(Code::kLocation, std::string(kBuilderVenvEnv) + "=" + Shown(venv_root) +
                                              " is not an absolute path: the GE library would look for the builder "
                                              "venv from each training job's working folder; name it absolutely");
  }
  // The Python whose site-packages hold this package first: a wheel built elsewhere records
  // a Python of that host, which may exist here without triton-ascend.
  std::vector<BuilderCandidate> found;
  auto add = [&found](const std::string &python, const char *from) {
    for (const auto &c : found) {
      if (c.python == python) return;
    }
    found.push_back({python, from});
  };
  for (const auto &p : PythonsBeside(s.package_parent)) {
    add(p, "beside the package");
    break;  // pythonX.Y and python3 beside one package are one interpreter
  }
  std::string note;
  const std::string recorded = RecordedPython(package_dir, &note);
  if (!recorded.empty()) {
    if (IsExecutableFile(recorded)) {
      add(recorded, "the build record");
    } else {
      note = "the build record names " + recorded + ", which is not an executable file here";
    }
  }
  const std::string venv = BuilderVenvPython(env);
  std::string venv_note;
  if (!venv.empty() && IsExecutableFile(venv)) {
    const TrustVerdict verdict = CheckTrusted(venv, TrustWant::kExecutable);
    if (verdict.trusted()) {
      add(venv, kFromBuilderVenv);
    } else {
      venv_note = ", the builder venv's Python is not trusted (" + verdict.message + ")";
    }
  }
  if (found.empty()) {
    return Status::Error(Code::kLocation, std::string("no Python to run the kernel builder: ") + kPythonEnv +
                                              " is unset, " + note + venv_note + ", there is no bin/python3 beside " +
                                              s.package_parent + " and no builder venv at " +
                                              (venv.empty() ? std::string("(HOME unset)") : venv) +
                                              "; run `tf-ge-custom setup-builder` (a Python >= 3.9 venv with "
                                              "triton-ascend), or set " + kPythonEnv +
                                              " to a Python that has tf-ge-custom and triton-ascend installed");
  }
  s.python = found.front().python;
  s.python_from = found.front().python_from;
  s.others.assign(found.begin() + 1, found.end());
  return s;
}

std::vector<std::string> DescribeCommand(const BuilderSettings &settings) { return Command(settings, {"--describe"}); }

std::vector<std::string> CompileCommand(const BuilderSettings &settings, const CacheTarget &target,
                                        const std::string &op, const std::string &soc, const std::string &dtype) {
  return Command(settings,
                 {"--soc", soc, "--dtype", dtype, "--op", op, "--cache", target.cache_dir, "--key", target.key});
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
  r.python_version = StringField(doc, "python_version");
  r.triton_error = StringField(doc, "triton_error");
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

namespace {

// "3.7.16" -> true when below 3.9 (triton-ascend's oldest Python).
bool BelowPython39(const std::string &version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major < 3 || (major == 3 && minor < 9);
}

}  // namespace

Result<CacheTarget> BuilderProcess::Locate() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (located_) {
    if (!located_status_.ok()) return located_status_;
    return target_;
  }
  if (locate_tries_ >= kMaxCompileTries) {
    return located_status_.WithContext("gave up after " + std::to_string(locate_tries_) +
                                       " tries in this process; restart it to try again");
  }
  auto settings = Settings();
  if (!settings.ok()) {
    located_ = true;  // nothing to run: a retry cannot change it
    located_status_ = settings.status();
    return located_status_;
  }
  std::vector<BuilderCandidate> candidates = {{settings.value().python, settings.value().python_from}};
  candidates.insert(candidates.end(), settings.value().others.begin(), settings.value().others.end());
  std::string refusals;
  bool definite = true, old_python = false, no_triton = false;
  for (const auto &candidate : candidates) {
    const BuilderSettings s = WithCandidate(settings.value(), candidate, settings.value().package_parent);
    ProcessSpec spec;
    spec.argv = DescribeCommand(s);
    spec.env = {{"PYTHONUNBUFFERED", "1"}};
    spec.timeout_ms = kDescribeTimeoutSeconds * 1000;
    ++describe_runs_;
    auto ran = runner_->Run(spec);
    std::string why;
    if (!ran.ok()) {
      why = ran.status().message();
      definite = false;
    } else {
      const ProcessOutcome &outcome = ran.value();
      auto result = ParseBuilderResult(outcome.output_tail);
      if (!result.ok()) {
        why = "it stopped (" + outcome.Describe() + ") and " + result.status().message() +
              "; its output ends: " + TailLines(outcome.output_tail, 4, 600, kResultMark);
        if (outcome.timed_out || outcome.signal != 0 || !outcome.exit_known) definite = false;
      } else if (!result.value().ok) {
        why = result.value().error;
      } else if (!result.value().triton_error.empty()) {
        why = "it cannot import triton (" + result.value().triton_error + ")";
        no_triton = true;
        old_python = old_python || BelowPython39(result.value().python_version);
      } else {
        auto checked = CacheKeyDir(result.value().target, "SoC");  // a folder name that joins the layout
        if (!checked.ok()) {
          why = "it described an unusable cache: " + checked.status().message();
        } else {
          chosen_ = s;
          target_ = result.value().target;
          located_ = true;
          located_status_ = Status::Ok();
          return target_;
        }
      }
      if (result.ok() && BelowPython39(result.value().python_version)) old_python = true;
    }
    refusals += (refusals.empty() ? "" : "; ") + candidate.python + " (from " + candidate.python_from + "): " + why;
  }
  std::string fix;
  if (old_python) {
    fix = "; triton-ascend has no build for Python < 3.9 (TF Adapter's hosts run 3.7): run `tf-ge-custom "
          "setup-builder` once, which makes a Python >= 3.9 venv with triton-ascend and this package's builder "
          "at " + (BuilderVenvPython(env_).empty() ? std::string("the builder venv") : BuilderVenvPython(env_)) +
          " (docs/kernels.md)";
  } else if (no_triton) {
    fix = "; install triton-ascend into that Python (pip install triton-ascend==3.2.0 pybind11), or run "
          "`tf-ge-custom setup-builder`";
  }
  const std::string message = std::string("no Python can run the kernel builder (each must import tf_ge_custom "
                                          "and triton): ") + refusals + fix;
  ++locate_tries_;
  located_status_ = Status::Error(definite ? Code::kLocation : Code::kRuntime, message);
  if (definite) located_ = true;
  return located_status_;
}

Status BuilderProcess::Compile(const CacheTarget &target, const std::string &op, const std::string &soc,
                               const std::string &dtype) {
  BuilderSettings s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = chosen_;
  }
  if (s.python.empty()) {
    // Not located through this object (tests, tools): the first candidate.
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const BuilderSettings first, Settings());
    s = WithCandidate(first, {first.python, first.python_from}, first.package_parent);
  }
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const std::string entry, CacheEntryDir(target, soc, op, dtype));
  const std::string what = "cannot compile the " + op + " kernels for SoC " + soc + ", dtype " + dtype;
  const Status made = MakeDirectories(DirName(entry));
  if (!made.ok()) {
    return Status::Error(Code::kIo, what + ": " + made.message() + "; set TF_GE_CUSTOM_CACHE_DIR to a writable folder");
  }
  // Nothing is compiled into (nor a log written in) a folder that fails the trust rule.
  TF_GE_CUSTOM_RETURN_IF_ERROR(RequireTrusted(what + ": the kernel cache folder", DirName(entry), TrustWant::kFolder));
  const std::string log = entry + "." + std::to_string(getpid()) + ".log";
  ProcessSpec spec;
  spec.argv = CompileCommand(s, target, op, soc, dtype);
  spec.env = {{"PYTHONUNBUFFERED", "1"}};
  spec.timeout_ms = s.timeout_s * 1000;
  spec.log_path = log;
  if (progress_) {
    const auto progress = progress_;
    const std::string prefix = soc + " " + dtype + ": ";
    spec.on_line = [progress, prefix](const std::string &line) {
      if (!line.empty() && line.compare(0, std::string(kResultMark).size(), kResultMark) != 0) progress(prefix + line);
    };
  }
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
    // A missing tool or a refused SoC/dtype stays so: remembered. Anything else is tried again.
    const bool definite = r.kind == "toolchain" || r.kind == "usage";
    return Status::Error(definite ? Code::kUnsupported : Code::kRuntime, what + ": " + why + builder + tail);
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
