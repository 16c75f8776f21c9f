"""A folder the user names for a command to make and fill (``setup-builder --venv DIR``,
``run-om --output-dir DIR``, ``build-kernels --bundle DIR``) is never one of the user's own:
a non-empty folder the command did not make is refused before anything is written, and left
exactly as it was (its tree, every file's bytes, every mode and time); a new, empty, or
earlier run's folder is taken. Each through the installed console script in a fresh process;
the OM runner is a TEST DOUBLE (tests/export/doubles/om_runner_double.py) where one is needed.
"""
import os
import stat
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.kind("doubles")


def _users_folder(folder):
    """A folder of a user's own: their bin/activate (what python -m venv overwrote), notes, an
    executable, a read-only file, a subfolder, a link."""
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "activate").write_text("# my own activate script\nexport MINE=1\n")
    (folder / "bin" / "tool").write_text("#!/bin/sh\necho mine\n")
    os.chmod(str(folder / "bin" / "tool"), 0o750)
    (folder / "notes.txt").write_bytes(b"\x00\x01 my notes \xff")
    (folder / "readonly.cfg").write_text("keep=1\n")
    os.chmod(str(folder / "readonly.cfg"), 0o400)
    (folder / "run-om.log.keep").write_text("not a log of run-om's\n")
    os.symlink("notes.txt", str(folder / "link"))
    os.chmod(str(folder / "bin"), 0o711)
    return folder


def tree(folder):
    """Every entry under ``folder`` (itself included): its kind and mode, its bytes (a file) or
    target (a link), its modification time."""
    found = {}
    for where, dirs, files in os.walk(str(folder)):
        for name in [""] + dirs + files:
            path = os.path.join(where, name) if name else where
            if name == "" and where != str(folder):
                continue
            info = os.lstat(path)
            content = (os.readlink(path) if stat.S_ISLNK(info.st_mode)
                       else open(path, "rb").read() if stat.S_ISREG(info.st_mode) else None)
            found[os.path.relpath(path, str(folder))] = (info.st_mode, content, info.st_mtime_ns)
    return found


def _command(name, folder, user, om_runner_double):
    if name == "setup-builder":
        return ["setup-builder", "--python", sys.executable, "--venv", str(folder)], user.env(), "--venv"
    if name == "run-om":
        args, env = om_runner_double
        return args + ["--output-dir", str(folder)], env, "--output-dir"
    assert name == "build-kernels --bundle"
    return ["build-kernels", "--bundle", str(folder), "--ir-only", "--quiet"], user.env(), "--bundle"


@pytest.mark.parametrize("name", ["setup-builder", "run-om", "build-kernels --bundle"])
def test_a_users_folder_is_refused_before_anything_and_left_as_it_was(tf_ge_custom_cmd, user, om_runner_double,
                                                                     tmp_path, name):
    folder = _users_folder(tmp_path / "mine")
    before = tree(folder)
    args, env, option = _command(name, folder, user, om_runner_double)
    ran = tf_ge_custom_cmd(*args, cwd=tmp_path, env=env, timeout=300)
    assert ran.status == 2, ran  # before: setup-builder exited 1 after overwriting bin/activate
    errors = [l for l in ran.err.splitlines() if ": error: " in l]
    assert len(errors) == 1 and ("%s %s holds what %s did not make (" % (option, folder, name)) in errors[0], ran
    assert "bin, link, notes.txt" in errors[0] and "nothing was changed" in errors[0], ran
    assert tree(folder) == before
    assert not os.path.exists(str(tmp_path / "record.json"))  # the OM runner never ran


@pytest.mark.parametrize("name", ["setup-builder", "run-om", "build-kernels --bundle"])
def test_a_users_folder_with_every_marker_forged_is_refused_and_left_as_it_was(tf_ge_custom_cmd, user,
                                                                              om_runner_double, tmp_path, name):
    """The files an older release took as proof (pyvenv.cfg, the builder's copy,
    run-om.log, bundle.json) and the command's own record file, copied or written by hand."""
    made = tmp_path / "made"
    args, env, option = _command(name, made, user, om_runner_double)
    kind = {"setup-builder": "builder", "run-om": "run-om", "build-kernels --bundle": "kernel-bundle"}[name]
    if name == "run-om":  # a real record to copy (the others' need pip or a compiler: hand-written below)
        assert tf_ge_custom_cmd(*args, cwd=tmp_path, env=env, timeout=300).status == 0
    folder = _users_folder(tmp_path / "mine")
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    copy = folder / "lib" / "python3.11" / "site-packages" / "tf_ge_custom"
    copy.mkdir(parents=True)
    (copy / "builder_copy.json").write_text("{}")
    (folder / "run-om.log").write_text("")
    (folder / "bundle.json").write_text('{"format": "tf-ge-custom-kernel-bundle"}')
    record = made / (".tf-ge-custom-" + kind)
    (folder / (".tf-ge-custom-" + kind)).write_bytes(
        record.read_bytes() if record.exists() else b'{"title": "tf-ge-custom made-record"}')
    before = tree(folder)
    args, env, option = _command(name, folder, user, om_runner_double)
    ran = tf_ge_custom_cmd(*args, cwd=tmp_path, env=env, timeout=300)
    assert ran.status == 2 and ("%s %s holds what %s did not make (" % (option, folder, name)) in ran.err, ran
    assert tree(folder) == before


