"""The GE library's failure reports reach GE's error manager, and the manager keeps them.

metadef's error manager formats a report into ``LIMIT_PER_MESSAGE`` bytes (1024 with the NUL,
``inc/common/util/error_manager/error_manager.h``) and appends
``[FUNC:..][FILE:..][LINE:..]`` in the same bytes; a report for which either does not fit is
dropped (GE's own stand-in for the manager, ``tests/depends/error_manager/src/error_manager_stub.cc``
in hicann/ge, does so; the GE-in-the-loop stand-in, ``tests/native/ge_in_loop/stand_ins/src/error_manager.cc``,
does the same). ``ge_ops/cann/ge_report.cc`` therefore sends one short line (op, node, SoC,
what failed, the builder's log, where the full text is) with GE's operator-error code EZ9999,
and writes the full text to stderr.

Here ``ge_report.cc`` is built with that stand-in against the real header of each metadef tag
(``tests/native/core/report_driver.cc``) under ASan and UBSan, and fed the longest failures the
library produces; the limit is read from the header itself. ``ge_report.cc`` and
``kernel_op.cc`` are also compile-checked by the shared syntax checker at HEAD and at
v9.2.0-beta.1 with the error-manager branch required. GE in the loop
(``tests/native/ge_in_loop/driver/error_report_tests.cc``) drives the same reports through the op's
Compile and Execute. Nothing here shows GE printing the message: that needs an Ascend host.
"""
import os
import pathlib
import re
import subprocess

import pytest

pytestmark = pytest.mark.kind("oracle")

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
CANN = SOURCE_ROOT / "ge_ops" / "cann"
STAND_INS = SOURCE_ROOT / "tests" / "native" / "ge_in_loop" / "stand_ins"
OLDEST_TAG = "v9.2.0-beta.1"
TAGS = ("HEAD", OLDEST_TAG)
HEADER_DIR = "inc/common/util/error_manager"


def _check_flags(native_build):
    gen = native_build.generated
    return ["-DTF_GE_CUSTOM_REQUIRE_GE_ERROR_MANAGER", "-I" + str(CANN),
            "-I" + str(SOURCE_ROOT / "ge_ops" / "core" / "include"), "-I" + str(gen),
            "-I" + str(gen / "op_proto"), "-Werror=return-type", "-Werror=format"]


def test_the_report_compiles_against_head_with_the_error_manager(ge_syntax_check, request):
    native_build = request.getfixturevalue("native_build")
    proc = ge_syntax_check([CANN / "ge_report.cc", CANN / "kernel_op.cc"], _check_flags(native_build))
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_the_report_compiles_against_the_oldest_supported_tag(ge_syntax_check, hicann_snapshots, request,
                                                              tmp_path, needs):
    needs("hicann_snapshots", "the oldest tag's headers (TF_GE_CUSTOM_GE_REPO, TF_GE_CUSTOM_METADEF_REPO)")
    hicann_snapshots.require(ge_tags=[OLDEST_TAG], metadef_tags=[OLDEST_TAG])
    native_build = request.getfixturevalue("native_build")
    cache = pathlib.Path(os.environ.get("GE_HEADERS_CACHE") or "/tmp/ge-headers")
    if not (cache / "wheel" / "x").is_dir():  # the checker lays its cache out on first use
        assert ge_syntax_check([CANN / "ge_report.cc"], _check_flags(native_build)).returncode == 0
    old = tmp_path / "headers"
    hicann_snapshots.extract(hicann_snapshots.ge, OLDEST_TAG, ["inc"], old / "ge")
    hicann_snapshots.extract(hicann_snapshots.metadef, OLDEST_TAG, ["inc"], old / "md")
    (old / "wheel").mkdir()
    os.symlink(str(cache / "wheel" / "x"), str(old / "wheel" / "x"))
    # The checker beside the checkout (the ge_syntax_check fixture found it), on that cache.
    checker = next(p / "shared" / "tools" / "ge-syntax-check" for p in SOURCE_ROOT.parents
                   if (p / "shared" / "tools" / "ge-syntax-check").is_file())
    proc = subprocess.run(["bash", str(checker), str(CANN / "ge_report.cc"), str(CANN / "kernel_op.cc"),
                           "--"] + _check_flags(native_build),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          env=dict(os.environ, GE_HEADERS_CACHE=str(old)))
    assert proc.returncode == 0, proc.stdout[-4000:]


