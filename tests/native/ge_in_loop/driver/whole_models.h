// The whole models of GE in the loop (tests/ge/fixtures/*.nodes.json, read by TensorFlow from
// the frozen graphs the package's export wrote; AddCustom nodes, and in the Darknet stage
// LeakyReluCustom nodes too) and how a case drives them through GE's code:
// a graph build (Compile for every node, then DeclareLaunchArgs for every node, as GE's
// custom-engine optimizer compiles each node of a graph before any task exists), and Execute
// for every node, each declaration and launch checked against the launch
// tests/ge/launch_oracle.py works out from docs/kernels.md's rules (TF_GE_IN_LOOP_MODELS
// names the scenario it wrote), every argument byte against harness.h's hand-written 64- and
// 104-byte layouts (LeakyReluCustom's: its 64 bytes with alpha's word, LeakyReluArgs). GE's OM loader (om_loader.h) and the cases are in the *_tests.cc files.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_WHOLE_MODELS_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_WHOLE_MODELS_H_

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "scenario_file.h"
#include "testing.h"

namespace whole_models {

using namespace harness;

// What caps the programs of a launch (written out from where the values are set): the
// declared launch takes the manifest's grid.max_programs (test_support.cc writes 40) unless
// Compile's platform names the target's vector cores, Execute the device's vector cores (the
// recording ACL answers 48).
constexpr uint64_t kManifestPrograms = 40;
constexpr uint64_t kDeviceVectorCores = 48;

struct Node {
  std::string op = kOpType;  // the node's op type
  std::string name, dtype, variant, kernel_name;
  ge::DataType ge_dtype = ge::DT_UNDEFINED;
  std::vector<int64_t> x, y, z;
  std::vector<int> operands;
  bool tiled = false;
  uint64_t n = 0, tiles = 0;
  std::vector<uint64_t> dims, strides;
  // LeakyReluCustom: the node's alpha when it carries one (else the context holds none), and
  // the word the oracle worked out for it (its binary32 bits, or the default's).
  bool has_alpha = false;
  float alpha = 0;
  uint32_t alpha_bits = 0;

