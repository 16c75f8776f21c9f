// Dtype and shape rules of Execute / InferShape / InferDataType, and the op table generated
// from tf_ge_custom/op_def.py.
#include "testing.h"
#include "tf_ge_custom_core/library_location.h"
#include "tf_ge_custom_core/op_checks.h"

using namespace tf_ge_custom::core;

namespace {
const OpDefinition &Add() { return *FindOp("AddCustom"); }
}  // namespace

TEST(OpDefinition, GeneratedTableHoldsAddCustom) {
  const OpDefinition *op = FindOp("AddCustom");
  REQUIRE_TRUE(op != nullptr);
  CHECK_EQ(op->inputs.size(), size_t{2});
  CHECK_EQ(op->outputs.size(), size_t{1});
  CHECK_TRUE(FindOp("addcustom") == nullptr);
}

TEST(OpChecks, DTypeMustBeSupportedAndShared) {
  auto ok = CheckDTypes(Add(), {{"float16", {2}}, {"float16", {2}}});
  REQUIRE_OK(ok);
  CHECK_EQ(ok.value()->itemsize, int64_t{2});
  auto unsupported = CheckDTypes(Add(), {{"DT_DOUBLE", {2}}, {"DT_DOUBLE", {2}}});
  CHECK_EQ(unsupported.status().code(), Code::kBadDType);
  CHECK_TRUE(unsupported.status().message().find("float32, float16, bfloat16, int32") != std::string::npos);
  auto mixed = CheckDTypes(Add(), {{"float32", {2}}, {"float16", {2}}});
  CHECK_FALSE(mixed.ok());
  CHECK_TRUE(mixed.status().message().find("x is float32 but y is float16") != std::string::npos);
  CHECK_FALSE(CheckDTypes(Add(), {{"float32", {2}}}).ok());
}

TEST(OpChecks, ElementCountRefusesNegativeDimsAndOverflow) {
  CHECK_EQ(ElementCount({8, 2048}).value(), int64_t{16384});
  CHECK_EQ(ElementCount({}).value(), int64_t{1});  // scalar
  CHECK_EQ(ElementCount({0, 5}).value(), int64_t{0});
  CHECK_FALSE(ElementCount({-1, 4}).ok());
  CHECK_FALSE(ElementCount({int64_t{1} << 32, int64_t{1} << 32}).ok());
  CHECK_EQ(ElementCount({int64_t{1} << 31, int64_t{1} << 31}).value(), int64_t{1} << 62);
}

TEST(OpChecks, InferShapeBroadcastsAsTensorFlowsShapeFunction) {
  // Expected values from BroadcastBinaryOpShapeFn (tensorflow/core/framework/common_shape_fns.cc)
  // applied by hand: -1 is an unknown dim, {-2} an unknown rank.
  struct Case {
    std::vector<int64_t> x, y, out;
  };
  const Case cases[] = {
      {{8, 2048}, {2048}, {8, 2048}},         // bias
      {{4096, 1}, {1, 4096}, {4096, 4096}},   // outer
      {{}, {3, 5}, {3, 5}},                   // scalar
      {{3, 1, 5}, {4, 1}, {3, 4, 5}},
      {{0, 5}, {1}, {0, 5}},                  // 0 beats 1
      {{-1, 4}, {3, -1}, {3, 4}},             // a known size above 1 wins
      {{-1}, {1}, {-1}},                      // a known 1 yields the other
      {{-1}, {-1}, {-1}},
      {{-1}, {0}, {-1}},                      // unknown against 0 stays unknown
      {{-1, 1}, {5}, {-1, 5}},
      {{-2}, {3, 5}, {-2}},                   // an unknown rank gives an unknown rank
      {{7}, {-2}, {-2}},
      {{2, -1}, {}, {2, -1}},
  };
  for (const auto &c : cases) {
    auto r = InferOutputShape(Add(), {{"", c.x}, {"", c.y}});
    if (!r.ok()) {
      CHECK_EQ(ShapeString(c.x) + " + " + ShapeString(c.y) + ": " + r.status().ToString(), std::string("ok"));
      continue;
    }
    CHECK_EQ(r.value(), c.out);
  }
  auto bad = InferOutputShape(Add(), {{"", {3, 4}}, {"", {3, 5}}});
  CHECK_EQ(bad.status().code(), Code::kBadShape);
  CHECK_TRUE(bad.status().message().find("x [3, 4] and y [3, 5]") != std::string::npos);
  CHECK_FALSE(InferOutputShape(Add(), {{"", {3, 4}}, {"", {12}}}).ok());
  CHECK_FALSE(InferOutputShape(Add(), {{"", {0}}, {"", {2}}}).ok());
  CHECK_FALSE(InferOutputShape(Add(), {{"", {-3}}, {"", {2}}}).ok());
}

namespace {
// Ops the generated table does not hold (it holds op_def.OPS), written out here: LeakyReluCustom
// as op_def.py defines it (one input, no broadcasting), and made-up three-input ops with and
// without broadcasting. InferOutputShape reads only the names, the input count and broadcasts.
OpDefinition Unbroadcast(std::vector<std::string> inputs, const std::string &type = "LeakyReluCustom") {
  OpDefinition op;
  op.type_name = type;
  op.inputs = std::move(inputs);
  op.outputs = {"y"};
  op.dtypes = {{"float32", "DT_FLOAT", 4}};
  op.broadcasts = false;
  return op;
}
}  // namespace

