#include "tf_ge_custom_core/trust.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

namespace tf_ge_custom {
namespace core {
namespace {

std::string OwnerName(uid_t uid) {
  std::string text = "uid " + std::to_string(uid);
  struct passwd entry;
  struct passwd *found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    text += std::string(" (") + found->pw_name + ")";
  }
  return text;
}

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string DescribeType(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISREG(mode)) return "a file";
  return "not a regular file";
}

TrustVerdict Refuse(TrustReason reason, const std::string &at, const std::string &detail, const std::string &remedy) {
  TrustVerdict v;
  v.reason = reason;
  v.at = at;
  v.message = remedy.empty() ? detail : detail + "; " + remedy;
  return v;
}

std::deque<std::string> Split(const std::string &path) {
  std::deque<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

std::string Parent(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string Join(const std::string &folder, const std::string &name) {
  return folder == "/" ? "/" + name : folder + "/" + name;
}

TrustVerdict LstatRefusal(const std::string &path, const std::string &at, int error) {
  if (error == ENOENT || error == ENOTDIR) {
    return Refuse(TrustReason::kMissing, at,
                  Shown(path) + " does not exist" + (at == path ? std::string() : " (" + Shown(at) + " is missing)"),
                  "check the path, or create it");
  }
  return Refuse(TrustReason::kUnreadable, at, Shown(at) + " cannot be looked at: " + std::strerror(error),
                "make its folders searchable by you");
}

// One resolved component: a folder on the way when on_the_way.
TrustVerdict Component(const std::string &at, const struct stat &st, uid_t uid, bool on_the_way, TrustWant want) {
  const mode_t mode = st.st_mode;
  if (on_the_way || want == TrustWant::kFolder) {
    if (!S_ISDIR(mode)) {
      const bool special = !S_ISREG(mode);
      return Refuse(special ? TrustReason::kSpecial : TrustReason::kNotAFolder, at,
                    Shown(at) + " is " + DescribeType(mode) + ", not a folder", "point it at a folder");
    }
  } else if (!S_ISREG(mode)) {
    return Refuse(S_ISDIR(mode) ? TrustReason::kNotAFile : TrustReason::kSpecial, at,
                  Shown(at) + " is " + DescribeType(mode) + ", not a regular file", "point it at a regular file");
  }
  if (st.st_uid != uid && st.st_uid != kTrustRootUid) {
    return Refuse(TrustReason::kOwner, at,
                  Shown(at) + " is owned by " + OwnerName(st.st_uid) + ", not by you (" + OwnerName(uid) + ") or root",
                  "use a folder of your own, or have it made yours (chown -R " + std::to_string(uid) + " " + Shown(at) +
                      ", as root) if nobody else has written there");
  }
  if ((mode & kTrustGroupOtherWrite) != 0 && !(S_ISDIR(mode) && (mode & S_ISVTX) != 0)) {
    const std::string who = (mode & 0022) == 0022 ? "group and others" : (mode & 0020) ? "its group" : "others";
    return Refuse(TrustReason::kWritable, at, Shown(at) + " is writable by " + who + " (mode " + Octal(mode) + ")",
                  "chmod go-w " + Shown(at) + " if nobody else has written there, else start afresh in a folder only "
                  "you may write");
  }
  if (!on_the_way && want == TrustWant::kExecutable && (mode & 0100) == 0) {
    return Refuse(TrustReason::kNotExecutable, at, Shown(at) + " is not executable (mode " + Octal(mode) + ")",
                  "chmod u+x " + Shown(at));
  }
  return TrustVerdict();
}

}  // namespace

const char *TrustReasonName(TrustReason reason) {
  switch (reason) {
    case TrustReason::kTrusted: return "trusted";
    case TrustReason::kRelative: return "relative";
    case TrustReason::kMissing: return "missing";
    case TrustReason::kUnreadable: return "unreadable";
    case TrustReason::kNotAFolder: return "not-a-folder";
    case TrustReason::kNotAFile: return "not-a-file";
    case TrustReason::kSpecial: return "special";
    case TrustReason::kLinkLoop: return "link-loop";
    case TrustReason::kLinkOwner: return "link-owner";
    case TrustReason::kOwner: return "owner";
    case TrustReason::kWritable: return "writable";
    case TrustReason::kNotExecutable: return "not-executable";
  }
  return "?";
}

std::string Shown(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    // C1 controls (U+0080..U+009F) arrive as UTF-8 0xC2 0x80..0x9F.
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(text[i + 1]));
      out += hex;
      ++i;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// Walks the absolute path from "/" one component at a time as the kernel resolves it; with
// judging, checks each component for uid (_trust.py's _walk). *current: the folder (or file)
// reached; *rest: the components not walked, as written (empty unless the walk stopped).
TrustVerdict Walk(const std::string &path, bool judging, TrustWant want, uid_t uid, std::string *current,
                  std::deque<std::string> *rest) {
  std::deque<std::string> pending = Split(path);
  *current = "/";
  rest->clear();
  struct stat st;
  if (judging) {
    if (lstat("/", &st) != 0) return LstatRefusal(path, "/", errno);
    TrustVerdict root = Component("/", st, uid, true, want);
    if (!root.trusted()) {
      *rest = pending;
      return root;
    }
  }
  int links = 0;
  while (!pending.empty()) {
    const std::string name = pending.front();
    if (name == "..") {
      pending.pop_front();
      *current = Parent(*current);
      continue;
    }
    const std::string candidate = Join(*current, name);
    *rest = pending;  // where the walk stops, if it stops here
    pending.pop_front();
    if (lstat(candidate.c_str(), &st) != 0) return LstatRefusal(path, candidate, errno);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kTrustMaxSymlinks) {
        return Refuse(TrustReason::kLinkLoop, candidate,
                      Shown(path) + ": more than " + std::to_string(kTrustMaxSymlinks) +
                          " symbolic links on the way (a loop?)",
                      "point it at the real folder");
      }
      if (judging && st.st_uid != uid && st.st_uid != kTrustRootUid) {
        return Refuse(TrustReason::kLinkOwner, candidate,
                      Shown(candidate) + " is a symbolic link made by " + OwnerName(st.st_uid) + ", not by you or root",
                      "remove the link (rm " + Shown(candidate) + ") and use the real path, or make the link yourself");
      }
      std::vector<char> target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4095) + 1);
      const ssize_t n = readlink(candidate.c_str(), target.data(), target.size());
      if (n < 0) return LstatRefusal(path, candidate, errno);
      if (static_cast<size_t>(n) >= target.size()) return LstatRefusal(path, candidate, ENAMETOOLONG);
      const std::string to(target.data(), static_cast<size_t>(n));
      if (!to.empty() && to[0] == '/') *current = "/";
      std::deque<std::string> parts = Split(to);
      pending.insert(pending.begin(), parts.begin(), parts.end());
      continue;
    }
    if (judging) {
      TrustVerdict verdict = Component(candidate, st, uid, !pending.empty(), want);
      if (!verdict.trusted()) return verdict;
    }
    *current = candidate;
  }
  rest->clear();
  if (judging && *current == "/" && want != TrustWant::kFolder) {
    return Refuse(TrustReason::kNotAFile, "/", Shown(path) + " is a folder, not a file", "");
  }
  return TrustVerdict();
}

}  // namespace

