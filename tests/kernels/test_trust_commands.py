"""The trust rule and the writes that never follow a link, through the installed console script
in fresh processes (docs/kernels.md, "What the package trusts"): ``build-kernels --cache`` and
``list-kernels`` on the per-user cache and the kernel bundles of ``TF_GE_CUSTOM_KERNELS``.

Cache entries are made by the cache's real writer with the build step replaced by the kernel
compiler double's ``fake_build`` (tests/ge/doubles/: it proves nothing about the builder),
except in the umask test, which runs the real builder with a hivmc double. Another user's
cache is a folder chown'ed to ``nobody`` (uid 65534): the suite runs as root, as CI does (root
is a trusted owner too, so a folder must be given away to be another user's).
"""
import hashlib
import importlib.util
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest

from tf_ge_custom.kernels import cache
from tf_ge_custom import op_def

pytestmark = pytest.mark.kind("doubles")

DOUBLES = pathlib.Path(__file__).resolve().parents[1] / "ge" / "doubles"
_spec = importlib.util.spec_from_file_location("kernel_compiler_double", str(DOUBLES / "kernel_compiler_double.py"))
double = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(double)
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
NOBODY = 65534
SOC, DTYPE = "Ascend910B1", "float32"
BUILD = ["build-kernels", "--soc", SOC, "--dtype", DTYPE, "--cache"]


def _env(tmp_path, **extra):
    """A user's environment: this venv first on PATH, no hivmc, a cache of the test's own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG", "PYTEST_", "ASCEND_")) and k != "PYTHONPATH"}
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep)
            if p and not os.path.isfile(os.path.join(p, "hivmc"))]
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable)] + path)
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp_path / "cache")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Ran(object):
    def __init__(self, proc):
        self.status, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    def __repr__(self):
        return "exit %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (self.status, self.out[-3000:], self.err[-3000:])


def run(args, env, cwd, umask=None, timeout=600):
    """The console script in a fresh process; no traceback may be printed."""
    proc = subprocess.run([SCRIPT] + list(args), env=env, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, universal_newlines=True,
                          timeout=timeout, preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    ran = Ran(proc)
    assert "Traceback" not in ran.out + ran.err, ran
    return ran


def _as_root():
    if os.geteuid() != 0:
        pytest.fail("another user's folder is made with chown, which needs root; run the suite as "
                    "root, as CI does")


def _valid_entry(cache_root, env):
    """``<cache>/<SoC>/<key>/<op>/<dtype>`` of every shipped op that has DTYPE, made by the real
    writer (build step doubled), as ``build-kernels --cache`` wants them all; returns
    AddCustom's."""
    made = {op.type_name: cache.ensure(SOC, DTYPE, cache=str(cache_root), env=env, op=op,
                                       build=double.fake_build).path
            for op in op_def.OPS if DTYPE in op.dtypes}
    return made["AddCustom"]


def _bundle_soc(dest, env):
    """``dest``: one SoC folder of a bundle holding the kernels of every shipped op that has
    DTYPE (as ``build-kernels --bundle`` writes it), made of the build double's per-op sets:
    their kernels in one manifest, ``kernel_sources`` naming each op's source digest and
    ``kernel_source_sha256`` their combined digest, written out here (docs/kernel-manifest.md)."""
    parts = tmp = pathlib.Path(str(dest) + ".parts")
    document, sources = None, {}
    for op in op_def.OPS:
        if DTYPE not in op.dtypes:
            continue
        double.fake_build([SOC], [DTYPE], str(parts / op.type_name), ops=op, env=env)
        folder = parts / op.type_name / SOC
        with open(str(folder / "manifest.json")) as f:
            part = json.load(f)
        sources[op.type_name] = part["kernel_source_sha256"]
        if document is None:
            document = part
            shutil.move(str(folder), str(dest))
            continue
        document["kernels"] += part["kernels"]
        for name in os.listdir(str(folder)):
            if name.endswith(".npubin"):
                shutil.move(str(folder / name), str(pathlib.Path(str(dest)) / name))
    document["kernel_sources"] = sources
    document["kernel_source_sha256"] = hashlib.sha256("".join(
        "%s %s\n" % (name, sources[name]) for name in sorted(sources)).encode()).hexdigest()
    with open(os.path.join(str(dest), "manifest.json"), "w") as f:
        json.dump(document, f, indent=2)
    shutil.rmtree(str(tmp))


