"""Staging and temporary folders a killed command left: claimed by a lock the kernel drops when
the process dies, swept by the next command that makes one of that kind in that place, and
never one whose owner still runs, nor anything that is not such a folder of this user's.

The owner here is a fresh Python process that makes a folder and waits; the oracle is the
file system after each sweep."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tf_ge_custom import _owned_folders as owned_folders
from tf_ge_custom.export import staging

pytestmark = pytest.mark.kind("oracle")

OWNER = """
import sys, time
from tf_ge_custom import _owned_folders
folder = _owned_folders.make(sys.argv[1], sys.argv[2])
print(folder.path, flush=True)
time.sleep(600)
"""


def _owner(parent, prefix):
    proc = subprocess.Popen([sys.executable, "-c", OWNER, str(parent), prefix], stdout=subprocess.PIPE,
                            universal_newlines=True)
    return proc, proc.stdout.readline().strip()


def test_a_live_owners_folder_is_kept_and_a_killed_ones_is_swept_with_a_line(tmp_path):
    proc, path = _owner(tmp_path, staging.STAGING_PREFIX)
    try:
        said = []
        assert owned_folders.sweep(str(tmp_path), staging.STAGING_PREFIX, said.append) == []
        assert os.path.isdir(path) and said == []  # another export writing beside this one
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert os.path.isdir(path)  # nobody cleaned up
        assert owned_folders.sweep(str(tmp_path), staging.STAGING_PREFIX, said.append) == [path]
        assert said == [path] and os.listdir(str(tmp_path)) == []
    finally:
        proc.kill()
        proc.wait()


def test_making_a_staging_folder_sweeps_first_and_says_so(tmp_path, capsys):
    proc, path = _owner(tmp_path, staging.STAGING_PREFIX)
    proc.kill()
    proc.wait()
    with staging.Staging(str(tmp_path)) as stage:
        assert os.listdir(str(tmp_path)) == [os.path.basename(stage.dir)]
    assert os.listdir(str(tmp_path)) == []
    err = capsys.readouterr().err
    assert err == "note: removed %s, left behind by a tf-ge-custom command that was killed before it could " \
                  "clean up\n" % path


def test_what_is_not_an_unowned_folder_of_this_users_is_never_swept(tmp_path):
    prefix = staging.STAGING_PREFIX
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("a user's file")
    os.symlink(str(target), str(tmp_path / (prefix + "link")))  # a link named like one: not followed
    (tmp_path / (prefix + "file")).write_text("a file")
    young = tmp_path / (prefix + "unclaimed-young")  # no owner file, made a moment ago
    young.mkdir()
    old = tmp_path / (prefix + "unclaimed-old")  # no owner file, a day old: still not known to be ours
    old.mkdir()
    (old / "model.pb").write_bytes(b"partial")
    day_ago = time.time() - 86400
    os.utime(str(old), (day_ago, day_ago))
    forged = tmp_path / (prefix + "forged")  # the user's files behind an owner file anyone can write
    forged.mkdir()
    (forged / "notes.txt").write_text("the user's")
    (forged / owned_folders.OWNER_FILE).write_text("12345\nfolder 1 2\nfile 3 4\n")
    copied = tmp_path / (prefix + "copied")  # a copy of a real claim: new inodes
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc, path = _owner(elsewhere, prefix)
    proc.kill()
    proc.wait()
    shutil.copytree(path, str(copied))
    shutil.rmtree(str(elsewhere))
    other = tmp_path / "other-kind-of-folder"
    other.mkdir()
    kept = [prefix + "link", prefix + "file", prefix + "unclaimed-young", prefix + "unclaimed-old",
            prefix + "forged", prefix + "copied", "other-kind-of-folder"]
    if os.geteuid() == 0:  # root can make one of another user's, unclaimed and old
        foreign = tmp_path / (prefix + "another-users")
        foreign.mkdir()
        os.chown(str(foreign), 65534, 65534)
        os.utime(str(foreign), (day_ago, day_ago))
        kept.append(foreign.name)
    before = {p: sorted(os.listdir(str(tmp_path / p))) for p in kept if (tmp_path / p).is_dir()}
    assert owned_folders.sweep(str(tmp_path), prefix) == []
    assert sorted(os.listdir(str(tmp_path))) == sorted(["target"] + kept)
    assert {p: sorted(os.listdir(str(tmp_path / p))) for p in before} == before
    assert (target / "keep").read_text() == "a user's file"
    assert (forged / "notes.txt").read_text() == "the user's"
