"""Builds of ge_ops/ for the GE-side tests, made by the same code setup.py uses.

An install builds only what ships (tf_ge_custom/_build/ge_step.py); the core's native tests
and fuzz driver (tests/native/, added to the build of ge_ops/ by TF_GE_CUSTOM_TESTS_DIR) are
built here, into build/ge-tests/ (kept between runs, so a second run only recompiles what
changed) and build/ge-sanitize/ (AddressSanitizer + UBSan).
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from tf_ge_custom._build import ge_step

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_ROOT = SOURCE_ROOT / "build"
NATIVE = SOURCE_ROOT / "tests" / "native"
NATIVE_TESTS = NATIVE / "core"
_TEST_RE = re.compile(r"^TEST\((\w+),\s*(\w+)\)", re.M)
NATIVE_TARGETS = ("tf_ge_custom_core_tests", "tf_ge_custom_fuzz", "tf_ge_custom_plan",
                  "tf_ge_custom_compile_driver", "tf_ge_custom_child_start_tests",
                  "tf_ge_custom_manifest_driver", "tf_ge_custom_elf_driver")
NATIVE_OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS_DIR=" + str(NATIVE))


def _load_build_lock():
    """tests/build_lock.py (importlib mode puts no test folder on sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_tests_build_lock", str(SOURCE_ROOT / "tests" / "build_lock.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The suite's parts share build folders (tests/run_suite.py): one CMake build of a folder at a time.
build_lock = _load_build_lock()


def case_names():
    """Every TEST(Suite, Name) in the sources, as "Suite.Name" (read from the source text,
    so the pytest items exist before anything is built)."""
    names = []
    for path in sorted(NATIVE_TESTS.glob("test_*.cc")):
        names += ["%s.%s" % m for m in _TEST_RE.findall(path.read_text())]
    return names


def run_cases(exe, env=None, timeout=600):
    """Run the native test binary; returns ({name: record}, completed process)."""
    proc = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout)
    records = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["name"]] = record
    return records, proc


class NativeBuild(object):
    def __init__(self, build_dir, options=NATIVE_OPTIONS):
        self.dir = pathlib.Path(build_dir)
        self.options = list(options)

    def build(self):
        """Configure and build the native tests and fuzz driver (again: only what changed)."""
        with build_lock.held(self.dir):
            ge_step.configure_and_build(str(SOURCE_ROOT), str(self.dir), NATIVE_TARGETS, _jobs(),
                                        self.options)
        return self

    def exe(self, name):
        # tests/native's targets: the build's tests/ folder (ge_ops/CMakeLists.txt)
        path = self.dir / "tests" / name
        assert path.is_file(), "%s was not built" % path
        return str(path)

    @property
    def generated(self):
        return self.dir / "generated"


def _jobs():
    return max(1, min(2, os.cpu_count() or 1))


@pytest.fixture(scope="session")
def native_build():
    # <root>/ge: the folder ge_step.run uses under a build_temp of <root> (test_ge_step.py).
    return NativeBuild(BUILD_ROOT / "ge-tests" / ge_step.BUILD_SUBDIR).build()


@pytest.fixture(scope="session")
def sanitized_build():
    return NativeBuild(BUILD_ROOT / "ge-sanitize", NATIVE_OPTIONS + (
        "-DTF_GE_CUSTOM_SANITIZE=ON", "-DCMAKE_BUILD_TYPE=Sanitize")).build()


def pytest_generate_tests(metafunc):
    # One pytest item per native case, named from the sources before anything is built.
    if "native_case" in metafunc.fixturenames:
        metafunc.parametrize("native_case", case_names())


@pytest.fixture(scope="session")
def native_cases():
    """(case_names, run_cases) for the test modules (importlib mode: no plain imports)."""
    return case_names, run_cases


# ---- the hicann snapshots (git directories of hicann/ge and hicann/metadef) ----

GE_REPO_VARIABLE = "TF_GE_CUSTOM_GE_REPO"
METADEF_REPO_VARIABLE = "TF_GE_CUSTOM_METADEF_REPO"
SNAPSHOT_SKIP_PREFIX = "needs the hicann snapshots: "


