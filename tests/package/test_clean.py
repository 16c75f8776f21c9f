"""`tf-ge-custom clean` removes what the package made and nothing else (tf_ge_custom/_commands/clean.py).

Each case lays out a home folder as the package leaves it (kernel cache entries written by the
cache's own writer, ``cache.ensure`` with the kernel compiler double's build; a builder venv
taken and recorded by setup-builder's own code) beside what it must keep (a link given as the
cache, another program's files, empty folders of the user's, a folder of user files with every
marker forged, another user's cache, an entry whose build holds its lock), runs the installed
console script with --dry-run and then without, and compares the whole tree before and after
(every path with its inode and bytes) with the lines printed.
"""
import fcntl
import hashlib
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tf_ge_custom import _builder_venv as builder_venv, _given_folders as given_folders, op_def
from tf_ge_custom._commands import clean
from tf_ge_custom.kernels import cache

pytestmark = pytest.mark.kind("oracle")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
DOUBLES = pathlib.Path(__file__).resolve().parents[1] / "ge" / "doubles"
_spec = importlib.util.spec_from_file_location("kernel_compiler_double", str(DOUBLES / "kernel_compiler_double.py"))
double = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(double)


def _tree(root):
    """Every path under ``root``: relative path -> (kind, inode, sha256 of a file's bytes)."""
    found = {}
    for folder, dirs, names in os.walk(str(root)):
        for name in dirs + names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            digest = None
            if os.path.islink(path):
                kind, digest = "link", os.readlink(path)
            elif os.path.isdir(path):
                kind = "folder"
            else:
                kind = "file"
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            found[os.path.relpath(path, str(root))] = (kind, info.st_ino, digest)
    return found


