// GE in the loop: what GE's error manager keeps of the GE library's reports. metadef's manager
// drops a report whose text and appended location do not fit LIMIT_PER_MESSAGE (1024 bytes;
// the error-manager stand-in drops it as GE's own stand-in does), so the library sends one
// short line (ge_ops/cann/ge_report.cc) and writes the full text to stderr.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/util/error_manager/error_manager.h"
#include "error_manager_stand_in.h"
#include "harness.h"
#include "testing.h"

using namespace harness;

namespace {

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The path after "builder log " in a report, up to the next "; ".
std::string LogNamedIn(const std::string &report) {
  const std::string marker = "; builder log ";
  const size_t at = report.find(marker);
  if (at == std::string::npos) return std::string();
  const size_t start = at + marker.size();
  return report.substr(start, report.find("; ", start) - start);
}

}  // namespace

TEST(ErrorReports, TheStandInKeepsWhatFitsLimitPerMessageAndDropsTheRest) {
  // The rule of the real header's LIMIT_PER_MESSAGE: text + location + NUL within 1024 bytes.
  (void)error_manager_stand_in::Take();
  (void)error_manager_stand_in::TakeDropped();
  REPORT_INNER_ERROR("EZ9999", "%s", "short");
  const std::vector<error_manager_stand_in::Report> kept = error_manager_stand_in::Take();
  REQUIRE_EQ(kept.size(), size_t{1});
  const size_t location = kept[0].location.size();
  CHECK_TRUE(location > 20 && kept[0].location.find("[FILE:error_report_tests.cc]") != std::string::npos);
  // The same call site (same location length): the longest text kept, and one byte more.
  for (size_t extra : {size_t{0}, size_t{1}}) {
    const std::string text(LIMIT_PER_MESSAGE - 1 - location + extra, 'r');
    REPORT_INNER_ERROR("EZ9999", "%s", text.c_str());
  }
  const std::vector<error_manager_stand_in::Report> edge = error_manager_stand_in::Take();
  REQUIRE_EQ(edge.size(), size_t{1});
  CHECK_EQ(edge[0].message.size(), LIMIT_PER_MESSAGE - 1 - edge[0].location.size());
  CHECK_EQ(error_manager_stand_in::TakeDropped(), std::vector<size_t>{LIMIT_PER_MESSAGE});
}