class Snapshots(object):
    """The two snapshots named by TF_GE_CUSTOM_GE_REPO / TF_GE_CUSTOM_METADEF_REPO (git
    directories, e.g. bare clones). There is no default location: unset means absent."""

    def __init__(self, environ=None):
        environ = os.environ if environ is None else environ
        self.ge = _repo_path(environ.get(GE_REPO_VARIABLE))
        self.metadef = _repo_path(environ.get(METADEF_REPO_VARIABLE))

    def repo(self, name):
        return {"ge": self.ge, "metadef": self.metadef}[name]

    def missing(self, ge_tags=(), metadef_tags=()):
        """Why the snapshots cannot serve these tags (a skip reason), or None."""
        problems = []
        for variable, repo, tags in ((GE_REPO_VARIABLE, self.ge, ge_tags),
                                     (METADEF_REPO_VARIABLE, self.metadef, metadef_tags)):
            if repo is None:
                problems.append("%s is unset" % variable)
            elif self.commit_of(repo, "HEAD") is None:
                problems.append("%s=%s is not a git directory" % (variable, repo))
            else:
                absent = [t for t in tags if self.commit_of(repo, t) is None]
                if absent:
                    problems.append("%s=%s has no %s" % (variable, repo, ", ".join(absent)))
        if not problems:
            return None
        return (SNAPSHOT_SKIP_PREFIX + "; ".join(problems) + " (set %s and %s to git directories "
                "of hicann/ge and hicann/metadef with tags %s)"
                % (GE_REPO_VARIABLE, METADEF_REPO_VARIABLE,
                   ", ".join(sorted(set(ge_tags) | set(metadef_tags))) or "any"))

    def require(self, ge_tags=(), metadef_tags=()):
        reason = self.missing(ge_tags, metadef_tags)
        if reason:
            pytest.skip(reason)
        return self

    @staticmethod
    def commit_of(repo, tag):
        proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet",
                               tag + "^{commit}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        return proc.stdout.strip() if proc.returncode == 0 else None

    @staticmethod
    def has_file(repo, tag, path):
        return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", "%s:%s" % (tag, path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode == 0

    @staticmethod
    def extract(repo, tag, paths, into):
        """``paths`` of ``repo`` at ``tag`` unpacked under ``into`` (git archive | tar)."""
        into = pathlib.Path(into)
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", tag] + list(paths),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
        return into


def _repo_path(value):
    return pathlib.Path(value) if value else None


@pytest.fixture(scope="session")
def hicann_snapshots():
    """The Snapshots of this run (call .require(...) to skip without them)."""
    return Snapshots()


# ---- GE in the loop (tests/native/ge_in_loop/, docs/ge-library.md "GE in the loop") ----

GE_IN_LOOP = NATIVE / "ge_in_loop"
GE_IN_LOOP_ROOT = BUILD_ROOT / "ge-in-loop"
# What the upstream folders each build needs besides its sources: headers, and the private
# headers beside the sources.
UPSTREAM_HEADER_FOLDERS = {"metadef": ["inc", "pkg_inc"], "ge": ["inc"]}


def ge_in_loop_files():
    return json.loads((GE_IN_LOOP / "upstream_files.json").read_text())["tags"]


# The op records GE in the loop drives (tests/native/ge_in_loop/driver/): None, every op of
# op_def.OPS; or record names, in this order, whether or not op_def.OPS holds them yet (an op
# staged before it ships). The harness's op table is generated over exactly these
# (GE_IN_LOOP_OP_DEF in tests/native/ge_in_loop/CMakeLists.txt), the CANN-facing sources unchanged;
# the generic cases (driver/any_op_tests.cc) run each op of it from its record, so an op of
# OPS needs nothing here.
GE_IN_LOOP_OPS = None


