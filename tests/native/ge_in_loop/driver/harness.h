// The harness of GE in the loop, for every case file of this folder: the process (an OPP
// root with the GE library loaded as GE loads it), the op from GE's factory or the library's
// pull registry, and GE's contexts built with metadef's public builders, as GE's own faker
// lays them out. See ge_in_loop_tests.cc for what runs and against which oracle.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_HARNESS_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_HARNESS_H_
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "annotated_args_handler.h"  // GE's, private: beside its source (CMakeLists.txt)
#include "base/context_builder/op_infer_datatype_context_builder.h"
#include "base/context_builder/op_infer_shape_context_builder.h"
#include "base/context_builder/op_kernel_run_context_builder.h"
#include "exe_graph/runtime/annotated_args_context.h"
#include "exe_graph/runtime/gert_mem_allocator.h"
#include "graph/args_format_desc.h"
#include "graph/custom_op.h"
#include "graph/custom_op_factory.h"
#include "graph/custom_op_load_context.h"
#include "graph/custom_op_pull_registry.h"
#include "graph/ge_local_context.h"
#include "platform/platform_info.h"
#include "acl/acl_rt.h"
#include "op_table.h"
#include "recording_acl.h"
#include "test_support.h"
#include "testing.h"

namespace harness {

using test_support::KernelSpec;

inline const char kOpType[] = "AddCustom";
inline const char kLeakyRelu[] = "LeakyReluCustom";
// The ops whose cases and kernel layouts the harness writes out by hand (AddCustom's every
// variant, LeakyReluCustom's flat one); any other op of the table has the generic cases
// (any_op_tests.cc) and a kernel set laid out from its record.
inline const std::vector<std::string> kHandWritten = {kOpType, kLeakyRelu};
// The harness's op table: the ops the library under test registers, in the table's order, as
// the oracle read them from the records (op_table.h; tests/ge/conftest.py's GE_IN_LOOP_OPS:
// op_def.OPS); the hand-written ops where no scenario names the table (a run by hand).
inline std::vector<std::string> TableTypes() {
  std::vector<std::string> types;
  for (const op_table::Op &op : op_table::Ops()) types.push_back(op.type);
  return types.empty() ? kHandWritten : types;
}
inline const std::vector<std::string> kOpTypes = TableTypes();
inline const char kSoc[] = "Ascend910B1";
// A second packaged SoC whose float32 flat kernel wants a workspace and locks, so that
// Execute reaches MallocWorkSpace and aclrtMemsetAsync.
inline const char kWorkspaceSoc[] = "Ascend910_9391";
// A SoC without packaged kernels: Compile builds them (through the builder double).
inline const char kCompiledSoc[] = "Ascend910_9392";
// A packaged SoC whose manifest records its architecture (dav-2201, as the builder writes it),
// and a board of that architecture without kernels of its own name, which Compile serves with
// kArchSoc's kernels (docs/kernels.md, "Which kernels a board takes").
inline const char kArchSoc[] = "Ascend910B4";
inline const char kBoard[] = "Ascend910B4-1";
inline const char kNpuArch[] = "2201";

#if defined(__aarch64__)
inline const char kArch[] = "aarch64";
#else
inline const char kArch[] = "x86_64";
#endif

// ---- the process: an OPP root with kernels, the GE library loaded from it ----

inline std::vector<KernelSpec> AllKernels() {
  std::vector<KernelSpec> all;
  for (const char *dtype : {"float32", "float16", "bfloat16", "int32"}) {
    for (const auto &k : test_support::AllVariants(dtype)) all.push_back(k);
  }
  return all;
}

// The package's kernels of a SoC: AddCustom's and LeakyReluCustom's (its one flat variant for
// its three dtypes), and every other op's of the library's table (op_table.h: its flat variant
// per dtype, laid out from its record's parameters), in one manifest as the builder writes a
// set of several ops.
inline std::vector<KernelSpec> PackageKernels() {
  std::vector<KernelSpec> all = AllKernels();
  for (const char *dtype : {"float32", "float16", "bfloat16"}) {
    for (const auto &k : test_support::LeakyReluVariants(dtype)) all.push_back(k);
  }
  for (const op_table::Op &op : op_table::Ops()) {
    if (std::find(kHandWritten.begin(), kHandWritten.end(), op.type) != kHandWritten.end()) continue;  // above
    for (const std::string &dtype : op.dtypes) all.push_back(op.Kernel(dtype));
  }
  return all;
}

inline void CopyFile(const std::string &from, const std::string &to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  if (!in || !out) {
    std::fprintf(stderr, "cannot copy %s to %s\n", from.c_str(), to.c_str());
    std::abort();
  }
}

// <root>/kernels/<soc>/ as the package lays it out (test_support's manifest and fake npubins),
// the manifest recording an architecture when one is given.
inline std::string WriteKernels(const test_support::TempDir &dir, const std::string &root, const std::string &soc,
                         const std::vector<KernelSpec> &kernels, const std::string &architecture = "") {
  std::string manifest = test_support::ManifestJson(soc, kernels);
  if (!architecture.empty()) manifest = test_support::WithArchitecture(manifest, architecture);
  dir.Write(root + "/kernels/" + soc + "/manifest.json", manifest);
  for (const auto &k : kernels) {
    dir.Write(root + "/kernels/" + soc + "/" + test_support::BinaryName(k),
              k.binary.empty() ? test_support::FakeBinary(soc, k) : k.binary);
  }
  return manifest;
}

// The GE library under test: the build's, beside this program (CMake puts both in the build
// folder), or the one TF_GE_IN_LOOP_LIBRARY names (a mutant, a link variant). Found at run
// time, so the program's compile lines hold no path of the checkout (the compiler cache
// serves them to another clone: tests/compiler_cache.py).
inline std::string BuiltLibrary() {
  const char *built = std::getenv("TF_GE_IN_LOOP_LIBRARY");
  if (built != nullptr && *built) return built;
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / GE_IN_LOOP_LIBRARY_NAME).string();
}

