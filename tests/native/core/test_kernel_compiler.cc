// How the GE library runs the package's Python builder: which Python (override, build record,
// beside the package), the exact command lines, the result line, and every failure message
// (SoC, dtype, missing tool, log and its tail), against a scripted runner that records what it
// is asked to run. The real runner and the real builder are tests/ge/test_kernel_compile.py's.
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/kernel_compiler.h"

using namespace tf_ge_custom::core;
using test_support::TempDir;

namespace {

// An installed package: <dir>/prefix/lib/python3.11/site-packages/tf_ge_custom/{opp,kernels}.
struct FakeInstall {
  TempDir dir;
  std::string parent, package, opp_root, beside, other;
  FakeInstall() {
    parent = dir.path() + "/prefix/lib/python3.11/site-packages";
    package = parent + "/tf_ge_custom";
    opp_root = package + "/opp";
    beside = dir.path() + "/prefix/bin/python3.11";
    other = dir.path() + "/elsewhere/bin/python";
    dir.Write("prefix/lib/python3.11/site-packages/tf_ge_custom/opp/kernels/README.txt", "x");
    dir.Write("prefix/lib/python3.11/site-packages/tf_ge_custom/kernels/__init__.py", "");
  }
  void Executable(const std::string &path) const {
    dir.Write(path.substr(dir.path().size() + 1), "#!/bin/sh\n");
    chmod(path.c_str(), 0755);
  }
  void Record(const std::string &python) const {
    dir.Write("prefix/lib/python3.11/site-packages/tf_ge_custom/build_info.json",
              "{\"kernels\": {\"socs\": {}, \"source\": null, \"python\": \"" + python + "\"}}");
  }
};

EnvLookup Env(std::map<std::string, std::string> values) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [held](const char *name) -> const char * {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

// Answers each Run with the next scripted outcome and records the spec.
class ScriptedRunner : public ProcessRunner {
 public:
  std::vector<ProcessOutcome> outcomes;
  std::vector<ProcessSpec> specs;
  Result<ProcessOutcome> Run(const ProcessSpec &spec) override {
    specs.push_back(spec);
    if (outcomes.empty()) return Status::ApiError("posix_spawn", "no outcome scripted");
    ProcessOutcome o = outcomes.front();
    outcomes.erase(outcomes.begin());
    return o;
  }
};

ProcessOutcome Exited(int code, const std::string &output) {
  ProcessOutcome o;
  o.exit_code = code;
  o.output_tail = output;
  return o;
}

std::string DescribeLine(const std::string &cache, const std::string &key) {
  return "TF_GE_CUSTOM_COMPILE {\"cache_dir\": \"" + cache + "\", \"key\": \"" + key + "\", \"ok\": true}\n";
}

const char *kKey = "0123456789abcdef-triton_ascend_3.2.0-bishengir_1.2.0-cann_8.5.0";

}  // namespace

TEST(KernelCompiler, PythonFromTheOverrideThenBesideThePackageThenTheRecord) {
  FakeInstall inst;
  inst.Executable(inst.other);
  inst.Executable(inst.beside);
  inst.Record(inst.other);
  auto from_env = FindBuilder(inst.opp_root, Env({{kPythonEnv, inst.beside}}));
  REQUIRE_OK(from_env);
  CHECK_EQ(from_env.value().python, inst.beside);
  CHECK_EQ(from_env.value().python_from, std::string("TF_GE_CUSTOM_PYTHON"));
  CHECK_EQ(from_env.value().package_parent, inst.parent);
  CHECK_EQ(from_env.value().timeout_s, kDefaultCompileTimeoutSeconds);
  CHECK_TRUE(from_env.value().others.empty());  // an explicit Python is the only one

  // Finding 2: the Python whose site-packages hold the package comes before the recorded one
  // (a wheel built on another host records that host's Python).
  auto found = FindBuilder(inst.opp_root, Env({}));
  REQUIRE_OK(found);
  CHECK_EQ(found.value().python, inst.beside);
  CHECK_EQ(found.value().python_from, std::string("beside the package"));
  REQUIRE_EQ(found.value().others.size(), size_t{1});
  CHECK_EQ(found.value().others[0].python, inst.other);
  CHECK_EQ(found.value().others[0].python_from, std::string("the build record"));

  inst.Record(inst.dir.path() + "/gone/python3");  // a wheel built on another machine
  auto from_prefix = FindBuilder(inst.opp_root, Env({}));
  REQUIRE_OK(from_prefix);
  CHECK_EQ(from_prefix.value().python, inst.beside);
  CHECK_TRUE(from_prefix.value().others.empty());
}

TEST(KernelCompiler, NoPythonIsARefusalNamingEachPlaceLookedAt) {
  FakeInstall inst;
  inst.Record(inst.dir.path() + "/gone/python3");
  auto r = FindBuilder(inst.opp_root, Env({}));
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kLocation);
  const std::string &m = r.status().message();
  CHECK_TRUE(m.find("TF_GE_CUSTOM_PYTHON is unset") != std::string::npos);
  CHECK_TRUE(m.find(inst.dir.path() + "/gone/python3") != std::string::npos);
  CHECK_TRUE(m.find(inst.parent) != std::string::npos);

