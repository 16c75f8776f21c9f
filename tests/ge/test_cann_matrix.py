"""The CANN version matrix: the real build (``pip wheel``) against each public GE release.

For every release of the table below, a toolkit tree is laid out from the public hicann/ge
and hicann/metadef sources of that tag (their ``inc/.../external`` headers, both flat under
``include/`` and under ``include/external/``), the ACL headers of the torch-npu wheel, two
stand-in headers that are in neither repository, and **stub shared libraries**: empty
``lib*.so`` files (and, where the tag builds it, an empty ``libcustom_op_registry_static.a``)
that only let the linker resolve the names. A stub is no evidence that the real library
exports what the GE library uses; these builds prove that the sources compile against each
release's real headers and that the link line is complete, not that anything runs.

Then the package is built for each tree, in one copy of the source tree so that the core
and the op library objects are reused, and the wheel and the build log are held against
what the tags contain (read off the sources, docs/cann.md):

  8.5.0, 9.0.1, 9.1.0   wheel with the CPU op; GE library skipped in one line naming the
                        toolkit version, each missing feature and the CANN that has it
  9.2.0-beta.1, HEAD    wheel with the GE library and the TF parser plugin (compiled and
                        linked against the stubs)

The sources are never committed. The test uses git snapshots of both repositories
(``TF_GE_CUSTOM_GE_REPO``, ``TF_GE_CUSTOM_METADEF_REPO``: git directories, e.g. bare
clones; there is no default location) and the extracted torch-npu wheel's ``include`` folder
(``TF_GE_CUSTOM_ACL_INCLUDE``, or ``$GE_HEADERS_CACHE/wheel/x/torch_npu/include`` as the
shared syntax checker lays it out), or a cache of trees laid out before
(``TF_GE_CUSTOM_CANN_TREES``); without them it is skipped, naming what is missing.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from tf_ge_custom import op_def
from tf_ge_custom._build import object_cache

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
# Configuration only (tests/ge/conftest.py, Snapshots): unset means absent.
GE_REPO = pathlib.Path(os.environ["TF_GE_CUSTOM_GE_REPO"]) if os.environ.get("TF_GE_CUSTOM_GE_REPO") else None
METADEF_REPO = (pathlib.Path(os.environ["TF_GE_CUSTOM_METADEF_REPO"])
                if os.environ.get("TF_GE_CUSTOM_METADEF_REPO") else None)


def _acl_include():
    if os.environ.get("TF_GE_CUSTOM_ACL_INCLUDE"):
        return pathlib.Path(os.environ["TF_GE_CUSTOM_ACL_INCLUDE"])
    if os.environ.get("GE_HEADERS_CACHE"):
        return pathlib.Path(os.environ["GE_HEADERS_CACHE"]) / "wheel" / "x" / "torch_npu" / "include"
    return None


ACL_INCLUDE = _acl_include()
TREES = pathlib.Path(os.environ.get("TF_GE_CUSTOM_CANN_TREES",
                                    str(SOURCE_ROOT / "build" / "cann-matrix")))
ARCH = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
    os.uname().machine, os.uname().machine)
MINIMUM = "9.2.0-beta.1"
STUB_LIBRARIES = ("ascendcl", "graph", "register", "gert", "lowering", "graph_base", "runtime",
                  "fmk_parser")
ARCHIVE = "libcustom_op_registry_static.a"
DONE = ".tree-complete"
LAYOUT = "layout 2"  # bump when lay_out changes, so that cached trees are laid out again


class Release(object):
    def __init__(self, version, ge_tag, metadef_tag, missing):
        self.version = version  # what the tree's install record says
        self.ge_tag, self.metadef_tag = ge_tag, metadef_tag
        self.missing = missing  # features the GE library needs that the tag lacks

    @property
    def builds(self):
        return not self.missing

    def __repr__(self):
        return self.version


# What each release lacks, read off the tags (docs/cann.md): the oracle of this test.
RELEASES = [
    Release("8.5.0", "v8.5.0", "v8.5.0", ["custom_op_header", "registry_archive"]),
    Release("9.0.1", "v9.0.1", "v9.0.1", ["portable_op", "shape_infer_op", "compilable_op",
                                          "registry_archive"]),
    # metadef has no v9.1.0 tag; v9.1.0-beta.3 is its newest 9.1 release
    Release("9.1.0", "v9.1.0", "v9.1.0-beta.3", ["registry_archive"]),
    Release(MINIMUM, "v9.2.0-beta.1", "v9.2.0-beta.1", []),
    Release("head", "HEAD", "HEAD", []),
]
# The phrase the skip line uses for each feature, and the first CANN that has it.
PHRASES = {
    "custom_op_header": ("no graph/custom_op.h", "9.0.0-beta.1"),
    "portable_op": ("graph/custom_op.h has no ge::PortableOp", "9.1.0-beta.1"),
    "shape_infer_op": ("graph/custom_op.h has no ge::ShapeInferOp", "9.1.0-beta.3"),
    "compilable_op": ("graph/custom_op.h has no ge::CompilableOp", "9.1.0-beta.3"),
    "registry_archive": ("no lib64/libcustom_op_registry_static.a", "9.2.0-beta.1"),
}

# Stand-ins for two headers that are in neither repository (the secure C library and the
# platform component's PlatFormInfos): declarations only, enough for the GE headers that
# include them; a source that needed their real contents would fail to compile.
STAND_IN_HEADERS = {
    "securec.h": """// Stand-in (tests/ge/test_cann_matrix.py): not CANN's securec.h.
