"""What the built GE library shows the dynamic linker (docs/ge-library.md, "The copy leaves
with its model"), read by binutils' readelf from the library GE in the loop builds with the
package's own options (ge_ops/cmake/ge_library_link.cmake), at every tag:

- no ``STB_GNU_UNIQUE`` symbol (readelf's ``UNIQUE`` binding): glibc never unloads a library
  that holds one, so a model's memfd copy would stay after its model and be handed to the next
  model under the same /proc/self/fd/N name;
- no defined symbol of default visibility beyond what GE looks up in the library by name: the
  creator lookups of GE's OM loader, read from the tag's own source
  (base/common/helper/custom_op_registry_builder.cc, its ``k...Symbol`` constants), all three
  present.

The reading itself is held to a library that has a unique symbol and extra exports, compiled
here by this machine's compiler without the package's options."""
import json
import pathlib
import re
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.kind("oracle")

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
UPSTREAM = json.loads((SOURCE_ROOT / "tests" / "native" / "ge_in_loop" / "upstream_files.json").read_text())["tags"]
TAGS = sorted(UPSTREAM)
READELF = shutil.which("readelf")
CXX = shutil.which("g++") or shutil.which("c++")
# hicann/ge: where GE's OM loader names what it dlsyms in a model's custom-op library.
LOOKUP_SOURCE = "base/common/helper/custom_op_registry_builder.cc"
_SYMBOL_CONSTANT = re.compile(r'constexpr\s+const\s+char\s*\*\s*k\w*Symbol\s*=\s*"(\w+)"')


def dynamic_symbols(path):
    """[(name, bind, visibility, defined)] of the file's .dynsym, as readelf lists them."""
    assert READELF, "this test needs binutils' readelf"
    out = subprocess.run([READELF, "--dyn-syms", "-W", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        words = line.split()
        # "   12: 0000000000001139    11 FUNC    GLOBAL DEFAULT   14 name"
        if len(words) >= 8 and words[0].endswith(":") and words[0][:-1].isdigit():
            name = words[7].split("@")[0]
            symbols.append((name, words[4], words[5], words[6] != "UND"))
    assert symbols, "readelf listed no dynamic symbol of %s:\n%s" % (path, out[-2000:])
    return symbols


def unique_symbols(path):
    return sorted(name for name, bind, _, _ in dynamic_symbols(path) if bind == "UNIQUE")


def exported(path):
    """The defined symbols another object can bind to: global, weak or unique, default visibility."""
    return sorted(name for name, bind, visibility, defined in dynamic_symbols(path)
                  if defined and bind in ("GLOBAL", "WEAK", "UNIQUE") and visibility == "DEFAULT")


def ge_lookups(snapshots, tag):
    """The symbol names GE's OM loader looks up in a model's custom-op library at that tag."""
    ref = UPSTREAM[tag]["ge"]
    text = subprocess.run(["git", "--git-dir", str(snapshots.ge), "show", "%s:%s" % (ref, LOOKUP_SOURCE)],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    names = sorted(_SYMBOL_CONSTANT.findall(text))
    assert len(names) == 3, (tag, names)
    return names


@pytest.mark.parametrize("tag", TAGS)
def test_the_ge_library_has_no_unique_symbol_and_exports_only_what_ge_looks_up(ge_in_loop, hicann_snapshots, tag):
    _, exe = ge_in_loop(tag, sanitize=True)
    library = exe.parent / "libtf_ge_custom_ge.so"
    assert library.is_file(), library
    assert unique_symbols(library) == []
    assert exported(library) == ge_lookups(hicann_snapshots, tag)


# An inline function's static and a class with default visibility: what GCC makes of them in a
# shared library without the package's options (a unique object, exported vtable and typeinfo);
# the lookup is marked visible as GE's registry source marks it (custom_op_pull_registry.cc).
PROBE = """
#include <string>
struct Probe { virtual ~Probe(); virtual int Value() const { return 1; } };
Probe::~Probe() {}
inline const std::string &Key() { static const std::string key = "ge.socVersion"; return key; }
extern "C" __attribute__((visibility("default"))) unsigned long GetRegisteredCustomOpCreatorNum() {
  return Key().size() + Probe().Value();
}
"""


def test_the_reading_finds_a_unique_symbol_and_extra_exports_where_gcc_makes_them(tmp_path):
    assert CXX, "this test needs this machine's C++ compiler"
    source = tmp_path / "probe.cc"
    source.write_text(PROBE)
    exports = tmp_path / "probe.exports"
    exports.write_text("{ global: GetRegisteredCustomOpCreatorNum; local: *; };\n")

    def build(name, flags):
        out = tmp_path / name
        # the old string ABI, as every library of a GE process (ge_ops/CMakeLists.txt)
        subprocess.run([CXX, "-shared", "-fPIC", "-O1", "-D_GLIBCXX_USE_CXX11_ABI=0", "-o", str(out), str(source)]
                       + flags, check=True)
        return out

    plain = build("libplain.so", [])
    assert "_ZZ3KeyvE3key" in unique_symbols(plain)  # Key()'s static, STB_GNU_UNIQUE
    assert {"_ZTV5Probe", "_ZTI5Probe", "GetRegisteredCustomOpCreatorNum"} <= set(exported(plain))
    # The package's options (ge_ops/cmake/ge_library_link.cmake) on the same source.
    package = build("libpackage.so", ["-fvisibility=hidden", "-fvisibility-inlines-hidden", "-fno-gnu-unique",
                                      "-Wl,-Bsymbolic-functions", "-Wl,--version-script=" + str(exports)])
    assert unique_symbols(package) == []
    assert exported(package) == ["GetRegisteredCustomOpCreatorNum"]