TrustVerdict CheckTrusted(const std::string &path, TrustWant want, uid_t uid) {
  if (path.empty() || path[0] != '/') {
    return Refuse(TrustReason::kRelative, path,
                  Shown(path) + " is not an absolute path: each program would look for it from its own working folder",
                  "name it from /");
  }
  std::string current;
  std::deque<std::string> rest;
  return Walk(path, true, want, uid, &current, &rest);
}

std::string ResolvePath(const std::string &path) {
  std::string absolute = path;
  if (absolute.empty() || absolute[0] != '/') {
    std::vector<char> cwd(4096);
    absolute = std::string(getcwd(cwd.data(), cwd.size()) != nullptr ? cwd.data() : "/") + "/" + path;
  }
  std::string current;
  std::deque<std::string> rest;
  Walk(absolute, false, TrustWant::kFolder, 0, &current, &rest);
  for (const auto &name : rest) current = name == ".." ? Parent(current) : Join(current, name);
  return current;
}

TrustVerdict CheckTrusted(const std::string &path, TrustWant want) { return CheckTrusted(path, want, geteuid()); }

Status RequireTrusted(const std::string &what, const std::string &path, TrustWant want) {
  const TrustVerdict verdict = CheckTrusted(path, want);
  if (verdict.trusted()) return Status::Ok();
  return Status::Error(Code::kUntrusted, what + " " + Shown(path) + " is not trusted: " + verdict.message);
}

}  // namespace core
}  // namespace tf_ge_custom
