// GE's real OM load path for the model's custom ops (om_loader.h, GE's own loader code): the
// model's own copy of the GE library loaded from memory (a memfd opened as /proc/self/fd/N,
// outside any OPP root), its creators from that copy's GetRegisteredCustomOpCreators, a new
// per-model CustomOpRegistry, LoadCustomOpsPartition, then Execute for every node on the
// model's instance, every launch word against the hand-written layouts (whole_models.h).
//
// The process is a GE process as far as the registry goes: the test program carries, exported
// globally, the creator registry libgraph has (custom_op_creator_register.cc,
// custom_op_pull_registry.cc: upstream_files.json's "loader"), so a copy whose REG_AUTO_MAPPING_OP
// bound to those instead of its own would register AddCustom there and list nothing itself.
//
// The models are built on another host (OtherPackage: another installed package whose npubins
// differ from this process's package), so a model that ran this process's package's binaries
// instead of its own would be seen byte for byte.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "om_loader.h"
#include "whole_models.h"

using namespace harness;
using namespace whole_models;

namespace {

// The npubins of the host that built the models: every variant and dtype of kSoc, and of
// kArchSoc (architecture dav-2201, serving the board kBoard), bytes of their own.
std::vector<uint8_t> BuildHostBinary(const std::string &soc, const std::string &dtype, const std::string &variant) {
  return test_support::ElfObject({{test_support::EntryName(variant, dtype)}},
                                 "npubin of the model's build host for " + soc + " " + variant + " " + dtype);
}

BytesOf BuildHostBytes(const std::string &soc) {
  return [soc](const std::string &dtype, const std::string &variant) { return BuildHostBinary(soc, dtype, variant); };
}

void WriteBuildHostKernels(const test_support::TempDir &dir, const std::string &root) {
  for (const std::string soc : {kSoc, kArchSoc}) {
    std::vector<KernelSpec> kernels = AllKernels();
    for (auto &k : kernels) k.binary = BuildHostBinary(soc, k.dtype, k.variant);
    std::string manifest = test_support::ManifestJson(soc, kernels);
    if (soc == kArchSoc) manifest = test_support::WithArchitecture(manifest, std::string("dav-") + kNpuArch);
    dir.Write(root + "/kernels/" + soc + "/manifest.json", manifest);
    for (const auto &k : kernels) dir.Write(root + "/kernels/" + soc + "/" + test_support::BinaryName(k.variant, k.dtype), k.binary);
  }
}

const OtherPackage &BuildHost() {
  static OtherPackage *host = new OtherPackage(WriteBuildHostKernels);  // kept loaded
  return *host;
}

// The model as the build host's ATC writes it: one graph build for board on a fresh instance
// of its package, then Serialize; every declaration checked on the way.
std::vector<uint8_t> BuildOnTheBuildHost(const Model &m, const std::string &board, const std::string &kernels_soc,
                                         Problems *p) {
  auto op = BuildHost().Op();
  if (op == nullptr) {
    p->push_back("the build host's library lists no AddCustom creator");
    return {};
  }
  InstallPlatform(board, "");
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(op.get(), m, board, BuildHostBytes(kernels_soc), p, &names); });
  InstallPlatform(kSoc, "");
  std::vector<uint8_t> serialized;
  if (As<ge::PortableOp>(op.get())->Serialize(serialized) != ge::GRAPH_SUCCESS) p->push_back("Serialize refused");
  return serialized;
}

// The model built on the build host for board, loaded here by GE's OM loader, every node run.
void LoadAndRun(const std::string &model, const std::string &board, const std::string &kernels_soc) {
  const Model *m = Find(model);
  REQUIRE_TRUE(m != nullptr && !m->nodes.empty());
  Problems p;
  const std::vector<uint8_t> serialized = BuildOnTheBuildHost(*m, board, kernels_soc, &p);
  REQUIRE_TRUE(!serialized.empty());
  const om_loader::LoadedModel loaded =
      om_loader::Load(om_loader::FileBytes(P().library_path), om_loader::CustomOpsPartition(kOpType, serialized));
  REQUIRE_EQ(loaded.error, std::string());
  // The copy is not this process's package library and sits in no OPP root.
  const auto where = om_loader::CopyLocation(loaded.Library());
  CHECK_TRUE(where.first.rfind("/proc/self/fd/", 0) == 0);
  CHECK_TRUE(where.second.rfind("/memfd:", 0) == 0);
  CHECK_TRUE(loaded.Library() != P().library);
  int launched = 0;
  ExecuteAll(loaded.Op(), *m, board, BuildHostBytes(kernels_soc), &p, &launched);
  CHECK_EQ(launched, static_cast<int>(m->nodes.size()));
  std::printf("# OM of %s built on another host for %s, loaded from %s (%s): %d launches checked\n", m->name.c_str(),
              board.c_str(), where.first.c_str(), where.second.c_str(), launched);
  Report(p);
}

