// The trust rule (docs/kernels.md, "What the package trusts"): what the GE library loads or
// runs from a path the environment names -- the per-user kernel cache, the kernel bundles of
// TF_GE_CUSTOM_KERNELS, TF_GE_CUSTOM_PYTHON and the builder venv -- must be this user's (or
// root's) and writable by nobody else, all the way down to it.
//
// CheckTrusted walks the path from "/" one component at a time (lstat only: a FIFO never
// blocks it), as the kernel resolves it, and refuses it naming the first component that
// fails, unless every component exists, is owned by the user or root, is not writable by
// group or others (a sticky folder such as /tmp excepted), is a symbolic link owned by the
// user or root whose target passes the same rule, and is a folder on the way and what is
// wanted at the end. The parameters and reason names are those of the Python side,
// tf_ge_custom/_trust.py (tests/kernels/test_trust_rule.py compares the two files), and
// tests/fixtures/trust/cases.json holds cases both sides run.
#ifndef TF_GE_CUSTOM_CORE_TRUST_H_
#define TF_GE_CUSTOM_CORE_TRUST_H_

#include <sys/types.h>

#include <string>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// The rule's parameters (_trust.py: ROOT_UID, GROUP_OTHER_WRITE, MAX_SYMLINKS,
// PRIVATE_FOLDER_MODE, PRIVATE_FILE_MODE, PRIVATE_RECORD_MODE).
constexpr uid_t kTrustRootUid = 0;
constexpr mode_t kTrustGroupOtherWrite = 0022;
constexpr int kTrustMaxSymlinks = 40;
constexpr mode_t kPrivateFolderMode = 0700;
constexpr mode_t kPrivateFileMode = 0644;
constexpr mode_t kPrivateRecordMode = 0600;  // a lock, a compile log

enum class TrustWant { kFolder, kFile, kExecutable };

// Why a path is refused; TrustReasonName spells them as _trust.py's REASONS do.
enum class TrustReason {
  kTrusted = 0,
  kRelative,
  kMissing,
  kUnreadable,
  kNotAFolder,
  kNotAFile,
  kSpecial,
  kLinkLoop,
  kLinkOwner,
  kOwner,
  kWritable,
  kNotExecutable,
};
const char *TrustReasonName(TrustReason reason);  // "relative", "link-owner", ...

struct TrustVerdict {
  TrustReason reason = TrustReason::kTrusted;
  std::string at;       // the component that failed, as resolved
  std::string message;  // what was found, then a remedy
  bool trusted() const { return reason == TrustReason::kTrusted; }
};

// The verdict for user uid (the effective user when not given).
TrustVerdict CheckTrusted(const std::string &path, TrustWant want, uid_t uid);
TrustVerdict CheckTrusted(const std::string &path, TrustWant want);

// path as the kernel resolves it: absolute (a relative path is taken from the working
// folder), without links, ".", ".." or doubled slashes -- a link replaced by its target read
// from where it sits, ".." going up from the folder reached so far ("/w/link/../cache" is
// "/w/real/cache" when link points to /w/real/sub). From the first component that does not
// exist (or cannot be looked at, or past kTrustMaxSymlinks links) on, the rest as written,
// ".." going up one. Says nothing about trust: CheckTrusted judges the path itself, walking the
// same components and the links on the way (_trust.py's resolve).
std::string ResolvePath(const std::string &path);

// Ok, or kUntrusted with "<what> <message>" (what: e.g. "the kernel cache entry").
Status RequireTrusted(const std::string &what, const std::string &path, TrustWant want);

// A value for a one-line message: control characters escaped (\n, \t, \x1b), as _trust.py's
// files.shown does.
std::string Shown(const std::string &text);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_TRUST_H_