  auto bad = FindBuilder(inst.opp_root, Env({{kPythonEnv, inst.dir.path() + "/no-such-python"}}));
  REQUIRE_TRUE(!bad.ok());
  CHECK_TRUE(bad.status().message().find("TF_GE_CUSTOM_PYTHON=" + inst.dir.path() + "/no-such-python is not an "
                                         "executable file") == 0);
}

TEST(KernelCompiler, AnOppRootOutsideThePackageHasNoBuilder) {
  TempDir dir;
  dir.Write("opp/kernels/README.txt", "x");
  auto r = FindBuilder(dir.path() + "/opp", Env({}));
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kLocation);
}

TEST(KernelCompiler, TimeoutFromTheEnvironmentInSecondsWithinLimits) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  auto ok = FindBuilder(inst.opp_root, Env({{kCompileTimeoutEnv, "30"}}));
  REQUIRE_OK(ok);
  CHECK_EQ(ok.value().timeout_s, int64_t{30});
  for (const char *bad : {"0", "-5", "abc", "12s", "86401", "99999999999999999999"}) {
    auto r = FindBuilder(inst.opp_root, Env({{kCompileTimeoutEnv, bad}}));
    REQUIRE_TRUE(!r.ok());
    CHECK_EQ(r.status().code(), Code::kOutOfRange);
    CHECK_TRUE(r.status().message().find(std::string("TF_GE_CUSTOM_COMPILE_TIMEOUT=") + bad) == 0);
  }
}

TEST(KernelCompiler, CommandLinesRunTheBuilderModuleOfThisPackage) {
  BuilderSettings s;
  s.python = "/venv/bin/python3";
  s.package_parent = "/venv/lib/python3.11/site-packages";
  const std::vector<std::string> describe = DescribeCommand(s);
  REQUIRE_EQ(describe.size(), size_t{5});
  CHECK_EQ(describe[0], s.python);
  CHECK_EQ(describe[1], std::string("-c"));
  CHECK_EQ(describe[3], s.package_parent);
  CHECK_EQ(describe[4], std::string("--describe"));
  // The bootstrap: the package's own folder first on sys.path, no TensorFlow, the module.
  const std::string &boot = describe[2];
  CHECK_TRUE(boot.find("p = sys.argv.pop(1)") != std::string::npos);
  CHECK_TRUE(boot.find("if p: sys.path[0] = p") != std::string::npos);
  CHECK_TRUE(boot.find("builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True") != std::string::npos);
  CHECK_TRUE(boot.find(std::string("'") + kBuilderModule + "'") != std::string::npos);

  const CacheTarget t{"/home/u/.cache/tf-ge-custom/kernels", kKey};
  const std::vector<std::string> compile = CompileCommand(s, t, "AddCustom", "Ascend910B1", "float16");
  const std::vector<std::string> expected = {s.python, "-c", boot, s.package_parent, "--soc", "Ascend910B1",
                                             "--dtype", "float16", "--op", "AddCustom", "--cache", t.cache_dir,
                                             "--key", kKey};
  CHECK_EQ(compile, expected);
}

