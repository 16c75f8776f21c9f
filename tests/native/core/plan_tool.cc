// tf_ge_custom_plan: the GE library's run-time decisions for given input shapes, as JSON, so
// that the kernel tests (tests/kernels/test_interpreter_broadcast.py) run the Triton kernels
// in the interpreter exactly as Execute would launch them. Built by the tests only.
//
//   tf_ge_custom_plan < cases.json > plans.json
//   {"cases": [{"x": [..], "y": [..], "dtype": "float32",
//               "max_programs": 48, "max_elements_per_launch": 1073741824}, ...]}
// For each case: {"variant", "operands", "output", "launches": [{"input_offsets",
// "output_offset" (bytes), "num_elements", "dims", "input_strides", "grid"}]}, or
// {"error": <code>, "message": ...} for a refusal. The kernel entry is made from the op
// table (block) and the case's limits, as a manifest would give them.
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/launch_plan.h"

using namespace tf_ge_custom::core;
using Json = nlohmann::json;

namespace {
Json Plan(const Json &c) {
  const OpDefinition &op = *FindOp("AddCustom");
  const DTypeDefinition *dtype = op.FindDType(c.at("dtype").get<std::string>());
  if (dtype == nullptr) return {{"error", "kBadDType"}, {"message", "unknown dtype"}};
  auto call = PrepareCall(op, *dtype, c.at("x").get<std::vector<int64_t>>(), c.at("y").get<std::vector<int64_t>>());
  if (!call.ok()) return {{"error", CodeName(call.status().code())}, {"message", call.status().message()}};
  const KernelChoice &k = call.value().choice;
  Json out = {{"output", k.output}, {"num_elements", k.num_elements}, {"launches", Json::array()}};
  if (k.variant == nullptr) return out;
  out["variant"] = k.variant->name;
  out["operands"] = k.operands;
  KernelEntry e;
  e.block = k.variant->block;
  e.max_programs = c.value("max_programs", int64_t{48});
  e.max_grid = kMaxGrid;
  e.max_elements_per_launch = c.value("max_elements_per_launch", int64_t{1} << 30);
  auto plan = LaunchPlan::Make(k, dtype->itemsize, e);
  if (!plan.ok()) return {{"error", CodeName(plan.status().code())}, {"message", plan.status().message()}};
  for (int64_t i = 0; i < plan.value().launch_count(); ++i) {
    const Launch l = plan.value().launch(i);
    out["launches"].push_back({{"input_offsets", l.input_offsets},
                               {"output_offset", l.output_offset},
                               {"num_elements", l.num_elements},
                               {"dims", l.dims},
                               {"input_strides", l.input_strides},
                               {"grid", l.grid_x}});
  }
  return out;
}
}  // namespace

int main() {
  const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const Json in = Json::parse(text, nullptr, false);
  if (in.is_discarded() || !in.contains("cases")) {
    std::cerr << "expected {\"cases\": [...]} on stdin\n";
    return 2;
  }
  Json plans = Json::array();
  for (const auto &c : in["cases"]) plans.push_back(Plan(c));
  std::cout << Json{{"plans", plans}}.dump() << "\n";
  return 0;
}
