// A strict JSON reader that agrees with Python's json module on what is valid, and the
// normalized dump json.dumps(doc, sort_keys=True, separators=(",", ":")) of what it read.
// The kernel manifest is its one user; both manifest readers must print the same dump.
#ifndef TF_GE_CUSTOM_CORE_JSON_H_
#define TF_GE_CUSTOM_CORE_JSON_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

class JsonValue {
 public:
  // kBigInteger: an integer outside int64 (Python reads it; no manifest field allows it).
  // kFloat also covers NaN/Infinity, which Python's json accepts.
  enum class Type { kNull, kBool, kInteger, kBigInteger, kFloat, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_integer() const { return type_ == Type::kInteger; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }

  bool bool_value() const { return bool_; }
  int64_t int_value() const { return int_; }
  const std::string &string_value() const { return text_; }  // UTF-8 (WTF-8 for lone surrogates)
  const std::string &number_text() const { return text_; }   // kFloat / kBigInteger: the token
  const std::vector<JsonValue> &items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>> &members() const { return members_; }
  // Member by key, or nullptr. Keys are unique: the reader refuses duplicates.
  const JsonValue *Find(const std::string &key) const;

  static JsonValue Null();
  static JsonValue Bool(bool v);
  static JsonValue Integer(int64_t v);
  static JsonValue String(std::string v);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::vector<std::pair<std::string, JsonValue>> members);

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Kinds of failure ParseJson reports: "syntax" (not JSON as Python reads it, invalid UTF-8,
// a byte-order mark, nesting deeper than max_depth) and "duplicate_key" (an object repeats
// a key; Python would silently keep the last one, which hides typos).
Status ParseJson(const std::string &text, JsonValue *out, int max_depth = 512);

// Python's json.dumps(value, sort_keys=True, separators=(",", ":")) with ensure_ascii.
// Floats are written as read (Python would print repr(float)); no valid manifest has one.
std::string DumpNormalized(const JsonValue &value);

// value as a JSON string literal, ASCII-only (the dump's string escaping).
std::string QuoteJsonString(const std::string &utf8);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_JSON_H_