def ge_in_loop_op_def():
    """build/ge-in-loop/op-def/op_def.py: a copy of tf_ge_custom/op_def.py (whose OPS is
    GE_IN_LOOP_OPS, an assignment appended, where that names records), kernel_contract.py
    beside it; rewritten only when its text changes, so that CMake regenerates nothing on an
    unchanged tree."""
    folder = GE_IN_LOOP_ROOT / "op-def"
    folder.mkdir(parents=True, exist_ok=True)
    package = SOURCE_ROOT / "tf_ge_custom"
    staged = ("" if GE_IN_LOOP_OPS is None else
              "\n\n# tests/ge/conftest.py: the ops GE in the loop drives.\nOPS = (%s,)\n" % ", ".join(GE_IN_LOOP_OPS))
    texts = {"op_def.py": (package / "op_def.py").read_text() + staged,
             "kernel_contract.py": (package / "kernel_contract.py").read_text()}
    for name, text in texts.items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    return folder / "op_def.py"


def _tree_hash(*roots):
    import hashlib
    digest = hashlib.sha256()
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            digest.update(str(path.relative_to(GE_IN_LOOP)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class GeInLoopBuild(object):
    """One build of tests/native/ge_in_loop/ for one tag: the upstream files extracted from the
    snapshots and compiled into static libraries kept under build/ge-in-loop/<key>/, the key
    being (tag, both commits, the stand-ins' hash, sanitized or not); the adapter and the
    driver are rebuilt there by CMake when they change."""

    def __init__(self, snapshots, tag, sanitize, core_build):
        entry = ge_in_loop_files()[tag]
        self.tag, self.entry, self.sanitize = tag, entry, sanitize
        self.snapshots, self.core_build = snapshots, core_build
        self.commits = {"ge": snapshots.commit_of(snapshots.ge, entry["ge"]),
                        "metadef": snapshots.commit_of(snapshots.metadef, entry["metadef"])}
        stand_ins = _tree_hash(GE_IN_LOOP / "stand_ins", GE_IN_LOOP / "CMakeLists.txt",
                               GE_IN_LOOP / "upstream_files.json")
        self.upstream = GE_IN_LOOP_ROOT / ("src-%s-%s" % (self.commits["ge"][:12], self.commits["metadef"][:12]))
        self.key = "%s-%s-%s-%s%s" % (tag.replace("/", "_"), self.commits["ge"][:12],
                                      self.commits["metadef"][:12], stand_ins,
                                      "-sanitize" if sanitize else "")
        self.dir = GE_IN_LOOP_ROOT / self.key
        self.seconds = self.cpu_seconds = None
        # the op_def.py its op table is generated from (a library built with another one passes
        # -DGE_IN_LOOP_OP_DEF in build's extra, which wins)
        self.op_def = ge_in_loop_op_def()

    def sources(self, kind):
        return list(self.entry[kind])

    def all_sources(self):
        return self.sources("runtime") + self.sources("registry") + self.sources("loader")

    def _extract(self):
        done = self.upstream / ".extracted"
        wanted = "\n".join(self.all_sources())
        if done.is_file() and done.read_text() == wanted:
            return
        if self.upstream.exists():
            shutil.rmtree(str(self.upstream))
        for repo in ("metadef", "ge"):
            files = [s.split(":", 1)[1] for s in self.all_sources() if s.startswith(repo + ":")]
            # Each source's own folder too: private headers sit beside the sources.
            folders = sorted(set(os.path.dirname(f) for f in files))
            Snapshots.extract(self.snapshots.repo(repo), self.entry[repo],
                              UPSTREAM_HEADER_FOLDERS[repo] + folders, self.upstream / repo)
        done.write_text(wanted)

    def options(self, cann_dir=None, prebuilt=None, extra=()):
        core = self.core_build
        opts = ["-DCMAKE_BUILD_TYPE=Release", "-DPython3_EXECUTABLE=" + sys.executable,
                "-DGE_IN_LOOP_UPSTREAM=" + str(self.upstream),
                "-DGE_IN_LOOP_RUNTIME_SOURCES=" + ";".join(self.sources("runtime")),
                "-DGE_IN_LOOP_REGISTRY_SOURCES=" + ";".join(self.sources("registry")),
                "-DGE_IN_LOOP_LOADER_SOURCES=" + ";".join(self.sources("loader")),
                "-DGE_IN_LOOP_OM2=" + ("ON" if self.entry["om2"] else "OFF"),
                "-DTF_GE_CUSTOM_CORE_LIB=" + str(core.dir / "libtf_ge_custom_core.a"),
                "-DTF_GE_CUSTOM_GENERATED=" + str(core.generated),
                "-DGE_IN_LOOP_OP_DEF=" + str(ge_in_loop_op_def()),
                "-DGE_IN_LOOP_SANITIZE=" + ("ON" if self.sanitize else "OFF"),
                "-DGE_IN_LOOP_ADDRESS_DESCRIPTORS=" + self.entry["address_descriptors"]]
        acl = os.environ.get("TF_GE_CUSTOM_ACL_INCLUDE")
        if acl:  # the torch-npu wheel's real ACL headers instead of the stand-in's
            opts.append("-DGE_IN_LOOP_ACL_INCLUDE=" + acl)
        if cann_dir is not None:
            opts.append("-DTF_GE_CUSTOM_CANN_DIR=" + str(cann_dir))
        if prebuilt is not None:
            opts += ["-DGE_IN_LOOP_PREBUILT_RUNTIME=" + str(prebuilt.dir / "libge_upstream_runtime.a"),
                     "-DGE_IN_LOOP_PREBUILT_REGISTRY=" + str(prebuilt.dir / "libge_upstream_registry.a"),
                     "-DGE_IN_LOOP_PREBUILT_LOADER=" + str(prebuilt.dir / "libge_upstream_loader.a")]
        # the link variants (registry visibility, the library's link options): every option
        # is set on every configure, so a reused build folder never keeps another's
        opts += ["-DGE_IN_LOOP_REGISTRY_VISIBILITY=hidden", "-DGE_IN_LOOP_LIBRARY_LINK=package"]
        return opts + list(extra)

    def build(self, build_dir=None, cann_dir=None, prebuilt=None, target="ge_in_loop_tests", extra=()):
        """Configure and build ``target`` (the test program, or only the GE library
        "tf_ge_custom_ge"; ``extra``: more -D options, the later winning); returns its path."""
        import resource
        import time
        start = time.time()
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        build_dir = pathlib.Path(build_dir or self.dir)
        cmake = ge_step.cmake_command()
        with build_lock.held(self.upstream), build_lock.held(build_dir):
            self._extract()
            for cmd in ([cmake, "-S", str(GE_IN_LOOP), "-B", str(build_dir)] + self.options(cann_dir, prebuilt, extra),
                        [cmake, "--build", str(build_dir), "--parallel", str(_jobs()), "--target", target]):
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True)
                if proc.returncode != 0:
                    raise AssertionError("GE-in-the-loop build failed (%s):\n%s"
                                         % (" ".join(cmd[:3]), proc.stdout[-8000:]))
        self.seconds = time.time() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # CPU seconds of the compilers (wall time on an idle 2-core machine is about half).
        self.cpu_seconds = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
        return build_dir / ("ge_in_loop_tests" if target == "ge_in_loop_tests" else "lib%s.so" % target)


def ge_in_loop_case_names():
    """Every TEST(Suite, Name) of the harness's driver, read from its source text."""
    names = []
    for path in sorted((GE_IN_LOOP / "driver").glob("*.cc")):
        names += ["%s.%s" % m for m in _TEST_RE.findall(path.read_text())]
    return names


@pytest.fixture(scope="session")
def ge_in_loop(hicann_snapshots, request):
    """build(tag, sanitize=False) -> (GeInLoopBuild, path of the test program), built once per
    session and key; skips without the snapshots."""
    built = {}

    def build(tag, sanitize=False):
        entry = ge_in_loop_files()[tag]
        hicann_snapshots.require([entry["ge"]], [entry["metadef"]])
        if (tag, sanitize) not in built:
            core = request.getfixturevalue("sanitized_build" if sanitize else "native_build")
            b = GeInLoopBuild(hicann_snapshots, tag, sanitize, core)
            built[(tag, sanitize)] = (b, b.build())
        return built[(tag, sanitize)]

    return build