#pragma once
#include <cstddef>
typedef int errno_t;
#define EOK 0
errno_t memcpy_s(void *dest, size_t dest_max, const void *src, size_t count);
errno_t memset_s(void *dest, size_t dest_max, int c, size_t count);
errno_t memmove_s(void *dest, size_t dest_max, const void *src, size_t count);
""",
    "platform/platform_infos_def.h": """// Stand-in (tests/ge/test_cann_matrix.py): not CANN's header.
#pragma once
#include <cstdint>
#include <map>
#include <string>
namespace fe {
class PlatFormInfos {
 public:
  bool GetPlatformRes(const std::string &label, const std::string &key, std::string &val);
  bool GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val);
  bool GetPlatformResWithLock(const std::string &label, std::map<std::string, std::string> &res);
  uint32_t GetCoreNum() const;
};
class OptionalInfos {
 public:
  std::string GetSocVersion();
  std::string GetCoreType();
  uint32_t GetAICoreNum();
};
}  // namespace fe
""",
}


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo)] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=True).stdout


def _missing_sources(snapshots):
    """Why the trees cannot be laid out (a skip reason), or None."""
    reason = snapshots.missing([r.ge_tag for r in RELEASES], [r.metadef_tag for r in RELEASES])
    if reason:
        return reason + ", or trees laid out before (TF_GE_CUSTOM_CANN_TREES)"
    if ACL_INCLUDE is None or not (ACL_INCLUDE / "acl" / "acl_rt.h").is_file():
        return ("needs a CANN toolkit: its ACL headers, here those of the torch-npu wheel "
                "(TF_GE_CUSTOM_ACL_INCLUDE=<wheel>/torch_npu/include, or GE_HEADERS_CACHE as "
                "ge-syntax-check lays it out; now %s), or trees laid out before "
                "(TF_GE_CUSTOM_CANN_TREES)" % (ACL_INCLUDE or "unset"))
    return None


def _trees_ready():
    try:
        return all((TREES / r.version / DONE).read_text().startswith(LAYOUT) for r in RELEASES)
    except (IOError, OSError):
        return False


def _extract(repo, tag, folder, into):
    """``folder`` of ``repo`` at ``tag`` unpacked under ``into`` (paths keep ``folder``)."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", tag, folder],
                             stdout=subprocess.PIPE, check=True).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / folder


