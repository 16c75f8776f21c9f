// The JSON reader and the normalized dump, against what Python's json module does
// (expected strings are json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))).
#include "testing.h"
#include "tf_ge_custom_core/json.h"

using tf_ge_custom::core::DumpNormalized;
using tf_ge_custom::core::JsonValue;
using tf_ge_custom::core::ParseJson;

namespace {
std::string Norm(const std::string &text) {
  JsonValue v;
  auto st = ParseJson(text, &v);
  return st.ok() ? DumpNormalized(v) : "<" + st.kind() + ">";
}
}  // namespace

TEST(Json, SortsKeysAndDropsWhitespace) {
  CHECK_EQ(Norm(" {\"b\": 1,\n \"a\": [true, null, \"x\", -0, 12]}\r\n"),
           std::string("{\"a\":[true,null,\"x\",0,12],\"b\":1}"));
  CHECK_EQ(Norm("{\"b\":{\"d\":1,\"c\":2},\"a\":{}}"), std::string("{\"a\":{},\"b\":{\"c\":2,\"d\":1}}"));
}

TEST(Json, SortsKeysByCodePoint) {
  // Python sorts str keys by code point: "Z" < "a" < "b" < "\u00e9" < "\U0001f600".
  CHECK_EQ(Norm("{\"\xc3\xa9\":1,\"b\":2,\"\xf0\x9f\x98\x80\":3,\"a\":4,\"Z\":5}"),
           std::string("{\"Z\":5,\"a\":4,\"b\":2,\"\\u00e9\":1,\"\\ud83d\\ude00\":3}"));
}

TEST(Json, EscapesLikeEnsureAscii) {
  CHECK_EQ(Norm("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\x7f\"]"),
           std::string("[\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u007f\"]"));
  CHECK_EQ(Norm("[\"\\ud83d\\ude00\", \"\\ud800\", \"\\uDC00x\"]"),
           std::string("[\"\\ud83d\\ude00\",\"\\ud800\",\"\\udc00x\"]"));
}

TEST(Json, NumbersKeepTheirKind) {
  JsonValue v;
  REQUIRE_OK(ParseJson("[1, -9223372036854775808, 9223372036854775808, 1.5, 1e3, NaN, -Infinity]", &v));
  REQUIRE_EQ(v.items().size(), size_t{7});
  CHECK_TRUE(v.items()[0].is_integer());
  CHECK_EQ(v.items()[1].int_value(), INT64_MIN);
  CHECK_TRUE(v.items()[2].type() == JsonValue::Type::kBigInteger);
  CHECK_TRUE(v.items()[3].type() == JsonValue::Type::kFloat);
  CHECK_TRUE(v.items()[4].type() == JsonValue::Type::kFloat);
  CHECK_TRUE(v.items()[5].type() == JsonValue::Type::kFloat);
  CHECK_TRUE(v.items()[6].type() == JsonValue::Type::kFloat);
}

TEST(Json, RefusesWhatPythonRefuses) {
  for (const char *bad : {"", " ", "{", "[1,]", "{\"a\":1,}", "01", "[01]", "1.", "-", "+1", "tru", "\"\\x\"",
                          "\"a\nb\"", "\"\xff\"", "\xef\xbb\xbf{}", "{} x", "{'a':1}", "[1 2]", "{\"a\" 1}",
                          "\"\\u12\"", "nan", "-NaN", "\"\xc0\x80\"", "\"\xed\xa0\x80\""}) {
    JsonValue v;
    auto st = ParseJson(bad, &v);
    if (!CHECK_FALSE(st.ok())) continue;
    CHECK_EQ(st.kind(), std::string("syntax"));
  }
}

TEST(Json, RefusesDuplicateKeysAtAnyDepth) {
  JsonValue v;
  auto st = ParseJson("{\"a\": {\"k\": 1, \"k\": 2}}", &v);
  CHECK_EQ(st.kind(), std::string("duplicate_key"));
  CHECK_TRUE(ParseJson("{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}", &v).ok());
}

TEST(Json, BoundsNesting) {
  JsonValue v;
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  CHECK_EQ(ParseJson(deep, &v).kind(), std::string("syntax"));
  const std::string ok = std::string(100, '[') + std::string(100, ']');
  CHECK_TRUE(ParseJson(ok, &v).ok());
}