def _give_away(top, uid, folder_mode, file_mode):
    """chown -R uid top; every folder folder_mode, every file file_mode."""
    for folder, dirs, names in os.walk(str(top)):
        for path, mode in [(folder, folder_mode)] + [(os.path.join(folder, n), file_mode) for n in names]:
            os.lchown(path, uid, -1)
            if not os.path.islink(path):
                os.chmod(path, mode)


def _snapshot(top):
    """{relative path: (mode, bytes or link target)} of everything under ``top``."""
    found = {}
    for folder, dirs, names in os.walk(str(top)):
        for name in dirs + names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            content = os.readlink(path) if stat.S_ISLNK(info.st_mode) else \
                open(path, "rb").read() if stat.S_ISREG(info.st_mode) else None
            found[os.path.relpath(path, str(top))] = (info.st_mode, content)
    return found


# --- the cache's lock: never written through a link ---------------------------------------

@pytest.mark.parametrize("how", ["symlink", "hard link"])
def test_a_link_planted_at_the_cache_lock_is_never_written_through(tmp_path, how):
    env = _env(tmp_path)
    key_dir = tmp_path / "cache" / SOC / cache.identity(env).key / "AddCustom"
    key_dir.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    lock = key_dir / (DTYPE + ".lock")
    if how == "symlink":
        lock.symlink_to(victim)
    else:
        os.link(str(victim), str(lock))
    ran = run(BUILD, env, tmp_path)
    assert victim.read_text() == "the user's own file\n", ran
    assert ran.status == 1, ran
    assert str(lock) in ran.err and ("is a symbolic link" if how == "symlink" else "2 names") in ran.err, ran
    assert "remove it" in ran.err


# --- another user's cache: checksums that match prove nothing ----------------------------

@pytest.mark.parametrize("owner, words", [
    ("nobody", "owned by uid 65534 (nobody), not by you (uid 0 (root)) or root"),
    ("viewer", "is writable by group and others (mode 0777)"),
])
def test_a_cache_others_may_write_is_neither_used_nor_written(tmp_path, owner, words):
    _as_root()
    env = _env(tmp_path)
    cache_root = tmp_path / "cache"
    _valid_entry(cache_root, env)
    _give_away(cache_root, NOBODY if owner == "nobody" else 0, 0o777, 0o666)
    before = _snapshot(cache_root)
    built = run(BUILD, env, tmp_path)
    assert built.status == 1, built
    assert "already in the cache" not in built.out
    assert "the kernel cache %s is not trusted" % cache_root in built.err and words in built.err, built
    assert "export TF_GE_CUSTOM_CACHE_DIR=<a new folder of your own>" in built.err
    listed = run(["list-kernels", "--cache"], env, tmp_path)
    assert listed.status == 1 and "REFUSED" in listed.out and "(current)" not in listed.out, listed
    assert words in listed.err, listed
    assert _snapshot(cache_root) == before  # nothing written into it, no lock, no log
    # The same entry, the user's and written by nobody else: used as it is.
    _give_away(cache_root, 0, 0o700, 0o644)
    again = run(BUILD, env, tmp_path)
    assert again.status == 0 and "already in the cache" in again.out, again
    listed = run(["list-kernels", "--cache"], env, tmp_path)
    assert listed.status == 0 and "(current)" in listed.out, listed


# --- an entry that is a link: one verdict for the writer and the listing -------------------

