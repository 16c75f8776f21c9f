"""doctor's CANN-facing checks over synthetic toolkits, OPP roots and kernel manifests:
what GE's online REG_OP compile needs, the vendor folders GE searches first, the toolchain
that built the packaged npubins, and the toolkit version and build decision it reports.

``which`` and ``find_spec`` are test doubles (the real ones would report this machine);
everything else is the real file system. The facts replayed are in docs/cann.md.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from tf_ge_custom import doctor, _path_rules as path_rules
from tf_ge_custom._build import BuildContext, opp_step

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "manifests"
ARCH = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
    os.uname().machine, os.uname().machine)
GXX = "/usr/bin/g++"


@pytest.fixture
def root(tmp_path):
    ctx = BuildContext(str(REPO), str(tmp_path / "pkg" / "tf_ge_custom"), str(tmp_path / "t"))
    opp_step.run(ctx)
    return Path(ctx.opp_root)


def toolkit(home, version="9.2.0-beta.1", drop=()):
    """A synthetic CANN toolkit with what GE's online compile uses (stand-in files)."""
    files = ["include/" + h for h in path_rules.ONLINE_COMPILE_HEADERS]
    files += ["lib64/" + l for l in path_rules.ONLINE_COMPILE_LIBRARIES]
    for rel in files:
        if rel not in drop:
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text("// stand-in\n")
    if version:
        record = home / ("%s-linux" % ARCH) / "ascend_toolkit_install.info"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("package_name=Ascend-cann-toolkit\nversion=%s\n" % version)
    home.mkdir(parents=True, exist_ok=True)
    return home


def context(root, environ, modules=(), gxx=True, cwd=None, build_info=None, atc=None):
    tools = {"g++": GXX if gxx else None, "atc": atc}
    return doctor.Context(
        root=str(root), build_info={} if build_info is None else build_info, environ=environ,
        shell_custom_opp_path=None, find_spec=lambda name: object() if name in modules else None,
        which=lambda name, path=None: tools.get(name), arch=ARCH, cwd=cwd or str(root))


# --- GE's online REG_OP compile -------------------------------------------------------


ONLINE_CHECKS = (doctor.check_online_compiler, doctor.check_online_toolkit,
                 doctor.check_online_working_directory)


def test_online_compile_with_everything_in_place_is_ok(root, tmp_path):
    home = toolkit(tmp_path / "cann")
    ctx = context(root, {"ASCEND_HOME_PATH": str(home)}, cwd=str(tmp_path))
    compiler, toolkit_line, working = [check(ctx) for check in ONLINE_CHECKS]
    for check in (compiler, toolkit_line, working):
        assert check.status == doctor.OK and check.data["problems"] == [], check
    assert GXX in compiler.detail and str(home) in toolkit_line.detail
    assert str(tmp_path) in working.detail


@pytest.mark.parametrize("case, line, words", [
    ("no g++", "online compile: g++", "g++ is not on PATH"),
    ("unset", "online compile: ASCEND_HOME_PATH", "ASCEND_HOME_PATH is unset"),
    ("not a folder", "online compile: ASCEND_HOME_PATH", "is not a folder"),
    ("no operator_reg.h", "online compile: ASCEND_HOME_PATH", "include/graph/operator_reg.h"),
    ("no register.h", "online compile: ASCEND_HOME_PATH", "include/register/register.h"),
    ("no operator.h", "online compile: ASCEND_HOME_PATH", "include/graph/operator.h"),
    ("no libregister", "online compile: ASCEND_HOME_PATH", "lib64/libregister.so"),
    ("no libgraph", "online compile: ASCEND_HOME_PATH", "lib64/libgraph.so"),
    ("no libruntime", "online compile: ASCEND_HOME_PATH", "lib64/libruntime.so"),
    ("space in the path", "online compile: ASCEND_HOME_PATH", "characters GE refuses"),
    ("include/ in the path", "online compile: ASCEND_HOME_PATH",
     "contains 'include/', so GE passes no -I folder"),
    ("cwd not writable", "online compile: working directory",
     "is not writable (GE writes custom_op_tmp_<pid>/ there)"),
])
def test_each_thing_the_online_compile_lacks_is_named_on_its_own_line(root, tmp_path, case, line,
                                                                      words):
    drop = {"no operator_reg.h": ("include/graph/operator_reg.h",),
            "no register.h": ("include/register/register.h",),
            "no operator.h": ("include/graph/operator.h",),
            "no libregister": ("lib64/libregister.so",), "no libgraph": ("lib64/libgraph.so",),
            "no libruntime": ("lib64/libruntime.so",)}.get(case, ())
    folder = {"space in the path": "my cann", "include/ in the path": "include/cann"}.get(case, "cann")
    home = toolkit(tmp_path / folder, drop=drop)
    environ = {"ASCEND_HOME_PATH": str(home)}
    if case == "unset":
        environ = {}
    elif case == "not a folder":
        environ = {"ASCEND_HOME_PATH": str(tmp_path / "gone")}
    cwd = str(tmp_path / "no-such-dir") if case == "cwd not writable" else str(tmp_path)
    quiet = [check(context(root, environ, gxx=case != "no g++", cwd=cwd)) for check in ONLINE_CHECKS]
    # The one line of that need says it, with a fix; the other two are OK.
    assert [c.name for c in quiet if c.status != doctor.OK] == [line], quiet
    finding = [c for c in quiet if c.name == line][0]
    assert finding.status == doctor.WARN and words in finding.detail and finding.fix
    assert "TF Adapter is not installed" in finding.detail
    assert len(finding.data["problems"]) == 1, finding.data["problems"]
    # With TF Adapter installed the online path is in use: the same finding fails.
    used = [check(context(root, environ, modules=("npu_bridge",), gxx=case != "no g++", cwd=cwd))
            for check in ONLINE_CHECKS]
    assert [(c.name, c.status) for c in used if c.status != doctor.OK] == [(line, doctor.FAIL)]
    assert words in [c for c in used if c.name == line][0].detail


