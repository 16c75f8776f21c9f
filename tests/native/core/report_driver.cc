// What GE's error manager keeps of the GE library's failure reports: ge_ops/cann/ge_report.cc
// built against metadef's real error_manager.h with the GE-in-the-loop error-manager stand-in
// (tests/native/ge_in_loop/stand_ins/src/error_manager.cc, which drops what LIMIT_PER_MESSAGE does
// not hold, as metadef's manager does). Built and run by tests/ge/test_ge_report.py, not by
// CMake (it needs the snapshot's header).
//
// stdin: records separated by 0x1e, each "op 0x1f node 0x1f soc 0x1f message": ReportFailure
// of that failure; an op of "RAW" sends the message itself through REPORT_INNER_ERROR. stdout,
// per record: "KEPT <code> <message> <location>" per report kept (each field in hex),
// "DROPPED <bytes>" per report dropped, then "END". The full lines go to stderr.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "common/util/error_manager/error_manager.h"
#include "error_manager_stand_in.h"
#include "ge_report.h"

namespace {

std::vector<std::string> Split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::string Hex(const std::string &bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out.empty() ? "-" : out;
}

}  // namespace

int main() {
  const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  for (const std::string &record : Split(input, '\x1e')) {
    const std::vector<std::string> f = Split(record, '\x1f');
    if (f.size() != 4) {
      std::fprintf(stderr, "report_driver: a record needs 4 fields, got %zu\n", f.size());
      return 2;
    }
    if (f[0] == "RAW") {
      REPORT_INNER_ERROR("EZ9999", "%s", f[3].c_str());
    } else {
      tf_ge_custom::cann::ReportFailure(tf_ge_custom::cann::Failure{f[0], f[1], f[2], f[3]});
    }
    for (const auto &r : error_manager_stand_in::Take()) {
      std::printf("KEPT %s %s %s\n", Hex(r.error_code).c_str(), Hex(r.message).c_str(), Hex(r.location).c_str());
    }
    for (size_t bytes : error_manager_stand_in::TakeDropped()) std::printf("DROPPED %zu\n", bytes);
    std::printf("END\n");
    std::fflush(stdout);
    std::fflush(stderr);
  }
  return 0;
}
