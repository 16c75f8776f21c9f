"""doctor on kernel sets a previous release built under its entry naming (every dtype's
kernel of a variant named after its @triton.jit function): not damaged, passed over by the GE
library, reported as WARN with the rebuild to do; against the real manifest reader and the
shared fixture of such a set (tests/fixtures/manifests/outdated_entry_naming_1.json)."""
import json
import os
import pathlib
import types

import pytest

import tf_ge_custom
from tf_ge_custom import doctor, kernel_manifest
from tf_ge_custom.doctor import kernels as kernel_checks

pytestmark = pytest.mark.kind("plumbing")

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "manifests"


def _opp_root(tmp_path, soc="Ascend910B1"):
    root = tmp_path / "opp"
    folder = root / "kernels" / soc
    folder.mkdir(parents=True)
    old = json.loads((FIXTURES / "outdated_entry_naming_1.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(dict(old, soc=soc)))
    return root


def _context(root, environ=None):
    return types.SimpleNamespace(root=str(root), build_info={}, environ=dict(environ or {}),
                                 manifest_reader=lambda: kernel_manifest, board=None)


def test_an_outdated_package_set_warns_with_its_rebuild_not_a_failure(tmp_path):
    check = doctor.check_kernels(_context(_opp_root(tmp_path)))
    assert check.status == doctor.WARN
    assert "Ascend910B1: built by another tf-ge-custom release under another entry naming than " \
           "this package's 2, so the GE library passes over it" in check.detail
    assert check.data["socs"]["Ascend910B1"] == {"error": "outdated"}
    fix = str(check.fix)
    assert ("rebuilt by tf-ge-custom >= %s (entry naming 2): rerun build-kernels" % tf_ge_custom.__version__) in fix
    assert "--soc Ascend910B1" in fix


def test_an_outdated_bundle_is_named_in_the_kernel_sets_line(tmp_path):
    empty = tmp_path / "package"
    (empty / "kernels").mkdir(parents=True)
    bundle = _opp_root(tmp_path, "Ascend910B3") / "kernels"
    os.chmod(str(tmp_path), 0o700)
    check = kernel_checks.check_board_kernels(_context(empty, {"TF_GE_CUSTOM_KERNELS": str(bundle)}))
    assert check.status == doctor.WARN, check.detail
    assert "Ascend910B3 (bundle %s) was built by another tf-ge-custom release" % bundle in check.detail
    assert check.data["outdated"] == ["Ascend910B3"]
    assert "--bundle %s" % bundle in str(check.fix)
