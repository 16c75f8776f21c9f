// The declared launch (DeclareLaunchArgs' words) against what Execute launches for the same
// call: for every kernel variant x dtype x SoC layout (with and without the ffts slot), the
// declared words laid end to end equal the struct Execute packed, byte for byte, except the
// ffts word (0 when declared: the vector-core kernels never read it), and the address words
// sit where triton-ascend's layout puts the pointers (written out by hand below), naming the
// right op tensor. Then every refusal, the 0-element launch and the workspace word.
#include <map>
#include <set>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/declared_launch.h"
#include "tf_ge_custom_core/executor.h"

using namespace tf_ge_custom::core;
using test_support::KernelSpec;
using Dims = std::vector<int64_t>;

namespace {

constexpr uint64_t kX = 0x0000100000000000ull, kY = 0x0000200000000000ull, kZ = 0x0000300000000000ull;
constexpr uint64_t kFfts = 0x00000000FF001000ull;
constexpr uint64_t kWorkspace = 0x0000700000000000ull;

// Execute's side: a recording runtime (a test double for ACL and the execution context).
class Recorder : public DeviceRuntime {
 public:
  std::vector<std::vector<uint8_t>> launches;
  std::vector<uint32_t> block_dims;
  Result<std::string> SocName() override { return std::string("Ascend910B1"); }
  Result<int32_t> DeviceId() override { return 0; }
  Result<uint64_t> HardwareSyncAddress() override { return kFfts; }
  Result<uint64_t> AllocWorkspace(uint64_t) override { return kWorkspace; }
  Status FillBytes(uint64_t, uint64_t, uint8_t) override { return Status::Ok(); }
  Status Launch(const LoadedKernel &, uint32_t block_dim, std::vector<uint8_t> *args) override {
    launches.push_back(*args);
    block_dims.push_back(block_dim);
    return Status::Ok();
  }
  Status LoadKernel(int32_t, const KernelBinary &, LoadedKernel *out) override {
    out->function = reinterpret_cast<void *>(uintptr_t{0xF00});
    return Status::Ok();
  }
};

// The declaration's side: GE's MallocWorkSpace, recorded.
class Workspaces : public DeclarationRuntime {
 public:
  std::vector<uint64_t> requests;
  Result<Workspace> AllocWorkspace(uint64_t bytes) override {
    requests.push_back(bytes);
    Workspace w;
    w.index = static_cast<uint32_t>(requests.size() - 1);
    w.address = kWorkspace;
    return w;
  }
};

KernelCall Call(const std::string &dtype, const Dims &xs, const Dims &ys) {
  const OpDefinition &op = *FindOp("AddCustom");
  KernelCall c;
  const Status st = PrepareCall(op, *op.FindDType(dtype), xs, ys, &c);
  if (!st.ok()) {
    std::fprintf(stderr, "test data error: %s\n", st.ToString().c_str());
    std::abort();
  }
  c.inputs = {kX, kY};
  c.outputs = {kZ};
  return c;
}

// One pair of input shapes per kernel variant and operand order ("flat", "scalar swapped"), found among hand-picked broadcast forms (the
// variant choice itself is test_broadcast.cc's business).
std::map<std::string, std::pair<Dims, Dims>> ShapesPerVariant() {
  const OpDefinition &op = *FindOp("AddCustom");
  std::map<std::string, std::pair<Dims, Dims>> found;
  const int64_t sizes[] = {2, 3, 7, 16, 33, 64, 100, 256, 1000, 1024, 4096};
  std::vector<std::pair<Dims, Dims>> candidates = {{{5000}, {5000}}, {{5000}, {}}, {{}, {5000}}};
  for (int64_t r : sizes) {
    for (int64_t c : sizes) {
      candidates.push_back({{r, c}, {c}});          // row
      candidates.push_back({{c}, {r, c}});          // row, swapped
      candidates.push_back({{r, c}, {r, 1}});       // col
      candidates.push_back({{1, c}, {r, 1}});       // outer
      candidates.push_back({{r, 1}, {1, c}});       // outer, swapped
      candidates.push_back({{2, r, c}, {1, r, 1}}); // col under an outer dimension
    }
  }
  for (const auto &xy : candidates) {
    auto k = ChooseKernel(op, xy.first, xy.second);
    if (!k.ok() || k.value().variant == nullptr) continue;
    // Each variant with its operands in order and, where the op swaps them, swapped.
    const std::string key = k.value().variant->name + (k.value().operands[0] == 1 ? " swapped" : "");
    if (!found.count(key)) found[key] = xy;
  }
  return found;
}

uint64_t ReadLe(const std::vector<uint8_t> &b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

struct Fixture {
  test_support::TempDir opp;
  std::shared_ptr<KernelRegistry> registry;
  KernelCache cache;
  explicit Fixture(const std::vector<KernelSpec> &kernels, const std::string &soc = "Ascend910B1") {
    test_support::WriteOppKernels(opp, soc, kernels);
    registry = KernelRegistry::FromOppRoot(opp.path());
  }
};

}  // namespace

TEST(DeclaredLaunch, EveryVariantDtypeAndLayoutDeclaresExecutesStructWordForWord) {
  const OpDefinition &op = *FindOp("AddCustom");
  const auto shapes = ShapesPerVariant();
  for (const auto &v : op.variants) {
    CHECK_EQ(v.name + (shapes.count(v.name) ? ": has shapes" : ": no shapes found"), v.name + ": has shapes");
  }
  // Swapped operands are declared too (the scalar and row patterns take them either way).
  CHECK_TRUE(shapes.count("scalar swapped") == 1 && shapes.count("row_16x256 swapped") == 1);
  int compared = 0;
  for (const bool ffts : {true, false}) {
    for (const auto &dtype : op.dtypes) {
      Fixture f(test_support::AllVariants(dtype.name, ffts));
      for (const auto &entry : shapes) {
        const std::string what = entry.first + " " + dtype.name + (ffts ? " with ffts" : " without ffts");
        const KernelCall call = Call(dtype.name, entry.second.first, entry.second.second);
        const std::string variant = entry.first.substr(0, entry.first.find(' '));
        CHECK_EQ(call.choice.variant->name, variant);
        Recorder execute;
        REQUIRE_OK(LaunchKernels(call, *f.registry, f.cache, execute));
        REQUIRE_EQ(execute.launches.size(), size_t{1});
        const std::vector<uint8_t> &packed = execute.launches[0];

        Workspaces ws;
        LaunchDeclaration d;
        REQUIRE_OK(DeclareLaunch(call, "Ascend910B1", *f.registry, ws, &d));
        REQUIRE_EQ(d.launches.size(), size_t{1});
        CHECK_EQ(d.launches[0].block_dim, execute.block_dims[0]);
        CHECK_EQ(d.kernel.entry.entry, test_support::EntryName(variant, dtype.name));
        const std::vector<ArgWord> &words = d.launches[0].words;
        std::vector<uint8_t> laid;
        WordBytes(words, &laid);
        // triton-ascend's struct: 64/104 bytes with ffts, 56/96 without (all whole words).
        const bool tiled = variant != "flat" && variant != "scalar";
        const size_t expected_size = (tiled ? 96 : 56) + (ffts ? 8 : 0);
        CHECK_EQ(what + ": " + std::to_string(packed.size()), what + ": " + std::to_string(expected_size));
        CHECK_EQ(what + ": " + std::to_string(laid.size()), what + ": " + std::to_string(expected_size));
        if (laid.size() != packed.size()) continue;
        // Byte for byte, the ffts word aside: Execute writes the hardware sync address there.
        std::vector<uint8_t> expected = packed;
        if (ffts) {
          CHECK_EQ(ReadLe(packed, 0), kFfts);
          for (size_t i = 0; i < 8; ++i) expected[i] = 0;
        }
        CHECK_EQ(what + (laid == expected ? ": same bytes" : ": bytes differ"), what + ": same bytes");
        // The address words, where the layout has the pointers: [ffts,] lock, workspace, a, b, z.
        const size_t first_pointer = ffts ? 3 : 2;
        const std::vector<int> &operands = call.choice.operands;
        for (size_t w = 0; w < words.size(); ++w) {
          std::string got = ArgWordKindName(words[w].kind);
          std::string want = "value";
          if (w == first_pointer || w == first_pointer + 1) {
            want = "input " + std::to_string(operands[w - first_pointer]);
            got += " " + std::to_string(words[w].index);
            CHECK_EQ(words[w].value, operands[w - first_pointer] == 0 ? kX : kY);
          } else if (w == first_pointer + 2) {
            want = "output 0";
            got += " " + std::to_string(words[w].index);
            CHECK_EQ(words[w].value, kZ);
          }
          CHECK_EQ(what + " word " + std::to_string(w) + ": " + got, what + " word " + std::to_string(w) + ": " + want);
        }
        CHECK_TRUE(ws.requests.empty());  // these kernels have no workspace
        ++compared;
      }
    }
  }
  CHECK_EQ(compared, static_cast<int>(2 * op.dtypes.size() * shapes.size()));
  CHECK_TRUE(shapes.size() > op.variants.size());
}

TEST(DeclaredLaunch, TwoInt32ScalarsShareAWordAsTheStructHasThem) {
  // flat, float32, 5000 elements, with ffts: words 6 and 7 are n_elements | gridX << 32 and
  // gridY | gridZ << 32 (hand-computed: 5000 elements in blocks of 4096 is 2 programs).
  Fixture f(test_support::AllVariants("float32", true));
  Workspaces ws;
  LaunchDeclaration d;
  REQUIRE_OK(DeclareLaunch(Call("float32", {5000}, {5000}), "Ascend910B1", *f.registry, ws, &d));
  const auto &w = d.launches[0].words;
  REQUIRE_EQ(w.size(), size_t{8});
  CHECK_EQ(w[0].value, uint64_t{0});  // ffts: declared 0
  CHECK_EQ(w[1].value, uint64_t{0});  // sync-block lock: null
  CHECK_EQ(w[2].value, uint64_t{0});  // workspace: null
  CHECK_EQ(w[6].value, uint64_t{5000} | (uint64_t{2} << 32));
  CHECK_EQ(w[7].value, uint64_t{1} | (uint64_t{1} << 32));
  CHECK_EQ(d.launches[0].block_dim, uint32_t{2});
  CHECK_EQ(d.kernel.bytes->size(), test_support::FakeBinary("Ascend910B1", "float32").size());
}

TEST(DeclaredLaunch, WorkspaceIsAskedOfGeAndDeclaredAsItsAddressWord) {
  KernelSpec k;
  k.workspace_size = 512;
  Fixture f({k});
  Workspaces ws;
  LaunchDeclaration d;
  REQUIRE_OK(DeclareLaunch(Call("float32", {5000}, {5000}), "Ascend910B1", *f.registry, ws, &d));
  REQUIRE_EQ(ws.requests.size(), size_t{1});
  CHECK_EQ(ws.requests[0], uint64_t{512 * 2});  // per program x 2 programs
  CHECK_EQ(d.workspace_bytes, uint64_t{1024});
  const auto &w = d.launches[0].words;
  CHECK_EQ(std::string(ArgWordKindName(w[2].kind)), std::string("workspace"));
  CHECK_EQ(w[2].index, uint32_t{0});
  CHECK_EQ(w[2].value, kWorkspace);
}

TEST(DeclaredLaunch, AShapeNeedingSeveralLaunchesIsRefusedNamingTheShape) {
  KernelSpec k;
  k.max_elements_per_launch = 4096 * 4;
  Fixture f({k});
  const KernelCall call = Call("float32", {8, 4096}, {8, 4096});
  Recorder execute;  // Execute takes it, in two launches
  REQUIRE_OK(LaunchKernels(call, *f.registry, f.cache, execute));
  CHECK_EQ(execute.launches.size(), size_t{2});
  Workspaces ws;
  LaunchDeclaration d;
  const Status st = DeclareLaunch(call, "Ascend910B1", *f.registry, ws, &d);
  CHECK_EQ(st.code(), Code::kUnsupported);
  CHECK_TRUE(st.message().find("output shape [8, 4096] (32768 elements) needs 2 launches of at most 16384") !=
             std::string::npos);
  CHECK_TRUE(st.message().find("compile_dynamic_mode") != std::string::npos);
  CHECK_TRUE(st.message().find("SoC Ascend910B1, kernel variant flat, dtype float32") != std::string::npos);
}

TEST(DeclaredLaunch, RefusesLocksAndNonVectorCoreKernels) {
  {
    KernelSpec k;
    k.lock_num = 4;
    Fixture f({k});
    Workspaces ws;
    LaunchDeclaration d;
    const Status st = DeclareLaunch(Call("float32", {64}, {64}), "Ascend910B1", *f.registry, ws, &d);
    CHECK_EQ(st.code(), Code::kUnsupported);
    CHECK_TRUE(st.message().find("4 sync-block locks") != std::string::npos);
  }
  {
    test_support::TempDir opp;
    KernelSpec k;
    std::string manifest = test_support::WriteOppKernels(opp, "Ascend910B1", {k});
    manifest = test_support::Replace(manifest, "\"mix_mode\": \"aiv\"", "\"mix_mode\": \"mix\"");
    manifest = test_support::Replace(manifest, "\"magic\": \"ELF_VECTOR_CORE\"", "\"magic\": \"ELF_AICORE\"");
    opp.Write("kernels/Ascend910B1/manifest.json", manifest);
    auto registry = KernelRegistry::FromOppRoot(opp.path());
    Workspaces ws;
    LaunchDeclaration d;
    const Status st = DeclareLaunch(Call("float32", {64}, {64}), "Ascend910B1", *registry, ws, &d);
    CHECK_EQ(st.code(), Code::kUnsupported);
    CHECK_TRUE(st.message().find("not a vector-core (aiv) kernel") != std::string::npos);
  }
  {
    Fixture f({KernelSpec()});
    Workspaces ws;
    LaunchDeclaration d;
    const Status st = DeclareLaunch(Call("float32", {64}, {64}), "Ascend910_9392", *f.registry, ws, &d);
    CHECK_EQ(st.code(), Code::kUnknownSoc);
  }
}

TEST(DeclaredLaunch, ZeroElementsDeclareOneFlatLaunchOverNothing) {
  Fixture f(test_support::AllVariants("float32", true));
  Workspaces ws;
  LaunchDeclaration d;
  REQUIRE_OK(DeclareLaunch(Call("float32", {0, 7}, {7}), "Ascend910B1", *f.registry, ws, &d));
  REQUIRE_EQ(d.launches.size(), size_t{1});
  CHECK_EQ(d.launches[0].block_dim, uint32_t{1});
  CHECK_EQ(d.kernel.entry.variant, std::string("flat"));
  const auto &w = d.launches[0].words;
  REQUIRE_EQ(w.size(), size_t{8});
  CHECK_EQ(w[6].value, uint64_t{0} | (uint64_t{1} << 32));  // n_elements 0, gridX 1
  CHECK_EQ(std::string(ArgWordKindName(w[3].kind)), std::string("input"));
  CHECK_EQ(std::string(ArgWordKindName(w[5].kind)), std::string("output"));
}

TEST(DeclaredLaunch, AddressSlotThatIsNotOneAlignedWordIsRefused) {
  ArgLayout layout;
  layout.size = 24;
  layout.slots.push_back({"x", SlotRole::kInput, 0, -1, 4, 8});
  HostArgValues v;
  v.inputs = {kX};
  ArgWordRefs refs;
  refs.inputs = {0};
  std::vector<uint8_t> bytes;
  std::vector<ArgWord> words;
  const Status st = PackArgWords(layout, v, refs, &bytes, &words);
  CHECK_EQ(st.code(), Code::kUnsupported);
  CHECK_TRUE(st.message().find("slot x (8 bytes at offset 4) is not one 8-byte-aligned word") != std::string::npos);
}

TEST(DeclaredLaunch, APartialLastWordIsPaddedWithZeros) {
  ArgLayout layout;
  layout.size = 12;
  layout.slots.push_back({"x", SlotRole::kInput, 0, -1, 0, 8});
  layout.slots.push_back({"grid_x", SlotRole::kGridX, -1, -1, 8, 4});
  HostArgValues v;
  v.inputs = {kX};
  v.grid_x = 0x01020304;
  ArgWordRefs refs;
  refs.inputs = {1};
  std::vector<uint8_t> bytes;
  std::vector<ArgWord> words;
  REQUIRE_OK(PackArgWords(layout, v, refs, &bytes, &words));
  REQUIRE_EQ(words.size(), size_t{2});
  CHECK_EQ(words[0].index, uint32_t{1});
  CHECK_EQ(words[1].value, uint64_t{0x01020304});
  std::vector<uint8_t> laid;
  WordBytes(words, &laid);
  CHECK_EQ(laid, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0x10, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0}));
}

