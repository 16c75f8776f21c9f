"""What a CANN toolkit can host: feature detection for the GE side of the build.

The GE library (``REG_AUTO_MAPPING_OP`` class with ``EagerExecuteOp``, ``ShapeInferOp``,
``PortableOp`` and ``CompilableOp``, linked with ``custom_op_registry_static``) and the TF
parser plugin need a
CANN whose headers and libraries have all of that. Toolkits differ exactly there
(``docs/cann.md`` has the table, read off the hicann/ge and hicann/metadef tags), so the
build does not guess from a version number: :func:`inspect` looks at the headers and
libraries themselves and returns a :class:`Toolkit` record that says what is there, what
is missing, since which CANN each missing piece exists, and whether to build.

The version is read from the toolkit's own install record (:func:`toolkit_version`) and is
only reported, never used to decide. Pure standard library: ``setup.py``, ``doctor`` and
the kernel builder use it.
"""
import glob
import os
import re
from typing import NamedTuple, Optional, Tuple

from .. import _files as files

HOME_VAR = "ASCEND_HOME_PATH"
REQUIRE_VAR = "TF_GE_CUSTOM_REQUIRE_GE"
# The first CANN whose toolkit has every feature below (the full design: online, OM export).
MINIMUM_CANN = "9.2.0-beta.1"

# Include folders, in the order ge_ops/CMakeLists.txt gives them to the compiler
# (CANN_INCLUDES): a header is found where the compiler would find it.
INCLUDE_DIRS = ("include", "include/graph", "include/register", "include/external")
LIBRARY_DIR = "lib64"


class Requirement(NamedTuple):
    key: str
    what: str  # one phrase, as the skip line prints it when missing
    since: Optional[str]  # the first CANN release that has it (docs/cann.md); None: not known
    kind: str  # "header", "declaration" or "library"
    path: str  # header (as #included) or library file name
    pattern: Optional[str] = None  # for "declaration": a regex the header must match
    required: bool = True  # False: recorded only, the decision does not depend on it


_CUSTOM_OP_H = "graph/custom_op.h"


def _defines_class(name):
    # a class definition (with a body or base list), not a forward declaration
    return r"\bclass\s+%s\s*(?::|\{)" % name


REQUIREMENTS = (
    Requirement("custom_op_header", "no %s, the GE custom-op API" % _CUSTOM_OP_H, "9.0.0-beta.1",
                "header", _CUSTOM_OP_H),
    Requirement("eager_execute_op", "%s has no ge::EagerExecuteOp" % _CUSTOM_OP_H, "9.0.0-beta.1",
                "declaration", _CUSTOM_OP_H, _defines_class("EagerExecuteOp")),
    Requirement("portable_op", "%s has no ge::PortableOp" % _CUSTOM_OP_H, "9.1.0-beta.1",
                "declaration", _CUSTOM_OP_H, _defines_class("PortableOp")),
    Requirement("shape_infer_op", "%s has no ge::ShapeInferOp" % _CUSTOM_OP_H, "9.1.0-beta.3",
                "declaration", _CUSTOM_OP_H, _defines_class("ShapeInferOp")),
    # Compile at graph build (GetPlatformInfos in exe_graph/runtime/op_compile_context.h,
    # which custom_op.h includes since the same tag).
    Requirement("compilable_op", "%s has no ge::CompilableOp" % _CUSTOM_OP_H, "9.1.0-beta.3",
                "declaration", _CUSTOM_OP_H, _defines_class("CompilableOp")),
    Requirement("registry_archive", "no %s/libcustom_op_registry_static.a, the custom-op "
                "registry an OM loads" % LIBRARY_DIR, "9.2.0-beta.1",
                "library", "libcustom_op_registry_static.a"),
    Requirement("tf_parser_registration", "register/register.h has no AutoMappingByOpFn, "
                "which the TF parser plugin uses", "8.5.0", "declaration", "register/register.h",
                r"\bAutoMappingByOpFn\b"),
    Requirement("acl_launch", "acl/acl_rt.h has no aclrtLaunchKernelWithHostArgs",
                None, "declaration", "acl/acl_rt.h", r"\baclrtLaunchKernelWithHostArgs\b"),
) + tuple(
    Requirement("lib" + name, "no %s/lib%s.so" % (LIBRARY_DIR, name), "8.5.0", "library",
                "lib%s.so" % name)
    for name in ("ascendcl", "graph", "register", "gert", "lowering")
) + (
    # The AIR export route's C++ API (aclgrphParseTensorFlow and its library): not needed for
    # the GE library; without them the AIR tool is not built and `tf-ge-custom export` takes
    # the .pb route (docs/export.md).
    Requirement("tf_parser_api", "parser/tensorflow_parser.h has no aclgrphParseTensorFlow",
                "8.5.0", "declaration", "parser/tensorflow_parser.h",
                r"\baclgrphParseTensorFlow\b", required=False),
    Requirement("libfmk_parser", "no %s/libfmk_parser.so, the TF parser the AIR tool links"
                % LIBRARY_DIR, "8.5.0", "library", "libfmk_parser.so", required=False),
)
# The optional features the AIR tool of the offline export needs.
AIR_TOOL_FEATURES = ("tf_parser_api", "libfmk_parser")