TEST(KernelCompiler, TheLastResultLineIsTheResult) {
  auto r = ParseBuilderResult("noise\nTF_GE_CUSTOM_COMPILE {\"ok\": false}\nmore\n"
                              "TF_GE_CUSTOM_COMPILE {\"ok\": false, \"kind\": \"toolchain\", \"missing\": [\"hivmc\", 7], "
                              "\"error\": \"hivmc is\\nmissing\"}\n");
  REQUIRE_OK(r);
  CHECK_FALSE(r.value().ok);
  CHECK_EQ(r.value().kind, std::string("toolchain"));
  CHECK_EQ(r.value().missing, std::vector<std::string>{"hivmc"});
  CHECK_EQ(r.value().error, std::string("hivmc is missing"));  // one line
  auto first_line = ParseBuilderResult("TF_GE_CUSTOM_COMPILE {\"ok\": true, \"entry\": \"/c/S/k/float32\", \"built\": true}");
  REQUIRE_OK(first_line);
  CHECK_TRUE(first_line.value().ok);
  CHECK_TRUE(first_line.value().built);
  CHECK_EQ(first_line.value().entry, std::string("/c/S/k/float32"));
  for (const char *bad : {"", "no result at all\n", "TF_GE_CUSTOM_COMPILE not json\n", "TF_GE_CUSTOM_COMPILE [1]\n",
                          "TF_GE_CUSTOM_COMPILE {\"ok\": 1}\n", "xTF_GE_CUSTOM_COMPILE {\"ok\": true}\n"}) {
    CHECK_EQ(ParseBuilderResult(bad).status().code(), Code::kCorrupt);
  }
}

TEST(KernelCompiler, LocateAsksTheBuilderOnceAndKeepsTheAnswer) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(0, "progress\n" + DescribeLine("/cache", kKey))};
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  auto first = compiler.Locate();
  REQUIRE_OK(first);
  CHECK_EQ(first.value().cache_dir, std::string("/cache"));
  CHECK_EQ(first.value().key, std::string(kKey));
  REQUIRE_OK(compiler.Locate());
  REQUIRE_EQ(runner->specs.size(), size_t{1});
  CHECK_EQ(runner->specs[0].argv.back(), std::string("--describe"));
  CHECK_EQ(runner->specs[0].timeout_ms, kDescribeTimeoutSeconds * 1000);
}

TEST(KernelCompiler, AnUnusableDescriptionIsRefusedOnce) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Traceback (most recent call last):\nModuleNotFoundError: No module named 'tf_ge_custom'\n",
       "No module named 'tf_ge_custom'"},
      {DescribeLine("relative/cache", kKey), "not absolute"},
      {DescribeLine("/cache", "../escape"), "cannot name a folder"},
      {"TF_GE_CUSTOM_COMPILE {\"ok\": false, \"error\": \"no folder for the kernel cache: HOME is unset\"}\n",
       "no folder for the kernel cache"},
  };
  for (const auto &c : cases) {
    auto runner = std::make_shared<ScriptedRunner>();
    runner->outcomes = {Exited(1, c.first)};
    BuilderProcess compiler(inst.opp_root, Env({}), runner);
    auto r = compiler.Locate();
    REQUIRE_TRUE(!r.ok());
    CHECK_TRUE(r.status().message().find(c.second) != std::string::npos);
    CHECK_TRUE(r.status().message().find(inst.beside) != std::string::npos);
    CHECK_EQ(compiler.Locate().status().message(), r.status().message());  // remembered, not rerun
    CHECK_EQ(runner->specs.size(), size_t{1});
  }
}