  bool unary() const { return op != kOpType; }
  FloatAttrs attrs() const { return has_alpha ? FloatAttrs{alpha} : FloatAttrs{}; }
};

struct Model {
  std::string name;
  std::vector<Node> nodes;
};

using scenario_file::GeDType;

// The scenario tests/ge/launch_oracle.py wrote; empty (and *why set) without one.
inline std::vector<Model> ReadModels(std::string *why) {
  const nlohmann::json doc = scenario_file::Read("TF_GE_IN_LOOP_MODELS", "models", "the scenario", why);
  if (doc.is_null()) return {};
  std::vector<Model> models;
  for (const auto &m : doc["models"]) {
    Model model;
    model.name = m["name"].get<std::string>();
    for (const auto &n : m["nodes"]) {
      Node node;
      node.op = n.value("op", std::string(kOpType));
      node.name = n["name"].get<std::string>();
      node.dtype = n["dtype"].get<std::string>();
      node.ge_dtype = GeDType(node.dtype);
      node.x = n["x"].get<std::vector<int64_t>>();
      if (n.contains("y")) node.y = n["y"].get<std::vector<int64_t>>();  // one-input ops have none
      node.has_alpha = n.contains("alpha");
      if (node.has_alpha) node.alpha = n["alpha"].get<float>();
      node.z = n["z"].get<std::vector<int64_t>>();
      const auto &l = n["launch"];
      node.variant = l["variant"].get<std::string>();
      node.kernel_name = l["kernel_name"].get<std::string>();
      node.operands = l["operands"].get<std::vector<int>>();
      node.tiled = l["tiled"].get<bool>();
      node.n = l["n"].get<uint64_t>();
      node.tiles = l["tiles"].get<uint64_t>();
      node.dims = l["dims"].get<std::vector<uint64_t>>();
      node.strides = l["strides"].get<std::vector<uint64_t>>();
      if (l.contains("alpha_bits")) node.alpha_bits = l["alpha_bits"].get<uint32_t>();
      model.nodes.push_back(std::move(node));
    }
    models.push_back(std::move(model));
  }
  if (models.empty()) *why = "the scenario " + scenario_file::PathOf("TF_GE_IN_LOOP_MODELS") + " holds no model";
  return models;
}

inline const std::vector<Model> &AllModels() {
  static std::string why;
  static const std::vector<Model> models = ReadModels(&why);
  if (models.empty()) std::fprintf(stderr, "whole-model cases: %s\n", why.c_str());
  return models;
}

inline const Model *Find(const std::string &name) {
  for (const Model &m : AllModels()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

inline const char *const kModelNames[] = {"resnet50", "mobilenet_v2", "transformer_encoder", "darknet_stage"};

// What went wrong, one line each (collected, so that threads can run the checks too).
using Problems = std::vector<std::string>;

inline void Expect(Problems *p, bool ok, const std::string &what) {
  if (!ok) p->push_back(what);
}

inline std::string Hex(const std::vector<uint8_t> &b) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

inline uint64_t InputAddress(int input) { return input == 0 ? kX : kY; }  // the calls give x kX, y kY

// The bytes a node's kernel must have: (dtype, variant) -> npubin.
using BytesOf = std::function<std::vector<uint8_t>(const std::string &dtype, const std::string &variant)>;

// The package's own npubins of soc (harness.h writes test_support's fake ones); (op, dtype,
// variant) for a model of several ops.
inline BytesOf PackageBytes(const std::string &soc) {
  return [soc](const std::string &dtype, const std::string &variant) { return test_support::FakeBinary(soc, dtype, variant); };
}
using OpBytesOf = std::function<std::vector<uint8_t>(const std::string &op, const std::string &dtype,
                                                     const std::string &variant)>;
inline OpBytesOf PackageOpBytes(const std::string &soc) {
  return [soc](const std::string &op, const std::string &dtype, const std::string &variant) {
    return test_support::FakeBinary(soc, dtype, variant, op);
  };
}
inline OpBytesOf OfAddCustom(const BytesOf &bytes) {
  return [bytes](const std::string &, const std::string &dtype, const std::string &variant) {
    return bytes(dtype, variant);
  };
}

// The launch's argument bytes by harness.h's hand-written layouts: kernel operand a reads op
// input operands[0]; a declared launch has its ffts word 0 (core/declared_launch.h).
inline std::vector<uint8_t> ExpectedArgs(const Node &n, uint64_t z, uint64_t programs, bool declared) {
  const uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>(n.tiles, programs));
  if (n.unary()) return LeakyReluArgs(InputAddress(0), z, n.n, n.alpha_bits, grid, declared ? 0 : 0x00000000FF001000ull);
  const uint64_t a = InputAddress(n.operands[0]), b = InputAddress(n.operands[1]);
  std::vector<uint8_t> bytes = n.tiled ? TiledArgs(a, b, z, n.dims, n.strides, grid) : FlatArgs(a, b, z, n.n, grid);
  if (declared) std::fill(bytes.begin(), bytes.begin() + 8, 0);
  return bytes;
}

// The descriptors GE's handler records: ffts, lock and workspace as values, the two operands'
// op inputs and the output, then the value words (8 bytes each) after them.
inline std::string ExpectedDescs(const Node &n) {
  // LeakyReluCustom's 64 bytes: the three values, x, y, then n_elements | alpha, gridX |
  // gridY, gridZ | padding
  if (n.unary()) return "c c c " + InputDesc(0) + " " + OutputDesc(0) + " c c c";
  std::string s = "c c c " + InputDesc(n.operands[0]) + " " + InputDesc(n.operands[1]) + " " + OutputDesc(0);
  for (int w = 0; w < (n.tiled ? 7 : 2); ++w) s += " c";
  return s;
}

inline std::string What(const Model &m, const Node &n, const std::string &board, const char *step) {
  return m.name + " " + n.name + " (" + (n.unary() ? n.op + " " : "") + n.dtype + " " + n.variant + ") on " + board +
         ", " + step + ": ";
}

// The instance GE hands a node of the model (GE's factory's per op type, or a model's).
using OpOf = std::function<ge::BaseCustomOp *(const Node &)>;

// One graph build of m for board (the platform stand-in names it, and GE's context option
// ge.socVersion on this thread, as GE sets it for the graph): Compile every node, then declare
// every node; every declaration checked against the oracle, with bytes(dtype, variant) the
// npubin and `programs` the cap of the grid. *names gets each kernel name declared with the
// bytes it carried. No stderr capture: callable from several threads.
inline void BuildGraph(const OpOf &op_of, const Model &m, const std::string &board, const OpBytesOf &bytes,
                       Problems *p, std::map<std::string, std::vector<uint8_t>> *names,
                       uint64_t programs = kManifestPrograms) {
  SetGraphSoc(board);
  for (const Node &n : m.nodes) {
    const ge::graphStatus st = n.unary() ? CompileNode(op_of(n), n.op, 1, n.ge_dtype, n.name)
                                         : Compile(op_of(n), n.ge_dtype, n.ge_dtype, n.name);
    Expect(p, st == ge::GRAPH_SUCCESS, What(m, n, board, "Compile") + "refused");
  }
  for (const Node &n : m.nodes) {
    const std::string what = What(m, n, board, "DeclareLaunchArgs");
    ge::BaseCustomOp *op = op_of(n);
    std::vector<RecordedDeclaration> d;
    ge::graphStatus st = ge::GRAPH_FAILED;
    if (n.unary()) {
      NodeAnnotatedCall call(n.op, {n.x}, n.z, n.ge_dtype, n.attrs(), 5, n.name);
      st = As<ge::AnnotatedArgsOp>(op)->DeclareLaunchArgs(call.ctx());
      d = call.Declared();
    } else {
      AnnotatedCall call(n.x, n.y, n.z, n.ge_dtype, 5, n.name);
      st = As<ge::AnnotatedArgsOp>(op)->DeclareLaunchArgs(call.ctx());
      d = call.Declared();
    }
    if (st != ge::GRAPH_SUCCESS) {
      p->push_back(what + "refused");
      continue;
    }
    if (d.size() != 1) {
      p->push_back(what + std::to_string(d.size()) + " launches declared");
      continue;
    }
    Expect(p, d[0].kernel_name == n.kernel_name, what + "kernel " + d[0].kernel_name + ", expected " + n.kernel_name);
    Expect(p, d[0].kernel_bin == bytes(n.op, n.dtype, n.variant),
           what + "the bytes are not the " + n.variant + " " + n.dtype + " npubin the model must carry");
    const uint64_t grid = std::min<uint64_t>(n.tiles, programs);
    Expect(p, d[0].block_dim == grid, what + "block dim " + std::to_string(d[0].block_dim) + ", expected " +
                                          std::to_string(grid));
    Expect(p, d[0].stream_id == 5u, what + "stream " + std::to_string(d[0].stream_id));
    Expect(p, DescString(d[0].descs) == ExpectedDescs(n),
           what + "descriptors " + DescString(d[0].descs) + ", expected " + ExpectedDescs(n));
    const std::vector<uint8_t> args = ExpectedArgs(n, AnnotatedCall::kZ, programs, true);
    Expect(p, d[0].args == args, what + "words " + Hex(d[0].args) + ", expected " + Hex(args));
    const auto first = names->emplace(d[0].kernel_name, d[0].kernel_bin);
    Expect(p, first.first->second == d[0].kernel_bin, what + "kernel name " + d[0].kernel_name +
                                                          " declared with two binaries in one graph");
  }
  SetGraphSoc("");
}

inline void BuildGraph(ge::BaseCustomOp *op, const Model &m, const std::string &board, const BytesOf &bytes,
                       Problems *p, std::map<std::string, std::vector<uint8_t>> *names,
                       uint64_t programs = kManifestPrograms) {
  BuildGraph([op](const Node &) { return op; }, m, board, OfAddCustom(bytes), p, names, programs);
}

// Execute every node of m on a fresh device reporting board, through op_of(node) (the one
// instance, or a model's registry's instance); each launch checked against the oracle, with
// the loaded bytes bytes(dtype, variant) and the function its kernel name.
inline void ExecuteAll(const OpOf &op_of, const Model &m, const std::string &board, const OpBytesOf &bytes,
                       Problems *p, int *launched) {
  recording_acl::Reset(OnFreshDevice(board));
  for (const Node &n : m.nodes) {
    const std::string what = What(m, n, board, "Execute");
    ge::BaseCustomOp *op = op_of(n);
    if (op == nullptr || As<ge::EagerExecuteOp>(op) == nullptr) {
      p->push_back(what + "no EagerExecuteOp for the node");
      continue;
    }
    const size_t before = recording_acl::Take().launches.size();
    // The node's call (AddCustom's EagerCall, or a node call of its own inputs and attributes):
    // what Execute gave it, its output and the address of that output, its stream.
    std::unique_ptr<EagerCall> binary;
    std::unique_ptr<NodeEagerCall> unary;
    gert::EagerOpExecutionContext *ctx = nullptr;
    if (n.unary()) {
      unary.reset(new NodeEagerCall(n.op, {n.x}, n.ge_dtype, n.attrs(), n.name));
      ctx = unary->ctx();
    } else {
      binary.reset(new EagerCall(n.x, n.y, n.ge_dtype, n.ge_dtype, n.name));
      ctx = binary->ctx();
    }
    const gert::Tensor &out = unary ? unary->out : binary->z;
    const FakeDeviceAllocator &allocator = unary ? unary->allocator : binary->allocator;
    void *const stream = unary ? unary->stream : binary->stream;
    ge::graphStatus st = ge::GRAPH_FAILED;
    const std::string err = CaptureStderr([&] { st = As<ge::EagerExecuteOp>(op)->Execute(ctx); });
    if (st != ge::GRAPH_SUCCESS) {
      p->push_back(what + "refused: " + err);
      continue;
    }
    const recording_acl::Record r = recording_acl::Take();
    if (r.launches.size() != before + 1) {
      p->push_back(what + std::to_string(r.launches.size() - before) + " launches");
      continue;
    }
    ++*launched;
    const recording_acl::Launch &l = r.launches.back();
    Expect(p, DimsOf(out.GetStorageShape()) == n.z, what + "output shape");
    Expect(p, l.stream == stream, what + "stream");
    const uint64_t grid = std::min<uint64_t>(n.tiles, kDeviceVectorCores);
    Expect(p, l.block_dim == grid, what + "block dim " + std::to_string(l.block_dim) + ", expected " +
                                       std::to_string(grid));
    const std::vector<uint8_t> args = ExpectedArgs(n, allocator.last, kDeviceVectorCores, false);
    Expect(p, l.args == args, what + "args " + Hex(l.args) + ", expected " + Hex(args));
    const recording_acl::GetFunction *fn = nullptr;
    for (const auto &f : r.functions) {
      if (f.function == l.function) fn = &f;
    }
    if (fn == nullptr) {
      p->push_back(what + "launched a function no aclrtBinaryGetFunction gave");
      continue;
    }
    Expect(p, fn->entry == n.kernel_name, what + "function " + fn->entry + ", expected " + n.kernel_name);
    for (const auto &load : r.loads) {
      if (load.binary == fn->binary) {
        Expect(p, load.bytes == bytes(n.op, n.dtype, n.variant),
               what + "loaded other bytes than the " + n.variant + " " + n.dtype + " npubin the model carries");
      }
    }
  }
}

inline void ExecuteAll(const std::function<ge::BaseCustomOp *(const Node &)> &op_of, const Model &m,
                       const std::string &board, const BytesOf &bytes, Problems *p, int *launched) {
  ExecuteAll(OpOf(op_of), m, board, OfAddCustom(bytes), p, launched);
}

inline void ExecuteAll(ge::BaseCustomOp *op, const Model &m, const std::string &board, const BytesOf &bytes,
                       Problems *p, int *launched) {
  ExecuteAll(OpOf([op](const Node &) { return op; }), m, board, OfAddCustom(bytes), p, launched);
}

inline std::string Summary(const Model &m, const std::map<std::string, std::vector<uint8_t>> &names, int launched) {
  std::set<std::string> variants, dtypes;
  for (const Node &n : m.nodes) {
    variants.insert(n.variant);
    dtypes.insert(n.dtype);
  }
  std::string v, d;
  for (const auto &s : variants) v += (v.empty() ? "" : ",") + s;
  for (const auto &s : dtypes) d += (d.empty() ? "" : ",") + s;
  std::map<std::string, int> ops;
  for (const Node &n : m.nodes) ++ops[n.op];
  std::string o;
  for (const auto &e : ops) o += (o.empty() ? "" : " + ") + std::to_string(e.second) + " " + e.first;
  return m.name + ": " + o + " nodes, " + std::to_string(variants.size()) +
         " variants (" + v + "), dtypes " + d + ", " + std::to_string(names.size()) + " kernel names, " +
         std::to_string(launched) + " launches checked";
}

inline void Report(Problems &p) {
  for (size_t i = 0; i < p.size() && i < 20; ++i) testing::RecordFailure(__FILE__, __LINE__, p[i]);
  if (p.size() > 20) testing::RecordFailure(__FILE__, __LINE__, std::to_string(p.size() - 20) + " more problems");
}

}  // namespace whole_models

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_WHOLE_MODELS_H_