// An installed package as the adapter expects to sit in: <tmp>/tf_ge_custom/opp/ is the OPP
// root (kernels, and the GE library under op_graph/lib/linux/<arch>/); every other entry of
// the package links to the real one named by TF_GE_IN_LOOP_PACKAGE, so that Compile's
// builder (run through the builder double) imports the real tf_ge_custom.
struct Process {
  test_support::TempDir dir;
  std::string package, opp, library_path;
  void *library = nullptr;
  bool have_package = false;

  Process() {
    package = dir.path() + "/tf_ge_custom";
    opp = package + "/opp";
    WriteKernels(dir, "tf_ge_custom/opp", kSoc, PackageKernels());
    KernelSpec ws;
    ws.workspace_size = 96;
    ws.lock_num = 3;
    ws.lock_init_val = -1;
    ws.max_elements_per_launch = 4096 * 8;
    WriteKernels(dir, "tf_ge_custom/opp", kWorkspaceSoc, {ws});
    WriteKernels(dir, "tf_ge_custom/opp", kArchSoc, PackageKernels(), std::string("dav-") + kNpuArch);
    const char *real = std::getenv("TF_GE_IN_LOOP_PACKAGE");
    if (real != nullptr && *real) {
      have_package = true;
      for (const auto &entry : std::filesystem::directory_iterator(real)) {
        const std::string name = entry.path().filename().string();
        if (name == "opp" || name == "__pycache__") continue;
        std::filesystem::create_symlink(entry.path(), package + "/" + name);
      }
    } else {
      dir.Write("tf_ge_custom/kernels/.keep", std::string());
    }
    const std::string lib_dir = "tf_ge_custom/opp/op_graph/lib/linux/" + std::string(kArch);
    dir.Write(lib_dir + "/.keep", std::string());
    library_path = dir.path() + "/" + lib_dir + "/libtf_ge_custom_ge.so";
    CopyFile(BuiltLibrary(), library_path);
    // As on a host where the package is installed and its OPP root exported: what a library
    // outside any OPP root (an OM's own copy) must not take its kernels from.
    setenv("ASCEND_CUSTOM_OPP_PATH", opp.c_str(), 1);
    // As GE opens a custom-op library: its static registrations run now.
    library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "dlopen %s: %s\n", library_path.c_str(), dlerror());
      std::abort();
    }
  }
};

inline Process &P() {
  static Process *process = new Process();  // never destroyed: the library stays loaded
  return *process;
}

// The op as GE's online path gets it: from the custom-op factory the library registered with.
inline ge::BaseCustomOp *FactoryOp(const std::string &op_type = kOpType) {
  P();
  return ge::CustomOpFactory::CreateOrGetCustomOp(ge::AscendString(op_type.c_str()));
}

// The creators a loaded copy of the library lists in its own pull registry (what GE's OM
// loader takes from a model's copy: GetRegisteredCustomOpCreators, by dlsym on that copy).
inline std::vector<ge::CustomOpTypeToCreator> CreatorsOf(void *library) {
  auto count = reinterpret_cast<size_t (*)()>(dlsym(library, "GetRegisteredCustomOpCreatorNum"));
  auto get = reinterpret_cast<int32_t (*)(ge::CustomOpTypeToCreator *, size_t, size_t)>(
      dlsym(library, "GetRegisteredCustomOpCreators"));
  if (count == nullptr || get == nullptr) return {};
  std::vector<ge::CustomOpTypeToCreator> creators(count());
  if (get(creators.data(), creators.size(), sizeof(ge::CustomOpTypeToCreator)) != 0) return {};
  return creators;
}

// A fresh instance of op_type (AddCustom unless named) of that copy; null when it lists none.
inline std::unique_ptr<ge::BaseCustomOp> FreshOpOf(void *library, const std::string &op_type = kOpType) {
  for (const auto &c : CreatorsOf(library)) {
    if (std::string(c.op_type) == op_type) return std::unique_ptr<ge::BaseCustomOp>(c.creator());
  }
  return nullptr;
}

// A fresh instance, as the OM loader makes one: from the library's own pull registry.
inline std::unique_ptr<ge::BaseCustomOp> PulledOp(const std::string &op_type = kOpType) {
  return FreshOpOf(P().library, op_type);
}