@pytest.mark.parametrize("target_owner", [0, NOBODY])
def test_an_entry_that_links_elsewhere_gets_one_verdict(tmp_path, target_owner):
    _as_root()
    env = _env(tmp_path)
    _valid_entry(tmp_path / "made", env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    ops = [op.type_name for op in op_def.OPS if DTYPE in op.dtypes]
    for op in ops:  # each op's entry: a link to a folder elsewhere
        made = tmp_path / "made" / SOC / cache.identity(env).key / op / DTYPE
        shutil.move(str(made), str(elsewhere / op))
        _give_away(elsewhere / op, target_owner, 0o700, 0o644)
        key_dir = tmp_path / "cache" / SOC / cache.identity(env).key / op
        key_dir.mkdir(parents=True, mode=0o700)
        (key_dir / DTYPE).symlink_to(elsewhere / op)
    before = _snapshot(elsewhere)
    listed = run(["list-kernels", "--cache"], env, tmp_path)
    built = run(BUILD, env, tmp_path)
    if target_owner == 0:  # the user's link to the user's folder: used by both
        assert listed.status == 0, listed
        # one line per op's entry (the SoC's name on the first)
        lines = [l.split() for l in listed.out.splitlines() if "/%s " % DTYPE in l]
        assert sorted(w for l in lines for w in l if w.endswith("/" + DTYPE)) == \
            sorted("%s/%s" % (op, DTYPE) for op in ops), listed
        assert lines[0][0] == SOC and all(l[-1] == "(current)" for l in lines), listed
        assert built.status == 0 and built.out.count("already in the cache") == len(ops), built
    else:  # the link's target is another user's: refused by both
        assert listed.status == 1, listed
        assert "REFUSED" in listed.out and "owned by uid 65534 (nobody)" in listed.out, listed
        assert "already in the cache" not in built.out, built
        heading = [l for l in listed.out.splitlines() if l.startswith(SOC) and "REFUSED" not in l]
        assert [l.split()[1] for l in heading] == ["-"], listed  # no dtype of that key is usable
    assert _snapshot(elsewhere) == before  # the link's target is never written


# --- private modes whatever the umask ----------------------------------------------------

def _hivmc_env(tmp_path):
    bindir = tmp_path / "cann-bin"
    bindir.mkdir()
    shutil.copy(str(DOUBLES / "hivmc"), str(bindir / "hivmc"))
    home = tmp_path / "ascend-toolkit"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text("Version=8.5.0\nplatform=x86_64\n")
    env = _env(tmp_path, ASCEND_HOME_PATH=home, TF_GE_CUSTOM_CACHE_DIR=tmp_path / "new" / "cache")
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env["PATH"])
    return env


@pytest.mark.slow
def test_the_cache_is_private_whatever_the_umask(tmp_path):
    """The real builder (hivmc doubled) under umask 000: folders 0700, files 0644, lock 0600."""
    env = _hivmc_env(tmp_path)
    ran = run(BUILD, env, tmp_path, umask=0)
    assert ran.status == 0 and "(built)" in ran.out, ran
    modes = {}
    for folder, dirs, names in os.walk(str(tmp_path / "new")):
        modes[folder] = stat.S_IMODE(os.lstat(folder).st_mode)
        for name in names:
            modes[os.path.join(folder, name)] = stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode)
    for op in op_def.OPS:  # each op's entry, with its own lock
        entry = tmp_path / "new" / "cache" / SOC / cache.identity(env).key / op.type_name / DTYPE
        assert str(entry / "manifest.json") in modes and any(
            p.startswith(str(entry)) and p.endswith(".npubin") for p in modes)
        assert modes.pop(str(entry) + ".lock") == 0o600
    folders = {p: m for p, m in modes.items() if os.path.isdir(p)}
    files = {p: m for p, m in modes.items() if not os.path.isdir(p)}
    assert set(folders.values()) == {0o700}, folders
    assert set(files.values()) == {0o644}, files


# --- TF_GE_CUSTOM_KERNELS: every entry checked where it is read ---------------------------

