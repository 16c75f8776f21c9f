"""The per-user kernel cache (tf_ge_custom.kernels.cache), the one writer of its entries:
where it is, the key, and the lock / build aside / rename protocol under real threads and
processes, with the build step replaced by the kernel compiler double's fake_build (it only
tests the protocol) or, in the slow tests, the real builder with a hivmc double."""
import fcntl
import functools
import hashlib
import importlib.util
import json
import multiprocessing
import os
import pathlib
import re
import shutil
import threading
import time

import pytest

from tf_ge_custom import _owned_folders as owned_folders, cli, op_def
from tf_ge_custom.errors import KernelBuildError, KernelCacheError, ManifestError, ToolchainError
from tf_ge_custom.kernels import builder, cache, compile_kernel, toolchain

DOUBLES = pathlib.Path(__file__).resolve().parents[1] / "ge" / "doubles"
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "manifests"
_spec = importlib.util.spec_from_file_location("kernel_compiler_double", str(DOUBLES / "kernel_compiler_double.py"))
double = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(double)
OP = op_def.ADD_CUSTOM
VARIANTS = [v.name for v in OP.kernel.variants]


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG")) and k != "ASCEND_HOME_PATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env["TF_GE_CUSTOM_CACHE_DIR"] = str(tmp_path / "cache")
    env["TF_GE_CUSTOM_DOUBLE_COUNT"] = str(tmp_path / "builds.txt")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _builds(tmp_path):
    path = tmp_path / "builds.txt"
    return path.read_text().splitlines() if path.exists() else []


# --- where the cache is ------------------------------------------------------------------


def test_the_override_then_xdg_then_home():
    assert cache.cache_dir({"TF_GE_CUSTOM_CACHE_DIR": "/data/k/", "XDG_CACHE_HOME": "/x", "HOME": "/h"}) == \
        ("/data/k", "TF_GE_CUSTOM_CACHE_DIR")
    assert cache.cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == ("/x/tf-ge-custom/kernels", "XDG_CACHE_HOME")
    assert cache.cache_dir({"HOME": "/h"}) == ("/h/.cache/tf-ge-custom/kernels", "HOME")
    # The XDG specification: a relative XDG_CACHE_HOME is invalid and ignored.
    assert cache.cache_dir({"XDG_CACHE_HOME": "rel", "HOME": "/h"}).source == "HOME"


@pytest.mark.parametrize("env, words", [
    ({"TF_GE_CUSTOM_CACHE_DIR": "relative/dir", "HOME": "/h"}, "is not an absolute path"),
    ({}, "HOME is unset"),
    ({"HOME": "h"}, "HOME is relative (h)"),
])
def test_no_usable_cache_folder_is_said(env, words):
    with pytest.raises(KernelCacheError, match=re.escape(words)):
        cache.cache_dir(env)


# --- the key -------------------------------------------------------------------------------

SHA = "0123456789abcdef" + "f" * 48


def test_the_key_is_the_source_sha_prefix_every_tool_version_and_the_entry_naming():
    record = {"triton_ascend": "3.2.0", "bishengir": "1.2.0", "cann": "8.5.0"}
    assert cache.cache_key(SHA, record) == \
        "0123456789abcdef-triton_ascend_3.2.0-bishengir_1.2.0-cann_8.5.0-entry_naming_2"
    assert cache.cache_key(SHA, dict(record, cann=None)) == \
        "0123456789abcdef-triton_ascend_3.2.0-bishengir_1.2.0-cann_none-entry_naming_2"
    odd = dict(record, cann="9.2.0-beta.1", bishengir="bishengir-compile version 1.2.0 (a/b c)")
    assert cache.cache_key(SHA, odd) == ("0123456789abcdef-triton_ascend_3.2.0-"
                                         "bishengir_bishengir_compile_version_1.2.0_a_b_c-cann_9.2.0_beta.1"
                                         "-entry_naming_2")
    with pytest.raises(ValueError):
        cache.cache_key("ABC", record)
    for bad in (0, True, "2"):
        with pytest.raises(ValueError, match="entry_naming"):
            cache.cache_key(SHA, record, bad)