using CreatorNum = size_t (*)();

}  // namespace

TEST(OmLoad, TheModelsLibraryCopyRegistersAddCustomIntoItsOwnCreatorListWhereLibgraphsIsLoaded) {
  // libgraph's registry, as a GE process has it: global, and not the copy's.
  auto global_num = reinterpret_cast<CreatorNum>(dlsym(RTLD_DEFAULT, "GetRegisteredCustomOpCreatorNum"));
  REQUIRE_TRUE(global_num != nullptr);
  const Model *m = Find("resnet50");
  REQUIRE_TRUE(m != nullptr);
  Problems p;
  const std::vector<uint8_t> serialized = BuildOnTheBuildHost(*m, kSoc, kSoc, &p);
  Report(p);
  const size_t global_before = global_num();
  const om_loader::LoadedModel loaded =
      om_loader::Load(om_loader::FileBytes(P().library_path), om_loader::CustomOpsPartition(kOpType, serialized));
  REQUIRE_EQ(loaded.error, std::string());
  // The copy's own list holds its ops (AddCustom, and LeakyReluCustom of the harness's table);
  // libgraph's got nothing from it.
  CHECK_EQ(PulledCreators(loaded.Library()), kOpTypes);
  CHECK_TRUE(dlsym(loaded.Library(), "GetRegisteredCustomOpCreatorNum") != reinterpret_cast<void *>(global_num));
  CHECK_EQ(global_num(), global_before);
  CHECK_EQ(global_before, size_t{0});
  // The model's registry tells GE's runtime the op declares its launches (the annotated-args
  // path a sunk graph takes at load, custom_op_registry.cc).
  CHECK_TRUE(loaded.registry->GetArgsRefreshStrategy(ge::AscendString(kOpType)) == ge::ArgsRefreshStrategy::kAnnotatedArgs);
  std::printf("# the model's library copy lists %zu creator(s) of its own, libgraph's registry %zu\n",
              PulledCreators(loaded.Library()).size(), global_num());
}

TEST(OmLoad, ResNet50BuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard) {
  LoadAndRun("resnet50", kSoc, kSoc);
  LoadAndRun("resnet50", kBoard, kArchSoc);
}

TEST(OmLoad, MobileNetV2BuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard) {
  LoadAndRun("mobilenet_v2", kSoc, kSoc);
  LoadAndRun("mobilenet_v2", kBoard, kArchSoc);
}

TEST(OmLoad, TheEncoderBuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard) {
  LoadAndRun("transformer_encoder", kSoc, kSoc);
  LoadAndRun("transformer_encoder", kBoard, kArchSoc);
}

TEST(OmLoad, TwoModelsOfOneLibraryEachGetTheirOwnRegistryAndInstance) {
  // GE's loader reuses a copy of the same bytes (custom_op_so_loader.cc, by fingerprint); each
  // model still has a registry and instance of its own: the encoder built for the board, and
  // MobileNetV2 for Ascend910B1, loaded side by side, each runs its own kernels.
  const Model *a = Find("transformer_encoder"), *b = Find("mobilenet_v2");
  REQUIRE_TRUE(a != nullptr && b != nullptr);
  Problems p;
  const std::vector<uint8_t> library = om_loader::FileBytes(P().library_path);
  const auto first = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, BuildOnTheBuildHost(*a, kBoard, kArchSoc, &p)));
  const auto second = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, BuildOnTheBuildHost(*b, kSoc, kSoc, &p)));
  REQUIRE_EQ(first.error + second.error, std::string());
  CHECK_TRUE(first.Library() == second.Library());  // one copy of the bytes ...
  CHECK_TRUE(first.Op() != second.Op());            // ... two instances
  int launched = 0;
  ExecuteAll(first.Op(), *a, kBoard, BuildHostBytes(kArchSoc), &p, &launched);
  ExecuteAll(second.Op(), *b, kSoc, BuildHostBytes(kSoc), &p, &launched);
  CHECK_EQ(launched, static_cast<int>(a->nodes.size() + b->nodes.size()));
  // The board is served in the encoder's instance only: MobileNetV2's never served it.
  EagerCall call({4096}, {4096}, ge::DT_FLOAT16, ge::DT_FLOAT16, "unserved_node");
  recording_acl::Reset(OnFreshDevice(kBoard));
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(second.Op())->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  CHECK_TRUE(Contains(err, "node unserved_node: ") && Contains(err, kBoard));
  Report(p);
}