TEST(OpChecks, InferShapeOfAnOpWithoutBroadcastingIsItsInputsOneShape) {
  // Expected values from TensorFlow's shape functions applied by hand: UnchangedShape for one
  // input; InferenceContext::Merge for several (a known size wins over -1, an unknown rank
  // {-2} says nothing; different ranks or known sizes do not merge).
  const OpDefinition one = Unbroadcast({"x"});
  struct Case {
    std::vector<int64_t> x, out;
  };
  const Case unary[] = {{{8, 2048}, {8, 2048}}, {{}, {}}, {{0, 5}, {0, 5}}, {{-1, 7}, {-1, 7}}, {{-2}, {-2}},
                        {{1, 1, 3}, {1, 1, 3}}};
  for (const auto &c : unary) {
    auto r = InferOutputShape(one, {{"", c.x}});
    REQUIRE_OK(r);
    CHECK_EQ(r.value(), c.out);
  }
  auto below = InferOutputShape(one, {{"", {4, -3}}});
  CHECK_EQ(below.status().code(), Code::kBadShape);
  CHECK_TRUE(below.status().message().find("LeakyReluCustom: x [4, -3] holds a dimension below -1") != std::string::npos);
  // the op's own input count: two shapes for a one-input op are refused, naming the count
  auto two_for_one = InferOutputShape(one, {{"", {2}}, {"", {2}}});
  CHECK_EQ(two_for_one.status().code(), Code::kBadShape);
  CHECK_TRUE(two_for_one.status().message().find("LeakyReluCustom takes 1 inputs, got 2") != std::string::npos);
  CHECK_FALSE(InferOutputShape(one, {}).ok());

  const OpDefinition three = Unbroadcast({"a", "b", "c"}, "ThreeWay");
  struct Case3 {
    std::vector<int64_t> a, b, c, out;
  };
  const Case3 merged[] = {
      {{4, 5}, {4, 5}, {4, 5}, {4, 5}},
      {{-1, 5}, {4, -1}, {-1, -1}, {4, 5}},  // each known size wins
      {{-2}, {4, -1}, {-2}, {4, -1}},        // unknown ranks say nothing
      {{-2}, {-2}, {-2}, {-2}},
      {{-2}, {}, {-2}, {}},                  // a scalar stays one
  };
  for (const auto &c : merged) {
    auto r = InferOutputShape(three, {{"", c.a}, {"", c.b}, {"", c.c}});
    if (!r.ok()) {
      CHECK_EQ(r.status().ToString(), std::string("ok"));
      continue;
    }
    CHECK_EQ(r.value(), c.out);
  }
  // broadcasting shapes are not one shape: [4, 5] and [5] (tf.math.add would take them)
  auto differ = InferOutputShape(three, {{"", {4, 5}}, {"", {5}}, {"", {4, 5}}});
  CHECK_EQ(differ.status().code(), Code::kBadShape);
  CHECK_TRUE(differ.status().message().find(
                 "ThreeWay does not broadcast: its inputs must have one shape, found a [4, 5], b [5] and c [4, 5]") !=
             std::string::npos);
  CHECK_FALSE(InferOutputShape(three, {{"", {4, 5}}, {"", {4, 6}}, {"", {-1, -1}}}).ok());  // known sizes differ
  CHECK_FALSE(InferOutputShape(three, {{"", {4, 1}}, {"", {4, 5}}, {"", {-2}}}).ok());     // 1 is no wildcard
  CHECK_FALSE(InferOutputShape(three, {{"", {-1}}, {"", {-1, -1}}, {"", {-2}}}).ok());     // ranks differ
}

TEST(OpChecks, InferShapeBroadcastsMoreThanTwoInputsFromTheLeft) {
  // A made-up three-input op that broadcasts: tf.math.add's rule folded over the inputs,
  // ((a + b) + c), worked out by hand; unknown rank anywhere gives an unknown rank.
  OpDefinition op = Unbroadcast({"a", "b", "c"}, "AddThree");
  op.broadcasts = true;
  struct Case {
    std::vector<int64_t> a, b, c, out;
  };
  const Case cases[] = {
      {{8, 1, 5}, {4, 1}, {5}, {8, 4, 5}},
      {{-1, 5}, {1}, {3, 1}, {3, 5}},     // -1 against 1 stays -1, then 3 wins
      {{}, {}, {2, 2}, {2, 2}},
      {{7}, {-2}, {7}, {-2}},
  };
  for (const auto &c : cases) {
    auto r = InferOutputShape(op, {{"", c.a}, {"", c.b}, {"", c.c}});
    if (!r.ok()) {
      CHECK_EQ(r.status().ToString(), std::string("ok"));
      continue;
    }
    CHECK_EQ(r.value(), c.out);
  }
  auto bad = InferOutputShape(op, {{"", {4, 5}}, {"", {5}}, {"", {3, 1}}});
  CHECK_EQ(bad.status().code(), Code::kBadShape);
  CHECK_TRUE(bad.status().message().find("AddThree: a [4, 5], b [5] and c [3, 1] are not broadcast-compatible") !=
             std::string::npos);
}

static void SomeFunctionInThisBinary() {}

TEST(LibraryLocation, OppRootIsFourLevelsAboveTheLibrary) {
  CHECK_EQ(OppRootFromLibraryPath("/site/tf_ge_custom/opp/op_graph/lib/linux/x86_64/libtf_ge_custom_ge.so").value(),
           std::string("/site/tf_ge_custom/opp"));
  CHECK_EQ(OppRootFromLibraryPath("/tmp/libtf_ge_custom_ge.so").status().code(), Code::kLocation);
  CHECK_FALSE(OppRootFromLibraryPath("/opp/op_graph/lib64/linux/x86_64/lib.so").ok());
  auto self = FileContaining(reinterpret_cast<const void *>(&SomeFunctionInThisBinary));
  REQUIRE_OK(self);
  CHECK_TRUE(self.value().find("tf_ge_custom_core_tests") != std::string::npos);
}