TEST(DeclaredLaunch, AReusedDeclarationEqualsAFreshOne) {
  Fixture f(test_support::AllVariants("float16", false));
  Workspaces ws;
  LaunchDeclaration reused;
  const std::pair<Dims, Dims> calls[] = {{{1024, 1024}, {1024}}, {{5000}, {}}, {{64, 1024}, {64, 1}}, {{5000}, {5000}}};
  for (const auto &xy : calls) {
    const KernelCall call = Call("float16", xy.first, xy.second);
    LaunchDeclaration fresh;
    REQUIRE_OK(DeclareLaunch(call, "Ascend910B1", *f.registry, ws, &fresh));
    REQUIRE_OK(DeclareLaunch(call, "Ascend910B1", *f.registry, ws, &reused));
    std::vector<uint8_t> a, b;
    WordBytes(fresh.launches[0].words, &a);
    WordBytes(reused.launches[0].words, &b);
    CHECK_EQ(a, b);
    REQUIRE_EQ(fresh.launches[0].words.size(), reused.launches[0].words.size());
    for (size_t w = 0; w < a.size() / 8; ++w) {
      CHECK_EQ(static_cast<int>(fresh.launches[0].words[w].kind), static_cast<int>(reused.launches[0].words[w].kind));
      CHECK_EQ(fresh.launches[0].words[w].index, reused.launches[0].words[w].index);
    }
    CHECK_EQ(fresh.kernel.entry.entry, reused.kernel.entry.entry);
  }
}