# ---- what the manager keeps ----

class Driver(object):
    """ge_report.cc + the error-manager stand-in + report_driver.cc, built against one tag's
    metadef header; ``limit`` is that header's LIMIT_PER_MESSAGE."""

    def __init__(self, exe, limit):
        self.exe, self.limit = exe, limit

    def run(self, records):
        """[(op, node, soc, message)] -> ([{"kept": [(code, message, location)], "dropped": [n]}], stderr)"""
        data = "\x1e".join("\x1f".join(r) for r in records).encode("utf-8")
        env = dict(os.environ, ASAN_OPTIONS="abort_on_error=1:detect_leaks=1",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
        proc = subprocess.run([self.exe], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-4000:]
        results, current = [], {"kept": [], "dropped": []}
        for line in proc.stdout.decode("ascii").splitlines():
            word, _, rest = line.partition(" ")
            if word == "KEPT":
                current["kept"].append(tuple(b"" if f == "-" else bytes.fromhex(f) for f in rest.split()))
            elif word == "DROPPED":
                current["dropped"].append(int(rest))
            elif word == "END":
                results.append(current)
                current = {"kept": [], "dropped": []}
        assert len(results) == len(records)
        return results, proc.stderr.decode("utf-8")


@pytest.fixture(scope="module", params=TAGS)
def driver(request, hicann_snapshots, tmp_path_factory):
    tag = request.param
    hicann_snapshots.require(metadef_tags=[tag])
    where = tmp_path_factory.mktemp("report-" + tag.replace(".", "_"))
    hicann_snapshots.extract(hicann_snapshots.metadef, tag, [HEADER_DIR], where)
    header = (where / HEADER_DIR / "error_manager.h").read_text()
    limit = int(re.search(r"LIMIT_PER_MESSAGE\s*=\s*(\d+)U?;", header).group(1))
    exe = where / "report_driver"
    subprocess.run(["g++", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=0", "-Wall", "-Wextra", "-Werror",
                    "-Wno-unused-parameter", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-DTF_GE_CUSTOM_REQUIRE_GE_ERROR_MANAGER", "-I" + str(where / "inc"),
                    "-I" + str(STAND_INS / "include"), "-I" + str(CANN),
                    str(SOURCE_ROOT / "tests" / "native" / "core" / "report_driver.cc"), str(CANN / "ge_report.cc"),
                    str(STAND_INS / "src" / "error_manager.cc"), "-o", str(exe)], check=True)
    return Driver(str(exe), limit)


def _full_line(op, node, soc, message):
    return "[tf-ge-custom] %s node %s (SoC %s): %s" % (op, node, soc, message)


def _kept_whole(result, limit):
    """The one report kept (none dropped), and that it fits as metadef counts."""
    assert result["dropped"] == [] and len(result["kept"]) == 1, result
    code, message, location = result["kept"][0]
    assert len(message) + len(location) + 1 <= limit
    assert location.startswith(b"[FUNC:") and b"[FILE:ge_report.cc]" in location
    return code.decode("ascii"), message.decode("utf-8")  # strict: no UTF-8 sequence cut


# The longest messages the library makes (the wording of ge_ops/core/src/kernel_compiler.cc):
# a failed compile with its builder, its log and the log's last lines (3 lines, 600 chars).
CACHE_LOG = ("/home/a-user-with-a-long-name/.cache/tf_ge_custom/kernels/v1/"
             "9f2c4e1a7b3d5f60812345678abcdef0123456789abcdef/Ascend910B4-1/float16.4711.log")
TAIL = " | ".join(["bishengir-compile: error: line %d of the lowering: %s" % (i, "y" * 140) for i in range(3)])
COMPILE_FAILURE = ("cannot compile the AddCustom kernels for SoC Ascend910B4-1, dtype float16: "
                   "hivmc failed (exit status 1) on the row_16x256 variant: " + "z" * 500 +
                   " (builder: /opt/venvs/tf-ge-custom-builder-python3.9/bin/python3.9, from "
                   "TF_GE_CUSTOM_PYTHON); the log " + CACHE_LOG + " ends: " + TAIL)
NO_PYTHON = ("no Python can run the kernel builder (each must import tf_ge_custom and triton): " +
             "; ".join("/usr/bin/python3.%d (from PATH): it stopped (exit status 1) and printed no result; "
                       "its output ends: %s" % (v, "Traceback ... " + "w" * 560) for v in (7, 8, 9)) +
             "; install triton-ascend into that Python (pip install triton-ascend==3.2.0 pybind11), or run "
             "`tf-ge-custom setup-builder`")
NODE = "model/encoder/" + "/".join("block_%d/attention/output" % i for i in range(100)) + "/add_custom"
ODD = ("shapes [8,1024] and [64] do not broadcast:\n\tline two with 100%% and %s and %n\n" +
       "é中" * 900 + " end of the odd text")


def test_a_short_failure_arrives_whole_as_an_operator_error(driver):
    message = "dtype float64 is not one of float32, float16, bfloat16, int32 (AddCustom's op definition)"
    (result,), stderr = driver.run([("AddCustom", "add_1", "Ascend910B1", message)])
    code, kept = _kept_whole(result, driver.limit)
    assert code == "EZ9999"
    assert kept == _full_line("AddCustom", "add_1", "Ascend910B1", message)
    assert kept + "\n" in stderr


@pytest.mark.parametrize("node, soc, message, must_hold", [
    ("encoder/add_7", "Ascend910B4-1", COMPILE_FAILURE,
     ["cannot compile the AddCustom kernels for SoC Ascend910B4-1, dtype float16: hivmc failed",
      "; builder log " + CACHE_LOG]),
    ("encoder/add_7", "Ascend910B1", NO_PYTHON, ["no Python can run the kernel builder"]),
    (NODE, "Ascend910_9391", "shapes [3] and [4] do not broadcast", ["/add_custom (SoC Ascend910_9391): ",
                                                                     "shapes [3] and [4] do not broadcast"]),
    ("odd_node", "Ascend910B1", ODD, ["shapes [8,1024] and [64] do not broadcast:  line two with 100%% and %s"]),
], ids=["compile_failure", "no_python", "long_node", "odd_text"])
def test_the_longest_failures_arrive_as_one_short_line_and_whole_on_stderr(driver, node, soc, message, must_hold):
    (result,), stderr = driver.run([("AddCustom", node, soc, message)])
    code, kept = _kept_whole(result, driver.limit)
    assert code == "EZ9999"
    assert "\n" not in kept and "\t" not in kept
    assert kept.startswith("[tf-ge-custom] AddCustom node ")
    assert "(SoC %s): " % soc in kept
    for part in must_hold:
        assert part in kept, (part, kept)
    assert kept.endswith("; full text on stderr")
    assert _full_line("AddCustom", node, soc, message) + "\n" in stderr  # every byte, once


def test_the_stand_in_drops_what_metadef_drops_and_our_lines_would_be(driver):
    # The manager's rule at its edge: text + location + NUL within LIMIT_PER_MESSAGE.
    (probe,), _ = driver.run([("RAW", "", "", "x")])
    location = len(probe["kept"][0][2])
    longest = driver.limit - 1 - location
    results, _ = driver.run([("RAW", "", "", "r" * longest), ("RAW", "", "", "r" * (longest + 1)),
                             ("RAW", "", "", _full_line("AddCustom", "encoder/add_7", "Ascend910B4-1",
                                                        COMPILE_FAILURE))])
    assert [len(r["kept"]) for r in results] == [1, 0, 0]
    assert results[0]["kept"][0][1] == b"r" * longest
    assert results[1]["dropped"] == [driver.limit]
    assert results[2]["dropped"] and results[2]["dropped"][0] > driver.limit  # sent whole, it is lost
