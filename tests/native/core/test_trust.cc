// The trust rule (trust.h) and the writes that never follow a link (files.h OpenForWriting):
// the shared cases of tests/fixtures/trust/cases.json, which the Python side
// (tests/kernels/test_trust_rule.py) runs too, then where the GE library applies them: the
// per-user cache (KernelSupply, KernelRegistry::AddCompiled), the kernel bundles of
// TF_GE_CUSTOM_KERNELS, TF_GE_CUSTOM_PYTHON, the folders a compile makes and its log.
//
// Making files another user owns needs root (chown): the suite runs as root, and these cases
// say so when it does not.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/compile_cache.h"
#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/kernel_compiler.h"
#include "tf_ge_custom_core/kernel_supply.h"
#include "tf_ge_custom_core/trust.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;
using test_support::TempDir;

namespace {

constexpr uid_t kOther = 12345;
constexpr uid_t kNobody = 65534;
const char *kKey = "00aa11bb22cc33dd-triton_ascend_3.2.0-bishengir_1.2.0-cann_8.5.0";

bool AsRoot() {
  if (geteuid() == 0) return true;
  ::testing::RecordFailure(__FILE__, __LINE__, "this case makes files owned by other users (chown), which needs root; "
                                               "run the suite as root, as CI does");
  return false;
}

std::string ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t ModeOf(const std::string &path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

// Makes one step of a shared case under base (see cases.json's "about").
bool Make(const std::string &base, const nlohmann::json &step, uid_t viewer) {
  const std::string kind = step[0], relative = step[1], value = step[2], owner = step[3];
  const std::string path = base + "/" + relative;
  const uid_t uid = owner == "viewer" ? viewer : owner == "other" ? kOther : owner == "nobody" ? kNobody : 0;
  if (kind == "link") return symlink(value.c_str(), path.c_str()) == 0 && lchown(path.c_str(), uid, -1) == 0;
  bool made = false;
  if (kind == "dir") {
    made = mkdir(path.c_str(), 0700) == 0;
  } else if (kind == "file") {
    std::ofstream(path) << "x\n";
    made = true;
  } else if (kind == "fifo") {
    made = mkfifo(path.c_str(), 0600) == 0;
  }
  return made && chown(path.c_str(), uid, -1) == 0 &&
         chmod(path.c_str(), static_cast<mode_t>(std::stoi(value, nullptr, 8))) == 0;
}

// A cache entry as the builder writes it: every variant's npubin and the manifest.
void WriteEntry(const TempDir &cache, const std::string &soc, const std::string &dtype) {
  std::vector<KernelSpec> specs = test_support::AllVariants(dtype);
  const std::string dir = soc + "/" + kKey + "/AddCustom/" + dtype;
  cache.Write(dir + "/manifest.json", test_support::ManifestJson(soc, specs));
  for (const auto &k : specs) {
    cache.Write(dir + "/" + test_support::BinaryName(k.variant, dtype), test_support::FakeBinary(soc, dtype, k.variant));
  }
}

void ChownTree(const std::string &path, uid_t uid, const char *mode) {
  const std::string cmd = "chown -R " + std::to_string(uid) + " '" + path + "' && chmod -R " + mode + " '" + path + "'";
  if (std::system(cmd.c_str()) != 0) ::testing::RecordFailure(__FILE__, __LINE__, "failed: " + cmd);
}

// A compiler that answers the given cache and counts the compiles it is asked for.
class CountingCompiler : public KernelCompiler {
 public:
  explicit CountingCompiler(std::string cache) : cache_(std::move(cache)) {}
  Result<CacheTarget> Locate() override { return CacheTarget{cache_, kKey}; }
  Status Compile(const CacheTarget &, const std::string &, const std::string &, const std::string &) override {
    ++compiles;
    return Status::Error(Code::kRuntime, "compiled (double)");
  }
  int compiles = 0;

 private:
  std::string cache_;
};

EnvLookup Env(std::map<std::string, std::string> values) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [held](const char *name) -> const char * {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST(Trust, EachSharedCaseGetsItsVerdict) {
  if (!AsRoot()) return;
  std::ifstream in(std::string(TF_GE_CUSTOM_FIXTURES_DIR) + "/../trust/cases.json");
  REQUIRE_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  REQUIRE_TRUE(doc.is_object() && doc["cases"].is_array() && doc["cases"].size() >= 30);
  int refused = 0;
  for (const auto &c : doc["cases"]) {
    const std::string name = c["name"];
    TempDir dir;
    const std::string base = dir.path() + "/case";
    REQUIRE_TRUE(mkdir(base.c_str(), 0755) == 0 && chmod(base.c_str(), 0755) == 0);
    const uid_t viewer = c.value("viewer", std::string("user")) == "root" ? 0 : kNobody;
    bool made = true;
    for (const auto &step : c["make"]) made = Make(base, step, viewer) && made;
    if (!CHECK_TRUE(made)) continue;
    const std::string check = c["check"];
    const bool as_written = c.value("relative", false) || check[0] == '/';
    const std::string path = as_written ? check : base + "/" + check;
    const std::string want_name = c["want"];
    const TrustWant want = want_name == "folder" ? TrustWant::kFolder
                           : want_name == "file" ? TrustWant::kFile
                                                 : TrustWant::kExecutable;
    const TrustVerdict verdict = CheckTrusted(path, want, viewer);
    if (c.contains("resolves_to")) {
      // the hand-written answer, and the C library's realpath(3) where the whole path exists
      const std::string to = c["resolves_to"];
      char real_base[PATH_MAX];
      REQUIRE_TRUE(realpath(base.c_str(), real_base) != nullptr);
      const std::string expected_to = to[0] == '/' ? to : std::string(real_base) + "/" + to;
      CHECK_EQ(name + ": " + ResolvePath(path), name + ": " + expected_to);
      char real[PATH_MAX];
      if (realpath(path.c_str(), real) != nullptr) CHECK_EQ(name + ": " + ResolvePath(path), name + ": " + real);
    }
    std::string at;
    if (c.contains("at")) at = as_written ? c["at"].get<std::string>() : base + "/" + c["at"].get<std::string>();
    const std::string expected = c["verdict"].get<std::string>() + (at.empty() ? "" : " at " + at);
    const std::string got = std::string(TrustReasonName(verdict.reason)) + (verdict.trusted() ? "" : " at " + verdict.at);
    CHECK_EQ(name + ": " + got, name + ": " + expected);
    if (!verdict.trusted()) {
      ++refused;
      CHECK_TRUE(!verdict.message.empty() && verdict.message.find('\n') == std::string::npos);
    }
  }
  CHECK_TRUE(refused >= 25);
}

TEST(Trust, ShownEscapesControlCharactersAsThePythonSideDoes) {
  CHECK_EQ(Shown("/opt/a\nb\tc\x1b[31m\x7f\xc2\x85\xc3\xa9"), std::string("/opt/a\\nb\\tc\\x1b[31m\\x7f\\x85\xc3\xa9"));
  CHECK_EQ(Shown("/plain path"), std::string("/plain path"));
}

TEST(Trust, OpenForWritingNeverWritesThroughALink) {
  TempDir dir;
  dir.Write("victim", "keep me\n");
  const std::string link = dir.path() + "/x.log";
  REQUIRE_TRUE(symlink((dir.path() + "/victim").c_str(), link.c_str()) == 0);
  int fd = -1;
  const Status st = OpenForWriting(link, O_APPEND, kPrivateFileMode, &fd);
  CHECK_EQ(st.code(), Code::kIo);
  CHECK_TRUE(st.message().find("is a symbolic link") != std::string::npos);
  CHECK_EQ(fd, -1);
  CHECK_EQ(ReadAll(dir.path() + "/victim"), std::string("keep me\n"));
  // A hard link to another file would be written through as well.
  const std::string hard = dir.path() + "/h.log";
  REQUIRE_TRUE(::link((dir.path() + "/victim").c_str(), hard.c_str()) == 0);
  CHECK_EQ(OpenForWriting(hard, O_TRUNC, kPrivateFileMode, &fd).code(), Code::kIo);
  CHECK_EQ(ReadAll(dir.path() + "/victim"), std::string("keep me\n"));
  // A FIFO is refused at once (opening it for writing would wait for a reader).
  const std::string fifo = dir.path() + "/p.log";
  REQUIRE_TRUE(mkfifo(fifo.c_str(), 0600) == 0);
  const Status fifo_st = OpenForWriting(fifo, O_APPEND, kPrivateFileMode, &fd);
  CHECK_TRUE(!fifo_st.ok());
  // A fresh file is made with the private mode whatever the umask.
  const mode_t old = umask(0);
  const Status made = OpenForWriting(dir.path() + "/new.log", O_APPEND, kPrivateFileMode, &fd);
  umask(old);
  REQUIRE_OK(made);
  CHECK_TRUE(write(fd, "line\n", 5) == 5);
  close(fd);
  CHECK_EQ(ModeOf(dir.path() + "/new.log"), kPrivateFileMode);
}

TEST(Trust, TheFoldersACompileMakesArePrivateWhateverTheUmask) {
  TempDir dir;
  const mode_t old = umask(0);
  const Status made = MakeDirectories(dir.path() + "/cache/Ascend910B1/" + kKey);
  umask(old);
  REQUIRE_OK(made);
  for (const std::string &p : {std::string("/cache"), std::string("/cache/Ascend910B1"), std::string("/cache/Ascend910B1/") + kKey}) {
    CHECK_EQ(p + " " + std::to_string(ModeOf(dir.path() + p)), p + " " + std::to_string(kPrivateFolderMode));
  }
}

TEST(Trust, AnotherUsersCacheIsNeitherReadNorCompiledInto) {
  if (!AsRoot()) return;
  TempDir opp, cache;
  test_support::WriteOppKernels(opp, "Ascend910B4", test_support::AllVariants("int32"));  // no float32 there
  WriteEntry(cache, "Ascend910B1", "float32");  // checksums match: they prove nothing about who wrote them
  ChownTree(cache.path(), kNobody, "0777");
  auto compiler = std::make_shared<CountingCompiler>(cache.path());
  KernelSupply supply(compiler);
  auto registry = KernelRegistry::FromOppRoot(opp.path());
  auto r = supply.Ensure(*registry, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kUntrusted);
  CHECK_TRUE(r.status().message().find("the kernel cache " + cache.path() + " is not trusted") == 0);
  CHECK_TRUE(r.status().message().find("owned by uid 65534") != std::string::npos);
  CHECK_TRUE(r.status().message().find("TF_GE_CUSTOM_CACHE_DIR") != std::string::npos);
  CHECK_EQ(compiler->compiles, 0);
  CHECK_TRUE(!registry->Find("Ascend910B1", "AddCustom", "flat", "float32").ok());
  // AddCompiled refuses the entry itself too, whoever calls it.
  const std::string manifest = cache.path() + "/Ascend910B1/" + kKey + "/AddCustom/float32/manifest.json";
  CHECK_EQ(registry->AddCompiled("Ascend910B1", manifest).code(), Code::kUntrusted);
  ChownTree(cache.path(), 0, "go-w");  // made the user's, not writable by others: used
  auto registry2 = KernelRegistry::FromOppRoot(opp.path());
  KernelSupply supply2(compiler);
  auto ok = supply2.Ensure(*registry2, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_OK(ok);
  CHECK_TRUE(ok.value() == KernelOrigin::kCache);
}

TEST(Trust, AnUntrustedEntryInATrustedCacheIsCompiledAgain) {
  TempDir opp, cache;
  test_support::WriteOppKernels(opp, "Ascend910B4", test_support::AllVariants("int32"));
  WriteEntry(cache, "Ascend910B1", "float32");
  const std::string entry = cache.path() + "/Ascend910B1/" + kKey + "/AddCustom/float32";
  ChownTree(entry, geteuid(), "a+w");  // the old umask-000 cache: 0777 folders, 0666 files
  auto compiler = std::make_shared<CountingCompiler>(cache.path());
  KernelSupply supply(compiler);
  auto registry = KernelRegistry::FromOppRoot(opp.path());
  auto r = supply.Ensure(*registry, "Ascend910B1", "AddCustom", "float32");
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(compiler->compiles, 1);  // the builder steps such an entry aside and builds it again
  CHECK_EQ(r.status().message(), std::string("compiled (double)"));
}

TEST(Trust, ABundleEntryThatIsNoTrustedFolderIsRefusedByName) {
  TempDir opp, dir;
  test_support::WriteOppKernels(opp, "Ascend910B1", test_support::AllVariants("float32"));
  dir.Write("a-file", "x");
  REQUIRE_TRUE(mkfifo((dir.path() + "/a-fifo").c_str(), 0600) == 0);
  REQUIRE_TRUE(mkdir((dir.path() + "/open").c_str(), 0700) == 0 && chmod((dir.path() + "/open").c_str(), 0777) == 0);
  const std::map<std::string, std::string> entries = {
      {dir.path() + "/a-file", "is a file, not a folder"},
      {dir.path() + "/a-fifo", "is a FIFO (named pipe), not a folder"},
      {dir.path() + "/missing", "does not exist"},
      {"relative/bundle", "is not an absolute path"},
      {dir.path() + "/open", "is writable by group and others (mode 0777)"},
  };
  for (const auto &e : entries) {
    auto registry = KernelRegistry::FromOppRoot(opp.path(), KernelBundleDirs(("::" + e.first).c_str()));
    auto found = registry->Find("Ascend910B1", "AddCustom", "flat", "float32");  // the package has it, but ...
    REQUIRE_TRUE(!found.ok());
    CHECK_EQ(found.status().code(), Code::kUntrusted);
    const std::string &m = found.status().message();
    CHECK_EQ(e.first + ": " + m.substr(0, m.find(" is refused: ") + 13),
             e.first + ": TF_GE_CUSTOM_KERNELS entry " + e.first + " is refused: ");
    CHECK_TRUE(m.find(e.second) != std::string::npos);
  }
  // A trusted bundle whose npubin another user owns: refused when read, checksum or not.
  TempDir bundle;
  test_support::WriteOppKernels(bundle, "Ascend910B2", test_support::AllVariants("float32"));
  auto registry = KernelRegistry::FromOppRoot(opp.path(), {bundle.path() + "/kernels"});
  REQUIRE_OK(registry->Find("Ascend910B2", "AddCustom", "flat", "float32"));
  if (!AsRoot()) return;
  auto fresh = KernelRegistry::FromOppRoot(opp.path(), {bundle.path() + "/kernels"});
  ChownTree(bundle.path() + "/kernels/Ascend910B2/" + test_support::BinaryName("flat", "float32"), kNobody, "0644");
  auto other = fresh->Find("Ascend910B2", "AddCustom", "flat", "float32");
  CHECK_EQ(other.status().code(), Code::kUntrusted);
}

TEST(Trust, TheBuildersPythonMustBeAbsoluteAndTrusted) {
  TempDir dir;
  const std::string package = dir.path() + "/site/tf_ge_custom";
  dir.Write("site/tf_ge_custom/opp/kernels/README.txt", "x");
  dir.Write("site/tf_ge_custom/kernels/__init__.py", "");
  const std::string opp = package + "/opp";
  auto relative = FindBuilder(opp, Env({{kPythonEnv, "python3"}}));
  REQUIRE_TRUE(!relative.ok());
  CHECK_EQ(relative.status().code(), Code::kLocation);
  CHECK_TRUE(relative.status().message().find("TF_GE_CUSTOM_PYTHON=python3 is not an absolute path") == 0);
  CHECK_TRUE(relative.status().message().find("=$(command -v python3)") != std::string::npos);
  dir.Write("bin/python3", "#!/bin/sh\n");
  const std::string python = dir.path() + "/bin/python3";
  REQUIRE_TRUE(chmod(python.c_str(), 0777) == 0);
  auto writable = FindBuilder(opp, Env({{kPythonEnv, python}}));
  REQUIRE_TRUE(!writable.ok());
  CHECK_EQ(writable.status().code(), Code::kUntrusted);
  CHECK_TRUE(writable.status().message().find("writable by group and others") != std::string::npos);
  REQUIRE_TRUE(chmod(python.c_str(), 0755) == 0);
  REQUIRE_OK(FindBuilder(opp, Env({{kPythonEnv, python}})));
  auto venv = FindBuilder(opp, Env({{kBuilderVenvEnv, "builder"}}));
  REQUIRE_TRUE(!venv.ok());
  CHECK_TRUE(venv.status().message().find("TF_GE_CUSTOM_BUILDER=builder is not an absolute path") == 0);
}

TEST(Trust, ValuesWithControlCharactersAreShownEscapedInRefusals) {
  TempDir opp;
  test_support::WriteOppKernels(opp, "Ascend910B1", test_support::AllVariants("float32"));
  auto registry = KernelRegistry::FromOppRoot(opp.path(), KernelBundleDirs("/no\nsuch"));
  auto found = registry->Find("Ascend910B1", "AddCustom", "flat", "float32");
  REQUIRE_TRUE(!found.ok());
  CHECK_TRUE(found.status().message().find('\n') == std::string::npos);
  CHECK_TRUE(found.status().message().find("/no\\nsuch") != std::string::npos);
}
