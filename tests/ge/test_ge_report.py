"""Finding 5: the GE library's refusals reach GE's error manager (what GE returns to TF
Adapter and writes to plog), not only stderr. ge_ops/cann/ge_report.cc is compile-checked
against the public metadef header that declares REPORT_INNER_ERROR (hicann/metadef
``inc/common/util/error_manager/error_manager.h``) at HEAD and at v9.2.0-beta.1, with the
error-manager branch required (it #errors when the header is not found); kernel_op.cc is
held to route every Fail() through it. Nothing here shows GE printing the message: that
needs an Ascend host (docs/cann.md)."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = next((p / "shared" / "tools" / "ge-syntax-check" for p in SOURCE_ROOT.parents
              if (p / "shared" / "tools" / "ge-syntax-check").is_file()), None)
CACHE = pathlib.Path(os.environ.get("GE_HEADERS_CACHE", "/tmp/ge-headers"))
TAG = "v9.2.0-beta.1"


def _check(cache, native_build):
    gen = native_build.generated
    return subprocess.run(
        ["bash", str(CHECK), str(SOURCE_ROOT / "ge_ops" / "cann" / "ge_report.cc"),
         str(SOURCE_ROOT / "ge_ops" / "cann" / "kernel_op.cc"),
         "--", "-DTF_GE_CUSTOM_REQUIRE_GE_ERROR_MANAGER", "-I" + str(SOURCE_ROOT / "ge_ops" / "cann"),
         "-I" + str(SOURCE_ROOT / "ge_ops" / "core" / "include"), "-I" + str(gen),
         "-I" + str(gen / "op_proto"), "-Werror=return-type", "-Werror=format"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
        env=dict(os.environ, GE_HEADERS_CACHE=str(cache)))


def _needs_checker():
    if CHECK is None:
        pytest.skip("needs the shared syntax checker: ../shared/tools/ge-syntax-check is not beside the checkout")
    if not (CACHE / "ge" / "inc").is_dir() or not (CACHE / "wheel" / "x").is_dir():
        pytest.skip("needs the hicann snapshots: ge-syntax-check's header cache (%s) is not filled" % CACHE)


def test_the_report_compiles_against_head_with_the_error_manager(native_build):
    _needs_checker()
    proc = _check(CACHE, native_build)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_the_report_compiles_against_the_oldest_supported_tag(native_build, tmp_path):
    _needs_checker()
    repos = [os.environ.get("TF_GE_CUSTOM_GE_REPO"), os.environ.get("TF_GE_CUSTOM_METADEF_REPO")]
    if not all(r and subprocess.run(["git", "-C", r, "rev-parse", "--verify", "-q", TAG + "^{commit}"],
                                    stdout=subprocess.DEVNULL).returncode == 0 for r in repos):
        pytest.skip("needs the hicann snapshots: TF_GE_CUSTOM_GE_REPO / TF_GE_CUSTOM_METADEF_REPO with tag %s" % TAG)
    cache = tmp_path / "headers"
    for repo, sub in zip(repos, ("ge", "md")):
        (cache / sub).mkdir(parents=True)
        archive = subprocess.run(["git", "-C", repo, "archive", TAG, "inc"], stdout=subprocess.PIPE, check=True)
        subprocess.run(["tar", "-x", "-C", str(cache / sub)], input=archive.stdout, check=True)
    (cache / "wheel").mkdir()
    os.symlink(str(CACHE / "wheel" / "x"), str(cache / "wheel" / "x"))
    proc = _check(cache, native_build)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_every_failure_of_the_ge_library_goes_through_the_report():
    """kernel_op.cc has one way out on failure, Fail(), and Fail() calls ReportFailure with
    the op type, the node and the SoC: no fputs of its own, no GRAPH_FAILED returned beside it."""
    text = (SOURCE_ROOT / "ge_ops" / "cann" / "kernel_op.cc").read_text()
    body = text[text.index("ge::graphStatus KernelOp::Fail("):]
    body = body[:body.index("\n}\n")]
    assert "ReportFailure(Failure{op_type_" in body
    assert "fputs" not in text and "fprintf" not in text
    returns = re.findall(r"return ge::GRAPH_FAILED", text)
    assert len(returns) == 1  # only Fail() itself
    report = (SOURCE_ROOT / "ge_ops" / "cann" / "ge_report.cc").read_text()
    assert 'REPORT_INNER_ERROR(kInnerErrorCode, "%s", line.c_str())' in report