TEST(KernelCompiler, ACompileRunsWithItsTimeoutAndLogBesideTheEntry) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  const CacheTarget t{cache.path(), kKey};
  const std::string entry = cache.path() + "/Ascend910B1/" + kKey + "/AddCustom/float32";
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(0, "TF_GE_CUSTOM_COMPILE {\"ok\": true, \"built\": true, \"entry\": \"" + entry + "\"}\n")};
  BuilderProcess compiler(inst.opp_root, Env({{kCompileTimeoutEnv, "42"}}), runner);
  REQUIRE_OK(compiler.Compile(t, "AddCustom", "Ascend910B1", "float32"));
  REQUIRE_EQ(runner->specs.size(), size_t{1});
  const ProcessSpec &spec = runner->specs[0];
  CHECK_EQ(spec.timeout_ms, int64_t{42000});
  CHECK_EQ(spec.log_path, entry + "." + std::to_string(getpid()) + ".log");
  CHECK_TRUE(IsDirectory(cache.path() + "/Ascend910B1/" + kKey));  // made for the log and the entry
  CHECK_EQ(spec.argv,
           CompileCommand(FindBuilder(inst.opp_root, Env({})).value(), t, "AddCustom", "Ascend910B1", "float32"));
}

TEST(KernelCompiler, AMissingToolFailsInOneLineWithSocDtypeToolAndLogTail) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(1,
                             "[1/1] Ascend910B1 float32 2 variants (flat scalar): TTIR, linalg, HIVM IR; "
                             "no npubins (2.10 s)\n"
                             "error: hivmc is missing, so no npubin could be built\n"
                             "TF_GE_CUSTOM_COMPILE {\"ok\": false, \"kind\": \"toolchain\", \"missing\": [\"hivmc\"], "
                             "\"error\": \"hivmc is missing (source the CANN toolkit's set_env.sh)\"}\n")};
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  const Status st = compiler.Compile(CacheTarget{cache.path(), kKey}, "AddCustom", "Ascend910B1", "float32");
  REQUIRE_TRUE(!st.ok());
  const std::string &m = st.message();
  CHECK_EQ(m.find('\n'), std::string::npos);
  CHECK_TRUE(m.find("cannot compile the AddCustom kernels for SoC Ascend910B1, dtype float32: hivmc is missing "
                    "(source the CANN toolkit's set_env.sh)") == 0);
  CHECK_TRUE(m.find("builder: " + inst.beside + ", from beside the package") != std::string::npos);
  CHECK_TRUE(m.find(std::string("float32.") + std::to_string(getpid()) + ".log ends: [1/1] Ascend910B1 float32 2 variants "
                    "(flat scalar): TTIR, linalg, HIVM IR; no npubins (2.10 s) | error: hivmc is missing, so no "
                    "npubin could be built") !=
             std::string::npos);
  CHECK_TRUE(m.find("TF_GE_CUSTOM_COMPILE") == std::string::npos);
}

TEST(KernelCompiler, TimeoutCrashAndAWrongEntryAreEachSaid) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  const CacheTarget t{cache.path(), kKey};
  ProcessOutcome timed_out;
  timed_out.timed_out = true;
  timed_out.output_tail = "[compiling]\n";
  ProcessOutcome killed;
  killed.signal = 9;
  killed.output_tail = "Segmentation in triton\n";
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {timed_out, killed,
                      Exited(0, "TF_GE_CUSTOM_COMPILE {\"ok\": true, \"entry\": \"/somewhere/else\"}\n")};
  BuilderProcess compiler(inst.opp_root, Env({{kCompileTimeoutEnv, "5"}}), runner);
  const Status a = compiler.Compile(t, "AddCustom", "Ascend910_9392", "int32");
  CHECK_TRUE(a.message().find("SoC Ascend910_9392, dtype int32: the compile took longer than 5 s and was stopped "
                              "(TF_GE_CUSTOM_COMPILE_TIMEOUT sets the limit)") != std::string::npos);
  CHECK_TRUE(a.message().find("ends: [compiling]") != std::string::npos);
  const Status b = compiler.Compile(t, "AddCustom", "Ascend910_9392", "int32");
  CHECK_TRUE(b.message().find("the builder stopped (killed by signal 9: Killed) without printing a result") != std::string::npos);
  CHECK_TRUE(b.message().find("ends: Segmentation in triton") != std::string::npos);
  const Status c = compiler.Compile(t, "AddCustom", "Ascend910_9392", "int32");
  CHECK_EQ(c.code(), Code::kInternal);
  CHECK_TRUE(c.message().find("/somewhere/else") != std::string::npos);
}

