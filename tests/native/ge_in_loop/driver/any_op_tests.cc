// GE in the loop for any op of the library's table, from its record alone: the cases here
// were written for no op in particular. For every op of the op_def.py the library's table was
// generated from (op_table.h: what tests/ge/launch_oracle.py's rule 6 reads from the records,
// TF_GE_IN_LOOP_OPS), and every dtype of it: creation through GE's factory and the library's
// pull registry, InferShape and InferDataType (an unsupported dtype refused), Compile on a
// packaged SoC, Execute and DeclareLaunchArgs of its flat variant at two shapes with the
// node's attributes at other values and with none (the defaults), then one model holding
// every op, serialized and loaded through GE's OM loader (om_loader.h), every node run again
// on the model's instances. Each op's kernels are in the harness's package (harness.h,
// PackageKernels: AddCustom's and LeakyReluCustom's hand-written layouts, any other op's laid
// out from its record's parameters by test_support::ParamsArgsJson).
//
// Expectations are independent of the code under test: the oracle works every launch word out
// from the record's parameters with triton-ascend's packing rule restated in Python (offsets,
// sizes, n, the programs, each attribute's binary32 bits or int64), the descriptors of a
// declared launch per 8-byte word, the output's bytes with GE's 512-byte rounding; the harness
// only puts in what the call decides (the addresses it handed in, the device's ffts word, the
// programs under the device's or the manifest's cap). On AddCustom and LeakyReluCustom the
// oracle's words meet the layouts written out by hand (their kernel sets), so the two
// restatements are held together; an op the harness has no case of is run by these alone
// (tests/ge/test_ge_in_loop.py: the third op of tests/package/test_adding_an_op.py).
#include <algorithm>
#include <string>
#include <vector>

#include "harness.h"
#include "om_loader.h"
#include "testing.h"

using namespace harness;

// CHECK_EQ naming the node it is about (op, dtype, shape, attributes).
#define CHECK_AT(what, a, b) ::testing::CheckEq((a), (b), ((what) + #a).c_str(), #b, __FILE__, __LINE__)

