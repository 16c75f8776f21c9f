// Running a child process from inside GE, behind a small interface: the kernel compiler
// (kernel_compiler.h) starts the package's Python builder through it, and tests replace it.
//
// The real runner (PosixProcessRunner) starts the program with vfork + execve (the child
// calls only async-signal-safe functions before the exec, as posix_spawn does, so it is safe
// in GE's many-threaded process), stdin from /dev/null, stdout and stderr into one pipe, and
// in the child before the exec:
//   - every descriptor but 0, 1 and 2 closed, so Python, bishengir and hivmc hold none of GE's,
//     the driver's or the log's descriptors: close_range where the kernel has it, else one
//     close per descriptor listed in /proc/self/fd (never a loop up to RLIMIT_NOFILE, which
//     can be 2^30 in a container while vfork holds the calling thread);
//   - PR_SET_PDEATHSIG(SIGKILL): the child dies with the thread that started it (a killed
//     parent leaves no builder behind);
//   - the parent's process group kept: an interrupt of the parent's group (Ctrl-C in a
//     terminal) reaches the child and everything it starts;
//   - no blocked signals, default handlers for SIGPIPE/SIGTERM/SIGINT/SIGCHLD/SIGHUP and for
//     every signal the parent catches.
// The child's environment carries a token (kProcessTokenEnv) that its own children inherit:
// a timeout ends the whole tree (the child, its descendants and any process still holding
// the token), SIGTERM first and SIGKILL after 2 s. Output lines are handed to
// ProcessSpec::on_line as they arrive, kept in a tail, and copied to a log file when asked.
// Its pipes never take descriptors 0, 1 or 2, even when the host process has them closed.
#ifndef TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_
#define TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_

#include <cstdint>
#include <functional>
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
  // Called with each output line (without its newline, at most kLineChars) as it arrives,
  // on the calling thread.
  std::function<void(const std::string &)> on_line;
};

constexpr const char *kProcessTokenEnv = "TF_GE_CUSTOM_CHILD_TOKEN";
constexpr size_t kLineChars = 1000;

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

namespace child_process {

// Where neither close_range nor /proc/self/fd is there, the child closes each number below
// min(RLIMIT_NOFILE, this): descriptors at or above it would stay open.
constexpr long kMaxDescriptorsWithoutProc = 65536;

// What the child runs between vfork and execve: closes every descriptor but 0, 1, 2 and keep,
// calling only async-signal-safe functions and allocating nothing (close_range; else the
// listing of fd_dir read with getdents64; else one close per number up to the bound above).
// Returns the number of close and close_range calls made. Exposed for tests, which call it in
// a forked child only; the build of the child-start tests compiles the close_range path out
// (TF_GE_CUSTOM_CLOSE_RANGE=0).
long CloseInheritedDescriptors(int keep, const char *fd_dir = "/proc/self/fd");

}  // namespace child_process

// The last max_lines non-empty lines of text (without lines starting with skip_prefix, when
// it is non-empty), each trimmed and cut to kTailLineChars, joined with " | ", at most
// max_chars (cut at the front): a long last line cannot push the others out.
constexpr size_t kTailLineChars = 240;
std::string TailLines(const std::string &text, size_t max_lines, size_t max_chars,
                      const std::string &skip_prefix = "");

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_PROCESS_RUNNER_H_