TEST(ErrorReports, ALongCompileFailureArrivesAsOneShortLineNamingTheBuildersLog) {
  // The builder double fails with 5 lines of 300 characters and a 700-character error: the
  // full message (the error, the builder, the log's last lines) is well over 1024 bytes.
  const char *cache_dir = std::getenv("TF_GE_CUSTOM_CACHE_DIR");
  REQUIRE_TRUE(P().have_package && cache_dir != nullptr);
  const std::string mode = std::getenv("TF_GE_CUSTOM_DOUBLE_MODE") ? std::getenv("TF_GE_CUSTOM_DOUBLE_MODE") : "";
  setenv("TF_GE_CUSTOM_DOUBLE_MODE", "fail_long", 1);
  // A deep node name, as Keras scopes make them (300 bytes).
  std::string node = "model/encoder";
  while (node.size() < 290) node += "/block_" + std::to_string(node.size());
  node += "/add_custom";
  // No NpuArch: no packaged SoC of the same architecture serves it, so Compile runs the builder.
  InstallPlatform(kCompiledSoc, "", 0, "");
  auto op = PulledOp();
  REQUIRE_TRUE(op != nullptr);  // the library lists AddCustom in its own pull registry
  (void)error_manager_stand_in::Take();
  (void)error_manager_stand_in::TakeDropped();
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = Compile(op.get(), ge::DT_INT32, ge::DT_INT32, node); });
  setenv("TF_GE_CUSTOM_DOUBLE_MODE", mode.c_str(), 1);
  InstallPlatform(kSoc, "");
  CHECK_EQ(st, ge::GRAPH_FAILED);
  const std::vector<error_manager_stand_in::Report> reports = error_manager_stand_in::Take();
  CHECK_EQ(error_manager_stand_in::TakeDropped(), std::vector<size_t>{});
  REQUIRE_EQ(reports.size(), size_t{1});
  const std::string &r = reports[0].message;
  CHECK_EQ(reports[0].error_code, std::string("EZ9999"));
  CHECK_TRUE(r.size() + reports[0].location.size() + 1 <= LIMIT_PER_MESSAGE);
  CHECK_TRUE(r.find('\n') == std::string::npos);
  CHECK_TRUE(Contains(r, "[tf-ge-custom] AddCustom node ..."));
  CHECK_TRUE(Contains(r, "/add_custom (SoC " + std::string(kCompiledSoc) + "): "));
  CHECK_TRUE(Contains(r, "cannot compile the AddCustom kernels for SoC " + std::string(kCompiledSoc) +
                             ", dtype int32: the double failed on purpose: a long explanation"));
  CHECK_TRUE(Contains(r, "; full text on stderr"));
  // The log it names is the builder's, kept because the compile failed, with every line.
  const std::string log = LogNamedIn(r);
  CHECK_TRUE(log.compare(0, std::string(cache_dir).size(), cache_dir) == 0);
  CHECK_TRUE(Contains(ReadFile(log), "LAST-LINE-END"));
  // The full text is on stderr: the whole error, the builder and the log's last lines.
  std::string whole_error = "the double failed on purpose: ";
  for (int i = 0; i < 33; ++i) whole_error += "a long explanation, ";
  CHECK_TRUE(Contains(err, "[tf-ge-custom] AddCustom node " + node + " (SoC " + kCompiledSoc + "): "));
  CHECK_TRUE(Contains(err, whole_error));
  CHECK_TRUE(Contains(err, "(builder: ") && Contains(err, "; the log " + log + " ends: "));
  CHECK_TRUE(Contains(err, "bishengir-compile (double) line 4"));
  // GE's log (here the logger stand-in, on stderr) has the full line too, in numbered pieces.
  std::istringstream lines(err);
  std::string line, full, pieces;
  while (std::getline(lines, line)) {
    if (line.compare(0, 30, "[tf-ge-custom] AddCustom node ") == 0) full = line;
    // GELOGE's "<tid> <function>: ErrorNo: <code>(<name>)" and then ge_report.cc's "(i/n) <piece>"
    const size_t at = line.find(" LogError: ErrorNo: ");
    const size_t numbered = at == std::string::npos ? at : line.find(")(", at);
    const size_t close = numbered == std::string::npos ? numbered : line.find(") ", numbered + 2);
    if (line.compare(0, 17, "[GE stand-in log]") == 0 && close != std::string::npos) pieces += line.substr(close + 2);
  }
  if (Contains(r, "in GE's log")) CHECK_EQ(pieces, full);
  CHECK_TRUE(full.size() > LIMIT_PER_MESSAGE);
}

TEST(ErrorReports, AnExecuteRefusalOnANodeOfTwoThousandBytesStillArrives) {
  std::string node(2000, 'n');
  node += "/tail_of_the_node";
  (void)error_manager_stand_in::Take();
  (void)error_manager_stand_in::TakeDropped();
  EagerCall call({3}, {4}, ge::DT_FLOAT, ge::DT_FLOAT, node);
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(OnFreshDevice());
  ge::graphStatus st = ge::GRAPH_SUCCESS;
  const std::string err = CaptureStderr([&] { st = op->Execute(call.ctx()); });
  CHECK_EQ(st, ge::GRAPH_FAILED);
  const std::vector<error_manager_stand_in::Report> reports = error_manager_stand_in::Take();
  CHECK_EQ(error_manager_stand_in::TakeDropped(), std::vector<size_t>{});
  REQUIRE_EQ(reports.size(), size_t{1});
  CHECK_TRUE(Contains(reports[0].message, "/tail_of_the_node: "));
  CHECK_TRUE(Contains(reports[0].message, "[3]") && Contains(reports[0].message, "[4]"));
  CHECK_TRUE(Contains(err, "node " + node + ": "));  // the whole name on stderr
}
