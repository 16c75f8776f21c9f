// The op table of the library under test as tests/ge/launch_oracle.py reads it from the
// records (its rule 6: op_scenario), for the generic cases of any_op_tests.cc: every op of the
// op_def.py the library's table was generated from, its flat variant's parameters (what the
// harness writes the op's kernel set from) and, per dtype, the launches the oracle works out.
// TF_GE_IN_LOOP_OPS names the file (tests/ge/test_ge_in_loop.py writes it); without it the
// table is empty and the generic cases fail saying so.
//
// Also here: a node's attribute value, float or int, as the node calls of harness.h append it.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_OP_TABLE_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_OP_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/types.h"
#include "scenario_file.h"
#include "test_support.h"

namespace harness {

// One attribute value of a node as GE's context holds it (OpContextBuilderBase::AppendAttr):
// a float (binary32) or an int (int64). A float converts implicitly, so the hand-written
// cases' {0.1f} reads as before.
struct AttrValue {
  AttrValue(float v) : f(v) {}  // NOLINT: implicit on purpose
  static AttrValue Int(int64_t v) {
    AttrValue a(0.0f);
    a.is_int = true;
    a.i = v;
    return a;
  }
  bool is_int = false;
  float f = 0;
  int64_t i = 0;
};

}  // namespace harness

namespace op_table {

// One word of a launch's arguments: at offset, size bytes of value, or of what the call
// decides (symbol: "input:<i>", "output:<i>", "ffts", "programs").
struct Word {
  uint64_t offset = 0, size = 0, value = 0;
  std::string symbol;
};

// One launch the oracle works out: every input of the node of shape, dtype, the node's
// attributes (none carried: the defaults').
struct Launch {
  std::vector<int64_t> shape;
  std::string dtype, kernel_name;
  ge::DataType ge_dtype = ge::DT_UNDEFINED;
  uint64_t n = 0, tiles = 0, output_bytes = 0, size = 0;
  bool carries_attrs = false;
  std::vector<harness::AttrValue> attrs;
  std::vector<Word> words;
  std::vector<std::string> descs;  // per 8-byte word of a declared launch: "input:<i>", "output:<i>" or "c"
};

struct Op {
  std::string type, python_name, variant;
  size_t inputs = 0, outputs = 0;
  std::vector<std::string> dtypes, refused_dtypes;
  std::vector<int64_t> block;
  std::vector<test_support::ParamSpec> params;
  std::vector<Launch> cases;

  // The op's kernel of dtype as the builder writes one into a set: its flat variant, the
  // layout laid out from the record's parameters (test_support::ParamsArgsJson).
  test_support::KernelSpec Kernel(const std::string &dtype) const {
    test_support::KernelSpec k;
    k.op = type;
    k.python_name = python_name;
    k.variant = variant;
    k.dtype = dtype;
    k.params = params;
    k.block = block;
    return k;
  }
};

using scenario_file::GeDType;

inline std::vector<Op> Read(std::string *why) {
  const nlohmann::json doc = scenario_file::Read("TF_GE_IN_LOOP_OPS", "ops", "the op table's scenario", why);
  if (doc.is_null()) return {};
  std::vector<Op> ops;
  for (const auto &o : doc["ops"]) {
    Op op;
    op.type = o["type"].get<std::string>();
    op.python_name = o["python_name"].get<std::string>();
    op.variant = o["variant"].get<std::string>();
    op.inputs = o["inputs"].get<size_t>();
    op.outputs = o["outputs"].get<size_t>();
    op.dtypes = o["dtypes"].get<std::vector<std::string>>();
    op.refused_dtypes = o["refused_dtypes"].get<std::vector<std::string>>();
    op.block = o["block"].get<std::vector<int64_t>>();
    for (const auto &p : o["params"]) {
      test_support::ParamSpec s;
      s.name = p["param"].get<std::string>();
      s.role = p["role"].get<std::string>();
      s.index = p["index"].get<int>();
      s.size = p["size"].get<int>();
      op.params.push_back(s);
    }
    for (const auto &c : o["cases"]) {
      Launch l;
      l.shape = c["shape"].get<std::vector<int64_t>>();
      l.dtype = c["dtype"].get<std::string>();
      l.ge_dtype = GeDType(l.dtype);
      l.kernel_name = c["kernel_name"].get<std::string>();
      l.n = c["n"].get<uint64_t>();
      l.tiles = c["tiles"].get<uint64_t>();
      l.output_bytes = c["output_bytes"].get<uint64_t>();
      l.size = c["size"].get<uint64_t>();
      l.carries_attrs = !c["attrs"].is_null();
      if (l.carries_attrs) {
        for (const auto &a : c["attrs"]) {
          l.attrs.push_back(a["type"] == "int" ? harness::AttrValue::Int(a["value"].get<int64_t>())
                                               : harness::AttrValue(a["value"].get<float>()));
        }
      }
      for (const auto &w : c["words"]) {
        Word word;
        word.offset = w[0].get<uint64_t>();
        word.size = w[1].get<uint64_t>();
        if (w[2].is_string()) {
          word.symbol = w[2].get<std::string>();
        } else {
          word.value = w[2].get<uint64_t>();
        }
        l.words.push_back(word);
      }
      l.descs = c["descs"].get<std::vector<std::string>>();
      op.cases.push_back(std::move(l));
    }
    ops.push_back(std::move(op));
  }
  if (ops.empty()) *why = "the op table's scenario " + scenario_file::PathOf("TF_GE_IN_LOOP_OPS") + " holds no op";
  return ops;
}

// The table, read once; empty without one (Why() says why).
inline const std::vector<Op> &Ops() {
  static std::string why;
  static const std::vector<Op> ops = Read(&why);
  return ops;
}

inline std::string Why() {
  std::string why;
  (void)Read(&why);
  return why;
}

}  // namespace op_table

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_OP_TABLE_H_