TEST(DeclaredLaunch, OneGraphHoldsEveryVariantAndDtypeEachUnderItsOwnName) {
  // GE keeps one binary per kernel name in a model: declaring every variant of every dtype in
  // one graph gives 44 names, each the kernel's own (written out in test_support), each with
  // that kernel's bytes, and none refused; declaring them all again changes nothing.
  test_support::TempDir opp;
  const OpDefinition &op = *FindOp("AddCustom");
  std::vector<KernelSpec> all;
  for (const auto &dtype : op.dtypes) {
    for (const auto &k : test_support::AllVariants(dtype.name)) all.push_back(k);
  }
  test_support::WriteOppKernels(opp, "Ascend910B1", all);
  auto registry = KernelRegistry::FromOppRoot(opp.path());
  const auto shapes = ShapesPerVariant();
  std::map<std::string, std::vector<uint8_t>> declared;  // name -> bytes, over both rounds
  int declarations = 0;
  for (int round = 0; round < 2; ++round) {
    for (const auto &dtype : op.dtypes) {
      for (const auto &entry : shapes) {
        const std::string variant = entry.first.substr(0, entry.first.find(' '));
        Workspaces ws;
        LaunchDeclaration d;
        REQUIRE_OK(DeclareLaunch(Call(dtype.name, entry.second.first, entry.second.second), "Ascend910B1",
                                 *registry, ws, &d));
        ++declarations;
        CHECK_EQ(d.kernel.entry.entry, test_support::EntryName(variant, dtype.name));
        const std::vector<uint8_t> bytes = *d.kernel.bytes;
        CHECK_EQ(bytes, test_support::FakeBinary("Ascend910B1", dtype.name, variant));
        const auto first = declared.emplace(d.kernel.entry.entry, bytes);
        if (!first.second) CHECK_EQ(first.first->second, bytes);  // a name never gets other bytes
      }
    }
  }
  CHECK_EQ(declared.size(), op.variants.size() * op.dtypes.size());
  CHECK_EQ(declared.size(), size_t{44});
  CHECK_TRUE(declarations > 88);  // swapped operand orders declare the same kernels again
}

TEST(DeclaredLaunch, TheTargetsOwnVectorCoresCapTheDeclaredGrid) {
  // A set built for 48 vector cores (Ascend910B1's) declared for a board of 40 (Ascend910B4's,
  // from Compile's platform info): [4096, 4096] is 4096 tiles, so the grid is the cap, and
  // gridX in word 6's high half says the same. Unknown (0): the manifest's 48.
  std::vector<KernelSpec> kernels = test_support::AllVariants("float32", true);
  for (auto &k : kernels) k.max_programs = 48;
  Fixture f(kernels);
  Workspaces ws;
  for (const auto &c : std::vector<std::pair<int64_t, uint32_t>>{{40, 40}, {0, 48}, {24, 24}, {64, 64}}) {
    LaunchDeclaration d;
    REQUIRE_OK(DeclareLaunch(Call("float32", {4096, 4096}, {4096, 4096}), "Ascend910B1", *f.registry, ws, &d, c.first));
    CHECK_EQ(d.launches[0].block_dim, c.second);
    CHECK_EQ(d.launches[0].words[6].value >> 32, uint64_t{c.second});
  }
}
