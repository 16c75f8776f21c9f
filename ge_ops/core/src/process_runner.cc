#include "tf_ge_custom_core/process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/trust.h"

extern char **environ;

// 1: close the child's descriptors with close_range where the kernel has it (Linux 5.9+), else
// by listing them. 0: always list them, as on kernel 4.19 (EulerOS, openEuler, Ubuntu 18.04):
// the build of the child-start tests sets it (ge_ops/CMakeLists.txt).
#ifndef TF_GE_CUSTOM_CLOSE_RANGE
#define TF_GE_CUSTOM_CLOSE_RANGE 1
#endif

namespace tf_ge_custom {
namespace core {
namespace child_process {
namespace {

// The kernel's record of one directory entry (getdents64); the name follows, NUL-terminated.
struct DirectoryEntry {
  uint64_t inode;
  int64_t offset;
  unsigned short length;
  unsigned char type;
  char name[1];
};

// A descriptor's number from its /proc/self/fd entry name; -1 for "." and "..".
int DescriptorNumber(const char *name) {
  if (name[0] < '0' || name[0] > '9') return -1;
  long fd = 0;
  for (const char *c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || fd > (1L << 31)) return -1;
    fd = fd * 10 + (*c - '0');
  }
  return fd <= 0x7FFFFFFF ? static_cast<int>(fd) : -1;
}

}  // namespace

long CloseInheritedDescriptors(int keep, const char *fd_dir) {
  long calls = 0;
#if TF_GE_CUSTOM_CLOSE_RANGE && defined(SYS_close_range)
  {
    const unsigned int k = static_cast<unsigned int>(keep);
    bool closed = true;
    if (k > 3) {
      ++calls;
      closed = syscall(SYS_close_range, 3u, k - 1, 0u) == 0;
    }
    if (closed) {
      ++calls;
      closed = syscall(SYS_close_range, k + 1, ~0u, 0u) == 0;
    }
    if (closed) return calls;  // else ENOSYS (an older kernel): list them
  }
#endif
  // Only what is open: its own fd folder lists the child's table (its copy, made at the vfork).
  int dir = open(fd_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 && errno == EMFILE) {
    // Every number below the limit is taken, 3 and 4 among them: one is freed to look.
    ++calls;
    close(keep == 3 ? 4 : 3);
    dir = open(fd_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (dir >= 0) {
    alignas(8) char buffer[4096];
    long got = 0;
    // Entries come in descriptor order, and closing one already read moves none still to come.
    while ((got = syscall(SYS_getdents64, dir, buffer, sizeof(buffer))) > 0) {
      for (long at = 0; at < got;) {
        const DirectoryEntry *entry = reinterpret_cast<const DirectoryEntry *>(buffer + at);
        at += entry->length;
        const int fd = DescriptorNumber(entry->name);
        if (fd >= 3 && fd != keep && fd != dir) {
          ++calls;
          close(fd);
        }
      }
    }
    close(dir);
    if (got == 0) return calls;  // else a listing cut short: the bounded loop below as well
  }
  // Neither close_range nor /proc (or a failed listing): one close per number, up to the
  // limit but never past kMaxDescriptorsWithoutProc, so a limit of 2^30 cannot stall here.
  struct rlimit rl;
  rlim_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : kMaxDescriptorsWithoutProc;
  if (limit == RLIM_INFINITY || limit > kMaxDescriptorsWithoutProc) limit = kMaxDescriptorsWithoutProc;
  for (long fd = 3; fd < static_cast<long>(limit); ++fd) {
    if (fd == keep) continue;
    ++calls;
    close(static_cast<int>(fd));
  }
  return calls;
}

}  // namespace child_process

namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int err) { return std::strerror(err); }

// The child's environment: ours, with spec.env set on top.
std::vector<std::string> ChildEnvironment(const ProcessSpec &spec, const std::string &token) {
  std::map<std::string, std::string> overrides(spec.env.begin(), spec.env.end());
  overrides[kProcessTokenEnv] = token;
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

// A token no other child of this or another process carries.
std::string NewToken() {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-" + std::to_string(now);
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
  // Both ends above 2: in a host process with stdin, stdout or stderr closed, pipe2 hands out
  // those numbers, and the child's dup2 onto 0, 1 and 2 would overwrite an end.
  bool Open() {
    if (pipe2(fds_, O_CLOEXEC) != 0) return false;
    for (int &fd : fds_) {
      if (fd > 2) continue;
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
      const int err = errno;
      close(fd);
      fd = moved;
      if (moved < 0) {
        Close();
        errno = err;
        return false;
      }
    }
    return true;
  }
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

// Every process of ours descending from root (by /proc/<pid>/stat's parent), and every one
// whose environment holds the token (descendants whose parent has ended), root excluded.
std::set<pid_t> ProcessTree(pid_t root, const std::string &token) {
  std::map<pid_t, pid_t> parent;
  std::set<pid_t> tree;
  const std::string marker = std::string(kProcessTokenEnv) + "=" + token;
  DIR *proc = opendir("/proc");
  if (proc == nullptr) return tree;
  const pid_t self = getpid();
  while (dirent *d = readdir(proc)) {
    char *end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (end == d->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    std::ifstream stat(std::string("/proc/") + d->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close_paren = text.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(text.substr(close_paren + 1));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    parent[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
    std::ifstream env(std::string("/proc/") + d->d_name + "/environ");
    std::string entry;
    while (std::getline(env, entry, '\0')) {
      if (entry == marker) {
        tree.insert(static_cast<pid_t>(pid));
        break;
      }
    }
  }
  closedir(proc);
  bool grew = true;
  std::set<pid_t> roots = {root};
  while (grew) {
    grew = false;
    for (const auto &kv : parent) {
      if ((roots.count(kv.second) != 0 || tree.count(kv.second) != 0) && tree.insert(kv.first).second) grew = true;
    }
  }
  tree.erase(root);
  return tree;
}

void SignalAll(const std::set<pid_t> &pids, int sig) {
  for (pid_t p : pids) kill(p, sig);
}

// In the vfork child: only async-signal-safe calls, no allocation, then execve.
[[noreturn]] void ExecChild(char *const argv[], char *const envp[], int out_fd, int error_fd, pid_t parent) {
  // Handlers the parent installed would run in the child (it shares their memory until the
  // exec): back to the default first, then the signals unblocked.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa;
    if (sigaction(sig, nullptr, &sa) != 0) continue;
    const bool reset_always = sig == SIGPIPE || sig == SIGTERM || sig == SIGINT || sig == SIGCHLD || sig == SIGHUP;
    if (reset_always || (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)) {
      struct sigaction dfl;
      std::memset(&dfl, 0, sizeof(dfl));
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(sig, &dfl, nullptr);
    }
  }
  int err = 0;
  // Dies with the thread that started it; if that already happened, do not run at all.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    err = errno != 0 ? errno : ESRCH;
  }
  const int null_fd = err == 0 ? open("/dev/null", O_RDONLY) : -1;
  if (err == 0 && null_fd < 0) err = errno;
  if (err == 0 && (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)) err = errno;
  if (err == 0) {
    // Every descriptor but 0, 1, 2 and the (close-on-exec) error pipe.
    (void)child_process::CloseInheritedDescriptors(error_fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv, envp);
    err = errno;
  }
  ssize_t ignored = write(error_fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
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
    // Never through a link planted where the log goes (files.h).
    const Status opened = OpenForWriting(spec.log_path, O_APPEND, kPrivateRecordMode, &log_fd);
    if (!opened.ok()) return Status::ApiError("open", opened.message());
  }
  struct LogCloser {
    int fd;
    ~LogCloser() {
      if (fd >= 0) close(fd);
    }
  } log_closer{log_fd};

  Pipe out;
  if (!out.Open()) return Status::ApiError("pipe2", ErrnoText(errno));
  Pipe exec_error;  // the child writes errno here when the exec fails; closed by the exec
  if (!exec_error.Open()) return Status::ApiError("pipe2", ErrnoText(errno));

  const std::string token = NewToken();
  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings = ChildEnvironment(spec, token);
  std::vector<char *> argv = Pointers(argv_strings);
  std::vector<char *> envp = Pointers(env_strings);
  const auto started = Clock::now();
  // Every signal blocked on this thread while the child shares its memory: no handler of
  // ours can run in the child before it has reset them.
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  const pid_t parent = getpid();
  const pid_t pid = vfork();
  if (pid == 0) ExecChild(argv.data(), envp.data(), out.write_end(), exec_error.write_end(), parent);
  const int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  out.CloseWrite();
  exec_error.CloseWrite();
  if (pid < 0) return Status::ApiError("vfork", "cannot start " + spec.argv[0] + ": " + ErrnoText(vfork_errno));
  int child_errno = 0;
  ssize_t got = -1;
  do {
    got = read(exec_error.read_end(), &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return Status::ApiError("execve", "cannot start " + spec.argv[0] + ": " + ErrnoText(child_errno));
  }

  ProcessOutcome outcome;
  std::string tail, line;
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
    if (spec.on_line) {
      for (size_t i = 0; i < n; ++i) {
        if (data[i] == '\n') {
          spec.on_line(line);
          line.clear();
        } else if (line.size() < kLineChars) {
          line.push_back(data[i]);
        }
      }
    }
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
    // Timed out: the program and everything it started get SIGTERM, then SIGKILL after 2 s
    // of grace. The program is not reaped yet, so its pid cannot have been reused.
    std::set<pid_t> tree = ProcessTree(pid, token);
    kill(pid, SIGTERM);
    SignalAll(tree, SIGTERM);
    const auto grace = Clock::now() + std::chrono::seconds(2);
    while (!(exited = Reap(pid, false, &outcome)) && Clock::now() < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (pid_t p : ProcessTree(pid, token)) tree.insert(p);
    if (!exited) kill(pid, SIGKILL);
    SignalAll(tree, SIGKILL);
    if (!exited) Reap(pid, true, &outcome);
  } else if (!eof) {
    // Ended, but something it started still holds the pipe: those carry its token.
    SignalAll(ProcessTree(pid, token), SIGKILL);
  }
  // What is already in the pipe still belongs to the log.
  for (;;) {
    pollfd p{out.read_end(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    const ssize_t n = read(out.read_end(), buffer, sizeof(buffer));
    if (n <= 0) break;
    keep(buffer, static_cast<size_t>(n));
  }
  if (spec.on_line && !line.empty()) spec.on_line(line);
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