def test_two_package_versions_sharing_one_cache_keep_their_own_entries(tmp_path):
    """The release before entry naming 2 keyed its entries without the naming (the key format
    it wrote, spelt out here) and compiled every dtype's kernel of a variant under one name.
    Its entry and this version's sit side by side in one cache: this version builds its own
    and never reads or replaces the other's, which stays as the other version left it; a
    later naming (3) would key its own folder again."""
    env = _env(tmp_path)
    ident = cache.identity(env)
    old_key = "%s-triton_ascend_%s-bishengir_%s-cann_%s" % (
        ident.kernel_source_sha256[:16], ident.toolchain["triton_ascend"],
        cache._key_part(ident.toolchain["bishengir"]), cache._key_part(ident.toolchain["cann"]))
    assert ident.key == old_key + "-entry_naming_2"
    assert cache.cache_key(ident.kernel_source_sha256, ident.toolchain, 3) == old_key + "-entry_naming_3"
    # the previous version's entry: a valid set of its day, every flat kernel "add_kernel"
    old_entry = tmp_path / "cache" / "Ascend910B1" / old_key / "float32"
    old_entry.mkdir(parents=True)
    old_manifest = json.loads((FIXTURES / "outdated_entry_naming_1.json").read_text())
    (old_entry / "manifest.json").write_text(json.dumps(dict(old_manifest, soc="Ascend910B1")))
    before = (old_entry / "manifest.json").read_bytes()
    with pytest.raises(ManifestError) as e:  # this version reads it as outdated, not damaged
        cache.load_entry(str(old_entry), "Ascend910B1", "float32")
    assert e.value.kind == "outdated"
    done = cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build)
    assert done.built and done.key == ident.key != old_key
    assert (old_entry / "manifest.json").read_bytes() == before  # left alone
    again = cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build)
    assert not again.built and len(_builds(tmp_path)) == 1  # neither rebuilds the other's
    keys = sorted(e.key for e in cache.list_entries(str(tmp_path / "cache")))
    assert keys == sorted([old_key, ident.key])


def test_each_op_has_its_own_entry_and_the_layout_before_op_folders_is_not_read(tmp_path,
                                                                                monkeypatch):
    """<SoC>/<key>/<op>/<dtype>: AddCustom and LeakyReluCustom share float32 but never an
    entry. An entry an earlier release left at <SoC>/<key>/<dtype> (under the very key
    AddCustom still has) is not read: the op is compiled again into its own folder, the old
    one is left alone and listed as outdated."""
    env = _env(tmp_path)
    leaky = op_def.LEAKY_RELU_CUSTOM
    key = cache.identity(env).key
    add_dir = cache.entry_dir("/c", "Ascend910B1", key, "float32", OP)
    assert add_dir == "/c/Ascend910B1/%s/AddCustom/float32" % key
    assert cache.entry_dir("/c", "Ascend910B1", key, "float32", leaky) == \
        "/c/Ascend910B1/%s/LeakyReluCustom/float32" % key
    old = tmp_path / "cache" / "Ascend910B1" / key / "float32"
    built_elsewhere = cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build,
                                   cache=str(tmp_path / "elsewhere"))
    shutil.copytree(built_elsewhere.path, str(old))
    before = (old / "manifest.json").read_bytes()
    cache.load_entry(str(old), "Ascend910B1", "float32")  # a valid set of its day
    done = cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build)
    assert done.built and done.path == str(tmp_path / "cache" / "Ascend910B1" / key / "AddCustom"
                                           / "float32")
    assert (old / "manifest.json").read_bytes() == before
    listed = {(e.op, e.dtype): e for e in cache.list_entries(str(tmp_path / "cache"))}
    assert set(listed) == {(None, "float32"), ("AddCustom", "float32")}
    assert listed[(None, "float32")].kind == "outdated" and listed[(None, "float32")].manifest is None
    assert "layout before op folders" in listed[(None, "float32")].error
    assert listed[("AddCustom", "float32")].manifest is not None
    # a folder of no op is one invalid entry, not a crash
    (tmp_path / "cache" / "Ascend910B1" / key / "NoSuchOp" / "float32").mkdir(parents=True)
    odd = [e for e in cache.list_entries(str(tmp_path / "cache")) if e.op == "NoSuchOp"]
    assert len(odd) == 1 and odd[0].kind == "mismatch" and "no op this package defines" in odd[0].error