TEST(KernelCompiler, AnUnwritableCacheIsSaidBeforeAnythingRuns) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  cache.Write("blocker", "a file where the SoC folder's parent should be");
  auto runner = std::make_shared<ScriptedRunner>();
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  const Status st = compiler.Compile(CacheTarget{cache.path() + "/blocker", kKey}, "AddCustom", "Ascend910B1", "float32");
  CHECK_EQ(st.code(), Code::kIo);
  CHECK_TRUE(st.message().find("TF_GE_CUSTOM_CACHE_DIR") != std::string::npos);
  CHECK_EQ(runner->specs.size(), size_t{0});
}

// --- Finding 2 and 6: the builder's interpreter is checked; 3.7 hosts get the builder venv ---

namespace {

std::string DescribeWith(const std::string &fields) {
  return "TF_GE_CUSTOM_COMPILE {\"cache_dir\": \"/cache\", \"key\": \"" + std::string(kKey) + "\", \"ok\": true" +
         fields + "}\n";
}

ProcessOutcome TimedOut() {
  ProcessOutcome o;
  o.timed_out = true;
  o.exit_code = -1;
  return o;
}

}  // namespace

TEST(KernelCompiler, APythonThatCannotImportTritonIsPassedOverForTheNextCandidate) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  inst.Executable(inst.other);
  inst.Record(inst.other);
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(0, DescribeWith(", \"python_version\": \"3.11.7\", \"triton_error\": "
                                             "\"ModuleNotFoundError: No module named 'triton'\"")),
                      Exited(0, DescribeWith(", \"python_version\": \"3.11.7\", \"triton_error\": \"\""))};
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  REQUIRE_OK(compiler.Locate());
  REQUIRE_EQ(runner->specs.size(), size_t{2});
  CHECK_EQ(runner->specs[0].argv[0], inst.beside);
  CHECK_EQ(runner->specs[1].argv[0], inst.other);
  // The compile runs with the Python that passed.
  TempDir cache;
  runner->outcomes = {Exited(0, "TF_GE_CUSTOM_COMPILE {\"ok\": true, \"entry\": \"" + cache.path() + "/Ascend910B1/" +
                                    kKey + "/AddCustom/float32\"}\n")};
  REQUIRE_OK(compiler.Compile(CacheTarget{cache.path(), kKey}, "AddCustom", "Ascend910B1", "float32"));
  CHECK_EQ(runner->specs.back().argv[0], inst.other);
}

TEST(KernelCompiler, WhenNoCandidatePassesTheRefusalNamesEachAndOnPython37TheBuilderVenv) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  inst.Executable(inst.other);
  inst.Record(inst.other);
  const std::string venv = inst.dir.path() + "/builder";
  auto runner = std::make_shared<ScriptedRunner>();
  const std::string no_triton = ", \"python_version\": \"3.7.16\", \"triton_error\": \"ModuleNotFoundError: No "
                                "module named 'triton'\"";
  runner->outcomes = {Exited(0, DescribeWith(no_triton)), Exited(0, DescribeWith(no_triton))};
  BuilderProcess compiler(inst.opp_root, Env({{kBuilderVenvEnv, venv}}), runner);
  auto r = compiler.Locate();
  REQUIRE_TRUE(!r.ok());
  const std::string &m = r.status().message();
  CHECK_TRUE(m.find(inst.beside + " (from beside the package): it cannot import triton") != std::string::npos);
  CHECK_TRUE(m.find(inst.other + " (from the build record): it cannot import triton") != std::string::npos);
  CHECK_TRUE(m.find("triton-ascend has no build for Python < 3.9") != std::string::npos);
  CHECK_TRUE(m.find("run `tf-ge-custom setup-builder` once") != std::string::npos);
  CHECK_TRUE(m.find(venv + "/bin/python") != std::string::npos);
  CHECK_EQ(compiler.Locate().status().message(), m);  // definite: remembered
  CHECK_EQ(runner->specs.size(), size_t{2});
}