def _write(path, text="x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _env(home, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "TF_GE_CUSTOM_", "BISHENG")) and k != "ASCEND_HOME_PATH"}
    env.pop("PYTHONPATH", None)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env.update(HOME=str(home))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _entries(cache_dir, *wanted):
    """Cache entries written by the cache's own writer: ``(SoC, dtype, op)`` each."""
    env = _env(cache_dir.parent, TF_GE_CUSTOM_CACHE_DIR=cache_dir)
    return [pathlib.Path(cache.ensure(soc, dtype, env=env, op=op, build=double.fake_build).path)
            for soc, dtype, op in wanted]


def _builder(venv):
    """A builder venv as setup-builder leaves it: taken, filled, recorded."""
    given_folders.take(str(venv), "--venv", "setup-builder", builder_venv.FOLDER_KIND)
    _write(venv / "pyvenv.cfg", "home = /usr/bin\n")
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    builder_venv.copy_builder(str(site))
    _write(venv / "bin" / "python", "#!/bin/sh\n")
    (venv / "include").mkdir()  # an empty folder the venv has
    given_folders.record(str(venv), builder_venv.FOLDER_KIND)


def _clean(home, *args, **extra):
    proc = subprocess.run([SCRIPT, "clean"] + list(args), cwd=str(home), env=_env(home, **extra),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("not covered here: the package itself (pip uninstall tf-ge-custom)")
    return lines


def _listed(lines, verb):
    return sorted(l[len(verb) + 2:].rsplit(" (", 1)[0] for l in lines if l.startswith(verb + ": "))


def _clean_twice(home, **extra):
    """--dry-run (which must change nothing), then clean; (tree before, tree after, lines)."""
    before = _tree(home)
    planned = _clean(home, "--dry-run", **extra)
    assert _tree(home) == before  # a dry run changes nothing
    lines = _clean(home, **extra)
    assert _listed(lines, "removed") == _listed(planned, "would remove")
    return before, _tree(home), lines


def _unchanged(home, **extra):
    before, after, lines = _clean_twice(home, **extra)
    assert after == before
    assert not any(l.startswith("removed") for l in lines), lines
    return lines


@pytest.mark.documents("tf-ge-custom clean --dry-run")
@pytest.mark.documents("tf-ge-custom clean")
def test_the_default_places_are_emptied_and_their_neighbours_kept(tmp_path):
    home = tmp_path / "home"
    kernels = home / ".cache" / "tf-ge-custom" / "kernels"
    ops = op_def.OPS
    made = _entries(kernels, *[("Ascend910B1", dtype, op) for op in ops for dtype in op.dtypes[:2]]
                    + [("Ascend910_9392", "float32", ops[0])])
    _builder(home / ".local" / "share" / "tf-ge-custom" / "builder")
    _write(home / ".cache" / "pip" / "wheel.whl")  # another program's cache
    _write(home / ".local" / "share" / "other" / "data")
    before, after, lines = _clean_twice(home)
    assert set(after) == {p for p in before
                          if not p.startswith((".cache/tf-ge-custom", ".local/share/tf-ge-custom"))}
    assert all(after[p] == before[p] for p in after)
    inside = [os.path.relpath(str(e), str(home)) for e in made]
    emptied = [p for p, (kind, _, _) in before.items() if kind == "folder"
               and p.startswith(".cache/tf-ge-custom") and not any(p.startswith(e) for e in inside)]
    assert _listed(lines, "removed") == sorted(
        [str(e) for e in made] + [str(home / p) for p in emptied]
        + [str(home / ".local/share/tf-ge-custom/builder"), str(home / ".local/share/tf-ge-custom")])
    assert any(l.startswith("removed: %s (builder venv, " % (home / ".local/share/tf-ge-custom/builder"))
               for l in lines), lines
    assert sum(l.startswith("removed: ") and l.endswith("kB)") and "kernel cache entry" in l
               for l in lines) == len(made)
    assert _clean(home)[0] == ("nothing to remove: no kernel cache entry, no builder venv that "
                               "tf-ge-custom recorded making")


def test_a_link_given_as_the_cache_folder_is_not_followed(tmp_path):
    """The link itself is judged, before anything resolves it."""
    home = tmp_path / "home"
    music = home / "Music"  # the user's folders, one of them empty
    music.mkdir(parents=True)
    _write(home / "Documents" / "letter.txt")
    _entries(home / "real-cache", ("Ascend910B1", "float32", op_def.ADD_CUSTOM))
    (home / "cache-link").symlink_to(home)  # a link to the user's home
    lines = _unchanged(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache-link")
    assert ("kept: %s: a symbolic link (to %s), not followed: clean removes nothing through a link; "
            "to clean the folder it leads to, run it with TF_GE_CUSTOM_CACHE_DIR=<that folder>"
            % (home / "cache-link", home)) in lines
    (home / "cache-link2").symlink_to(home / "real-cache")  # a link to a real cache: the same
    _unchanged(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache-link2")


def test_empty_folders_of_the_users_stay_and_only_the_folders_the_removal_emptied_go(tmp_path):
    """A mount point in a folder named as the cache is not "left empty" by clean."""
    home = tmp_path / "home"
    work = home / "work"  # TF_GE_CUSTOM_CACHE_DIR set to a folder that holds other things
    (work / "mnt").mkdir(parents=True)
    (work / "Ascend910B1" / "empty").mkdir(parents=True)
    entry, = _entries(work, ("Ascend910B1", "float32", op_def.ADD_CUSTOM))
    _write(work / "report.pdf")
    _write(work / "project" / "Ascend910B1" / "src.py")
    before, after, lines = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=work)
    key = entry.parent.parent
    gone = {os.path.relpath(str(p), str(home)) for p in (key, key / "AddCustom")}
    assert set(after) == {p for p in before if not any(p == g or p.startswith(g + "/") for g in gone)}
    assert all(after[p] == before[p] for p in after)
    assert (work / "mnt").is_dir() and (work / "Ascend910B1" / "empty").is_dir()
    assert "kept: %s: it holds what tf-ge-custom did not make: empty/" % (work / "Ascend910B1") in lines
    assert ("kept: %s: it holds what tf-ge-custom did not make: mnt/, project/, report.pdf" % work) in lines
    assert _listed(lines, "removed") == sorted([str(entry), str(key / "AddCustom"), str(key)])
    # a folder of empty folders only, named as the cache: nothing goes
    (home / "mounts" / "a").mkdir(parents=True)
    (home / "mounts" / "b").mkdir()
    _unchanged(home, TF_GE_CUSTOM_CACHE_DIR=home / "mounts")


def test_a_folder_of_user_files_with_every_marker_forged_is_kept(tmp_path):
    """pyvenv.cfg, builder_copy.json, a cache layout and copies of real records
    make nothing the package's."""
    home = tmp_path / "home"
    real = home / "real-builder"
    _builder(real)
    forged = home / "my-project"
    _write(forged / "notes.txt", "the user's notes")
    _write(forged / "src" / "main.py", "print('mine')\n")
    _write(forged / "pyvenv.cfg", "home = /usr/bin\n")
    _write(forged / "lib" / "python3.11" / "site-packages" / "tf_ge_custom" / builder_venv.MARKER, "")
    (forged / "include").mkdir()
    shutil.copy(str(real / given_folders.marker_name("builder")), str(forged / given_folders.marker_name("builder")))
    lines = _unchanged(home, TF_GE_CUSTOM_BUILDER=forged, TF_GE_CUSTOM_CACHE_DIR=home / "none")
    assert any(l.startswith("kept: %s: " % forged) and "not the record tf-ge-custom wrote there" in l
               for l in lines), lines
    # a hand-written record naming the user's files by their identity but not its own
    record = json.loads((real / given_folders.marker_name("builder")).read_text())
    record["paths"] = {"": {"kind": "folder", "dev": os.lstat(str(forged)).st_dev,
                            "ino": os.lstat(str(forged)).st_ino, "uid": os.geteuid()}}
    (forged / given_folders.marker_name("builder")).write_text(json.dumps(record))
    _unchanged(home, TF_GE_CUSTOM_BUILDER=forged, TF_GE_CUSTOM_CACHE_DIR=home / "none")
    # a cache's layout, locks and a copied record around the user's files
    users = home / "photos"
    entry, = _entries(home / "cache", ("Ascend910B1", "float32", op_def.ADD_CUSTOM))
    fake = users / "Ascend910B1" / entry.parent.parent.name / "AddCustom" / "float32"
    shutil.copytree(str(entry), str(fake))
    _write(fake / "holiday.jpg", "a photo")
    shutil.copy(str(entry) + cache.RECORD_SUFFIX, str(fake) + cache.RECORD_SUFFIX)
    _write(pathlib.Path(str(fake) + cache.LOCK_SUFFIX), "")
    lines = _unchanged(home, TF_GE_CUSTOM_CACHE_DIR=users, TF_GE_CUSTOM_BUILDER=home / "none")
    assert "kept: %s: it holds what tf-ge-custom did not make: Ascend910B1/" % users in lines
    # the real ones go
    _, after, _ = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache", TF_GE_CUSTOM_BUILDER=real)
    assert not any(p.startswith(("real-builder", "cache")) for p in after)
    assert (forged / "notes.txt").read_text() == "the user's notes" and (fake / "holiday.jpg").is_file()


def test_what_the_user_put_into_an_entry_or_the_venv_stays_with_its_folders(tmp_path):
    home = tmp_path / "home"
    entry, = _entries(home / "cache", ("Ascend910B1", "int32", op_def.ADD_CUSTOM))
    _write(entry / "mine.txt", "the user's")
    manifest = entry / "manifest.json"
    os.chmod(str(manifest), 0o644)
    with open(str(manifest), "a") as f:  # a file the package made, changed since (same inode)
        f.write(" ")
    venv = home / "builder"
    _builder(venv)
    _write(venv / "lib" / "notes.txt", "mine")
    before, after, lines = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache", TF_GE_CUSTOM_BUILDER=venv)
    assert set(after) <= set(before) and all(after[p] == before[p] for p in after)
    for kept in ("cache/" + os.path.relpath(str(entry), str(home / "cache")) + "/mine.txt",
                 "cache/" + os.path.relpath(str(manifest), str(home / "cache")), "builder/lib/notes.txt"):
        assert after[kept] == before[kept]
    assert not (venv / "bin").exists() and not (venv / "include").exists()
    assert "kept: %s: it holds what tf-ge-custom did not make: manifest.json, mine.txt" % entry in lines
    assert "kept: %s: it holds what tf-ge-custom did not make: notes.txt" % (venv / "lib") in lines
    assert any(l.startswith("removed: what tf-ge-custom made in %s (builder venv, " % venv) for l in lines)


def test_another_users_cache_is_left_whole_as_list_kernels_leaves_it(tmp_path):
    """The trust rule of list-kernels --cache, for root too."""
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(str(tmp_path), 0o755)
    theirs = home / "theirs"
    _entries(theirs, ("Ascend910B1", "float32", op_def.ADD_CUSTOM))
    venv = home / "their-builder"
    _builder(venv)
    if os.geteuid() != 0:
        # simulated: the same folders judged for another uid (their owner is then someone else)
        found = clean.parts(_env(home, TF_GE_CUSTOM_CACHE_DIR=theirs, TF_GE_CUSTOM_BUILDER=venv),
                            uid=os.geteuid() + 4242)
        said, anything = clean.lines(found, dry_run=True)
        for part in found:
            part.release()
        assert not anything
        assert any(l.startswith("kept: %s: not trusted, as list-kernels --cache would say" % theirs)
                   for l in said), said
        assert any(l.startswith("kept: %s: not trusted" % venv) for l in said), said
        return
    # as root, through the console script: the folders really are another user's
    os.lchown(str(home), 4242, 4242)
    for folder, dirs, names in os.walk(str(home)):
        for name in dirs + names:
            os.lchown(os.path.join(folder, name), 4242, 4242)
    lines = _unchanged(home, TF_GE_CUSTOM_CACHE_DIR=theirs, TF_GE_CUSTOM_BUILDER=venv)
    for given in (theirs, venv):
        assert any(l.startswith("kept: %s: not trusted, as list-kernels --cache would say, so clean "
                                "leaves it whole: %s is owned by uid 4242" % (given, home))
                   for l in lines), lines


def test_an_entry_whose_build_holds_its_lock_is_skipped_with_a_line(tmp_path):
    """A clean during a build leaves the entry the build holds the lock for."""
    home = tmp_path / "home"
    busy, free = _entries(home / "cache", ("Ascend910B1", "float32", op_def.ADD_CUSTOM),
                          ("Ascend910B1", "int32", op_def.ADD_CUSTOM))
    fd = os.open(str(busy) + cache.LOCK_SUFFIX, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.pwrite(fd, b"%d\n" % os.getpid(), 0)
        before, after, lines = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache")
    finally:
        os.close(fd)
    rel = lambda p: os.path.relpath(str(p), str(home))  # noqa: E731
    gone = {rel(free), rel(free) + cache.LOCK_SUFFIX, rel(free) + cache.RECORD_SUFFIX}
    assert set(after) == {p for p in before if not any(p == g or p.startswith(g + "/") for g in gone)}
    assert all(after[p] == before[p] for p in after)
    assert ("kept: %s: a build holds its lock (process %d); run clean again when it has finished"
            % (busy, os.getpid())) in lines
    _, after, _ = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache")  # the build is over
    assert after == {}


def test_a_killed_builds_temporary_folder_goes_and_a_running_ones_stays(tmp_path):
    """The cache writer's claimed ``.tmp-<dtype>-*`` folders: one whose build died goes (as the
    next build's sweep would take it), one whose build runs stays, one merely named so stays."""
    from tf_ge_custom import _owned_folders as owned_folders

    home = tmp_path / "home"
    entry, = _entries(home / "cache", ("Ascend910B1", "float32", op_def.ADD_CUSTOM))
    op_folder = str(entry.parent)
    dead = owned_folders.make(op_folder, ".tmp-float32-")
    _write(pathlib.Path(dead.path) / "Ascend910B1" / "manifest.json", "{}")
    os.close(dead._lock_fd)  # its process died: the kernel dropped the lock
    running = owned_folders.make(op_folder, ".tmp-int32-")
    _write(pathlib.Path(op_folder) / ".tmp-float16-mine" / "notes.txt", "the user's")
    try:
        before, after, lines = _clean_twice(home, TF_GE_CUSTOM_CACHE_DIR=home / "cache")
    finally:
        running.close()
    rel = lambda p: os.path.relpath(str(p), str(home))  # noqa: E731
    gone = {rel(entry), rel(entry) + cache.LOCK_SUFFIX, rel(entry) + cache.RECORD_SUFFIX, rel(dead.path)}
    assert set(after) == {p for p in before if not any(p == g or p.startswith(g + "/") for g in gone)}
    assert all(after[p] == before[p] for p in after)
    assert any(l.startswith("removed: %s (temporary folder of a killed build, " % dead.path) for l in lines), lines
    assert "kept: %s: a build is writing it" % running.path in lines
    assert "kept: %s: it holds what tf-ge-custom did not make: .tmp-float16-mine/" % op_folder in lines