def test_the_key_covers_every_ops_kernel_source(tmp_path, monkeypatch):
    """One key per toolchain for every op's entries: with a second op whose kernels are in
    another file, the key's digest is the sources' combined one, and each op's own source
    is what its entry's manifest must record."""
    env = _env(tmp_path)
    monkeypatch.setattr(op_def, "OPS", (OP,))
    alone = cache.identity(env)
    assert alone.sources == {"AddCustom": alone.kernel_source_sha256}
    monkeypatch.setattr(op_def, "OPS", (OP, op_def.LEAKY_RELU_CUSTOM))
    both = cache.identity(env)
    digests = {o.type_name: cache.kernel_source_sha256(o) for o in op_def.OPS}
    assert both.sources == digests and len(set(digests.values())) == 2
    combined = hashlib.sha256("".join("%s %s\n" % (o, digests[o]) for o in sorted(digests))
                              .encode()).hexdigest()
    assert both.kernel_source_sha256 == combined == cache.kernel_source_sha256()
    assert both.key == alone.key.replace(alone.kernel_source_sha256[:16], combined[:16])
    # an op passed explicitly, outside OPS, is covered too
    monkeypatch.setattr(op_def, "OPS", (OP,))
    assert cache.identity(env, op_def.LEAKY_RELU_CUSTOM).key == both.key


@pytest.mark.parametrize("name", ["", ".", "..", ".hidden", "a/b", "a b", "a\0b", "é"])
def test_names_that_would_leave_the_cache_are_refused(name):
    with pytest.raises(ValueError, match="cannot name a cache folder"):
        cache.entry_dir("/c", name, "k", "float32")


def test_the_identity_is_this_environment_s_toolchain(tmp_path):
    env = _env(tmp_path)
    ident = cache.identity(env)
    assert ident.toolchain["triton_ascend"] == toolchain.distribution_version("triton-ascend") == "3.2.0"
    assert ident.toolchain["bishengir"] == toolchain.tool_version(toolchain.find_bishengir_compile(env),
                                                                  "bishengir-compile")
    assert ident.toolchain["cann"] is None and ident.missing == ("hivmc",)
    # each op's kernel source file, read here
    for o in op_def.OPS:
        with open(os.path.join(os.path.dirname(builder.__file__), o.kernel.source), "rb") as f:
            assert ident.sources[o.type_name] == hashlib.sha256(f.read()).hexdigest()
    with_hivmc = cache.identity(_hivmc_env(tmp_path))
    assert with_hivmc.toolchain["cann"] == "8.5.0" and with_hivmc.missing == ()
    assert with_hivmc.key != ident.key and with_hivmc.key.endswith("-cann_8.5.0-entry_naming_2")


def _hivmc_env(tmp_path):
    bindir = tmp_path / "cann-bin"
    bindir.mkdir(exist_ok=True)
    shutil.copy(str(DOUBLES / "hivmc"), str(bindir / "hivmc"))
    home = tmp_path / "ascend-toolkit"
    (home / "compiler").mkdir(parents=True, exist_ok=True)
    (home / "compiler" / "version.info").write_text("Version=8.5.0\nplatform=x86_64\n")
    env = _env(tmp_path, ASCEND_HOME_PATH=home)
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env["PATH"])
    return env