class Toolkit(NamedTuple):
    """The decision record: what was found under ``home`` and whether to build."""

    home: Optional[str]
    version: Optional[str]  # as the toolkit records it, e.g. "9.2.0-beta.1"; None: unknown
    version_file: Optional[str]  # where it was read, relative to home
    features: dict  # Requirement.key -> bool
    missing: Tuple[Requirement, ...]  # required features that are absent, in table order
    reason: str  # "" when build is True; else the one line the build prints

    @property
    def build(self):
        return not self.reason

    @property
    def air_tool(self):
        """Whether the toolkit also has what the export's AIR tool needs."""
        return self.build and all(self.features.get(k) for k in AIR_TOOL_FEATURES)

    @property
    def decision(self):
        return "build" if self.build else "skip"

    def as_dict(self):
        """The JSON form recorded in build_info["ge"]["toolkit"]."""
        return {"home": self.home, "version": self.version, "version_file": self.version_file,
                "decision": self.decision, "minimum": MINIMUM_CANN,
                "features": dict(self.features),
                "missing": [{"feature": r.key, "what": r.what, "since": r.since}
                            for r in self.missing],
                "reason": self.reason}


def _read(path):
    """The text of a regular file (a FIFO or a loop in the toolkit never blocks the build)."""
    try:
        return files.read_bytes(path, 16 << 20).decode("utf-8", "replace")
    except files.FileProblem:
        return None


def find_header(home, header):
    """The file the compiler would open for ``#include "<header>"``, or None."""
    for folder in INCLUDE_DIRS:
        path = os.path.join(home, folder, header)
        if os.path.isfile(path):
            return path
    return None


def _has(home, requirement, cache):
    if requirement.kind == "library":
        return os.path.isfile(os.path.join(home, LIBRARY_DIR, requirement.path))
    if requirement.path not in cache:
        found = find_header(home, requirement.path)
        cache[requirement.path] = _read(found) if found else None
    text = cache[requirement.path]
    if requirement.kind == "header":
        return text is not None
    return text is not None and re.search(requirement.pattern, text) is not None


# Where a toolkit records its version, best first (docs/cann.md): the install record of
# the toolkit package, the per-component running versions, then a component's version.info
# (whose Version may be the internal build number rather than the release name).
def _install_records(home):
    records = sorted(glob.glob(os.path.join(home, "*-linux", "ascend_toolkit_install.info")))
    records.append(os.path.join(home, "ascend_toolkit_install.info"))  # home is <arch>-linux
    return [os.path.relpath(p, home) for p in records]


_VERSION_CFG_KEYS = ("toolkit_running_version", "runtime_running_version", "compiler_running_version")


def toolkit_version(home):
    """``(version, file relative to home)`` as the toolkit under ``home`` records it, or
    ``(None, None)``. ``home`` is what ``set_env.sh`` exports as ``ASCEND_HOME_PATH``."""
    if not home:
        return None, None
    for rel in _install_records(home):
        match = re.search(r"^\s*version\s*=\s*(\S+)\s*$", _read(os.path.join(home, rel)) or "", re.M)
        if match:
            return match.group(1), rel
    text = _read(os.path.join(home, "version.cfg")) or ""
    for key in _VERSION_CFG_KEYS:
        # e.g. toolkit_running_version=[7.6.0.1.220:8.0.0]: internal build, then release
        match = re.search(r"^\s*%s\s*=\s*\[([^\]:]*):([^\]]+)\]" % key, text, re.M)
        if match:
            return match.group(2).strip(), "version.cfg"
    for rel in ("compiler/version.info", "runtime/version.info"):
        match = re.search(r"^\s*Version\s*=\s*(\S+)\s*$", _read(os.path.join(home, rel)) or "", re.M)
        if match:
            return match.group(1), rel
    return None, None


def _missing_phrase(requirement):
    if requirement.since is None:
        return requirement.what
    return "%s (since CANN %s)" % (requirement.what, requirement.since)


def describe(version):
    return "CANN %s" % version if version else "a CANN toolkit of unknown version"


def inspect(home):
    """The :class:`Toolkit` record for the toolkit folder ``home`` (None: no toolkit)."""
    if not home:
        return Toolkit(None, None, None, {}, (), "%s is not set; to build them, run `source "
                       "<CANN install>/set_env.sh` (CANN >= %s) and reinstall the package"
                       % (HOME_VAR, MINIMUM_CANN))
    if not os.path.isdir(home):
        return Toolkit(home, None, None, {}, (), "%s=%s is not a folder; point it at a CANN "
                       ">= %s toolkit and reinstall the package" % (HOME_VAR, home, MINIMUM_CANN))
    version, version_file = toolkit_version(home)
    cache, features = {}, {}
    for requirement in REQUIREMENTS:
        features[requirement.key] = _has(home, requirement, cache)
    missing = [r for r in REQUIREMENTS if r.required and not features[r.key]]
    if not features["custom_op_header"]:
        # Without the header its classes cannot be there either: name the header once.
        missing = [r for r in missing if r.path != _CUSTOM_OP_H or r.kind == "header"]
    reason = ""
    if missing:
        reason = "%s at %s cannot host the GE library: %s; it needs CANN >= %s" % (
            describe(version), home,
            "; ".join(_missing_phrase(r) for r in missing), MINIMUM_CANN)
    return Toolkit(home, version, version_file, features, tuple(missing), reason)


def require_ge(env=None):
    """Whether ``TF_GE_CUSTOM_REQUIRE_GE`` asks for the GE library (a skip then fails).

    Raises ValueError for a value other than unset, empty, 0 or 1.
    """
    env = os.environ if env is None else env
    value = env.get(REQUIRE_VAR, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise ValueError("%s must be 0 or 1, found %r" % (REQUIRE_VAR, value))


def from_environment(env=None):
    """:func:`inspect` for the toolkit ``ASCEND_HOME_PATH`` names (the build's view)."""
    env = os.environ if env is None else env
    return inspect(env.get(HOME_VAR) or None)