TEST(KernelCompiler, TheSetupBuilderVenvIsACandidateAndRunsItsOwnCopy) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  const std::string venv_python = inst.dir.path() + "/data/tf-ge-custom/builder/bin/python";
  inst.Executable(venv_python);
  auto found = FindBuilder(inst.opp_root, Env({{"XDG_DATA_HOME", inst.dir.path() + "/data"}}));
  REQUIRE_OK(found);
  REQUIRE_EQ(found.value().others.size(), size_t{1});
  CHECK_EQ(found.value().others[0].python, venv_python);
  CHECK_EQ(found.value().others[0].python_from, std::string(kFromBuilderVenv));
  const BuilderSettings s = WithCandidate(found.value(), found.value().others[0], found.value().package_parent);
  CHECK_EQ(DescribeCommand(s)[3], std::string(""));  // its own copy, not the 3.7 site-packages
  CHECK_EQ(BuilderVenvPython(Env({{"HOME", "/home/u"}})), std::string("/home/u/.local/share/tf-ge-custom/builder/bin/python"));
  CHECK_EQ(BuilderVenvPython(Env({{kBuilderVenvEnv, "/opt/b"}, {"HOME", "/home/u"}})), std::string("/opt/b/bin/python"));
}

// --- Finding 3: a timeout or crash is retried, a bounded number of times ---------------------

TEST(KernelCompiler, ADescribeThatTimedOutIsTriedAgainAtMostThreeTimes) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {TimedOut(), TimedOut(), TimedOut(), TimedOut()};
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  for (int i = 0; i < kMaxCompileTries; ++i) {
    auto r = compiler.Locate();
    REQUIRE_TRUE(!r.ok());
    CHECK_TRUE(r.status().code() == Code::kRuntime);
  }
  auto last = compiler.Locate();
  CHECK_TRUE(last.status().message().find("gave up after 3 tries") != std::string::npos);
  CHECK_EQ(runner->specs.size(), size_t{3});
  // ... and one that comes back after a timeout is kept.
  auto second = std::make_shared<ScriptedRunner>();
  second->outcomes = {TimedOut(), Exited(0, DescribeLine("/cache", kKey))};
  BuilderProcess again(inst.opp_root, Env({}), second);
  REQUIRE_TRUE(!again.Locate().ok());
  REQUIRE_OK(again.Locate());
  REQUIRE_OK(again.Locate());
  CHECK_EQ(second->specs.size(), size_t{2});
}

TEST(KernelCompiler, AMissingToolIsDefiniteATimeoutIsNot) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  const CacheTarget t{cache.path(), kKey};
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(1, "TF_GE_CUSTOM_COMPILE {\"ok\": false, \"kind\": \"toolchain\", \"missing\": [\"hivmc\"], "
                                "\"error\": \"hivmc is missing\"}\n"),
                      TimedOut()};
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  CHECK_TRUE(compiler.Compile(t, "AddCustom", "Ascend910B1", "float32").code() == Code::kUnsupported);
  CHECK_TRUE(compiler.Compile(t, "AddCustom", "Ascend910B1", "float32").code() == Code::kRuntime);
}

TEST(KernelCompiler, TheBuildersLinesReachTheProgressSinkWithoutTheResultLine) {
  FakeInstall inst;
  inst.Executable(inst.beside);
  TempDir cache;
  auto runner = std::make_shared<ScriptedRunner>();
  runner->outcomes = {Exited(1, "x")};
  std::vector<std::string> seen;
  BuilderProcess compiler(inst.opp_root, Env({}), runner);
  compiler.SetProgress([&](const std::string &line) { seen.push_back(line); });
  const Status ignored = compiler.Compile(CacheTarget{cache.path(), kKey}, "AddCustom", "Ascend910B4", "int32");
  (void)ignored;
  REQUIRE_EQ(runner->specs.size(), size_t{1});
  REQUIRE_TRUE(static_cast<bool>(runner->specs[0].on_line));
  runner->specs[0].on_line("[1/1] Ascend910B4 int32 11 variants: TTIR, linalg");
  runner->specs[0].on_line("TF_GE_CUSTOM_COMPILE {\"ok\": true}");
  REQUIRE_EQ(seen.size(), size_t{1});
  CHECK_EQ(seen[0], std::string("Ascend910B4 int32: [1/1] Ascend910B4 int32 11 variants: TTIR, linalg"));
}