@pytest.mark.slow
def test_the_key_is_read_as_the_real_builder_records_its_toolchain(tmp_path):
    """The cache key and the manifest the builder writes must agree field by field: the
    real builder (hivmc doubled) into the cache, checked by ensure itself."""
    env = _hivmc_env(tmp_path)
    started = time.time()
    done = cache.ensure("Ascend910B1", "float32", env=env)
    seconds = time.time() - started
    assert done.built
    manifest = cache.load_entry(done.path, "Ascend910B1", "float32")
    assert manifest.toolchain == cache.identity(env).toolchain
    # an entry holds one op's kernels: the source it records is that op's own
    assert manifest.source_sha256(OP.type_name) == cache.identity(env).sources[OP.type_name]
    # every variant, its layout read from the real HIVM IR (hand-computed sizes:
    # tests/fixtures/manifests/generate.py)
    assert manifest.missing_variants(OP, "float32") == []
    assert manifest.kernel("AddCustom", "flat", "float32").args.size == 64
    assert manifest.kernel("AddCustom", "row_16x256", "float32").args.size == 104
    stem = os.path.splitext(OP.binary_name("outer_128x32", "float32"))[0]
    assert (pathlib.Path(done.path) / "ir" / (stem + ".hivm.mlir")).is_file()
    print("real builder (hivmc doubled) into the cache, %d variants: %.1f s" % (len(VARIANTS), seconds))


# --- the protocol ------------------------------------------------------------------------------


def test_ensure_builds_once_then_finds_it(tmp_path):
    env = _env(tmp_path)
    first = cache.ensure("Ascend910_9392", "int32", env=env, build=double.fake_build)
    assert first.built and first.key == cache.identity(env).key
    assert first.path == str(tmp_path / "cache" / "Ascend910_9392" / first.key / OP.type_name / "int32")
    second = cache.ensure("Ascend910_9392", "int32", env=env, build=double.fake_build)
    assert not second.built and second.path == first.path
    assert len(_builds(tmp_path)) == 1
    folder = pathlib.Path(first.path).parent
    assert sorted(p.name for p in folder.iterdir()) == ["int32", "int32.lock", "int32.made.json"]
    manifest = cache.load_entry(first.path, "Ascend910_9392", "int32")
    assert manifest.soc == "Ascend910_9392" and not manifest.ir_only
    assert sorted(k.variant for k in manifest.kernels) == sorted(VARIANTS)
    assert sorted(p.name for p in pathlib.Path(first.path).glob("*.npubin")) == \
        sorted(OP.binary_name(v, "int32") for v in VARIANTS)


def test_the_writer_records_what_it_made_beside_the_entry(tmp_path):
    """The made-record clean reads: the entry folder, each of its files (identity, size,
    sha256) and its lock (identity only: its content is its holder's pid)."""
    env = _env(tmp_path)
    entry = pathlib.Path(cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build).path)
    document = json.loads(pathlib.Path(str(entry) + cache.RECORD_SUFFIX).read_text())
    assert document["kind"] == cache.RECORD_KIND
    record_info = os.lstat(str(entry) + cache.RECORD_SUFFIX)
    assert document["self"] == {"dev": record_info.st_dev, "ino": record_info.st_ino}
    expected = {"float32.lock"}
    for path in [entry] + sorted(entry.rglob("*")):
        rel = os.path.relpath(str(path), str(entry.parent))
        expected.add(rel)
        info = os.lstat(str(path))
        got = document["paths"][rel]
        assert (got["dev"], got["ino"], got["uid"]) == (info.st_dev, info.st_ino, info.st_uid)
        if path.is_file():
            assert got["size"] == info.st_size
            assert got["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert set(document["paths"]) == expected
    lock = os.lstat(str(entry) + cache.LOCK_SUFFIX)
    assert document["paths"]["float32.lock"] == {"kind": "file", "dev": lock.st_dev, "ino": lock.st_ino,
                                                 "uid": lock.st_uid}


def test_an_entry_removed_while_it_builds_is_said_to_be(tmp_path):
    """An rm -rf of the cache (or an older release's clean) during a build."""
    env = _env(tmp_path)

    def removed_meanwhile(socs, dtypes, out, **kw):
        double.fake_build(socs, dtypes, out, **kw)
        shutil.rmtree(os.path.dirname(out))  # the op folder, the build's temporary folder with it

    with pytest.raises(KernelCacheError, match=r"the cache entry this build was writing \(.*AddCustom\) was "
                                               r"removed while it built, by a `tf-ge-custom clean` or another "
                                               r"removal of the kernel cache; nothing was cached: run the "
                                               r"build again"):
        cache.ensure("Ascend910B1", "float32", env=env, build=removed_meanwhile)
    assert cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build).built