# --- vendor folders in front of ASCEND_CUSTOM_OPP_PATH ----------------------------------

VENDOR_SOURCE = """
#include <cstdint>
namespace ge {
class AscendString;
class OpLibRegister {
 public:
  explicit OpLibRegister(const char *vendor_name);
  using OpLibInitFunc = uint32_t (*)(AscendString &);
  OpLibRegister &RegOpLibInit(OpLibInitFunc func);
};
}
static uint32_t Init(ge::AscendString &) { return 0; }
// What REGISTER_OP_LIB(vendor).RegOpLibInit(Init) expands to, minus the copy into a global.
void Register() { ge::OpLibRegister("vendor").RegOpLibInit(Init); }
"""


def _shared_library(path, source):
    path.parent.mkdir(parents=True, exist_ok=True)
    src = path.with_suffix(".cc")
    src.write_text(source)
    subprocess.run(["g++", "-shared", "-fPIC", str(src), "-o", str(path)], check=True)
    src.unlink()
    return path


def test_a_vendor_library_in_an_entry_is_named_before_the_entries(root, tmp_path):
    vendor = tmp_path / "vendor_opp"
    lib = _shared_library(vendor / "op_graph" / "lib" / "linux" / ARCH / "libvendor_ops.so", VENDOR_SOURCE)
    plain = _shared_library(tmp_path / "plain" / "libcust_opapi.so", "int f() { return 1; }\n")
    environ = {"ASCEND_CUSTOM_OPP_PATH": "%s:%s:%s" % (root, vendor, plain.parent)}
    check = doctor.check_custom_opp_search_order(context(root, environ))
    assert check.status == doctor.WARN
    assert "the folders that 1 vendor library registers: %s" % lib in check.detail
    assert "(%s, %s, %s)" % (root, vendor, plain.parent) in check.detail
    assert [v["path"] for v in check.data["vendor_libraries"]] == [str(lib)]
    assert path_rules.registers_vendor_folder(str(lib))
    assert not path_rules.registers_vendor_folder(str(plain))


def test_without_vendor_libraries_the_order_is_the_entries(root, tmp_path):
    _shared_library(tmp_path / "plain" / "libcust_opapi.so", "int f() { return 1; }\n")
    environ = {"ASCEND_CUSTOM_OPP_PATH": "%s::%s" % (root, tmp_path / "plain")}
    check = doctor.check_custom_opp_search_order(context(root, environ))
    assert check.status == doctor.OK
    assert "entries in GE's order: %s, %s;" % (root, tmp_path / "plain") in check.detail


def test_the_symbol_is_found_across_read_chunks(tmp_path):
    data = b"\0" * 10 + path_rules.OP_LIB_REGISTER_SYMBOL + b"12RegOpLibInit" + b"\0" * 10
    path = tmp_path / "lib.so"
    path.write_bytes(data)
    for chunk in (3, 7, 16, 64):
        assert path_rules.registers_vendor_folder(str(path), chunk_size=chunk)
    assert not path_rules.registers_vendor_folder(str(tmp_path / "missing.so"))


