// Status and Result: the closed set of codes, the failing call as its own field, context added
// once, Result of a type without a default constructor, and the propagation macros.
#include <memory>
#include <optional>

#include "testing.h"
#include "tf_ge_custom_core/status.h"

using namespace tf_ge_custom::core;

namespace {

struct NoDefault {
  explicit NoDefault(int v) : value(v) {}
  int value;
};

Result<NoDefault> Make(int v) {
  if (v < 0) return Status::Error(Code::kOutOfRange, "negative");
  return NoDefault(v);
}

Result<std::unique_ptr<int>> MakeUnique(int v) {
  if (v < 0) return Status::Error(Code::kOutOfRange, "negative");
  return std::make_unique<int>(v);
}

// Uses both macros; `steps` records how far it got.
Result<int> Twice(int v, int *steps) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const NoDefault n, Make(v));
  ++*steps;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(std::unique_ptr<int> p, MakeUnique(v - 1));
  ++*steps;
  TF_GE_CUSTOM_RETURN_IF_ERROR(v == 7 ? Status::ApiError("aclrtGetDevice", "returned 107") : Status::Ok());
  ++*steps;
  return n.value + *p;
}

}  // namespace

TEST(Status, ErrorsCarryACodeAMessageAndTheFailingCall) {
  const Status ok;
  CHECK_TRUE(ok.ok());
  CHECK_EQ(ok.code(), Code::kOk);
  CHECK_EQ(ok.ToString(), std::string("ok"));
  const Status e = Status::Error(Code::kUnknownSoc, "no kernels for SoC X");
  CHECK_FALSE(e.ok());
  CHECK_EQ(e.code(), Code::kUnknownSoc);
  CHECK_EQ(e.api(), std::string(""));
  CHECK_EQ(e.ToString(), std::string("unknown_soc: no kernels for SoC X"));
  const Status api = Status::ApiError("aclrtLaunchKernelWithHostArgs", "returned 507015");
  CHECK_EQ(api.code(), Code::kRuntime);
  CHECK_EQ(api.api(), std::string("aclrtLaunchKernelWithHostArgs"));
  CHECK_EQ(api.message(), std::string("aclrtLaunchKernelWithHostArgs returned 507015"));
  // An error is never ok, whatever code it was given.
  CHECK_EQ(Status::Error(Code::kOk, "oops").code(), Code::kInternal);
}

TEST(Status, ContextAndPrefixKeepCodeAndCall) {
  const Status api = Status::ApiError("aclrtGetDevice", "returned 107");
  const Status with = api.WithContext("SoC Ascend910B1, dtype float32").WithPrefix("node add_1");
  CHECK_EQ(with.code(), Code::kRuntime);
  CHECK_EQ(with.api(), std::string("aclrtGetDevice"));
  CHECK_EQ(with.message(), std::string("node add_1: aclrtGetDevice returned 107 (SoC Ascend910B1, dtype float32)"));
  CHECK_TRUE(Status::Ok().WithContext("x").WithPrefix("y").ok());
  CHECK_EQ(Status::Ok().WithContext("x").message(), std::string(""));
}

TEST(Result, HoldsATypeWithoutADefaultConstructor) {
  auto r = Make(5);
  REQUIRE_OK(r);
  CHECK_EQ(r.value().value, 5);
  auto e = Make(-1);
  CHECK_FALSE(e.ok());
  CHECK_EQ(e.status().code(), Code::kOutOfRange);
  bool threw = false;
  try {
    (void)e.value();
  } catch (const std::bad_optional_access &) {
    threw = true;
  }
  CHECK_TRUE(threw);
  // A Result made from an ok Status has no value: that is an internal error, not success.
  const Result<int> broken(Status::Ok());
  CHECK_FALSE(broken.ok());
  CHECK_EQ(broken.status().code(), Code::kInternal);
}

TEST(Result, MacrosPropagateTheFirstRefusalUnchanged) {
  int steps = 0;
  auto r = Twice(4, &steps);
  REQUIRE_OK(r);
  CHECK_EQ(r.value(), 7);
  CHECK_EQ(steps, 3);
  steps = 0;
  CHECK_EQ(Twice(-3, &steps).status().message(), std::string("negative"));
  CHECK_EQ(steps, 0);
  steps = 0;
  CHECK_EQ(Twice(0, &steps).status().code(), Code::kOutOfRange);  // the second step refused
  CHECK_EQ(steps, 1);
  steps = 0;
  const Status st = Twice(7, &steps).status();
  CHECK_EQ(st.api(), std::string("aclrtGetDevice"));
  CHECK_EQ(steps, 2);
}