def test_a_waiter_whose_lock_file_was_removed_locks_the_one_there_now(tmp_path):
    """A clean removes an entry's lock file while holding it; whoever waited on the old file
    must not build beside a process locking the new one."""
    lock = str(tmp_path / "float32.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    got = []

    def waiter():
        with cache._locked(lock):
            probe = os.open(lock, os.O_RDWR)  # the file at the lock's path now
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                got.append("not held")
            except BlockingIOError:
                got.append("held")
            finally:
                os.close(probe)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    os.unlink(lock)
    os.close(fd)  # the clean is done
    thread.join(30)
    assert got == ["held"]


def test_an_entry_lacking_a_variant_is_no_entry_and_is_rebuilt(tmp_path):
    env = _env(tmp_path)
    done = cache.ensure("Ascend910B1", "float16", env=env, build=double.fake_build)
    path = pathlib.Path(done.path) / "manifest.json"
    document = json.loads(path.read_text())
    document["kernels"] = [k for k in document["kernels"] if k["variant"] != "scalar"]
    path.write_text(json.dumps(document))
    (pathlib.Path(done.path) / OP.binary_name("scalar", "float16")).unlink()
    with pytest.raises(ManifestError, match="lacks the AddCustom float16 npubin of kernel variant"
                                            r"\(s\) scalar; an entry holds every variant"):
        cache.load_entry(done.path, "Ascend910B1", "float16")
    assert [e.error is not None for e in cache.list_entries(str(tmp_path / "cache"))] == [True]
    again = cache.ensure("Ascend910B1", "float16", env=env, build=double.fake_build)
    assert again.built and again.path == done.path
    assert cache.load_entry(again.path, "Ascend910B1", "float16").missing_variants(OP, "float16") == []
    assert len(_builds(tmp_path)) == 2


def test_a_build_of_some_variants_only_is_not_cached(tmp_path):
    """The builder's ``variants=`` is for tools and tests; a cache entry needs them all."""
    env = _env(tmp_path)
    some = functools.partial(double.fake_build, variants=["flat", "row_16x256"])
    with pytest.raises(KernelBuildError, match=r"not a usable cache entry: .*variant\(s\) scalar, "):
        cache.ensure("Ascend910B2", "int32", env=env, build=some)
    key_dir = tmp_path / "cache" / "Ascend910B2" / cache.identity(env).key / OP.type_name
    assert [p.name for p in key_dir.iterdir()] == ["int32.lock"]


def test_a_failed_build_leaves_nothing_and_frees_the_lock(tmp_path):
    env = _env(tmp_path)

    def failing(socs, dtypes, out, **kw):
        os.makedirs(os.path.join(out, socs[0]))
        with open(os.path.join(out, socs[0], OP.binary_name("flat", "float32")), "wb") as f:
            f.write(b"half")
        raise ToolchainError("hivmc is missing", missing=("hivmc",))

    with pytest.raises(ToolchainError):
        cache.ensure("Ascend910B1", "float32", env=env, build=failing)
    folder = tmp_path / "cache" / "Ascend910B1" / cache.identity(env).key / OP.type_name
    assert [p.name for p in folder.iterdir()] == ["float32.lock"]
    assert cache.ensure("Ascend910B1", "float32", env=env, build=double.fake_build).built


def test_a_build_recording_another_toolchain_is_refused(tmp_path):
    env = _env(tmp_path)

    def drifting(socs, dtypes, out, **kw):
        double.fake_build(socs, dtypes, out, **kw)
        path = os.path.join(out, socs[0], "manifest.json")
        with open(path) as f:
            doc = json.load(f)
        doc["toolchain"]["bishengir"] = "9.9.9"
        with open(path, "w") as f:
            json.dump(doc, f)

    with pytest.raises(KernelBuildError, match="must be read alike"):
        cache.ensure("Ascend910B1", "float16", env=env, build=drifting)
    assert not (tmp_path / "cache" / "Ascend910B1" / cache.identity(env).key / OP.type_name / "float16").exists()


def test_a_key_from_another_toolchain_is_refused(tmp_path):
    env = _env(tmp_path)
    with pytest.raises(KernelCacheError, match="the environment changed"):
        cache.ensure("Ascend910B1", "float32", env=env, key="0" * 16 + "-other", build=double.fake_build)
    assert _builds(tmp_path) == []


def test_a_damaged_entry_and_leftovers_of_a_killed_build_are_replaced(tmp_path):
    env = _env(tmp_path)
    done = cache.ensure("Ascend910B4", "bfloat16", env=env, build=double.fake_build)
    npubin = pathlib.Path(done.path) / OP.binary_name("outer_16x256", "bfloat16")
    npubin.write_bytes(b"bit rot")
    folder = pathlib.Path(done.path).parent
    killed = owned_folders.make(str(folder), ".tmp-bfloat16-")  # a build's claimed folder...
    (pathlib.Path(killed.path) / "Ascend910B4").mkdir()
    os.close(killed._lock_fd)  # ...whose process died: the kernel dropped its lock
    named_alike = folder / ".tmp-bfloat16-mine"  # named like one, not claimed: not the writer's
    (named_alike / "notes.txt").parent.mkdir()
    (named_alike / "notes.txt").write_text("kept")
    (pathlib.Path(done.path) / "mine.txt").write_text("put into the entry by hand")
    again = cache.ensure("Ascend910B4", "bfloat16", env=env, build=double.fake_build)
    assert again.built and again.path == done.path
    cache.load_entry(again.path, "Ascend910B4", "bfloat16")
    assert not os.path.exists(killed.path)
    assert (named_alike / "notes.txt").read_text() == "kept"
    # of the damaged entry, what the writer made went (the changed npubin too: its inode is
    # the one the record names, only the bytes changed); the file put in by hand stays aside
    aside, = folder.glob(".tmp-bfloat16-broken-*")
    assert sorted(str(p.relative_to(aside)) for p in aside.rglob("*")) == ["bfloat16", "bfloat16/mine.txt"]


def test_threads_of_one_process_build_once(tmp_path):
    env = _env(tmp_path, TF_GE_CUSTOM_DOUBLE_SLEEP="0.3")
    results = []

    def run():
        results.append(cache.ensure("Ascend910B3", "float32", env=env, build=double.fake_build))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and sum(r.built for r in results) == 1
    assert len(_builds(tmp_path)) == 1


def _ensure_in_child(env, queue):
    waited = []
    done = cache.ensure("Ascend910_9381", "float16", env=env, build=double.fake_build,
                        on_wait=waited.append)
    queue.put((done.built, done.path, bool(waited)))


def test_processes_racing_build_once_and_the_others_wait(tmp_path):
    env = _env(tmp_path, TF_GE_CUSTOM_DOUBLE_SLEEP="1.0")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_ensure_in_child, args=(env, queue)) for _ in range(3)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sorted(r[0] for r in results) == [False, False, True]
    assert len({r[1] for r in results}) == 1
    assert all(r[2] for r in results if not r[0])  # each loser waited on the lock
    assert len(_builds(tmp_path)) == 1


