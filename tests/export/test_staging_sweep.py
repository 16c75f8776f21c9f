"""Staging and temporary folders a killed command left: claimed by a lock the kernel drops when
the process dies, swept by the next command that makes one of that kind in that place, and
never one whose owner still runs, nor anything that is not such a folder of this user's.

The owner here is a fresh Python process that makes a folder and waits; the oracle is the
file system after each sweep."""
import os
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
    old = tmp_path / (prefix + "unclaimed-old")  # no owner file, an hour and more old
    old.mkdir()
    (old / "model.pb").write_bytes(b"partial")
    hour_ago = time.time() - owned_folders.UNCLAIMED_AGE_SECONDS - 60
    os.utime(str(old), (hour_ago, hour_ago))
    other = tmp_path / "other-kind-of-folder"
    other.mkdir()
    kept = [prefix + "link", prefix + "file", prefix + "unclaimed-young", "other-kind-of-folder"]
    if os.geteuid() == 0:  # root can make one of another user's, unclaimed and old
        foreign = tmp_path / (prefix + "another-users")
        foreign.mkdir()
        os.chown(str(foreign), 65534, 65534)
        os.utime(str(foreign), (hour_ago, hour_ago))
        kept.append(foreign.name)
    assert owned_folders.sweep(str(tmp_path), prefix) == [str(old)]
    assert sorted(os.listdir(str(tmp_path))) == sorted(["target"] + kept)
    assert (target / "keep").read_text() == "a user's file"
