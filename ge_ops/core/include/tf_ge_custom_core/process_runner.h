// Running a child process from inside GE, behind a small interface: the kernel compiler
// (kernel_compiler.h) starts the package's Python builder through it, and tests replace it.
//
// The real runner (PosixProcessRunner) starts the program with posix_spawn (safe in GE's
// many-threaded process, unlike fork), in a process group of its own, stdin from /dev/null,
// stdout and stderr into one pipe; it keeps the last bytes of that output, copies all of it
// to a log file when asked, and enforces a timeout by terminating the whole group (the
// builder runs bishengir-compile and hivmc as its own children).
#ifndef TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_
#define TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program's path (no PATH search)
  // Set (or replace) in the child's environment, which is otherwise this process's.
  std::vector<std::pair<std::string, std::string>> env;
  int64_t timeout_ms = 0;   // > 0: terminate the process group when it runs longer
  std::string log_path;     // non-empty: all output is appended to this file too
};

struct ProcessOutcome {
  bool timed_out = false;
  bool exit_known = true;  // false: the exit status was reaped elsewhere (SIGCHLD ignored)
  int exit_code = -1;      // when the program exited
  int signal = 0;          // when a signal ended it
  double seconds = 0;
  std::string output_tail;  // the last kOutputTailBytes of stdout and stderr, interleaved
  bool ok() const { return !timed_out && exit_known && signal == 0 && exit_code == 0; }
  std::string Describe() const;  // "exit status 3", "killed by signal 9", "timed out after 2.0 s"
};

constexpr size_t kOutputTailBytes = 64 * 1024;

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // A refusal (kRuntime, api() names the failing call) only when the program could not be
  // started or watched; whatever the program does is in the outcome.
  virtual Result<ProcessOutcome> Run(const ProcessSpec &spec) = 0;
};

class PosixProcessRunner : public ProcessRunner {
 public:
  Result<ProcessOutcome> Run(const ProcessSpec &spec) override;
};

// The last max_lines non-empty lines of text (without lines starting with skip_prefix, when
// it is non-empty), each trimmed and cut to kTailLineChars, joined with " | ", at most
// max_chars (cut at the front): a long last line cannot push the others out.
constexpr size_t kTailLineChars = 240;
std::string TailLines(const std::string &text, size_t max_lines, size_t max_chars,
                      const std::string &skip_prefix = "");

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_
