"""Nothing the package writes goes through a link planted where it writes (docs/kernels.md,
"What the package trusts"): ``tf-ge-custom export --to om`` writes ``atc``'s log beside the
products, and a link planted at ``out/m.atc.log`` (here to a stand-in of ``~/.bashrc``) is
replaced, its target left as it was.

``atc`` is tests/export/doubles/atc_double.py, a TEST DOUBLE: this test asserts what our code
wrote and left alone, never what the double produced. The package is a copy of the installed
one given a stand-in GE library and the shared fixture's npubins, so that the export gets as
far as running atc on a host without CANN.
"""
import os
import shutil
import sys

import pytest

pytestmark = pytest.mark.kind("doubles")

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT_DOUBLES = os.path.join(HERE, "..", "export", "doubles")
FIXTURES = os.path.join(HERE, "..", "fixtures", "manifests")


def _deliverables(package):
    """The stand-in GE library and parser plugin, and Ascend910B1's npubins, in the copy."""
    from tf_ge_custom import opp

    root = os.path.join(str(package), "opp")
    for rel in (os.path.join(opp.ge_library_dir(opp.host_arch()), "libtf_ge_custom_ge.so"),
                os.path.join("framework", "tensorflow", "libtf_ge_custom_parsers.so")):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(b"stand-in")
    kernels = os.path.join(root, "kernels", "Ascend910B1")
    os.makedirs(kernels)
    shutil.copy(os.path.join(FIXTURES, "valid_binaries.json"), os.path.join(kernels, "manifest.json"))
    for name in os.listdir(os.path.join(FIXTURES, "valid_binaries")):
        shutil.copy(os.path.join(FIXTURES, "valid_binaries", name), os.path.join(kernels, name))


@pytest.mark.slow
def test_a_link_planted_at_the_atc_log_is_replaced_not_written_through(tf_ge_custom_cmd, user, models,
                                                                      package_copy, tmp_path):
    site, package = package_copy
    _deliverables(package)
    atc = tmp_path / "atc"
    atc.write_text('#!/bin/sh\nexec "%s" "%s" "$@"\n' % (sys.executable, os.path.join(EXPORT_DOUBLES, "atc_double.py")))
    atc.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH  # the user's own\n")
    out = tmp_path / "out"
    env = user.env(PYTHONPATH=str(site), HOME=str(home), TF_GE_CUSTOM_ATC=str(atc),
                   TF_GE_CUSTOM_TEST_RECORD=str(tmp_path / "record.json"),
                   ASCEND_HOME_PATH=str(tmp_path / "cann"))
    args = ("export", models["frozen_pb"], "--to", "om", "--soc", "Ascend910B1", "--output", str(out / "m"),
            "--input-shape", "x:4,8;y:4,8", "--no-verify")
    first = tf_ge_custom_cmd(*args, cwd=tmp_path, env=env)
    assert first.status == 0, first
    # Between two exports (the second replaces the first's products), a link is planted.
    (out / "m.atc.log").unlink()
    (out / "m.atc.log").symlink_to(bashrc)
    (tmp_path / "record.json").unlink()
    ran = tf_ge_custom_cmd(*args, cwd=tmp_path, env=env)
    assert ran.status == 0, ran
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH  # the user's own\n"
    log = out / "m.atc.log"
    assert not log.is_symlink() and log.is_file()
    assert log.read_text().startswith("$ %s " % atc)  # the command line heads the log we wrote
    assert (tmp_path / "record.json").is_file()  # atc did run
    assert (out / "m.om").is_file()


def test_list_kernels_refuses_a_kernel_cache_its_group_may_write(tf_ge_custom_cmd, user, tmp_path):
    """The trust rule (docs/kernels.md): a folder writable by its group is another user's to fill
    with kernels, so the cache there is refused, naming why; the same folder without the group's
    write bit is taken."""
    cache = tmp_path / "cache"
    cache.mkdir()
    env = user.env(TF_GE_CUSTOM_CACHE_DIR=str(cache))
    os.chmod(str(cache), 0o770)
    refused = tf_ge_custom_cmd("list-kernels", "--cache", cwd=tmp_path, env=env)
    assert refused.status == 1 and "kernel cache: %s (from TF_GE_CUSTOM_CACHE_DIR) REFUSED" % cache in refused.out
    assert "%s is writable by its group (mode 0770)" % cache in refused.err, refused
    os.chmod(str(cache), 0o750)
    taken = tf_ge_custom_cmd("list-kernels", "--cache", cwd=tmp_path, env=env)
    assert taken.status == 0 and "REFUSED" not in taken.text, taken
    assert "%s: no kernels compiled yet" % cache in taken.out, taken