# --- the entry point the GE library runs, and the commands --------------------------------------


def _result_line(out):
    line = [l for l in out.splitlines() if l.startswith(compile_kernel.RESULT_MARK)][-1]
    return json.loads(line[len(compile_kernel.RESULT_MARK):])


def test_compile_kernel_reports_a_missing_tool_with_what_to_do(tmp_path, capsys, monkeypatch):
    env = _env(tmp_path)
    monkeypatch.setattr(os, "environ", env)

    def no_hivmc(socs, dtypes, out, **kw):
        raise ToolchainError("hivmc is missing, so no npubin could be built", missing=("hivmc",))

    assert compile_kernel.main(["--soc", "Ascend910B1", "--dtype", "int32"], build=no_hivmc) == 1
    out = capsys.readouterr()
    result = _result_line(out.out)
    assert result == {"ok": False, "kind": "toolchain", "missing": ["hivmc"], "protocol": 1,
                      "error": "hivmc is missing (%s)" % compile_kernel.hint("hivmc")}
    assert "error: hivmc is missing, so no npubin could be built" in out.err
    assert compile_kernel.main(["--soc", "Ascend910B1"]) == 2
    assert _result_line(capsys.readouterr().out)["kind"] == "usage"
    assert compile_kernel.main(["--soc", "Ascend9", "--dtype", "int32"]) == 2
    assert "unsupported SoC 'Ascend9'" in _result_line(capsys.readouterr().out)["error"]