def _overlay(source, target):
    for path in source.rglob("*"):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(str(path), str(dest))


def _stub_library(lib64, name, scratch):
    """An empty shared library (or archive) named as the toolkit's, marked as a stand-in."""
    symbol = "tf_ge_custom_matrix_stub_" + name
    source = scratch / (name + ".c")
    source.write_text('const char %s[] = "stand-in for lib%s (tests/ge/test_cann_matrix.py)";\n'
                      % (symbol, name))
    if name == "custom_op_registry_static":
        obj = scratch / (name + ".o")
        subprocess.run(["cc", "-c", "-fPIC", str(source), "-o", str(obj)], check=True)
        subprocess.run(["ar", "rcs", str(lib64 / ARCHIVE), str(obj)], check=True)
    else:
        subprocess.run(["cc", "-shared", "-fPIC", str(source), "-Wl,-soname,lib%s.so" % name,
                        "-o", str(lib64 / ("lib%s.so" % name))], check=True)


def _tag_builds_registry_archive(tag):
    text = _git(GE_REPO, "show", "%s:graph_metadef/graph/CMakeLists.txt" % tag).decode("utf-8", "replace")
    return "add_library(custom_op_registry_static" in text


def lay_out(release, scratch):
    """The toolkit tree of ``release`` under TREES (rebuilt from the snapshots)."""
    home = TREES / release.version
    if home.exists():
        shutil.rmtree(str(home))
    include = home / "include"
    work = scratch / ("src-" + release.version)
    work.mkdir(parents=True)
    # Lowest precedence first, so that a header in several folders ends up as the first
    # folder of the compiler's search order gives it (GE's graph_metadef wins).
    sources = [
        _extract(METADEF_REPO, release.metadef_tag, "inc/external", work / "md"),
        _extract(GE_REPO, release.ge_tag, "inc/parser/external", work / "ge"),
        _extract(GE_REPO, release.ge_tag, "inc/external", work / "ge"),
        _extract(GE_REPO, release.ge_tag, "inc/graph_metadef/external", work / "ge"),
    ]
    # ACL comes from the runtime component, which neither repository has: the torch-npu
    # wheel's copy goes in first, and the ACL headers GE itself ships (inc/external/acl) win.
    _overlay(ACL_INCLUDE / "acl", include / "acl")
    for source in sources:
        _overlay(source, include)
        _overlay(source, include / "external")
    for name, text in STAND_IN_HEADERS.items():
        (include / name).parent.mkdir(parents=True, exist_ok=True)
        (include / name).write_text(text)
    lib64 = home / "lib64"
    lib64.mkdir()
    for name in STUB_LIBRARIES:
        _stub_library(lib64, name, work)
    if _tag_builds_registry_archive(release.ge_tag):
        _stub_library(lib64, "custom_op_registry_static", work)
    record = home / ("%s-linux" % ARCH) / "ascend_toolkit_install.info"
    record.parent.mkdir()
    record.write_text("package_name=Ascend-cann-toolkit (stand-in tree of tests/ge/test_cann_matrix.py)\n"
                      "version=%s\narch=%s\nos=linux\n" % (release.version, ARCH))
    (home / DONE).write_text("%s: hicann/ge %s, hicann/metadef %s\n"
                             % (LAYOUT, release.ge_tag, release.metadef_tag))
    return home


