// A minimal test harness for the core's native tests (no third-party framework to install).
// TEST(Suite, Name) registers a case; CHECK* records a failure and goes on, REQUIRE* also
// returns from the case. The runner prints one JSON line per case so that pytest
// (tests/ge/test_native_core.py) reports each case as its own test.
#ifndef TF_GE_CUSTOM_TESTS_TESTING_H_
#define TF_GE_CUSTOM_TESTS_TESTING_H_

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tf_ge_custom_core/status.h"

namespace testing {

struct Case {
  std::string name;
  std::function<void()> body;
};

std::vector<Case> &Registry();
void RecordFailure(const char *file, int line, const std::string &message);

struct Registrar {
  Registrar(const char *suite, const char *name, std::function<void()> body) {
    Registry().push_back({std::string(suite) + "." + name, std::move(body)});
  }
};

std::string Show(const std::string &v);
inline std::string Show(unsigned char v);
template <typename T>
std::string Show(const T &v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
std::string Show(const std::vector<unsigned char> &v);
std::string Show(const std::string &v);
template <typename T>
std::string Show(const std::vector<T> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Show(v[i]);
  return s + "]";
}
inline std::string Show(unsigned char v) { return std::to_string(static_cast<int>(v)); }
inline std::string Show(bool v) { return v ? "true" : "false"; }
inline std::string Show(tf_ge_custom::core::Code v) { return tf_ge_custom::core::CodeName(v); }

template <typename A, typename B>
bool CheckEq(const A &a, const B &b, const char *ea, const char *eb, const char *file, int line) {
  if (a == b) return true;
  std::ostringstream os;
  os << ea << " == " << eb << " failed: " << Show(a) << " vs " << Show(b);
  RecordFailure(file, line, os.str());
  return false;
}


}  // namespace testing

#define TEST_JOIN2(a, b) a##b
#define TEST_JOIN(a, b) TEST_JOIN2(a, b)
#define TEST(suite, name)                                                                          \
  static void suite##_##name##_body();                                                             \
  static ::testing::Registrar TEST_JOIN(registrar_, __COUNTER__)(#suite, #name, suite##_##name##_body); \
  static void suite##_##name##_body()

#define CHECK_TRUE(cond) \
  ((cond) ? true : (::testing::RecordFailure(__FILE__, __LINE__, "expected true: " #cond), false))
#define CHECK_FALSE(cond) \
  (!(cond) ? true : (::testing::RecordFailure(__FILE__, __LINE__, "expected false: " #cond), false))
#define CHECK_EQ(a, b) ::testing::CheckEq((a), (b), #a, #b, __FILE__, __LINE__)
#define REQUIRE_TRUE(cond) \
  do {                     \
    if (!CHECK_TRUE(cond)) return; \
  } while (0)
#define REQUIRE_EQ(a, b) \
  do {                   \
    if (!CHECK_EQ(a, b)) return; \
  } while (0)
// A Status/Result that must be ok; on failure its message is the test's message.
#define REQUIRE_OK(expr)                                                                          \
  do {                                                                                            \
    const auto &tgc_st_ = (expr);                                                                 \
    if (!tgc_st_.ok()) {                                                                          \
      ::testing::RecordFailure(__FILE__, __LINE__, "not ok: " #expr ": " + ::tf_ge_custom::core::StatusOf(tgc_st_).ToString()); \
      return;                                                                                     \
    }                                                                                             \
  } while (0)

#endif  // TF_GE_CUSTOM_TESTS_TESTING_H_
