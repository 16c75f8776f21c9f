#include "tf_ge_custom_core/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

extern char **environ;

namespace tf_ge_custom {
namespace core {
namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int err) { return std::strerror(err); }

// The child's environment: ours, with spec.env set on top.
std::vector<std::string> ChildEnvironment(const ProcessSpec &spec) {
  std::map<std::string, std::string> overrides(spec.env.begin(), spec.env.end());
  std::vector<std::string> out;
  for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos && overrides.count(entry.substr(0, eq)) != 0) continue;
    out.push_back(entry);
  }
  for (const auto &kv : overrides) out.push_back(kv.first + "=" + kv.second);
  return out;
}

std::vector<char *> Pointers(std::vector<std::string> &strings) {
  std::vector<char *> p;
  for (auto &s : strings) p.push_back(&s[0]);
  p.push_back(nullptr);
  return p;
}

class Pipe {
 public:
  ~Pipe() { Close(); }
  bool Open() { return pipe2(fds_, O_CLOEXEC) == 0; }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void CloseWrite() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }
  void Close() {
    for (int &fd : fds_) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }

 private:
  int fds_[2] = {-1, -1};
};

// Whether pid has ended; fills the outcome when it has. ECHILD: someone else reaped it.
bool Reap(pid_t pid, bool block, ProcessOutcome *out) {
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, block ? 0 : WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) out->exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) out->signal = WTERMSIG(status);
      return true;
    }
    if (r == 0) return false;
    if (errno == EINTR) continue;
    out->exit_known = false;  // ECHILD: the process ignores SIGCHLD, so the kernel reaped it
    return true;
  }
}

}  // namespace

std::string ProcessOutcome::Describe() const {
  char seconds_text[32];
  std::snprintf(seconds_text, sizeof(seconds_text), "%.1f s", seconds);
  if (timed_out) return std::string("timed out after ") + seconds_text;
  if (!exit_known) return std::string("ended after ") + seconds_text + " (exit status not available)";
  if (signal != 0) {
    const char *name = strsignal(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(": ") + name : "");
  }
  return "exit status " + std::to_string(exit_code);
}

Result<ProcessOutcome> PosixProcessRunner::Run(const ProcessSpec &spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::Error(Code::kInternal, "no program to run");
  }
  int log_fd = -1;
  if (!spec.log_path.empty()) {
    log_fd = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return Status::ApiError("open", spec.log_path + ": " + ErrnoText(errno));
  }
  struct LogCloser {
    int fd;
    ~LogCloser() {
      if (fd >= 0) close(fd);
    }
  } log_closer{log_fd};

  Pipe out;
  if (!out.Open()) return Status::ApiError("pipe2", ErrnoText(errno));
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end(), 1);
  posix_spawn_file_actions_adddup2(&actions, out.write_end(), 2);
  // Its own process group (so a timeout reaches the builder's children too), no blocked
  // signals and default handlers for those GE may have changed.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGCHLD, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings = ChildEnvironment(spec);
  std::vector<char *> argv = Pointers(argv_strings);
  std::vector<char *> envp = Pointers(env_strings);
  const auto started = Clock::now();
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  out.CloseWrite();
  if (spawned != 0) {
    return Status::ApiError("posix_spawn", "cannot start " + spec.argv[0] + ": " + ErrnoText(spawned));
  }

  ProcessOutcome outcome;
  std::string tail;
  auto keep = [&](const char *data, size_t n) {
    if (log_fd >= 0) {
      size_t written = 0;
      while (written < n) {
        const ssize_t w = write(log_fd, data + written, n - written);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;  // a full disk must not stop the compile: the tail is still kept
        written += static_cast<size_t>(w);
      }
    }
    tail.append(data, n);
    if (tail.size() > 2 * kOutputTailBytes) tail.erase(0, tail.size() - kOutputTailBytes);
  };
  const auto deadline = started + std::chrono::milliseconds(spec.timeout_ms);
  bool exited = false, eof = false;
  Clock::time_point exited_at;
  char buffer[8192];
  while (!(eof && exited)) {
    const auto now = Clock::now();
    if (spec.timeout_ms > 0 && now >= deadline) {
      outcome.timed_out = !exited;
      break;
    }
    // The program has ended but something it started still holds the pipe: stop reading
    // after a short grace and end those too (below).
    if (exited && now - exited_at > std::chrono::seconds(2)) break;
    if (eof) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } else {
      pollfd p{out.read_end(), POLLIN, 0};
      const int ready = poll(&p, 1, 100);
      if (ready < 0 && errno != EINTR) {
        eof = true;
      } else if (ready > 0) {
        const ssize_t n = read(out.read_end(), buffer, sizeof(buffer));
        if (n > 0) {
          keep(buffer, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    }
    if (!exited && Reap(pid, false, &outcome)) {
      exited = true;
      exited_at = Clock::now();
    }
  }
  if (!exited) {
    // Timed out: the whole group gets SIGTERM, then SIGKILL after 2 s of grace. The
    // program is not reaped yet, so its group id cannot have been reused.
    kill(-pid, SIGTERM);
    const auto grace = Clock::now() + std::chrono::seconds(2);
    while (!(exited = Reap(pid, false, &outcome)) && Clock::now() < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(-pid, SIGKILL);
    if (!exited) Reap(pid, true, &outcome);
  } else if (!eof) {
    // Ended, but a process of its group still holds the pipe (so the group still exists).
    kill(-pid, SIGKILL);
  }
  // What is already in the pipe still belongs to the log.
  for (;;) {
    pollfd p{out.read_end(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    const ssize_t n = read(out.read_end(), buffer, sizeof(buffer));
    if (n <= 0) break;
    keep(buffer, static_cast<size_t>(n));
  }
  if (outcome.timed_out) {
    outcome.exit_code = -1;
    outcome.signal = 0;
  }
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (tail.size() > kOutputTailBytes) tail.erase(0, tail.size() - kOutputTailBytes);
  outcome.output_tail = std::move(tail);
  return outcome;
}

std::string TailLines(const std::string &text, size_t max_lines, size_t max_chars, const std::string &skip_prefix) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    for (char &c : line) {
      if (c == '\r' || c == '\t') c = ' ';
    }
    const size_t first = line.find_first_not_of(' ');
    const size_t last = line.find_last_not_of(' ');
    line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
    if (line.size() > kTailLineChars) line = line.substr(0, kTailLineChars - 3) + "...";
    if (!line.empty() && (skip_prefix.empty() || line.compare(0, skip_prefix.size(), skip_prefix) != 0)) {
      lines.push_back(line);
    }
    start = end + 1;
  }
  std::string out;
  const size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  if (out.size() > max_chars) out = "..." + out.substr(out.size() - (max_chars > 3 ? max_chars - 3 : 0));
  return out;
}

}  // namespace core
}  // namespace tf_ge_custom
