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

TEST(OpChecks, ExecuteNeedsEqualConcreteShapes) {
  CHECK_EQ(CheckSameShapeAndCount(Add(), {{"float32", {8, 2048}}, {"float32", {8, 2048}}}).value(), int64_t{16384});
  CHECK_EQ(CheckSameShapeAndCount(Add(), {{"float32", {}}, {"float32", {}}}).value(), int64_t{1});  // scalar
  CHECK_EQ(CheckSameShapeAndCount(Add(), {{"float32", {0, 5}}, {"float32", {0, 5}}}).value(), int64_t{0});
  auto broadcast = CheckSameShapeAndCount(Add(), {{"float32", {8, 2048}}, {"float32", {2048}}});
  CHECK_EQ(broadcast.status().code(), Code::kBadShape);
  CHECK_TRUE(broadcast.status().message().find("[8, 2048]") != std::string::npos);
  CHECK_FALSE(CheckSameShapeAndCount(Add(), {{"float32", {-1, 4}}, {"float32", {-1, 4}}}).ok());
  CHECK_FALSE(ElementCount({int64_t{1} << 32, int64_t{1} << 32}).ok());
  CHECK_EQ(ElementCount({int64_t{1} << 31, int64_t{1} << 31}).value(), int64_t{1} << 62);
}

TEST(OpChecks, InferShapeMergesUnknownDims) {
  CHECK_EQ(InferOutputShape(Add(), {{"", {-1, 4}}, {"", {3, -1}}}).value(), (std::vector<int64_t>{3, 4}));
  CHECK_EQ(InferOutputShape(Add(), {{"", {-2}}, {"", {3, 5}}}).value(), (std::vector<int64_t>{3, 5}));
  CHECK_EQ(InferOutputShape(Add(), {{"", {7}}, {"", {-2}}}).value(), (std::vector<int64_t>{7}));
  CHECK_EQ(InferOutputShape(Add(), {{"", {-1}}, {"", {-1}}}).value(), (std::vector<int64_t>{-1}));
  CHECK_FALSE(InferOutputShape(Add(), {{"", {3, 4}}, {"", {3, 5}}}).ok());
  CHECK_FALSE(InferOutputShape(Add(), {{"", {3, 4}}, {"", {12}}}).ok());
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