def _source_copy(dest):
    """The files a clone of this tree would have (tracked, plus new files not ignored)."""
    listed = subprocess.run(["git", "-C", str(SOURCE_ROOT), "ls-files", "-z", "--cached",
                             "--others", "--exclude-standard"], stdout=subprocess.PIPE,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = SOURCE_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(str(src), str(dest / rel))
    return dest


class Built(object):
    def __init__(self, release, proc, wheel):
        self.release, self.proc, self.wheel = release, proc, wheel
        self.log = proc.stdout + proc.stderr

    def names(self):
        with zipfile.ZipFile(str(self.wheel)) as z:
            return set(z.namelist())

    def read(self, name):
        with zipfile.ZipFile(str(self.wheel)) as z:
            return z.read(name)

    def build_info(self):
        return json.loads(self.read("tf_ge_custom/build_info.json").decode())


def pip_wheel(source, out, home, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_REQUIRE"))}
    # The stub libraries define none of CANN's symbols: a shared library may leave them
    # undefined (as the GE library does), but the export tools are executables, which the
    # linker would refuse. CMake takes LDFLAGS for its link lines; the executables then prove
    # what the libraries prove: real headers compile, and the link finds every library.
    # The XLA kernel library has nothing to do with CANN: not building it saves half of
    # each wheel's compile time.
    env.update(ASCEND_HOME_PATH=str(home), LDFLAGS="-Wl,--unresolved-symbols=ignore-in-object-files",
               TF_GE_CUSTOM_XLA="0", **env_extra)
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(out), str(source)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
        timeout=1800)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, hicann_snapshots):
    """{release version: Built}, plus the shared source copy, for the whole module."""
    if not _trees_ready():
        reason = _missing_sources(hicann_snapshots)
        if reason:
            pytest.skip(reason)
        scratch = tmp_path_factory.mktemp("cann-sources")
        for release in RELEASES:
            lay_out(release, scratch)
    source = _source_copy(tmp_path_factory.mktemp("source"))
    wheels = tmp_path_factory.mktemp("wheels")
    # a copy of the checkout's object cache (what its make install left): the op library's
    # objects come from there, so each wheel compiles only its GE side; the checkout's cache
    # is left as it was
    cache = tmp_path_factory.mktemp("object-cache") / "cache"
    checkout_cache = pathlib.Path(object_cache.cache_dir(str(SOURCE_ROOT)))  # build/object-cache, or $TF_GE_CUSTOM_BUILD_CACHE
    if checkout_cache.is_dir():
        shutil.copytree(str(checkout_cache), str(cache))
    built = {}
    for release in RELEASES:
        out = wheels / release.version
        proc = pip_wheel(source, out, TREES / release.version, TF_GE_CUSTOM_BUILD_CACHE=str(cache))
        found = sorted(out.glob("tf_ge_custom-*.whl"))
        built[release.version] = Built(release, proc, found[0] if found else None)
    return {"built": built, "source": source, "wheels": wheels}


JSON = "tf_ge_custom/opp/framework/tensorflow/npu_supported_ops.json"


def _ge_files(names):
    return sorted(n for n in names if n.endswith((".so",)) and "/opp/" in n)


@pytest.mark.slow
@pytest.mark.parametrize("release", RELEASES, ids=repr)
def test_every_release_installs_the_cpu_op(matrix, release):
    built = matrix["built"][release.version]
    assert built.proc.returncode == 0, built.log[-6000:]
    names = built.names()
    assert "tf_ge_custom/_lib/libtf_ge_custom_ops.so" in names
    assert "tf_ge_custom/opp/framework/tensorflow/npu_supported_ops.json" in names
    info = built.build_info()["ge"]["toolkit"]
    assert info["home"] == str(TREES / release.version)
    assert info["version"] == release.version
    assert info["version_file"] == "%s-linux/ascend_toolkit_install.info" % ARCH


