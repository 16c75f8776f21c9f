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
