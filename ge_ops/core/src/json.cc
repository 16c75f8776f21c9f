#include "tf_ge_custom_core/json.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <unordered_set>

namespace tf_ge_custom {
namespace core {

const JsonValue *JsonValue::Find(const std::string &key) const {
  for (const auto &m : members_) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

JsonValue JsonValue::Null() { return JsonValue(); }
JsonValue JsonValue::Bool(bool v) {
  JsonValue j;
  j.type_ = Type::kBool;
  j.bool_ = v;
  return j;
}
JsonValue JsonValue::Integer(int64_t v) {
  JsonValue j;
  j.type_ = Type::kInteger;
  j.int_ = v;
  return j;
}
JsonValue JsonValue::String(std::string v) {
  JsonValue j;
  j.type_ = Type::kString;
  j.text_ = std::move(v);
  return j;
}
JsonValue JsonValue::Array(std::vector<JsonValue> items) {
  JsonValue j;
  j.type_ = Type::kArray;
  j.items_ = std::move(items);
  return j;
}
JsonValue JsonValue::Object(std::vector<std::pair<std::string, JsonValue>> members) {
  JsonValue j;
  j.type_ = Type::kObject;
  j.members_ = std::move(members);
  return j;
}

namespace {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(uint32_t cp, std::string *out) {
  // Lone surrogates (which Python keeps in a str) are written as their 3-byte form, so
  // byte order still equals code-point order when keys are sorted.
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes one UTF-8 (or WTF-8) sequence at s[*pos]; false on malformed input.
bool DecodeUtf8(const std::string &s, size_t *pos, uint32_t *cp, bool allow_surrogates) {
  const auto b0 = static_cast<unsigned char>(s[*pos]);
  size_t len;
  uint32_t c;
  if (b0 < 0x80) {
    *cp = b0;
    *pos += 1;
    return true;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    c = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    c = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    c = b0 & 0x07;
  } else {
    return false;
  }
  if (*pos + len > s.size()) return false;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[*pos + k]);
    if ((b & 0xC0) != 0x80) return false;
    c = (c << 6) | (b & 0x3F);
  }
  static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10FFFF) return false;  // overlong or beyond Unicode
  if (!allow_surrogates && c >= 0xD800 && c <= 0xDFFF) return false;
  *cp = c;
  *pos += len;
  return true;
}

}  // namespace

class JsonParser {
 public:
  JsonParser(const std::string &text, int max_depth) : s_(text), max_depth_(max_depth) {}

  Status Parse(JsonValue *out) {
    // The text must be valid UTF-8 (Python reads the file as UTF-8 before parsing).
    for (size_t p = 0; p < s_.size();) {
      uint32_t cp;
      if (!DecodeUtf8(s_, &p, &cp, false)) return Fail("the text is not valid UTF-8");
    }
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) return Fail("the text starts with a UTF-8 byte-order mark");
    SkipSpace();
    Status st = ParseValue(out, 0);
    if (!st.ok()) return st;
    SkipSpace();
    if (pos_ != s_.size()) return Fail("extra data after the JSON value");
    return Status::Ok();
  }

 private:
  Status Fail(const std::string &what) const {
    return Status::Error("syntax", what + " (at byte " + std::to_string(pos_) + ")");
  }

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool Consume(const char *word) {
    const size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  Status ParseValue(JsonValue *out, int depth) {
    if (pos_ >= s_.size()) return Fail("expected a value, found the end of the text");
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth_) return Fail("nesting deeper than " + std::to_string(max_depth_));
      return c == '{' ? ParseObject(out, depth + 1) : ParseArray(out, depth + 1);
    }
    if (c == '"') {
      out->type_ = JsonValue::Type::kString;
      return ParseString(&out->text_);
    }
    if (Consume("true")) {
      *out = JsonValue::Bool(true);
      return Status::Ok();
    }
    if (Consume("false")) {
      *out = JsonValue::Bool(false);
      return Status::Ok();
    }
    if (Consume("null")) {
      *out = JsonValue::Null();
      return Status::Ok();
    }
    // Python's json also reads these three words as floats.
    for (const char *word : {"NaN", "Infinity", "-Infinity"}) {
      if (Consume(word)) {
        out->type_ = JsonValue::Type::kFloat;
        out->text_ = word;
        return Status::Ok();
      }
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    return Fail(std::string("unexpected character '") + (c >= ' ' && c <= '~' ? std::string(1, c) : "?") + "'");
  }