# --- the toolchain that built the packaged npubins --------------------------------------


def _manifest(root, soc, cann, fixture="valid_binaries.json"):
    doc = json.loads((FIXTURES / fixture).read_text())
    doc["soc"] = soc
    doc["toolchain"]["cann"] = cann
    folder = root / "kernels" / soc
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(doc, indent=2))


def test_npubins_from_another_cann_warn_with_both_versions(root, tmp_path):
    home = toolkit(tmp_path / "cann", version="9.2.0-beta.1")
    _manifest(root, "Ascend910B1", "8.5.0")
    _manifest(root, "Ascend910_9392", "9.2.0-beta.1")
    check = doctor.check_npubin_toolchain(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.status == doctor.WARN
    assert "Ascend910B1 built with CANN 8.5.0 (triton-ascend 3.2.0, bishengir-compile 1.2.0)" in check.detail
    assert "Ascend910_9392 built with CANN 9.2.0-beta.1" in check.detail
    assert "the installed toolkit is CANN 9.2.0-beta.1 (%s)" % home in check.detail
    assert "--soc Ascend910B1 " in check.fix and "9392" not in check.fix


def test_npubins_from_the_installed_cann_are_ok(root, tmp_path):
    home = toolkit(tmp_path / "cann", version="8.5.0")
    _manifest(root, "Ascend910B1", "8.5.0")
    _manifest(root, "Ascend910_9392", None, fixture="valid_ir_only.json")  # IR only: no CANN
    check = doctor.check_npubin_toolchain(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.status == doctor.OK, check.detail
    assert check.detail == ("npubins for Ascend910B1 built with CANN 8.5.0 (triton-ascend 3.2.0, "
                            "bishengir-compile 1.2.0), the installed toolkit's version")
    assert sorted(check.data["socs"]) == ["Ascend910B1"]


def test_npubins_without_a_toolkit_to_compare_warn(root, tmp_path):
    _manifest(root, "Ascend910B1", "8.5.0")
    assert "no CANN toolkit here" in doctor.check_npubin_toolchain(context(root, {})).detail
    home = toolkit(tmp_path / "cann", version=None)
    check = doctor.check_npubin_toolchain(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.status == doctor.WARN and "records no version" in check.detail


def test_no_npubins_leave_nothing_to_compare(root, tmp_path):
    home = toolkit(tmp_path / "cann")
    check = doctor.check_npubin_toolchain(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.status == doctor.OK and "no packaged npubins" in check.detail


# --- the toolkit version and the build decision ------------------------------------------


def test_the_cann_line_names_the_installed_version(root, tmp_path):
    home = toolkit(tmp_path / "cann", version="9.2.0-beta.1")
    check = doctor.check_cann(context(root, {"ASCEND_HOME_PATH": str(home)}, atc="/x/atc"))
    assert check.status == doctor.OK
    assert check.detail == "CANN 9.2.0-beta.1 at %s; atc: /x/atc" % home


def test_the_ge_library_line_shows_the_recorded_decision(root):
    skipped = {"ge": {"built": False, "reason": "CANN 9.1.0 at /c cannot host the GE library: no "
                      "lib64/libcustom_op_registry_static.a ...; it needs CANN >= 9.2.0-beta.1",
                      "libraries": [], "headers": [], "toolkit": {"version": "9.1.0", "home": "/c",
                                                                  "decision": "skip"}}}
    check = doctor.check_ge_library(context(root, {}, build_info=skipped))
    assert check.status == doctor.WARN and "not built: CANN 9.1.0 at /c cannot host" in check.detail
    header = "op_graph/include/add_custom.h"
    (root / header).write_text("// stand-in\n")
    built = {"ge": {"built": True, "reason": "", "libraries": [], "headers": [header],
                    "toolkit": {"version": "9.2.0-beta.1", "home": "/c", "decision": "build"}}}
    check = doctor.check_ge_library(context(root, {}, build_info=built))
    assert check.detail.startswith("built against CANN 9.2.0-beta.1 at /c: " + header)


def test_the_cann_line_names_the_version_without_atc_too(root, tmp_path):
    home = toolkit(tmp_path / "cann", version="9.1.0")
    check = doctor.check_cann(context(root, {"ASCEND_HOME_PATH": str(home)}))
    assert check.status == doctor.WARN
    assert check.detail.startswith("CANN 9.1.0 at %s; atc is not on PATH" % home)
