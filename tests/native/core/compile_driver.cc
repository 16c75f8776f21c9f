// tf_ge_custom_compile_driver: what CompilableOp::Compile decides, as a command, so that
// tests/ge/test_kernel_compile.py can run it as real processes (racing each other, against
// the real Python builder or the compiler double) without GE. Built with the native tests,
// never installed.
//
//   tf_ge_custom_compile_driver --opp-root R --soc S --dtype D [--threads N] [--save-bundle F]
//                               [--npu-arch A] [--repeat N]
//   tf_ge_custom_compile_driver --from-bundle F --soc S --dtype D
//   tf_ge_custom_compile_driver --opp-root R --describe-only 1       (BuilderProcess::Locate)
//   tf_ge_custom_compile_driver --opp-root R --print-describe-command 1
//
// The first form is Compile (the package's kernel, else the cache, else the builder in a
// child process, found and configured from the environment as in GE), N threads at once,
// then optionally Serialize into F. The second is an OM's Deserialize + Execute's lookup:
// nothing but F. Prints one JSON line: {"ok", "origin", "sha256" (variant -> sha256 of the
// npubin Find answers for it, every variant of the op), "binary_size" (their sum),
// "compiles", "error", "note" (which kernel set was taken, from where), "progress" (the
// builder's output lines as the GE library hands them to GE's log), "attempts" (one entry per
// --repeat: a graph build's result)}; exit status 0 when ok. The kernel bundles of
// TF_GE_CUSTOM_KERNELS are read as the GE library reads them. --npu-arch is GE's NpuArch.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/kernel_supply.h"
#include "tf_ge_custom_core/process_runner.h"
#include "tf_ge_custom_core/sha256.h"

using namespace tf_ge_custom::core;

namespace {

int Report(const nlohmann::json &line, bool ok) {
  std::cout << line.dump() << std::endl;
  return ok ? 0 : 1;
}

int Fail(const std::string &error) { return Report({{"ok", false}, {"error", error}}, false); }

}  // namespace

int main(int argc, char **argv) {
  std::string opp_root, soc, dtype, save_bundle, from_bundle, op_name = "AddCustom";
  int threads = 1, repeat = 1;
  std::string npu_arch;
  bool describe_only = false, print_describe_command = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--opp-root") opp_root = value;
    else if (flag == "--soc") soc = value;
    else if (flag == "--dtype") dtype = value;
    else if (flag == "--op") op_name = value;
    else if (flag == "--threads") threads = std::atoi(value.c_str());
    else if (flag == "--repeat") repeat = std::atoi(value.c_str());
    else if (flag == "--npu-arch") npu_arch = value;
    else if (flag == "--save-bundle") save_bundle = value;
    else if (flag == "--from-bundle") from_bundle = value;
    else if (flag == "--describe-only") describe_only = value == "1";
    else if (flag == "--print-describe-command") print_describe_command = value == "1";
    else return Fail("unknown option " + flag);
  }
  const EnvLookup env = [](const char *name) { return std::getenv(name); };
  if (print_describe_command || describe_only) {
    auto settings = FindBuilder(opp_root, env);
    if (!settings.ok()) return Fail(settings.status().message());
    if (print_describe_command) {
      return Report({{"ok", true}, {"argv", DescribeCommand(settings.value())},
                     {"python_from", settings.value().python_from}}, true);
    }
    BuilderProcess compiler(opp_root, env, std::make_shared<PosixProcessRunner>());
    auto target = compiler.Locate();
    if (!target.ok()) return Fail(target.status().message());
    return Report({{"ok", true}, {"cache_dir", target.value().cache_dir}, {"key", target.value().key}}, true);
  }
  const OpDefinition *op = FindOp(op_name);
  if (op == nullptr || soc.empty() || dtype.empty() || (opp_root.empty() == from_bundle.empty()) || threads < 1) {
    return Fail("usage: --opp-root R | --from-bundle F, --soc S --dtype D [--threads N] [--save-bundle F]");
  }
  std::shared_ptr<KernelRegistry> registry;
  std::shared_ptr<KernelSupply> supply;
  std::shared_ptr<std::vector<std::string>> progress = std::make_shared<std::vector<std::string>>();
  if (!from_bundle.empty()) {
    std::vector<uint8_t> bytes;
    const Status read = ReadFileBytes(from_bundle, 1ull << 30, &bytes);
    if (!read.ok()) return Fail(read.message());
    auto restored = KernelRegistry::FromSerialized(bytes);
    if (!restored.ok()) return Fail(restored.status().ToString());
    registry = restored.value();
    supply = std::make_shared<KernelSupply>(nullptr);  // an OM compiles nothing
  } else {
    registry = KernelRegistry::FromOppRoot(opp_root, KernelBundleDirs(std::getenv(kKernelsEnv)));
    auto compiler = std::make_shared<BuilderProcess>(opp_root, env, std::make_shared<PosixProcessRunner>());
    compiler->SetProgress([progress](const std::string &line) { progress->push_back(line); });
    supply = std::make_shared<KernelSupply>(compiler);
  }
  std::vector<Result<KernelOrigin>> results(threads, Status::Error(Code::kInternal, "not run"));
  std::string note;
  nlohmann::json attempts = nlohmann::json::array();
  for (int attempt = 0; attempt < std::max(1, repeat); ++attempt) {  // one graph build each
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        results[t] = PrepareKernel(*supply, *registry, *op, soc, npu_arch, {{dtype, {1}}, {dtype, {1}}},
                                   t == 0 ? &note : nullptr);
      });
    }
    for (auto &w : workers) w.join();
    attempts.push_back(results[0].ok() ? std::string(KernelOriginName(results[0].value()))
                                       : results[0].status().message());
  }
  for (const auto &r : results) {
    if (!r.ok()) {
      return Report({{"ok", false}, {"error", r.status().message()}, {"compiles", supply->compile_count()},
                     {"progress", *progress}, {"attempts", attempts}},
                    false);
    }
  }
  // What Execute could load: the kernel of every variant (it picks one per call by the shapes).
  nlohmann::json shas = nlohmann::json::object();
  uint64_t binary_size = 0;
  for (const auto &variant : op->variants) {
    auto found = registry->Find(soc, op->type_name, variant.name, dtype);
    if (!found.ok()) return Fail(found.status().ToString());
    const auto &bin = *found.value().bytes;
    shas[variant.name] = Sha256Hex(bin.data(), bin.size());
    binary_size += bin.size();
  }
  if (!save_bundle.empty()) {
    auto bytes = registry->Serialize();
    if (!bytes.ok()) return Fail(bytes.status().ToString());
    std::ofstream out(save_bundle, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.value().data()), static_cast<std::streamsize>(bytes.value().size()));
    if (!out) return Fail("cannot write " + save_bundle);
  }
  return Report({{"ok", true},
                 {"origin", KernelOriginName(results[0].value())},
                 {"sha256", shas},
                 {"binary_size", binary_size},
                 {"compiles", supply->compile_count()},
                 {"note", note},
                 {"progress", *progress},
                 {"attempts", attempts}},
                true);
}