def test_run_om_takes_a_new_folder_then_the_one_it_made_and_an_empty_one(tf_ge_custom_cmd, om_runner_double,
                                                                          tmp_path):
    args, env = om_runner_double
    for folder in (tmp_path / "new" / "out", tmp_path / "new" / "out", tmp_path / "empty"):
        if folder.name == "empty":
            folder.mkdir()
        ran = tf_ge_custom_cmd(*(args + ["--output-dir", str(folder)]), cwd=tmp_path, env=env)
        assert ran.status == 0 and ran.out.splitlines()[-1].startswith("RUN_OM=UNCHECKED"), ran
        assert sorted(os.listdir(str(folder))) == [".tf-ge-custom-run-om", "run-om.log", "z.npy"]
        np.testing.assert_array_equal(np.load(str(folder / "z.npy")), 2 * np.arange(6, dtype=np.float32))
    (tmp_path / "empty" / "mine.txt").write_text("added by the user")  # no longer only run-om's
    ran = tf_ge_custom_cmd(*(args + ["--output-dir", str(tmp_path / "empty")]), cwd=tmp_path, env=env)
    assert ran.status == 2 and "holds what run-om did not make (mine.txt;" in ran.err, ran
    assert (tmp_path / "empty" / "mine.txt").read_text() == "added by the user"


def test_setup_builder_refuses_a_file_or_a_dangling_link_in_place_of_the_venv(tf_ge_custom_cmd, user, tmp_path):
    (tmp_path / "file").write_text("mine")
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dangling"))
    for name, words in (("file", "is not a folder"), ("dangling", "is a symbolic link, which setup-builder "
                                                                  "does not follow")):
        ran = tf_ge_custom_cmd("setup-builder", "--python", sys.executable, "--venv", str(tmp_path / name),
                               cwd=tmp_path, env=user.env())
        assert ran.status == 2 and ("--venv %s %s" % (tmp_path / name, words)) in ran.err, ran
    assert (tmp_path / "file").read_text() == "mine" and not os.path.lexists(str(tmp_path / "nowhere"))


def test_a_file_added_deep_in_a_folder_the_command_made_is_named_and_the_folder_refused(tmp_path):
    """Taken, filled and recorded as setup-builder does; then the user adds a file two folders
    down: the folder is no longer only the command's."""
    from tf_ge_custom import _given_folders as given_folders

    folder = tmp_path / "venv"
    given_folders.take(str(folder), "--venv", "setup-builder", "builder")
    (folder / "lib" / "site").mkdir(parents=True)
    (folder / "lib" / "site" / "made.py").write_text("x = 1\n")
    given_folders.record(str(folder), "builder")
    assert given_folders.problem(str(folder), "--venv", "setup-builder", "builder") == ""
    # taken again by a run killed before it recorded anything: what the first run made stays its
    given_folders.take(str(folder), "--venv", "setup-builder", "builder")
    assert given_folders.problem(str(folder), "--venv", "setup-builder", "builder") == ""
    from tf_ge_custom import _owned_folders as owned_folders

    killed = owned_folders.make(str(folder), ".tf-ge-custom-kernels-")  # a killed build's staging
    os.close(killed._lock_fd)
    assert given_folders.problem(str(folder), "--venv", "setup-builder", "builder") == ""
    forged = folder / ".tf-ge-custom-kernels-forged"  # named like one, owner file written by hand
    forged.mkdir()
    (forged / owned_folders.OWNER_FILE).write_text("1\nfolder 1 2\nfile 3 4\n")
    assert "(.tf-ge-custom-kernels-forged; " in given_folders.problem(str(folder), "--venv", "setup-builder",
                                                                      "builder")
    forged.joinpath(owned_folders.OWNER_FILE).unlink()
    forged.rmdir()
    (folder / "lib" / "site" / "mine.py").write_text("mine\n")
    said = given_folders.problem(str(folder), "--venv", "setup-builder", "builder")
    assert said.startswith("--venv %s holds what setup-builder did not make (lib; " % folder), said