namespace {

// What caps the programs of a launch: Execute the device's vector cores (the recording ACL
// answers 48), a declared launch the manifest's grid.max_programs (test_support writes 40).
constexpr uint64_t kDevicePrograms = 48;
constexpr uint64_t kManifestPrograms = 40;
constexpr uint64_t kFfts = 0x00000000FF001000ull;  // the recording ACL's aclrtGetHardwareSyncAddr

const std::vector<op_table::Op> &Table() { return op_table::Ops(); }

std::vector<uint8_t> Npubin(const op_table::Op &op, const std::string &dtype) {
  return test_support::FakeBinary(kSoc, op.Kernel(dtype));
}

std::vector<std::vector<int64_t>> Shapes(const op_table::Op &op, const op_table::Launch &l) {
  return std::vector<std::vector<int64_t>>(op.inputs, l.shape);
}

std::string NodeName(const op_table::Op &op, const op_table::Launch &l, size_t i) {
  return op.python_name + "_" + l.dtype + "_" + std::to_string(i);
}

// The launch's argument bytes: the oracle's words, with the addresses the call handed in
// (input i at InputAt(i)), the output's, the ffts word and the capped programs.
std::vector<uint8_t> Args(const op_table::Launch &l, uint64_t output, uint64_t ffts, uint64_t programs) {
  std::vector<uint8_t> bytes(l.size, 0);
  for (const op_table::Word &w : l.words) {
    uint64_t v = w.value;
    if (w.symbol == "ffts") {
      v = ffts;
    } else if (w.symbol == "programs") {
      v = programs;
    } else if (w.symbol.rfind("input:", 0) == 0) {
      v = InputAt(std::stoul(w.symbol.substr(6)));
    } else if (w.symbol == "output:0") {
      v = output;
    } else if (!w.symbol.empty()) {
      testing::RecordFailure(__FILE__, __LINE__, "the oracle's word " + w.symbol + " is unknown here");
    }
    for (uint64_t i = 0; i < w.size && w.offset + i < bytes.size(); ++i) bytes[w.offset + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return bytes;
}

// The descriptors GE's handler records, in this tag's spelling.
std::string Descs(const op_table::Launch &l) {
  std::string s;
  for (const std::string &d : l.descs) {
    if (!s.empty()) s += " ";
    if (d.rfind("input:", 0) == 0) {
      s += InputDesc(std::stoi(d.substr(6)));
    } else if (d.rfind("output:", 0) == 0) {
      s += OutputDesc(std::stoi(d.substr(7)));
    } else {
      s += d;
    }
  }
  return s;
}

NodeAttrs Attrs(const op_table::Launch &l) { return l.carries_attrs ? l.attrs : NodeAttrs{}; }

// "<op> does not support dtype <d>; supported: a, b" (the record's dtypes, in its order).
std::string NotSupported(const op_table::Op &op, const std::string &dtype) {
  std::string supported;
  for (const std::string &d : op.dtypes) supported += (supported.empty() ? "" : ", ") + d;
  return op.type + " does not support dtype " + dtype + "; supported: " + supported;
}

// Executes every case of op on `instance` (GE's factory's, or a model's), each launch checked.
// Returns the launches checked.
int ExecuteEvery(const op_table::Op &op, ge::BaseCustomOp *instance, const std::string &where) {
  auto *exec = As<ge::EagerExecuteOp>(instance);
  if (exec == nullptr) {
    testing::RecordFailure(__FILE__, __LINE__, where + op.type + ": no EagerExecuteOp");
    return 0;
  }
  int checked = 0;
  recording_acl::Reset(OnFreshDevice());
  for (size_t i = 0; i < op.cases.size(); ++i) {
    const op_table::Launch &l = op.cases[i];
    const std::string what = where + op.type + " " + l.dtype + " " + testing::Show(l.shape) +
                             (l.carries_attrs ? " with its attributes" : " without attributes") + ": ";
    NodeEagerCall call(op.type, Shapes(op, l), l.ge_dtype, Attrs(l), NodeName(op, l, i));
    const size_t before = recording_acl::Take().launches.size();
    ge::graphStatus st = ge::GRAPH_FAILED;
    const std::string err = CaptureStderr([&] { st = exec->Execute(call.ctx()); });
    if (st != ge::GRAPH_SUCCESS) {
      testing::RecordFailure(__FILE__, __LINE__, what + "Execute refused: " + err);
      continue;
    }
    const recording_acl::Record r = recording_acl::Take();
    if (r.launches.size() != before + 1) {
      testing::RecordFailure(__FILE__, __LINE__, what + std::to_string(r.launches.size() - before) + " launches");
      continue;
    }
    const recording_acl::Launch &launch = r.launches.back();
    CHECK_AT(what, call.allocator.l1_sizes, (std::vector<size_t>{static_cast<size_t>(l.output_bytes)}));
    CHECK_AT(what, DimsOf(call.out.GetStorageShape()), l.shape);
    CHECK_AT(what, call.out.GetDataType(), l.ge_dtype);
    CHECK_AT(what, launch.stream == call.stream, true);
    const uint64_t programs = std::min(l.tiles, kDevicePrograms);
    CHECK_AT(what, launch.block_dim, static_cast<uint32_t>(programs));
    CHECK_AT(what, launch.args, Args(l, call.allocator.last, kFfts, programs));
    const recording_acl::GetFunction *fn = nullptr;
    for (const auto &f : r.functions) {
      if (f.function == launch.function) fn = &f;
    }
    if (fn == nullptr) {
      testing::RecordFailure(__FILE__, __LINE__, what + "launched a function no aclrtBinaryGetFunction gave");
      continue;
    }
    CHECK_AT(what, fn->entry, l.kernel_name);
    for (const auto &load : r.loads) {
      if (load.binary == fn->binary) CHECK_AT(what, load.bytes, Npubin(op, l.dtype));
    }
    ++checked;
  }
  // one load per dtype on the device (the core loads a kernel once per device)
  CHECK_AT(where + op.type + ": ", recording_acl::Take().loads.size(), op.dtypes.size());
  return checked;
}

bool HaveTable() {
  if (!Table().empty()) return true;
  testing::RecordFailure(__FILE__, __LINE__, op_table::Why());
  return false;
}

}  // namespace

TEST(AnyOp, TheLibraryRegistersEveryOpOfTheRecordsTable) {
  REQUIRE_TRUE(HaveTable());
  std::vector<std::string> types;
  for (const op_table::Op &op : Table()) types.push_back(op.type);
  CHECK_EQ(PulledCreators(P().library), types);  // the OM loader's view, in the table's order
  for (const op_table::Op &op : Table()) {
    ge::BaseCustomOp *instance = FactoryOp(op.type);
    REQUIRE_TRUE(instance != nullptr);
    CHECK_TRUE(ge::CustomOpFactory::IsExistOp(ge::AscendString(op.type.c_str())));
    CHECK_TRUE(FactoryOp(op.type) == instance);
    CHECK_TRUE(As<ge::EagerExecuteOp>(instance) != nullptr && As<ge::ShapeInferOp>(instance) != nullptr &&
               As<ge::PortableOp>(instance) != nullptr && As<ge::CompilableOp>(instance) != nullptr &&
               As<ge::AnnotatedArgsOp>(instance) != nullptr);
    auto pulled = PulledOp(op.type);
    REQUIRE_TRUE(pulled != nullptr);
    CHECK_TRUE(pulled.get() != instance);
  }
}

TEST(AnyOp, InferShapeKeepsTheInputsShapeAndInferDataTypeTheRecordsDtypes) {
  REQUIRE_TRUE(HaveTable());
  for (const op_table::Op &op : Table()) {
    ge::BaseCustomOp *instance = FactoryOp(op.type);
    REQUIRE_TRUE(instance != nullptr);
    for (const op_table::Launch &l : op.cases) {
      std::vector<int64_t> out;
      CHECK_EQ(InferNodeShape(instance, op.type, Shapes(op, l), &out), ge::GRAPH_SUCCESS);
      CHECK_EQ(out, l.shape);
    }
    for (const std::string &dtype : op.dtypes) {
      ge::DataType out = ge::DT_UNDEFINED;
      CHECK_EQ(InferNodeDataType(instance, op.type, std::vector<ge::DataType>(op.inputs, op_table::GeDType(dtype)),
                                 &out),
               ge::GRAPH_SUCCESS);
      CHECK_EQ(out, op_table::GeDType(dtype));
    }
    for (const std::string &dtype : op.refused_dtypes) {
      ge::DataType out = ge::DT_UNDEFINED;
      ge::graphStatus st = ge::GRAPH_SUCCESS;
      const std::string node = op.python_name + "_dt_" + dtype;
      const std::string err = CaptureStderr([&] {
        st = InferNodeDataType(instance, op.type, std::vector<ge::DataType>(op.inputs, op_table::GeDType(dtype)), &out,
                               node);
      });
      CHECK_EQ(st, ge::GRAPH_FAILED);
      CHECK_TRUE(Contains(err, "[tf-ge-custom] " + op.type + " node " + node + ": " + NotSupported(op, dtype) + "\n"));
    }
  }
}

TEST(AnyOp, ExecuteLaunchesEachDtypesFlatKernelWithTheWordsTheRecordGives) {
  REQUIRE_TRUE(HaveTable());
  for (const op_table::Op &op : Table()) {
    const int checked = ExecuteEvery(op, FactoryOp(op.type), "");
    CHECK_EQ(checked, static_cast<int>(op.cases.size()));
    std::printf("# AnyOp %s Execute: %d launches of %zu dtypes checked\n", op.type.c_str(), checked, op.dtypes.size());
  }
}

TEST(AnyOp, DeclareLaunchArgsAfterCompileDeclaresTheWordsTheRecordGives) {
  // A sunk static graph: a fresh instance (GE's graph build) compiles each dtype for kSoc
  // (packaged: nothing is built), then declares each node: one launch of its flat kernel, the
  // words as Execute's with the ffts word 0, the programs under the manifest's cap.
  REQUIRE_TRUE(HaveTable());
  InstallPlatform(kSoc, "");
  SetGraphSoc(kSoc);
  for (const op_table::Op &op : Table()) {
    auto fresh = PulledOp(op.type);
    REQUIRE_TRUE(fresh != nullptr);
    for (const std::string &dtype : op.dtypes) {
      ge::graphStatus st = ge::GRAPH_FAILED;
      const std::string err = CaptureStderr([&] { st = CompileNode(fresh.get(), op.type, op.inputs, op_table::GeDType(dtype)); });
      if (!CHECK_EQ(st, ge::GRAPH_SUCCESS)) testing::RecordFailure(__FILE__, __LINE__, op.type + " " + dtype + ": " + err);
    }
    for (const std::string &dtype : op.refused_dtypes) {  // refused at the graph build too
      ge::graphStatus st = ge::GRAPH_SUCCESS;
      const std::string node = op.python_name + "_compile_" + dtype;
      const std::string err =
          CaptureStderr([&] { st = CompileNode(fresh.get(), op.type, op.inputs, op_table::GeDType(dtype), node); });
      CHECK_EQ(st, ge::GRAPH_FAILED);
      CHECK_TRUE(Contains(err, "[tf-ge-custom] " + op.type + " node " + node + " (SoC " + kSoc + "): " +
                                   NotSupported(op, dtype) + "\n"));
    }
    int declared = 0;
    for (size_t i = 0; i < op.cases.size(); ++i) {
      const op_table::Launch &l = op.cases[i];
      const std::string what = op.type + " " + l.dtype + " " + testing::Show(l.shape) +
                               (l.carries_attrs ? " with its attributes" : " without attributes") + ": ";
      NodeAnnotatedCall call(op.type, Shapes(op, l), l.shape, l.ge_dtype, Attrs(l), 3, NodeName(op, l, i));
      ge::graphStatus st = ge::GRAPH_FAILED;
      const std::string err = CaptureStderr([&] { st = As<ge::AnnotatedArgsOp>(fresh.get())->DeclareLaunchArgs(call.ctx()); });
      if (st != ge::GRAPH_SUCCESS) {
        testing::RecordFailure(__FILE__, __LINE__, what + "DeclareLaunchArgs refused: " + err);
        continue;
      }
      const std::vector<RecordedDeclaration> d = call.Declared();
      if (!CHECK_AT(what, d.size(), size_t{1})) continue;
      CHECK_AT(what, d[0].kernel_name, l.kernel_name);
      CHECK_AT(what, d[0].kernel_bin, Npubin(op, l.dtype));
      const uint64_t programs = std::min(l.tiles, kManifestPrograms);
      CHECK_AT(what, d[0].block_dim, static_cast<uint32_t>(programs));
      CHECK_AT(what, d[0].stream_id, 3u);
      CHECK_AT(what, DescString(d[0].descs), Descs(l));
      CHECK_AT(what, d[0].args, Args(l, AnnotatedCall::kZ, 0, programs));
      ++declared;
    }
    CHECK_EQ(declared, static_cast<int>(op.cases.size()));
    std::printf("# AnyOp %s DeclareLaunchArgs: %d launches of %zu dtypes checked\n", op.type.c_str(), declared,
                op.dtypes.size());
  }
  SetGraphSoc("");
}

TEST(AnyOp, AModelOfEveryOpRoundTripsThroughGesOmLoaderAndRunsEachOpsKernels) {
  // One graph build of a node per (op, dtype) on fresh instances, Serialize of each op type's
  // instance, the OM loaded as GE's OM loader loads it (the library's memfd copy, a per-model
  // registry, a fresh instance per op type Deserialize'd with its item), then every case run
  // again on the model's instances.
  REQUIRE_TRUE(HaveTable());
  InstallPlatform(kSoc, "");
  std::vector<std::pair<std::string, std::vector<uint8_t>>> items;
  std::vector<std::string> used;
  for (const op_table::Op &op : Table()) {
    auto fresh = PulledOp(op.type);
    REQUIRE_TRUE(fresh != nullptr);
    for (const std::string &dtype : op.dtypes) {
      ge::graphStatus st = ge::GRAPH_FAILED;
      (void)CaptureStderr([&] { st = CompileNode(fresh.get(), op.type, op.inputs, op_table::GeDType(dtype)); });
      CHECK_EQ(st, ge::GRAPH_SUCCESS);
    }
    items.emplace_back(op.type, std::vector<uint8_t>());
    REQUIRE_EQ(As<ge::PortableOp>(fresh.get())->Serialize(items.back().second), ge::GRAPH_SUCCESS);
    for (const std::string &dtype : op.dtypes) {  // the model carries each of its kernels
      const std::vector<uint8_t> bin = Npubin(op, dtype);
      CHECK_TRUE(std::search(items.back().second.begin(), items.back().second.end(), bin.begin(), bin.end()) !=
                 items.back().second.end());
    }
    used.push_back(op.type);
  }
  const om_loader::LoadedModel loaded =
      om_loader::Load(om_loader::FileBytes(P().library_path), om_loader::CustomOpsPartition(items), used);
  REQUIRE_EQ(loaded.error, std::string());
  CHECK_TRUE(loaded.Library() != P().library);
  CHECK_EQ(PulledCreators(loaded.Library()), used);
  for (const op_table::Op &op : Table()) {
    ge::BaseCustomOp *instance = loaded.Op(op.type);
    REQUIRE_TRUE(instance != nullptr && instance != FactoryOp(op.type));
    const int checked = ExecuteEvery(op, instance, "the model's ");
    CHECK_EQ(checked, static_cast<int>(op.cases.size()));
    std::printf("# AnyOp %s through GE's OM loader: %d launches of %zu dtypes checked\n", op.type.c_str(), checked,
                op.dtypes.size());
  }
}
