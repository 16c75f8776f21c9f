// Runs the registered cases: `--list` prints their names; otherwise each case runs and one
// JSON line {"name": ..., "passed": bool, "failures": [...]} is printed per case, then a
// closing "N passed, N failed" line. `--filter SUBSTRING` runs matching cases only.
#include <cstdio>
#include <cstring>
#include <iostream>

#include <nlohmann/json.hpp>

#include "testing.h"

namespace testing {

std::vector<Case> &Registry() {
  static std::vector<Case> cases;
  return cases;
}

static std::vector<std::string> *g_failures = nullptr;

void RecordFailure(const char *file, int line, const std::string &message) {
  const char *base = std::strrchr(file, '/');
  std::string where = std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": ";
  if (g_failures != nullptr) g_failures->push_back(where + message);
}

std::string Show(const std::vector<unsigned char> &v) {
  static const char kHex[] = "0123456789abcdef";
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += i % 8 == 0 ? " | " : " ";
    s += kHex[v[i] >> 4];
    s += kHex[v[i] & 15];
  }
  return s + "]";
}
std::string Show(const std::string &v) { return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace testing

int main(int argc, char **argv) {
  // --filter TEXT, repeatable: only the cases whose name holds one of the texts
  std::vector<std::string> filters;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const auto &c : testing::Registry()) std::cout << c.name << "\n";
      return 0;
    }
    if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) filters.push_back(argv[++i]);
  }
  const auto chosen = [&filters](const std::string &name) {
    if (filters.empty()) return true;
    for (const auto &f : filters) {
      if (name.find(f) != std::string::npos) return true;
    }
    return false;
  };
  int passed = 0, failed = 0;
  for (const auto &c : testing::Registry()) {
    if (!chosen(c.name)) continue;
    std::vector<std::string> failures;
    testing::g_failures = &failures;
    try {
      c.body();
    } catch (const std::exception &e) {
      failures.push_back(std::string("uncaught exception: ") + e.what());
    }
    testing::g_failures = nullptr;
    const nlohmann::json line = {{"name", c.name}, {"passed", failures.empty()}, {"failures", failures}};
    std::cout << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
    (failures.empty() ? passed : failed)++;
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