// The op types a loaded copy of the library lists in its own pull registry.
inline std::vector<std::string> PulledCreators(void *library) {
  std::vector<std::string> names;
  for (const auto &c : CreatorsOf(library)) names.push_back(c.op_type);
  return names;
}

// Another installed package, as on the host that built a model: its own OPP root with the
// kernels `write` puts there, and its own copy of the library, loaded as GE loads a custom-op
// library offline (its registrations stay in its own pull registry, none reaches GE's factory,
// where this process's package is registered already). Op() is a fresh instance of it.
struct OtherPackage {
  test_support::TempDir dir;
  std::string opp, library_path;
  void *library = nullptr;

  template <typename Write>
  explicit OtherPackage(Write write) {
    opp = dir.path() + "/tf_ge_custom/opp";
    write(dir, std::string("tf_ge_custom/opp"));
    dir.Write("tf_ge_custom/kernels/.keep", std::string());
    const std::string lib_dir = "tf_ge_custom/opp/op_graph/lib/linux/" + std::string(kArch);
    dir.Write(lib_dir + "/.keep", std::string());
    library_path = dir.path() + "/" + lib_dir + "/libtf_ge_custom_ge.so";
    CopyFile(BuiltLibrary(), library_path);
    ge::ScopedOfflineCustomOpSoLoadGuard offline;
    library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "dlopen %s: %s\n", library_path.c_str(), dlerror());
      std::abort();
    }
  }
  std::unique_ptr<ge::BaseCustomOp> Op() const { return FreshOpOf(library); }
};

// The graph's own SoC in GE's context (GEThreadLocalContext's graph option ge.socVersion, GE's
// own code), as GE sets it for the graph it builds on this thread; "" clears it.
inline void SetGraphSoc(const std::string &soc) {
  std::map<std::string, std::string> options;
  if (!soc.empty()) options["ge.socVersion"] = soc;
  ge::GetThreadLocalContext().SetGraphOption(options);
}

template <typename T>
inline T *As(ge::BaseCustomOp *op) {
  return dynamic_cast<T *>(op);
}

// ---- what GE's runtime would hand in ----

// GE's device allocator interface (pkg_inc/exe_graph/runtime/gert_mem_allocator.h), a test
// double: hands out distinct fake device addresses and records the sizes; never allocates
// device (or host) memory for them, so outputs of more than 2^31 elements cost nothing.
class FakeDeviceAllocator : public gert::GertAllocator {
 public:
  struct Block : gert::GertMemBlock {
    explicit Block(void *a) : addr(a) {}
    void Free(int64_t) override {}
    void *GetAddr() override { return addr; }
    void *addr;
  };
  std::vector<size_t> l1_sizes, block_sizes;
  std::vector<std::unique_ptr<Block>> blocks;
  uint64_t next = 0x0000500000000000ull;
  bool fail = false;

  gert::GertMemBlock *Malloc(size_t size) override {
    if (fail) return nullptr;
    block_sizes.push_back(size);
    blocks.emplace_back(new Block(Take(size)));
    return blocks.back().get();
  }
  gert::GertTensorData MallocTensorData(size_t) override { return gert::GertTensorData(); }
  gert::TensorData MallocTensorDataFromL1(size_t size) override {
    if (fail) return gert::TensorData();
    l1_sizes.push_back(size);
    return gert::TensorData(Take(size), nullptr, size, gert::kOnDeviceHbm);
  }
  void Free(gert::GertMemBlock *) override {}
  ge::graphStatus FreeAt(int64_t, gert::GertMemBlock *) override { return ge::GRAPH_SUCCESS; }
  ge::graphStatus ShareFromTensorData(const gert::TensorData &, gert::GertTensorData &) override {
    return ge::GRAPH_SUCCESS;
  }
  int64_t GetStreamNum() override { return 1; }
  ge::graphStatus SetL1Allocator(ge::Allocator *) override { return ge::GRAPH_SUCCESS; }

  uint64_t last = 0;

 private:
  void *Take(size_t size) {
    last = next;
    next += (static_cast<uint64_t>(size) + 0xFFFFFull) & ~0xFFFFFull;
    next += 0x100000ull;
    return reinterpret_cast<void *>(static_cast<uintptr_t>(last));
  }
};