def test_build_kernels_cache_prewarms_then_keeps(tmp_path, capsys, monkeypatch):
    env = _env(tmp_path)
    monkeypatch.setattr(os, "environ", env)
    # the double lays out AddCustom's kernels: the cache's protocol is the same for any op
    monkeypatch.setattr(op_def, "OPS", (OP,))
    monkeypatch.setattr(builder, "build_kernels", double.fake_build)
    argv = ["build-kernels", "--soc", "Ascend910B1", "--dtype", "float32,int32", "--cache", "--quiet"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    key = cache.identity(env).key
    assert out == ["Ascend910B1 %s: %s (built)" % (d, tmp_path / "cache" / "Ascend910B1" / key / OP.type_name / d)
                   for d in ("float32", "int32")]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.count("(already in the cache)") == 2
    assert len(_builds(tmp_path)) == 2

    assert cli.main(["list-kernels", "--cache"]) == 0
    listing = capsys.readouterr().out
    assert "kernel cache: %s (from TF_GE_CUSTOM_CACHE_DIR)" % (tmp_path / "cache") in listing
    assert re.search(r"Ascend910B1\s+float32 int32\s+%s \(current\)" % re.escape(key), listing)
    assert cli.main(["list-kernels", "--cache", "--soc", "Ascend910B1", "--dtype", "int32"]) == 0
    capsys.readouterr()
    assert cli.main(["list-kernels", "--cache", "--soc", "Ascend910B1", "--dtype", "float16"]) == 1
    assert "no kernels of the current toolchain for Ascend910B1 (float16)" in capsys.readouterr().err
    assert cli.main(["list-kernels", "--cache", "--soc", "Ascend910B2"]) == 1
    capsys.readouterr()
    (tmp_path / "cache" / "Ascend910B1" / key / OP.type_name / "int32" / OP.binary_name("col_128x32", "int32")).write_bytes(b"x")
    assert cli.main(["list-kernels", "--cache"]) == 1
    assert "int32" in capsys.readouterr().out.split("INVALID")[0].splitlines()[-1]


@pytest.mark.parametrize("extra", [["--out", "x"], ["--ir-only"], ["--force"], ["--max-programs", "4"]])
def test_build_kernels_cache_refuses_options_it_would_ignore(extra, capsys):
    assert cli.main(["build-kernels", "--soc", "Ascend910B1", "--cache"] + extra) == 2
    assert "--cache cannot be combined with %s" % extra[0] in capsys.readouterr().err


def test_build_kernels_cache_with_the_real_builder_names_hivmc_and_caches_nothing(tmp_path, capsys,
                                                                                   monkeypatch):
    """The real builder, limited to one variant: what is tested is the command's handling of
    its refusal, which comes before the first stage (tests/ge/test_kernel_compile.py: through
    the GE library's path)."""
    env = _env(tmp_path)
    monkeypatch.setattr(os, "environ", env)
    monkeypatch.setattr(builder, "build_kernels",
                        functools.partial(builder.build_kernels, variants=["flat"]))
    assert cli.main(["build-kernels", "--soc", "Ascend910B1", "--dtype", "float32", "--cache"]) == 1
    err = capsys.readouterr().err
    assert "[1/1]" not in err  # refused before the first stage: nothing compiled
    # the first op the command compiles for float32 names itself (the package has two)
    assert "error: Ascend910B1 AddCustom float32: hivmc is missing, so nothing was compiled" in err
    assert "pass --ir-only" in err
    key_dir = tmp_path / "cache" / "Ascend910B1" / cache.identity(env).key / OP.type_name
    assert [p.name for p in key_dir.iterdir()] == ["float32.lock"]