TEST(OmLoad, ADamagedItemOrAnotherOpTypeFailsTheLoadThroughGesLoader) {
  const Model *m = Find("mobilenet_v2");
  REQUIRE_TRUE(m != nullptr);
  Problems p;
  std::vector<uint8_t> serialized = BuildOnTheBuildHost(*m, kSoc, kSoc, &p);
  REQUIRE_TRUE(!serialized.empty());
  const std::vector<uint8_t> library = om_loader::FileBytes(P().library_path);
  serialized.back() ^= 1;  // the bundle's checksum no longer holds
  om_loader::LoadedModel broken;
  const std::string err = CaptureStderr([&] { broken = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, serialized)); });
  CHECK_EQ(broken.error, std::string("CustomOpRegistry::LoadCustomOpsPartition failed"));
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom: Deserialize"));
  // A partition item for an op the library does not define: GE's "environment mismatch".
  serialized.back() ^= 1;
  const auto other = om_loader::Load(library, om_loader::CustomOpsPartition("NotAnOpOfTheLibrary", serialized));
  CHECK_EQ(other.error, std::string("CustomOpRegistry::LoadCustomOpsPartition failed"));
  Report(p);
}

TEST(OmLoad, TheSameOmTwiceCollidingNodeNamesAndAReloadOfARebuiltModelEachRunTheirOwnKernels) {
  // The v1 loader gives every model a fresh instance of its copy (custom_op_registry.cc), so a
  // model is known by its instance: MobileNetV2 built on the build host loaded twice; the same
  // graph (the same node names) built with this process's package beside them; then every
  // model dropped and the rebuilt one (the build host's) loaded again under the same names.
  const Model *m = Find("mobilenet_v2");
  REQUIRE_TRUE(m != nullptr);
  Problems p;
  const std::vector<uint8_t> library = om_loader::FileBytes(P().library_path);
  const std::vector<uint8_t> host = BuildOnTheBuildHost(*m, kSoc, kSoc, &p);
  auto builder = PulledOp();
  REQUIRE_TRUE(builder != nullptr);
  InstallPlatform(kSoc, "");
  std::map<std::string, std::vector<uint8_t>> names;
  (void)CaptureStderr([&] { BuildGraph(builder.get(), *m, kSoc, PackageBytes(kSoc), &p, &names); });
  std::vector<uint8_t> package;
  REQUIRE_EQ(As<ge::PortableOp>(builder.get())->Serialize(package), ge::GRAPH_SUCCESS);
  REQUIRE_TRUE(host != package);
  int launched = 0;
  {
    const auto once = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, host));
    const auto twice = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, host));
    const auto colliding = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, package));
    REQUIRE_EQ(once.error + twice.error + colliding.error, std::string());
    CHECK_TRUE(once.Op() != twice.Op() && twice.Op() != colliding.Op());
    ExecuteAll(once.Op(), *m, kSoc, BuildHostBytes(kSoc), &p, &launched);
    ExecuteAll(twice.Op(), *m, kSoc, BuildHostBytes(kSoc), &p, &launched);
    ExecuteAll(colliding.Op(), *m, kSoc, PackageBytes(kSoc), &p, &launched);
  }  // every model unloaded
  {
    const auto first = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, package));
    REQUIRE_EQ(first.error, std::string());
    ExecuteAll(first.Op(), *m, kSoc, PackageBytes(kSoc), &p, &launched);
  }
  const auto rebuilt = om_loader::Load(library, om_loader::CustomOpsPartition(kOpType, host));
  REQUIRE_EQ(rebuilt.error, std::string());
  ExecuteAll(rebuilt.Op(), *m, kSoc, BuildHostBytes(kSoc), &p, &launched);
  CHECK_EQ(launched, static_cast<int>(5 * m->nodes.size()));
  Report(p);
}