def test_bundle_entries_that_are_no_trusted_folder_are_refused_by_name(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a bundle\n")
    fifo = tmp_path / "a-fifo"
    os.mkfifo(str(fifo))
    missing = tmp_path / "missing"
    work = tmp_path / "work"
    (work / "bundle").mkdir(parents=True)  # relative: each process would read another folder
    value = ":".join([str(a_file), str(fifo), str(missing), "bundle"])
    ran = run(["list-kernels"], _env(tmp_path, TF_GE_CUSTOM_KERNELS=value), work, timeout=300)
    assert ran.status == 1, ran
    refused = [l for l in ran.out.splitlines() if l.startswith("REFUSED: TF_GE_CUSTOM_KERNELS entry ")]
    assert len(refused) == 4, ran
    for line, entry, why in zip(refused, [a_file, fifo, missing, "bundle"],
                                ["is a file, not a folder", "is a FIFO (named pipe), not a folder",
                                 "does not exist", "is not an absolute path"]):
        assert line.startswith("REFUSED: TF_GE_CUSTOM_KERNELS entry %s is refused: " % entry), line
        assert why in line, line


def test_a_bundle_file_another_user_owns_is_refused_though_its_checksum_matches(tmp_path):
    _as_root()
    env = _env(tmp_path)
    bundle = tmp_path / "bundle"
    bundle.mkdir(mode=0o755)
    _bundle_soc(bundle / SOC, env)
    trusted = run(["list-kernels", "--soc", SOC], _env(tmp_path, TF_GE_CUSTOM_KERNELS=bundle), tmp_path)
    assert trusted.status == 0 and "from the bundle %s" % bundle in trusted.out, trusted
    npubin = sorted(p for p in os.listdir(str(bundle / SOC)) if p.endswith(".npubin"))[0]
    os.chown(str(bundle / SOC / npubin), NOBODY, -1)
    refused = run(["list-kernels", "--soc", SOC], _env(tmp_path, TF_GE_CUSTOM_KERNELS=bundle), tmp_path)
    assert refused.status == 1, refused
    assert "[trust]" in refused.out and "owned by uid 65534 (nobody)" in refused.out, refused
    assert str(bundle / SOC / npubin) in refused.out


# --- '..' after a link: the folder the system means ---------------------------------------

def _dotdot_layout(tmp_path):
    """W/a/link -> ../real/sub: W/a/link/../X is W/real/X for the kernel (os.path.samefile),
    W/a/X for os.path.normpath (a decoy folder there). Returns W."""
    top = tmp_path / "W"
    for folder in ("a", "real", "real/sub"):
        (top / folder).mkdir(parents=True)
    (top / "a" / "link").symlink_to("../real/sub")
    return top


def test_list_and_build_kernels_use_the_cache_entry_where_the_system_resolves_the_variable(tmp_path):
    top = _dotdot_layout(tmp_path)
    (top / "a" / "cache").mkdir()
    env = _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR="%s/a/link/../cache" % top)
    (top / "real" / "cache").mkdir()
    assert os.path.samefile(env["TF_GE_CUSTOM_CACHE_DIR"], str(top / "real" / "cache"))
    entry = _valid_entry(top / "real" / "cache", env)
    listed = run(["list-kernels", "--cache", "--soc", SOC, "--dtype", DTYPE], env, tmp_path)
    assert listed.status == 0 and str(top / "real" / "cache") in listed.out, listed
    built = run(BUILD, env, tmp_path)
    assert built.status == 0 and "already in the cache" in built.out, built
    assert os.path.isfile(os.path.join(entry, "manifest.json"))
    assert os.listdir(str(top / "a" / "cache")) == []  # normpath's folder: untouched


def test_a_bundle_named_through_dotdot_after_a_link_is_listed_from_where_it_is(tmp_path):
    top = _dotdot_layout(tmp_path)
    (top / "real" / "bundle").mkdir()
    (top / "a" / "bundle").mkdir()  # normpath's reading: an empty folder
    _bundle_soc(top / "real" / "bundle" / SOC, _env(tmp_path))
    env = _env(tmp_path, TF_GE_CUSTOM_KERNELS="%s/a/link/../bundle:" % top)
    listed = run(["list-kernels", "--soc", SOC, "--dtype", DTYPE], env, tmp_path)
    assert listed.status == 0, listed
    assert "from the bundle %s]" % (top / "real" / "bundle") in listed.out, listed
