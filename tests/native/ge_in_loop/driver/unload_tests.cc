// A model's copy of the GE library leaves with its model (docs/ge-library.md, "The copy leaves
// with its model"), through GE's own OM loader (om_loader.h): CustomOpSoLoader loads the copy
// from a memfd as /proc/self/fd/N, and when the model's registry goes, dlcloses it and closes
// the fd, so the next model's copy usually gets the same /proc/self/fd/N name. glibc takes a
// name it has loaded for that library, so a copy that stayed (an STB_GNU_UNIQUE object, a live
// thread_local with a destructor) would be handed to the next model whatever its bytes.
//
//   - a long load/run/unload loop: every copy unmapped when its model goes, its programs
//     unloaded (the recording ACL's count of live programs back where it was, no unload of an
//     unknown handle), and nothing leaked (ASan's leak checker over the whole run);
//   - an OM of another build of the library (TF_GE_IN_LOOP_OTHER_BUILD: the library built over
//     an op table with a third op, tests/ge/test_ge_in_loop.py) loaded after this build's OM
//     was unloaded, under the same /proc/self/fd/N: the copy GE hands out lists that build's
//     creators, not the old copy's.
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "om_loader.h"
#include "whole_models.h"

using namespace harness;
using namespace whole_models;

namespace {

// How many objects the process has mapped under /proc/self/fd/ (GE's memfd copies).
int CopiesMapped() {
  int count = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        if (info->dlpi_name != nullptr && std::string(info->dlpi_name).rfind("/proc/self/fd/", 0) == 0) {
          ++*static_cast<int *>(data);
        }
        return 0;
      },
      &count);
  return count;
}

// The first nodes of ResNet-50's table: a small model whose every launch the oracle wrote.
Model SmallModel() {
  const Model *m = Find("resnet50");
  if (m == nullptr) return Model();
  Model small = *m;
  small.name = "resnet50 (first nodes)";
  if (small.nodes.size() > 3) small.nodes.resize(3);
  return small;
}

// The model as ATC writes it with this process's package (a fresh instance from its pull
// registry): one graph build for kSoc, then Serialize.
std::vector<uint8_t> Serialized(const Model &m, Problems *p) {
  auto op = PulledOp();
  if (op == nullptr) {
    p->push_back("the package's library lists no AddCustom creator");
    return {};
  }
  InstallPlatform(kSoc, "");
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(op.get(), m, kSoc, PackageBytes(kSoc), p, &names); });
  std::vector<uint8_t> serialized;
  if (As<ge::PortableOp>(op.get())->Serialize(serialized) != ge::GRAPH_SUCCESS) p->push_back("Serialize refused");
  return serialized;
}

}  // namespace

TEST(Unload, ALongLoadRunUnloadLoopUnmapsEveryCopyAndUnloadsItsPrograms) {
  const Model m = SmallModel();
  REQUIRE_TRUE(!m.nodes.empty());
  Problems p;
  const std::vector<uint8_t> serialized = Serialized(m, &p);
  REQUIRE_TRUE(!serialized.empty());
  const std::vector<uint8_t> library = om_loader::FileBytes(P().library_path);
  const int copies_before = CopiesMapped();
  const size_t programs_before = recording_acl::LivePrograms();
  const size_t unknown_before = recording_acl::UnknownUnloads();
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    {
      const om_loader::LoadedModel loaded = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, serialized));
      REQUIRE_EQ(loaded.error, std::string());
      CHECK_EQ(CopiesMapped(), copies_before + 1);
      int launched = 0;
      ExecuteAll(loaded.Op(), m, kSoc, PackageBytes(kSoc), &p, &launched);
      CHECK_EQ(launched, static_cast<int>(m.nodes.size()));
      // The copy's own kernel cache loaded its programs.
      CHECK_TRUE(recording_acl::LivePrograms() > programs_before);
    }  // the model leaves: its registry, instances and copy with it
    CHECK_EQ(CopiesMapped(), copies_before);
    CHECK_EQ(recording_acl::LivePrograms(), programs_before);
    CHECK_EQ(recording_acl::UnknownUnloads(), unknown_before);
  }
  std::printf("# %d rounds of load, run (%zu nodes), unload: %d copies mapped after each, %zu programs live\n", kRounds,
              m.nodes.size(), CopiesMapped() - copies_before, recording_acl::LivePrograms() - programs_before);
  Report(p);
}

TEST(Unload, AnOmOfAnotherBuildLoadedUnderTheSameFdPathRunsThatBuildsCode) {
  const char *other = std::getenv("TF_GE_IN_LOOP_OTHER_BUILD");
  REQUIRE_TRUE(other != nullptr && *other);  // tests/ge/test_ge_in_loop.py always names one
  const std::vector<uint8_t> this_build = om_loader::FileBytes(P().library_path);
  const std::vector<uint8_t> other_build = om_loader::FileBytes(other);
  REQUIRE_TRUE(!other_build.empty() && other_build != this_build);
  // What the other build lists: read from a copy of it loaded under its own file name, and
  // closed again (before any memfd is made, so the fd numbers below are GE's alone).
  std::vector<std::string> other_creators;
  {
    ge::ScopedOfflineCustomOpSoLoadGuard offline;
    void *handle = dlopen(other, RTLD_NOW | RTLD_LOCAL);
    REQUIRE_TRUE(handle != nullptr);
    other_creators = PulledCreators(handle);
    dlclose(handle);
  }
  REQUIRE_TRUE(other_creators != kOpTypes);  // the builds differ in what they register
  const Model m = SmallModel();
  REQUIRE_TRUE(!m.nodes.empty());
  Problems p;
  const std::vector<uint8_t> serialized = Serialized(m, &p);
  REQUIRE_TRUE(!serialized.empty());
  const std::vector<uint8_t> partition = om_loader::CustomOpsPartition(kOpType, serialized);

  std::string first_path;
  {
    const om_loader::LoadedModel first = om_loader::Load(this_build, partition);
    REQUIRE_EQ(first.error, std::string());
    first_path = om_loader::CopyLocation(first.Library()).first;
    CHECK_EQ(PulledCreators(first.Library()), kOpTypes);
    int launched = 0;
    ExecuteAll(first.Op(), m, kSoc, PackageBytes(kSoc), &p, &launched);
    CHECK_EQ(launched, static_cast<int>(m.nodes.size()));
  }
  std::string second_path;
  {
    const om_loader::LoadedModel second = om_loader::Load(other_build, partition);
    REQUIRE_EQ(second.error, std::string());
    second_path = om_loader::CopyLocation(second.Library()).first;
    // The case is the one GE makes: the same name for the second copy.
    REQUIRE_EQ(second_path, first_path);
    // The other build's code answers: its creators, not this build's.
    CHECK_EQ(PulledCreators(second.Library()), other_creators);
    int launched = 0;
    ExecuteAll(second.Op(), m, kSoc, PackageBytes(kSoc), &p, &launched);
    CHECK_EQ(launched, static_cast<int>(m.nodes.size()));
  }
  {
    // And back: this build's OM again, under the same name, runs this build's code.
    const om_loader::LoadedModel third = om_loader::Load(this_build, partition);
    REQUIRE_EQ(third.error, std::string());
    CHECK_EQ(om_loader::CopyLocation(third.Library()).first, first_path);
    CHECK_EQ(PulledCreators(third.Library()), kOpTypes);
  }
  std::printf("# an OM of this build, then of another build (%zu creators), then of this build again: each from %s, "
              "each running its own build's code\n",
              other_creators.size(), first_path.c_str());
  Report(p);
}