@pytest.mark.slow
@pytest.mark.parametrize("release", [r for r in RELEASES if not r.builds], ids=repr)
def test_older_releases_skip_the_ge_library_in_one_line_with_the_reason(matrix, release):
    built = matrix["built"][release.version]
    assert built.proc.returncode == 0, built.log[-6000:]
    lines = [l for l in built.log.splitlines() if "GE library and TF parser plugin skipped" in l]
    assert len(lines) == 1, lines
    line = lines[0]
    assert "CANN %s at %s cannot host the GE library" % (release.version, TREES / release.version) in line
    for feature in release.missing:
        phrase, since = PHRASES[feature]
        assert phrase in line and "(since CANN %s)" % since in line, (feature, line)
    for feature in set(PHRASES) - set(release.missing):
        assert PHRASES[feature][0] not in line, (feature, line)
    assert line.endswith("it needs CANN >= %s" % MINIMUM)
    info = built.build_info()["ge"]
    assert info["built"] is False and info["libraries"] == []
    assert info["toolkit"]["decision"] == "skip"
    assert [m["feature"] for m in info["toolkit"]["missing"]] == release.missing
    assert _ge_files(built.names()) == []
    # without the GE library, TF Adapter must not hand AddCustom to GE: the JSON lists no op
    assert json.loads(built.read(JSON).decode()) == {}
    assert built.build_info()["opp"]["npu_ops"] == []
    assert built.build_info()["opp"]["npu_ops_missing_because"] == (
        "the GE library was not built: " + info["reason"])


@pytest.mark.slow
@pytest.mark.parametrize("release", [r for r in RELEASES if r.builds], ids=repr)
def test_newer_releases_compile_and_link_the_ge_library(matrix, release):
    built = matrix["built"][release.version]
    assert built.proc.returncode == 0, built.log[-6000:]
    assert "skipped" not in "\n".join(l for l in built.log.splitlines() if "GE library" in l)
    info = built.build_info()["ge"]
    assert info["built"] is True and info["toolkit"]["decision"] == "build"
    assert info["toolkit"]["missing"] == [] and all(
        info["toolkit"]["features"][k] for k in PHRASES)
    ge_lib = "tf_ge_custom/opp/op_graph/lib/linux/%s/libtf_ge_custom_ge.so" % ARCH
    parser = "tf_ge_custom/opp/framework/tensorflow/libtf_ge_custom_parsers.so"
    assert _ge_files(built.names()) == sorted([parser, ge_lib])
    assert json.loads(built.read(JSON).decode()) == {
        op.type_name: {"isGray": False, "isHeavy": False} for op in op_def.OPS}
    assert built.build_info()["opp"]["npu_ops"] == [op.type_name for op in op_def.OPS]
    ge_bytes = built.read(ge_lib)
    # The registry archive went in whole (its stand-in's marker symbol is in the library),
    # and the library registers no vendor op-lib folder of its own (docs/cann.md).
    assert b"tf_ge_custom_matrix_stub_custom_op_registry_static" in ge_bytes
    assert b"_ZN2ge13OpLibRegister" not in ge_bytes
    # Linked against the toolkit's libraries, each recorded as a dependency.
    needed = _needed(ge_bytes, matrix["wheels"] / ("ge-" + release.version + ".so"))
    assert {"libascendcl.so", "libgraph.so", "libregister.so", "libgert.so",
            "liblowering.so"} <= needed
    # The export tools (the AIR tool: the toolkit has the TF parser API) ship in _lib/.
    assert info["export_tools"] == ["_lib/tf_ge_custom_air_tool", "_lib/tf_ge_custom_om_runner"]
    for tool in info["export_tools"]:
        assert "tf_ge_custom/" + tool in built.names()


def _needed(data, path):
    path.write_bytes(data)
    out = subprocess.run(["readelf", "-d", str(path)], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return {line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}


@pytest.mark.slow
def test_require_ge_turns_the_skip_into_a_failure(matrix):
    release = next(r for r in RELEASES if r.version == "9.1.0")
    proc = pip_wheel(matrix["source"], matrix["wheels"] / "required", TREES / release.version,
                     TF_GE_CUSTOM_REQUIRE_GE="1")
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert "TF_GE_CUSTOM_REQUIRE_GE=1 asks for the GE library, but it cannot be built: CANN 9.1.0" in log
    assert "building the TensorFlow op library" not in log  # refused before compiling anything
    assert not list((matrix["wheels"] / "required").glob("*.whl"))
