// The real process runner against /bin/sh: exit status and output, the environment, a
// timeout that ends the program and everything it started, a child left holding the pipe,
// long output, a program that cannot start, the tail of a log as error messages quote it;
// and, as real processes, the child's hygiene: no inherited descriptor, death with a killed
// parent, an interrupt of the parent's group reaching it, output lines while it runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/process_runner.h"

using namespace tf_ge_custom::core;

namespace {

ProcessSpec Shell(const std::string &script, int64_t timeout_ms = 20000) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.timeout_ms = timeout_ms;
  return spec;
}

std::string ReadAll(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Running (not a zombie and not gone), from /proc/<pid>/stat.
bool Running(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' && text[paren + 2] != 'X';
}

bool GoneWithin(pid_t pid, int ms) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (!Running(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !Running(pid);
}

// The pid a child wrote into path, waiting up to ms for it; 0 when none came.
pid_t WaitForPid(const std::string &path, int ms) {
  for (int waited = 0; waited < ms; waited += 20) {
    const std::string text = ReadAll(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// waitpid with a limit: true when pid ended within ms (its status in *status).
bool WaitWithin(pid_t pid, int ms, int *status) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return waitpid(pid, status, WNOHANG) == pid;
}

void WriteFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

}  // namespace

TEST(ProcessRunner, NoDescriptorButTheStandardThreeReachesTheChild) {
  // Finding 3: GE's, the driver's and the log's descriptors stay out of the builder. These
  // two are inheritable on purpose (no O_CLOEXEC), as a library's descriptors may be.
  const int leaked = open("/dev/null", O_RDONLY);
  int pipe_fds[2] = {-1, -1};
  REQUIRE_TRUE(leaked >= 0 && pipe(pipe_fds) == 0);
  PosixProcessRunner runner;
  auto r = runner.Run(Shell("ls /proc/$$/fd"));  // the shell's descriptors, as ls (its child) sees them
  close(leaked);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  REQUIRE_OK(r);
  CHECK_TRUE(r.value().ok());
  CHECK_EQ(r.value().output_tail, std::string("0\n1\n2\n"));
}

TEST(ProcessRunner, AParentKilledMidRunLeavesNoChild) {
  test_support::TempDir dir;
  const std::string pidfile = dir.path() + "/child.pid";
  const pid_t parent = fork();
  REQUIRE_TRUE(parent >= 0);
  if (parent == 0) {  // the "GE process": runs a long child, then is killed
    PosixProcessRunner runner;
    auto ignored = runner.Run(Shell("echo $$ > " + pidfile + "; exec sleep 30", 60000));
    _exit(ignored.ok() ? 0 : 1);
  }
  const pid_t child = WaitForPid(pidfile, 5000);
  REQUIRE_TRUE(child > 0);
  CHECK_TRUE(Running(child));
  kill(parent, SIGKILL);
  int status = 0;
  CHECK_TRUE(WaitWithin(parent, 5000, &status));
  const bool gone = GoneWithin(child, 3000);
  CHECK_TRUE(gone);
  if (!gone) kill(child, SIGKILL);
}

TEST(ProcessRunner, AnInterruptOfTheParentsGroupReachesTheChild) {
  test_support::TempDir dir;
  const std::string pidfile = dir.path() + "/child.pid";
  const std::string outcome = dir.path() + "/outcome";
  const pid_t parent = fork();
  REQUIRE_TRUE(parent >= 0);
  if (parent == 0) {
    setpgid(0, 0);              // a group of its own, as a terminal's foreground job has
    signal(SIGINT, SIG_IGN);    // the parent survives the interrupt (TF's Python defers it)
    PosixProcessRunner runner;
    auto r = runner.Run(Shell("echo $$ > " + pidfile + "; exec sleep 30", 8000));
    WriteFile(outcome, r.ok() ? r.value().Describe() : r.status().message());
    _exit(0);
  }
  setpgid(parent, parent);  // either side may run first
  const pid_t child = WaitForPid(pidfile, 5000);
  REQUIRE_TRUE(child > 0);
  kill(-parent, SIGINT);  // Ctrl-C: the terminal signals the foreground group
  int status = 0;
  const bool ended = WaitWithin(parent, 12000, &status);
  if (!ended) kill(parent, SIGKILL);
  REQUIRE_TRUE(ended);
  CHECK_EQ(ReadAll(outcome).substr(0, 18), std::string("killed by signal 2"));
}

TEST(ProcessRunner, OutputLinesReachTheSinkWhileTheProgramRuns) {
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("echo one; sleep 0.5; echo two 1>&2; sleep 0.5; printf three");
  std::vector<std::pair<std::string, double>> lines;
  const auto started = std::chrono::steady_clock::now();
  spec.on_line = [&](const std::string &line) {
    lines.emplace_back(line, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  };
  auto r = runner.Run(spec);
  REQUIRE_OK(r);
  REQUIRE_EQ(lines.size(), size_t{3});
  CHECK_EQ(lines[0].first, std::string("one"));
  CHECK_EQ(lines[1].first, std::string("two"));
  CHECK_EQ(lines[2].first, std::string("three"));  // the last, unterminated line too
  CHECK_TRUE(lines[0].second < 0.45);               // before the program went on
  CHECK_TRUE(lines[2].second - lines[0].second >= 0.9);
}

TEST(ProcessRunner, ExitStatusAndBothStreamsReachTheTailAndTheLog) {
  test_support::TempDir dir;
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("echo to-stdout; echo to-stderr >&2; exit 3");
  spec.log_path = dir.path() + "/run.log";
  auto r = runner.Run(spec);
  REQUIRE_OK(r);
  CHECK_FALSE(r.value().ok());
  CHECK_FALSE(r.value().timed_out);
  CHECK_EQ(r.value().exit_code, 3);
  CHECK_EQ(r.value().signal, 0);
  CHECK_EQ(r.value().Describe(), std::string("exit status 3"));
  CHECK_TRUE(r.value().output_tail.find("to-stdout") != std::string::npos);
  CHECK_TRUE(r.value().output_tail.find("to-stderr") != std::string::npos);
  CHECK_EQ(ReadAll(spec.log_path), r.value().output_tail);
}

TEST(ProcessRunner, SuccessIsExitStatusZero) {
  PosixProcessRunner runner;
  auto r = runner.Run(Shell("exit 0"));
  REQUIRE_OK(r);
  CHECK_TRUE(r.value().ok());
  CHECK_EQ(r.value().output_tail, std::string());
}

TEST(ProcessRunner, EnvironmentIsInheritedWithOverridesOnTop) {
  setenv("TGC_INHERITED", "from-parent", 1);
  setenv("TGC_REPLACED", "old", 1);
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("echo \"$TGC_INHERITED/$TGC_REPLACED/$TGC_NEW\"");
  spec.env = {{"TGC_REPLACED", "new"}, {"TGC_NEW", "added"}};
  auto r = runner.Run(spec);
  REQUIRE_OK(r);
  CHECK_EQ(r.value().output_tail, std::string("from-parent/new/added\n"));
  unsetenv("TGC_INHERITED");
  unsetenv("TGC_REPLACED");
}

TEST(ProcessRunner, StdinIsEmptySoAReaderDoesNotWait) {
  PosixProcessRunner runner;
  auto r = runner.Run(Shell("cat; echo read-done", 10000));
  REQUIRE_OK(r);
  CHECK_FALSE(r.value().timed_out);
  CHECK_EQ(r.value().output_tail, std::string("read-done\n"));
}

TEST(ProcessRunner, TimeoutEndsTheProgramAndWhatItStarted) {
  test_support::TempDir dir;
  const std::string pidfile = dir.path() + "/grandchild.pid";
  PosixProcessRunner runner;
  // A child of the program (as hivmc is of the builder) that would outlive it.
  const auto started = std::chrono::steady_clock::now();
  auto r = runner.Run(Shell("sleep 60 & echo $! > " + pidfile + "; echo started; wait", 700));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE_OK(r);
  CHECK_TRUE(r.value().timed_out);
  CHECK_FALSE(r.value().ok());
  CHECK_TRUE(r.value().Describe().find("timed out after") == 0);
  CHECK_TRUE(seconds >= 0.7 && seconds < 5.0);
  CHECK_EQ(r.value().output_tail, std::string("started\n"));
  const std::string text = ReadAll(pidfile);
  REQUIRE_TRUE(!text.empty());
  CHECK_TRUE(GoneWithin(static_cast<pid_t>(std::stol(text)), 3000));
}

TEST(ProcessRunner, ATermIgnoringProgramIsKilledAfterTheGrace) {
  PosixProcessRunner runner;
  const auto started = std::chrono::steady_clock::now();
  auto r = runner.Run(Shell("trap '' TERM; echo stubborn; while :; do sleep 1; done", 300));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE_OK(r);
  CHECK_TRUE(r.value().timed_out);
  CHECK_TRUE(seconds < 6.0);
}

TEST(ProcessRunner, ALeftoverChildHoldingTheOutputIsNotWaitedFor) {
  test_support::TempDir dir;
  const std::string pidfile = dir.path() + "/leftover.pid";
  PosixProcessRunner runner;
  const auto started = std::chrono::steady_clock::now();
  auto r = runner.Run(Shell("sleep 60 & echo $! > " + pidfile + "; echo done; exit 0", 30000));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE_OK(r);
  CHECK_TRUE(r.value().ok());
  CHECK_TRUE(seconds < 8.0);
  CHECK_EQ(r.value().output_tail, std::string("done\n"));
  CHECK_TRUE(GoneWithin(static_cast<pid_t>(std::stol(ReadAll(pidfile))), 3000));
}

TEST(ProcessRunner, ASignalIsReportedAsSuch) {
  PosixProcessRunner runner;
  auto r = runner.Run(Shell("kill -KILL $$"));
  REQUIRE_OK(r);
  CHECK_EQ(r.value().signal, 9);
  CHECK_EQ(r.value().Describe(), std::string("killed by signal 9: Killed"));
}

TEST(ProcessRunner, LongOutputKeepsItsEndAndTheLogKeepsAll) {
  test_support::TempDir dir;
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("i=0; while [ $i -lt 4000 ]; do echo \"line $i of the builder output, padded to be long\"; "
                           "i=$((i+1)); done; echo LAST");
  spec.log_path = dir.path() + "/long.log";
  auto r = runner.Run(spec);
  REQUIRE_OK(r);
  const std::string &tail = r.value().output_tail;
  CHECK_EQ(tail.size(), kOutputTailBytes);
  CHECK_TRUE(tail.size() >= 5 && tail.substr(tail.size() - 5) == "LAST\n");
  const std::string log = ReadAll(spec.log_path);
  CHECK_TRUE(log.find("line 0 of") == 0);
  CHECK_EQ(log.substr(log.size() - tail.size()), tail);
}

TEST(ProcessRunner, AProgramThatCannotStartIsARefusalNamingIt) {
  PosixProcessRunner runner;
  ProcessSpec spec;
  spec.argv = {"/nonexistent/tf-ge-custom-python", "-c", "pass"};
  auto r = runner.Run(spec);
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().code(), Code::kRuntime);
  CHECK_EQ(r.status().api(), std::string("execve"));
  CHECK_TRUE(r.status().message().find("/nonexistent/tf-ge-custom-python") != std::string::npos);
}

TEST(ProcessRunner, AnUnwritableLogIsARefusal) {
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("exit 0");
  spec.log_path = "/nonexistent-folder/x.log";
  auto r = runner.Run(spec);
  REQUIRE_TRUE(!r.ok());
  CHECK_EQ(r.status().api(), std::string("open"));
}

TEST(ProcessRunner, TailLinesIsTheLastNonEmptyLinesOnOneLine) {
  CHECK_EQ(TailLines("a\n\n  b  \nc\r\nd\n", 3, 100), std::string("b | c | d"));
  CHECK_EQ(TailLines("a\nb\n", 5, 100), std::string("a | b"));
  CHECK_EQ(TailLines("", 5, 100), std::string());
  CHECK_EQ(TailLines("x\nRESULT {}\ny\nRESULT {\"ok\": 1}\n", 5, 100, "RESULT "), std::string("x | y"));
  const std::string long_line(1000, 'x');
  CHECK_EQ(TailLines("first\n" + long_line + "\n", 2, 1000),
           "first | " + std::string(kTailLineChars - 3, 'x') + "...");
  // "0123456789 | abcdefghij" cut to 12 characters from the end.
  CHECK_EQ(TailLines("0123456789\nabcdefghij\n", 2, 12), std::string("...bcdefghij"));
}
