// The scenario files tests/ge/test_ge_in_loop.py writes for the cases (tests/ge/launch_oracle.py's
// output: the whole models, TF_GE_IN_LOOP_MODELS; the op table, TF_GE_IN_LOOP_OPS), read as
// JSON, and the dtype names they use.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_SCENARIO_FILE_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_SCENARIO_FILE_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/types.h"

namespace scenario_file {

inline ge::DataType GeDType(const std::string &name) {
  if (name == "float32") return ge::DT_FLOAT;
  if (name == "float16") return ge::DT_FLOAT16;
  if (name == "bfloat16") return ge::DT_BF16;
  if (name == "int32") return ge::DT_INT32;
  return ge::DT_UNDEFINED;
}

// The document in the file $variable names, which must hold `key`; null otherwise, with *why
// saying which of the two failed ("the op table's scenario", "the scenario": `what`).
inline nlohmann::json Read(const char *variable, const char *key, const std::string &what, std::string *why) {
  const char *path = std::getenv(variable);
  if (path == nullptr || *path == '\0') {
    *why = std::string(variable) + " is unset (tests/ge/test_ge_in_loop.py writes " + what + ")";
    return nullptr;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains(key)) {
    *why = "cannot read " + what + " " + path;
    return nullptr;
  }
  return doc;
}

// The path $variable names ("" when unset), for messages.
inline std::string PathOf(const char *variable) {
  const char *path = std::getenv(variable);
  return path == nullptr ? std::string() : std::string(path);
}

}  // namespace scenario_file

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_SCENARIO_FILE_H_