  Status ParseNumber(JsonValue *out) {
    const size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size() || !IsDigit(s_[pos_])) return Fail("a '-' without digits");
    if (s_[pos_] == '0') {
      ++pos_;
    } else {
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    bool is_float = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      const size_t dot = pos_++;
      if (pos_ >= s_.size() || !IsDigit(s_[pos_])) {
        pos_ = dot;  // Python stops the number before a bare '.', then fails on it
      } else {
        is_float = true;
        while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
      }
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && IsDigit(s_[p])) {
        while (p < s_.size() && IsDigit(s_[p])) ++p;
        pos_ = p;
        is_float = true;
      }
    }
    const std::string token = s_.substr(start, pos_ - start);
    if (is_float) {
      out->type_ = JsonValue::Type::kFloat;
      out->text_ = token;
      return Status::Ok();
    }
    errno = 0;
    char *end = nullptr;
    const long long v = std::strtoll(token.c_str(), &end, 10);
    if (errno == ERANGE) {
      out->type_ = JsonValue::Type::kBigInteger;
      out->text_ = token;
      return Status::Ok();
    }
    *out = JsonValue::Integer(static_cast<int64_t>(v));
    return Status::Ok();
  }

  bool ReadHex4(uint32_t *v) {
    if (pos_ + 4 > s_.size()) return false;
    uint32_t r = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[pos_ + k];
      r <<= 4;
      if (h >= '0' && h <= '9') {
        r |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        r |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        r |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return false;
      }
    }
    pos_ += 4;
    *v = r;
    return true;
  }

  Status ParseString(std::string *out) {
    ++pos_;  // opening quote
    out->clear();
    while (true) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (c < 0x20) return Fail("a control character inside a string");
      if (c != '\\') {
        uint32_t cp;
        size_t p = pos_;
        DecodeUtf8(s_, &p, &cp, false);  // validated up front
        out->append(s_, pos_, p - pos_);
        pos_ = p;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return Fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!ReadHex4(&cp)) return Fail("invalid \\u escape");
          // A high surrogate followed by an escaped low surrogate is one code point, as in
          // Python; any other surrogate stays a lone code point.
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.compare(pos_, 2, "\\u") == 0) {
            const size_t save = pos_;
            pos_ += 2;
            uint32_t lo;
            if (ReadHex4(&lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              pos_ = save;
            }
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Fail("invalid escape");
      }
    }
  }

  Status ParseArray(JsonValue *out, int depth) {
    ++pos_;
    out->type_ = JsonValue::Type::kArray;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      out->items_.emplace_back();
      Status st = ParseValue(&out->items_.back(), depth);
      if (!st.ok()) return st;
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return Status::Ok();
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  Status ParseObject(JsonValue *out, int depth) {
    ++pos_;
    out->type_ = JsonValue::Type::kObject;
    std::unordered_set<std::string> seen;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a string key in an object");
      std::string key;
      Status st = ParseString(&key);
      if (!st.ok()) return st;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':' after an object key");
      ++pos_;
      SkipSpace();
      JsonValue value;
      st = ParseValue(&value, depth);
      if (!st.ok()) return st;
      if (!seen.insert(key).second && !has_duplicate_) {
        has_duplicate_ = true;
        duplicate_ = key;
      }
      out->members_.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return Status::Ok();
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

 public:
  bool has_duplicate_ = false;  // the first repeated key, reported after a clean parse
  std::string duplicate_;

 private:
  const std::string &s_;
  const int max_depth_;
  size_t pos_ = 0;
};

Status ParseJson(const std::string &text, JsonValue *out, int max_depth) {
  JsonParser parser(text, max_depth);
  JsonValue value;
  Status st = parser.Parse(&value);
  if (!st.ok()) return st;
  if (parser.has_duplicate_) {
    return Status::Error("duplicate_key", "an object repeats the key " + QuoteJsonString(parser.duplicate_) +
                                              "; each key may appear once");
  }
  *out = std::move(value);
  return Status::Ok();
}

std::string QuoteJsonString(const std::string &utf8) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  auto u4 = [&](uint32_t v) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(v >> shift) & 0xF]);
  };
  for (size_t p = 0; p < utf8.size();) {
    uint32_t cp;
    if (!DecodeUtf8(utf8, &p, &cp, true)) {  // not produced by the reader; be safe anyway
      cp = 0xFFFD;
      ++p;
    }
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (cp >= 0x20 && cp <= 0x7E) {
          out.push_back(static_cast<char>(cp));
        } else if (cp >= 0x10000) {
          const uint32_t v = cp - 0x10000;
          u4(0xD800 + (v >> 10));
          u4(0xDC00 + (v & 0x3FF));
        } else {
          u4(cp);
        }
    }
  }
  out.push_back('"');
  return out;
}

namespace {
void Dump(const JsonValue &v, std::string *out) {
  switch (v.type()) {
    case JsonValue::Type::kNull: *out += "null"; return;
    case JsonValue::Type::kBool: *out += v.bool_value() ? "true" : "false"; return;
    case JsonValue::Type::kInteger: *out += std::to_string(v.int_value()); return;
    case JsonValue::Type::kBigInteger:
    case JsonValue::Type::kFloat: *out += v.number_text(); return;
    case JsonValue::Type::kString: *out += QuoteJsonString(v.string_value()); return;
    case JsonValue::Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const auto &item : v.items()) {
        if (!first) out->push_back(',');
        first = false;
        Dump(item, out);
      }
      out->push_back(']');
      return;
    }
    case JsonValue::Type::kObject: {
      std::vector<const std::pair<std::string, JsonValue> *> sorted;
      for (const auto &m : v.members()) sorted.push_back(&m);
      // Byte order of UTF-8 equals code-point order, which is Python's str order.
      std::sort(sorted.begin(), sorted.end(), [](const auto *a, const auto *b) { return a->first < b->first; });
      out->push_back('{');
      bool first = true;
      for (const auto *m : sorted) {
        if (!first) out->push_back(',');
        first = false;
        *out += QuoteJsonString(m->first);
        out->push_back(':');
        Dump(m->second, out);
      }
      out->push_back('}');
      return;
    }
  }
}
}  // namespace

std::string DumpNormalized(const JsonValue &value) {
  std::string out;
  Dump(value, &out);
  return out;
}

}  // namespace core
}  // namespace tf_ge_custom