inline void *Addr(uint64_t a) { return reinterpret_cast<void *>(static_cast<uintptr_t>(a)); }
inline uint64_t U64(const void *p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

inline const uint64_t kX = 0x0000100000000000ull, kY = 0x0000200000000000ull;

inline gert::StorageShape Storage(const std::vector<int64_t> &dims) {
  gert::StorageShape s;
  for (int64_t d : dims) {
    s.MutableOriginShape().AppendDim(d);
    s.MutableStorageShape().AppendDim(d);
  }
  return s;
}

inline std::vector<int64_t> DimsOf(const gert::Shape &s) {
  std::vector<int64_t> d;
  for (size_t i = 0; i < s.GetDimNum(); ++i) d.push_back(s.GetDim(i));
  return d;
}

// One eager Execute call of AddCustom built with metadef's OpKernelContextBuilder.
struct EagerCall {
  gert::Tensor x, y, z;
  FakeDeviceAllocator allocator;
  std::vector<gert::GertMemBlock *> workspace;
  gert::ContextHolder<gert::KernelContext> holder;
  void *stream;  // a distinct fake stream per call

  EagerCall(const std::vector<int64_t> &xs, const std::vector<int64_t> &ys, ge::DataType dx = ge::DT_FLOAT,
            ge::DataType dy = ge::DT_FLOAT, const std::string &node = "add_node")
      : x(Storage(xs), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, gert::kOnDeviceHbm, dx, Addr(kX)),
        y(Storage(ys), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, gert::kOnDeviceHbm, dy, Addr(kY)) {
    static uint64_t streams = 0;
    stream = Addr(0x5717EA0000ull + 0x40 * ++streams);
    z.SetDataType(dx);
    gert::OpKernelContextBuilder b;
    holder = b.OpType(kOpType)
                 .OpName(node.c_str())
                 .IONum(2, 1)
                 .InputTensorDesc(0, dx, ge::FORMAT_ND, ge::FORMAT_ND)
                 .InputTensorDesc(1, dy, ge::FORMAT_ND, ge::FORMAT_ND)
                 .OutputTensorDesc(0, dx, ge::FORMAT_ND, ge::FORMAT_ND)
                 .Inputs({&x, &y, static_cast<gert::GertAllocator *>(&allocator), stream, nullptr, nullptr})
                 .Outputs({&z, &workspace})
                 .Build();
  }
  gert::EagerOpExecutionContext *ctx() { return reinterpret_cast<gert::EagerOpExecutionContext *>(holder.GetContext()); }
};

// What the adapter writes to stderr while f runs (its refusals are one line each there).
template <typename F>
inline std::string CaptureStderr(F f) {
  std::fflush(stderr);
  char path[] = "/tmp/ge_in_loop_stderr_XXXXXX";
  const int fd = mkstemp(path);
  const int saved = dup(2);
  dup2(fd, 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  close(fd);
  unlink(path);
  return ss.str();
}

inline bool Contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Little-endian bytes of v in size bytes.
inline void Le(std::vector<uint8_t> *out, uint64_t v, size_t size) {
  for (size_t i = 0; i < size; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// InferShape of x, y through metadef's OpInferShapeContextBuilder; returns the status and
// sets *out to the output shape GE's context holds.
inline ge::graphStatus InferShape(ge::BaseCustomOp *op, const std::vector<int64_t> &xs, const std::vector<int64_t> &ys,
                           std::vector<int64_t> *out, const std::string &node = "infer_node") {
  gert::Tensor x(Storage(xs), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, ge::DT_FLOAT);
  gert::Tensor y(Storage(ys), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, ge::DT_FLOAT);
  gert::OpInferShapeContextBuilder b;
  auto holder = b.OpType(kOpType)
                    .OpName(node.c_str())
                    .IONum(2, 1)
                    .OutputTensorDesc(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                    .InputTensors({&x, &y})
                    .Build();
  gert::InferShapeContext *ctx = holder.GetContext();
  if (ctx == nullptr) return ge::GRAPH_PARAM_INVALID;
  gert::Shape *o = ctx->GetOutputShape(0);
  if (o != nullptr) {
    o->SetDimNum(3);  // garbage the adapter must overwrite
    for (size_t i = 0; i < 3; ++i) o->SetDim(i, 77);
  }
  const ge::graphStatus st = As<ge::ShapeInferOp>(op)->InferShape(ctx);
  if (out != nullptr && o != nullptr) *out = DimsOf(*o);
  return st;
}

// InferDataType through metadef's OpInferDataTypeContextBuilder; *out: the output dtype set.
inline ge::graphStatus InferDataType(ge::BaseCustomOp *op, ge::DataType dx, ge::DataType dy, ge::DataType *out,
                              const std::string &node = "dtype_node") {
  gert::OpInferDataTypeContextBuilder b;
  auto holder = b.OpType(kOpType)
                    .OpName(node.c_str())
                    .IONum(2, 1)
                    .InputTensorDesc(0, dx, ge::FORMAT_ND, ge::FORMAT_ND)
                    .InputTensorDesc(1, dy, ge::FORMAT_ND, ge::FORMAT_ND)
                    .OutputTensorDesc(0, ge::FORMAT_ND, ge::FORMAT_ND)
                    .Build();
  gert::InferDataTypeContext *ctx = holder.GetContext();
  if (ctx == nullptr) return ge::GRAPH_PARAM_INVALID;
  (void)ctx->SetOutputDataType(0, ge::DT_UNDEFINED);
  const ge::graphStatus st = As<ge::ShapeInferOp>(op)->InferDataType(ctx);
  if (out != nullptr) *out = ctx->GetOutputDataType(0);
  return st;
}

// The platform GE's OpCompileContext::GetPlatformInfos hands out (the platform stand-in): the
// SoC, and the NpuArch resource (none when empty).
// vector_cores: the platform's SoCInfo vector_core_cnt ("": not said).
inline void InstallPlatform(const std::string &optional_soc, const std::string &res_soc, uint32_t result = 0,
                            const std::string &npu_arch = kNpuArch, const std::string &vector_cores = "") {
  fe::PlatFormInfos platform;
  fe::OptionalInfos optional;
  if (!res_soc.empty()) platform.SetPlatformRes("version", "SoC_version", res_soc);
  if (!npu_arch.empty()) platform.SetPlatformRes("version", "NpuArch", npu_arch);
  if (!vector_cores.empty()) platform.SetPlatformRes("SoCInfo", "vector_core_cnt", vector_cores);
  optional.SetSocVersion(optional_soc);
  fe::PlatformInfoManager::GeInstance().SetStandInPlatform(platform, optional, result);
}

// Compile of x, y (dtypes; no shapes at compile time) through an OpCompileContext laid out by
// OpKernelContextBuilder (inputs [x, y], outputs [z]).
inline ge::graphStatus Compile(ge::BaseCustomOp *op, ge::DataType dx, ge::DataType dy, const std::string &node = "compile_node") {
  gert::Tensor x({}, {ge::FORMAT_ND, ge::FORMAT_ND, {}}, dx), y({}, {ge::FORMAT_ND, ge::FORMAT_ND, {}}, dy), z;
  gert::OpKernelContextBuilder b;
  auto holder = b.OpType(kOpType)
                    .OpName(node.c_str())
                    .IONum(2, 1)
                    .InputTensorDesc(0, dx, ge::FORMAT_ND, ge::FORMAT_ND)
                    .InputTensorDesc(1, dy, ge::FORMAT_ND, ge::FORMAT_ND)
                    .OutputTensorDesc(0, dx, ge::FORMAT_ND, ge::FORMAT_ND)
                    .Inputs({&x, &y})
                    .Outputs({&z})
                    .Build();
  return As<ge::CompilableOp>(op)->Compile(reinterpret_cast<gert::OpCompileContext *>(holder.GetContext()));
}

inline uint64_t ReadLe(const std::vector<uint8_t> &b, size_t at, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size && at + i < b.size(); ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

// The 104-byte tiled layout with ffts (test_support.cc's slot table): pointers, 5 extents,
// a's then b's 3 outer strides, the grid.
inline std::vector<uint8_t> TiledArgs(uint64_t a, uint64_t b, uint64_t z, const std::vector<uint64_t> &dims,
                               const std::vector<uint64_t> &strides, uint32_t grid_x) {
  std::vector<uint8_t> e;
  Le(&e, 0x00000000FF001000ull, 8);
  Le(&e, 0, 8);
  Le(&e, 0, 8);
  Le(&e, a, 8);
  Le(&e, b, 8);
  Le(&e, z, 8);
  for (uint64_t d : dims) Le(&e, d, 4);
  for (uint64_t st : strides) Le(&e, st, 4);
  Le(&e, grid_x, 4);
  Le(&e, 1, 4);
  Le(&e, 1, 4);
  return e;
}

// The 64-byte flat layout with ffts (flat and scalar kernels).
inline std::vector<uint8_t> FlatArgs(uint64_t a, uint64_t b, uint64_t z, uint64_t n, uint32_t grid_x, uint64_t lock = 0,
                              uint64_t workspace = 0) {
  std::vector<uint8_t> e;
  Le(&e, 0x00000000FF001000ull, 8);
  Le(&e, lock, 8);
  Le(&e, workspace, 8);
  Le(&e, a, 8);
  Le(&e, b, 8);
  Le(&e, z, 8);
  Le(&e, n, 4);
  Le(&e, grid_x, 4);
  Le(&e, 1, 4);
  Le(&e, 1, 4);
  return e;
}

inline int32_t FreshDevice() {
  static int32_t next = 100;  // each case loads on a device of its own (the core loads once per device)
  return next++;
}

inline recording_acl::Settings OnFreshDevice(const std::string &soc = kSoc) {
  recording_acl::Settings s;
  s.device = FreshDevice();
  s.soc = soc;
  return s;
}


// ---- DeclareLaunchArgs: GE's annotated-args context (static graphs) ----

// One launch as GE's AnnotatedArgsHandler recorded it (what GE would put into the model).
struct RecordedDeclaration {
  std::string kernel_name;
  std::vector<uint8_t> kernel_bin, args;
  std::vector<ge::ArgDesc> descs;
  uint32_t block_dim = 0, stream_id = 0;
};

// What GE's handler holds, in AddLaunch order (each call's Declared()).
inline std::vector<RecordedDeclaration> DeclaredBy(const gert::AnnotatedArgsHandler &handler) {
  std::vector<RecordedDeclaration> out;
  for (size_t i = 0; i < handler.GetLaunchCount(); ++i) {
    const gert::AnnotatedArgsHandler::LaunchRecord *r = handler.GetLaunch(i);
    RecordedDeclaration d;
    d.kernel_name = r->GetKernelName();
    d.kernel_bin.assign(r->GetKernelBinData(), r->GetKernelBinData() + r->GetKernelBinSize());
    d.args.assign(r->GetArgsData(), r->GetArgsData() + r->GetArgsSize());
    d.descs.assign(r->GetArgDescs(), r->GetArgDescs() + r->GetArgDescCount());
    d.block_dim = r->GetBlockDim();
    d.stream_id = r->GetStreamId();
    out.push_back(std::move(d));
  }
  return out;
}

// A DeclareLaunchArgs call of AddCustom, laid out as GE's AnnotatedArgsContext reads it
// (hicann/ge graph_metadef/exe_graph/runtime/annotated_args_context.cc): inputs [x, y,
// workspace allocator], outputs [z (the output GE planned), workspace blocks, args handler],
// with GE's own AnnotatedArgsHandler collecting what AddLaunch is given. x, y and z carry
// logical addresses kX, kY, kZ; the allocator's stream id is the context's GetStreamId.
struct AnnotatedCall {
  static constexpr uint64_t kZ = 0x0000300000000000ull;
  gert::Tensor x, y, z;
  FakeDeviceAllocator allocator;
  std::vector<gert::GertMemBlock *> workspace;
  gert::AnnotatedArgsHandler handler;
  gert::ContextHolder<gert::KernelContext> holder;

  AnnotatedCall(const std::vector<int64_t> &xs, const std::vector<int64_t> &ys, const std::vector<int64_t> &zs,
                ge::DataType dtype = ge::DT_FLOAT, int64_t stream_id = 3, const std::string &node = "declare_node")
      : x(Storage(xs), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, gert::kOnDeviceHbm, dtype, Addr(kX)),
        y(Storage(ys), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, gert::kOnDeviceHbm, dtype, Addr(kY)),
        z(Storage(zs), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, gert::kOnDeviceHbm, dtype, Addr(kZ)) {
    allocator.SetStreamId(stream_id);
    gert::OpKernelContextBuilder b;
    holder = b.OpType(kOpType)
                 .OpName(node.c_str())
                 .IONum(2, 1)
                 .InputTensorDesc(0, dtype, ge::FORMAT_ND, ge::FORMAT_ND)
                 .InputTensorDesc(1, dtype, ge::FORMAT_ND, ge::FORMAT_ND)
                 .OutputTensorDesc(0, dtype, ge::FORMAT_ND, ge::FORMAT_ND)
                 .Inputs({&x, &y, static_cast<gert::GertAllocator *>(&allocator)})
                 .Outputs({&z, &workspace, static_cast<gert::ArgsHandler *>(&handler)})
                 .Build();
  }
  gert::AnnotatedArgsContext &ctx() { return *reinterpret_cast<gert::AnnotatedArgsContext *>(holder.GetContext()); }

  std::vector<RecordedDeclaration> Declared() const { return DeclaredBy(handler); }
};

// How this tag's GE describes an InputAddr / OutputAddr: "I"/"O" (v9.2.0-beta.1: the IR index)
// or "i"/"o" (newer: the flattened instance index), from upstream_files.json.
inline std::string InputDesc(int index) {
  return (std::string(GE_IN_LOOP_ADDRESS_DESCRIPTORS) == "ir" ? "I" : "i") + std::to_string(index);
}
inline std::string OutputDesc(int index) {
  return (std::string(GE_IN_LOOP_ADDRESS_DESCRIPTORS) == "ir" ? "O" : "o") + std::to_string(index);
}

// "i0 i1 o0 w0 c" for the descriptors, so that a test can state a declaration's shape in one
// string: i/o an input/output instance (INPUT_INSTANCE/OUTPUT_INSTANCE), I/O an IR input/
// output (INPUT/OUTPUT), w a workspace, each with its index; c a custom value.
inline std::string DescString(const std::vector<ge::ArgDesc> &descs) {
  std::string out;
  for (const ge::ArgDesc &d : descs) {
    if (!out.empty()) out += " ";
    switch (d.addr_type) {
      case ge::AddrType::INPUT: out += "I" + std::to_string(d.ir_idx); break;
      case ge::AddrType::OUTPUT: out += "O" + std::to_string(d.ir_idx); break;
      case ge::AddrType::INPUT_INSTANCE: out += "i" + std::to_string(d.ir_idx); break;
      case ge::AddrType::OUTPUT_INSTANCE: out += "o" + std::to_string(d.ir_idx); break;
      case ge::AddrType::WORKSPACE: out += "w" + std::to_string(d.ir_idx); break;
      case ge::AddrType::CUSTOM_VALUE: out += "c"; break;
      default: out += "?" + std::to_string(static_cast<int>(d.addr_type)); break;
    }
  }
  return out;
}

// ---- a node of any op of the table: its own inputs and attributes ----

// A node's attributes as GE's context holds them (AttrValue, op_table.h: a float or an int):
// appended in IR order (OpContextBuilderBase::AppendAttr; metadef's attrs_to_buffer.h lays them
// out as GE's lowering lays out a node's IR attributes). Empty: the node carries none, as GE
// keeps none when one IR attribute is missing on the node (bg_ir_attrs.cc, GetAllIrAttrs).
using NodeAttrs = std::vector<AttrValue>;
using FloatAttrs = NodeAttrs;  // the hand-written cases' float attributes

template <typename Builder>
inline void AppendAttrs(Builder &b, const NodeAttrs &attrs) {
  for (const AttrValue &a : attrs) {
    if (a.is_int) {
      b.AppendAttr(a.i);
    } else {
      b.AppendAttr(a.f);
    }
  }
}

// The logical address of op input i in the node calls below: kX, kY, then on in kY - kX steps.
inline uint64_t InputAt(size_t i) { return kX + i * (kY - kX); }

inline std::unique_ptr<gert::Tensor> DeviceTensor(const std::vector<int64_t> &dims, ge::DataType dtype, uint64_t at) {
  return std::unique_ptr<gert::Tensor>(new gert::Tensor(Storage(dims), {ge::FORMAT_ND, ge::FORMAT_ND, {}},
                                                        gert::kOnDeviceHbm, dtype, Addr(at)));
}

// One eager Execute call of a node of op_type, laid out as EagerCall's (inputs [inputs...,
// allocator, stream, op_desc, execute_func], outputs [out, workspace blocks]), with one input
// of each shape (input i at InputAt(i)), all of dtype, and the node's attributes.
struct NodeEagerCall {
  std::vector<std::unique_ptr<gert::Tensor>> inputs;
  gert::Tensor out;
  FakeDeviceAllocator allocator;
  std::vector<gert::GertMemBlock *> workspace;
  gert::ContextHolder<gert::KernelContext> holder;
  void *stream;  // a distinct fake stream per call

  NodeEagerCall(const std::string &op_type, const std::vector<std::vector<int64_t>> &shapes, ge::DataType dtype,
                const NodeAttrs &attrs, const std::string &node = "eager_node") {
    static uint64_t streams = 0;
    stream = Addr(0x5717EB0000ull + 0x40 * ++streams);
    out.SetDataType(dtype);
    gert::OpKernelContextBuilder b;
    b.OpType(op_type.c_str()).OpName(node.c_str()).IONum(shapes.size(), 1);
    std::vector<void *> in;
    for (size_t i = 0; i < shapes.size(); ++i) {
      inputs.push_back(DeviceTensor(shapes[i], dtype, InputAt(i)));
      b.InputTensorDesc(i, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
      in.push_back(inputs.back().get());
    }
    b.OutputTensorDesc(0, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
    AppendAttrs(b, attrs);
    in.push_back(static_cast<gert::GertAllocator *>(&allocator));
    in.push_back(stream);
    in.push_back(nullptr);
    in.push_back(nullptr);
    holder = b.Inputs(in).Outputs({&out, &workspace}).Build();
  }
  gert::EagerOpExecutionContext *ctx() { return reinterpret_cast<gert::EagerOpExecutionContext *>(holder.GetContext()); }
};

// A DeclareLaunchArgs call of a node of op_type, laid out as AnnotatedCall's (inputs [inputs...,
// workspace allocator], outputs [out, workspace blocks, GE's AnnotatedArgsHandler]): input i
// at InputAt(i), the output GE planned (out_dims) at AnnotatedCall::kZ.
struct NodeAnnotatedCall {
  std::vector<std::unique_ptr<gert::Tensor>> inputs;
  std::unique_ptr<gert::Tensor> out;
  FakeDeviceAllocator allocator;
  std::vector<gert::GertMemBlock *> workspace;
  gert::AnnotatedArgsHandler handler;
  gert::ContextHolder<gert::KernelContext> holder;

  NodeAnnotatedCall(const std::string &op_type, const std::vector<std::vector<int64_t>> &shapes,
                    const std::vector<int64_t> &out_dims, ge::DataType dtype, const NodeAttrs &attrs,
                    int64_t stream_id = 3, const std::string &node = "declare_node")
      : out(DeviceTensor(out_dims, dtype, AnnotatedCall::kZ)) {
    allocator.SetStreamId(stream_id);
    gert::OpKernelContextBuilder b;
    b.OpType(op_type.c_str()).OpName(node.c_str()).IONum(shapes.size(), 1);
    std::vector<void *> in;
    for (size_t i = 0; i < shapes.size(); ++i) {
      inputs.push_back(DeviceTensor(shapes[i], dtype, InputAt(i)));
      b.InputTensorDesc(i, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
      in.push_back(inputs.back().get());
    }
    b.OutputTensorDesc(0, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
    AppendAttrs(b, attrs);
    in.push_back(static_cast<gert::GertAllocator *>(&allocator));
    holder = b.Inputs(in).Outputs({out.get(), &workspace, static_cast<gert::ArgsHandler *>(&handler)}).Build();
  }
  gert::AnnotatedArgsContext &ctx() { return *reinterpret_cast<gert::AnnotatedArgsContext *>(holder.GetContext()); }

  std::vector<RecordedDeclaration> Declared() const { return DeclaredBy(handler); }
};

// Compile of a node of op_type with `inputs` inputs of dtype and the node's attributes, laid
// out as Compile's.
inline ge::graphStatus CompileNode(ge::BaseCustomOp *op, const std::string &op_type, size_t inputs, ge::DataType dtype,
                                   const std::string &node = "compile_node", const NodeAttrs &attrs = {}) {
  std::vector<std::unique_ptr<gert::Tensor>> tensors;
  gert::Tensor out;
  gert::OpKernelContextBuilder b;
  b.OpType(op_type.c_str()).OpName(node.c_str()).IONum(inputs, 1);
  std::vector<void *> in;
  for (size_t i = 0; i < inputs; ++i) {
    tensors.emplace_back(new gert::Tensor({}, {ge::FORMAT_ND, ge::FORMAT_ND, {}}, dtype));
    b.InputTensorDesc(i, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
    in.push_back(tensors.back().get());
  }
  b.OutputTensorDesc(0, dtype, ge::FORMAT_ND, ge::FORMAT_ND);
  AppendAttrs(b, attrs);
  auto holder = b.Inputs(in).Outputs({&out}).Build();
  return As<ge::CompilableOp>(op)->Compile(reinterpret_cast<gert::OpCompileContext *>(holder.GetContext()));
}

// InferShape of a node of op_type through metadef's OpInferShapeContextBuilder; *out: the
// output shape GE's context holds (garbage written first, which the adapter must overwrite).
inline ge::graphStatus InferNodeShape(ge::BaseCustomOp *op, const std::string &op_type,
                                      const std::vector<std::vector<int64_t>> &shapes, std::vector<int64_t> *out,
                                      const std::string &node = "infer_node") {
  std::vector<std::unique_ptr<gert::Tensor>> tensors;
  std::vector<gert::Tensor *> in;
  for (const auto &s : shapes) {
    tensors.emplace_back(new gert::Tensor(Storage(s), {ge::FORMAT_ND, ge::FORMAT_ND, {}}, ge::DT_FLOAT));
    in.push_back(tensors.back().get());
  }
  gert::OpInferShapeContextBuilder b;
  auto holder = b.OpType(op_type.c_str())
                    .OpName(node.c_str())
                    .IONum(shapes.size(), 1)
                    .OutputTensorDesc(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                    .InputTensors(in)
                    .Build();
  gert::InferShapeContext *ctx = holder.GetContext();
  if (ctx == nullptr) return ge::GRAPH_PARAM_INVALID;
  gert::Shape *o = ctx->GetOutputShape(0);
  if (o != nullptr) {
    o->SetDimNum(3);
    for (size_t i = 0; i < 3; ++i) o->SetDim(i, 77);
  }
  const ge::graphStatus st = As<ge::ShapeInferOp>(op)->InferShape(ctx);
  if (out != nullptr && o != nullptr) *out = DimsOf(*o);
  return st;
}

// InferDataType of a node of op_type with inputs of the given dtypes; *out: the output dtype set.
inline ge::graphStatus InferNodeDataType(ge::BaseCustomOp *op, const std::string &op_type,
                                         const std::vector<ge::DataType> &dtypes, ge::DataType *out,
                                         const std::string &node = "dtype_node") {
  gert::OpInferDataTypeContextBuilder b;
  b.OpType(op_type.c_str()).OpName(node.c_str()).IONum(dtypes.size(), 1);
  for (size_t i = 0; i < dtypes.size(); ++i) b.InputTensorDesc(i, dtypes[i], ge::FORMAT_ND, ge::FORMAT_ND);
  b.OutputTensorDesc(0, ge::FORMAT_ND, ge::FORMAT_ND);
  auto holder = b.Build();
  gert::InferDataTypeContext *ctx = holder.GetContext();
  if (ctx == nullptr) return ge::GRAPH_PARAM_INVALID;
  (void)ctx->SetOutputDataType(0, ge::DT_UNDEFINED);
  const ge::graphStatus st = As<ge::ShapeInferOp>(op)->InferDataType(ctx);
  if (out != nullptr) *out = ctx->GetOutputDataType(0);
  return st;
}

// LeakyReluCustom's 64-byte layout with ffts (test_support::LeakyReluArgsJson, written out by
// hand there from docs/kernel-manifest.md): ffts, lock, workspace, x, y (8 bytes each), then
// n_elements, alpha's binary32 bits, gridX, gridY, gridZ (4 bytes each), 4 bytes of padding.
inline std::vector<uint8_t> LeakyReluArgs(uint64_t x, uint64_t y, uint64_t n, uint32_t alpha_bits, uint32_t grid_x,
                                          uint64_t ffts = 0x00000000FF001000ull) {
  std::vector<uint8_t> e;
  Le(&e, ffts, 8);
  Le(&e, 0, 8);
  Le(&e, 0, 8);
  Le(&e, x, 8);
  Le(&e, y, 8);
  Le(&e, n, 4);
  Le(&e, alpha_bits, 4);
  Le(&e, grid_x, 4);
  Le(&e, 1, 4);
  Le(&e, 1, 4);
  Le(&e, 0, 4);
  return e;
}

}  // namespace harness

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_HARNESS_H_
