"""The per-user kernel cache: npubins compiled on this host for SoCs the package has none for.

When GE builds a graph holding one of the package's ops for a SoC (and dtype) whose npubin
the package does not carry, the GE library has the op's kernels compiled once, here, and
keeps them (docs/kernels.md, "Compiled on first graph build"). ``tf-ge-custom build-kernels
--cache`` fills the same cache ahead of time. Layout::

    <cache>/<SoC>/<key>/<op>/<dtype>/manifest.json     one builder output per (SoC, op, dtype)
    <cache>/<SoC>/<key>/<op>/<dtype>/<op python name>_<variant>_<dtype>.npubin   one per variant
    <cache>/<SoC>/<key>/<op>/<dtype>/ir/...
    <cache>/<SoC>/<key>/<op>/<dtype>.lock              held while a process builds that entry

``<op>`` is the op type (``AddCustom``), so two ops sharing a dtype never share an entry. An
entry of the layout before op folders (``<cache>/<SoC>/<key>/<dtype>/``, an earlier release's)
is not read: a graph build compiles the op again into its own folder, and ``list-kernels
--cache`` and doctor name the old one as outdated.

``<cache>`` is ``$TF_GE_CUSTOM_CACHE_DIR``, else ``$XDG_CACHE_HOME/tf-ge-custom/kernels``,
else ``~/.cache/tf-ge-custom/kernels`` (the XDG base-directory convention; a relative
``XDG_CACHE_HOME`` is ignored, as the specification says). ``<key>`` names what the kernels
were built from: the first 16 hex digits of the kernel sources' sha256 (of the one source
file of every op of ``op_def.OPS``, or, when the ops' kernels are in several files, of their
``kernel_manifest.combined_source_sha256``), then the versions of
triton-ascend, bishengir-compile and CANN (``hivmc``) that build them, then the entry naming
the kernels are compiled under (``kernel_contract.ENTRY_NAMING``), e.g.
``0123456789abcdef-triton_ascend_3.2.0-bishengir_1.2.0-cann_8.5.0-entry_naming_2``; a new
source, a new toolchain or a release that names its kernels otherwise gets a new folder,
never a stale kernel, so two package versions sharing one cache keep their own entries.

How an entry is written (:func:`ensure`), so that concurrent builders build it once and no
reader ever sees half of it: take ``<dtype>.lock`` (``flock``; released by the kernel when
the holder dies, so a killed build leaves no stale lock), look again, build into a temporary
folder beside the entry (``.tmp-<dtype>-*``), validate it with the manifest reader, and
``rename`` it into place. Readers look only at ``<dtype>/manifest.json``, which exists only
once the whole folder has been renamed in. This module is the one writer: the GE library
runs it (``tf_ge_custom.kernels.compile_kernel``) rather than writing the cache itself.

What is read from the cache must pass the package's trust rule (:mod:`tf_ge_custom._trust`,
docs/kernels.md "What the package trusts"): the cache, every folder on the way and every file
of an entry belong to this user (or root) and are writable by nobody else, so that no other
user can put a kernel on this user's NPU; an entry that fails it is not used (the writer
steps it aside and builds it again), a cache that fails it is neither read nor written. The
folders the writer makes are 0700 and its files 0644, whatever the umask; the lock file is
opened without following a link (:func:`tf_ge_custom._atomic_files.open_no_follow`).

No Triton import here: the key is read from package metadata and ``--version`` outputs.
"""
import contextlib
import errno
import fcntl
import hashlib
import os
import re
import tempfile
from typing import NamedTuple, Optional

from tf_ge_custom import _atomic_files as atomic_files, kernel_contract, kernel_manifest, op_def, \
    _made as made, _owned_folders as owned_folders, _trust as trust
from tf_ge_custom.errors import KernelBuildError, KernelCacheError, ManifestError, ToolchainError

from . import frontend, toolchain

CACHE_DIR_ENV = "TF_GE_CUSTOM_CACHE_DIR"
APP_DIR = "tf-ge-custom"
KERNELS_SUBDIR = "kernels"
LOCK_SUFFIX = ".lock"
RECORD_SUFFIX = ".made.json"  # <dtype>.made.json: what the writer made (tf_ge_custom._made)
RECORD_KIND = "kernel-cache"
TMP_PREFIX = ".tmp-"
SHORT_SHA = 16  # hex digits of the kernel source sha256 in a key
_KEY_PART = re.compile(r"[^A-Za-z0-9.+]+")
# The toolchain record of a manifest (docs/kernel-manifest.md), in key order.
TOOLCHAIN_FIELDS = ("triton_ascend", "bishengir", "cann")


class CacheLocation(NamedTuple):
    path: str  # absolute
    source: str  # "TF_GE_CUSTOM_CACHE_DIR", "XDG_CACHE_HOME" or "HOME"


class Identity(NamedTuple):
    """What a kernel built now would be built from (the cache key's inputs)."""

    kernel_source_sha256: str  # of every op's kernel sources (the module docstring)
    toolchain: dict  # {"triton_ascend": str|None, "bishengir": str|None, "cann": str|None}
    missing: tuple  # tools a compile needs that are absent: "triton-ascend", "bishengir-compile", "hivmc"
    sources: Optional[dict] = None  # {op type: sha256 of its kernel source file}

    @property
    def key(self):
        return cache_key(self.kernel_source_sha256, self.toolchain)


class Ensured(NamedTuple):
    path: str  # <cache>/<SoC>/<key>/<op>/<dtype>
    built: bool  # False: it was there already
    key: str


def cache_dir(env=None):
    """Where the kernel cache is (:class:`CacheLocation`); the folder need not exist yet.

    The folder the variables name is the one the system would open: ``..`` after a link goes
    up from the link's target (``/w/link/../cache`` is ``/w/real/cache`` when ``link``
    points to ``/w/real/sub``), and the path given is that folder's, without links
    (:func:`tf_ge_custom._trust.resolve`). When the spelling the variable holds fails the
    trust rule (a link another user made on the way, a folder others may write), it is given
    as written instead, so that :func:`cache_refusal` of it names what failed.

    Raises :class:`KernelCacheError` when ``TF_GE_CUSTOM_CACHE_DIR`` is relative or there is
    no home folder to put the cache in.
    """
    location = cache_dir_as_given(env)
    return CacheLocation(_as_resolved(location.path), location.source)


def cache_dir_as_given(env=None):
    """Where the variables put the kernel cache, as written (no link resolved): the path
    ``tf-ge-custom clean`` judges, so that a link given as the cache is seen as a link.
    Raises :class:`KernelCacheError` as :func:`cache_dir` does."""
    env = os.environ if env is None else env
    explicit = env.get(CACHE_DIR_ENV)
    if explicit:
        if not os.path.isabs(explicit):
            raise KernelCacheError("%s=%s is not an absolute path; the GE library and "
                                   "build-kernels run in different folders, so name the cache "
                                   "folder absolutely" % (CACHE_DIR_ENV, explicit))
        return CacheLocation(explicit, CACHE_DIR_ENV)
    xdg = env.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG specification: relative values are ignored
        return CacheLocation(os.path.join(xdg, APP_DIR, KERNELS_SUBDIR), "XDG_CACHE_HOME")
    home = env.get("HOME")
    if home and os.path.isabs(home):
        return CacheLocation(os.path.join(home, ".cache", APP_DIR, KERNELS_SUBDIR), "HOME")
    raise KernelCacheError("no folder for the kernel cache: HOME is %s and XDG_CACHE_HOME is "
                           "unset; set %s to an absolute, writable folder"
                           % ("unset" if not home else "relative (%s)" % home, CACHE_DIR_ENV))


def _as_resolved(given):
    """``given`` resolved as the system resolves it, unless the trust rule refuses ``given``
    (then as written: the refusal names the component of the spelling that failed)."""
    if cache_refusal(given) is not None:
        return given
    return trust.resolve(given)


def cache_refusal(path):
    """The :class:`tf_ge_custom._trust.Refusal` of the cache folder ``path``, else None. A
    folder that does not exist yet is none (the writer makes it, private), nor is a file in
    its way (the writer says it cannot make the folder): only who may write there counts."""
    refusal = trust.check(path, trust.FOLDER)
    if refusal is None or refusal.reason in (trust.MISSING, trust.NOT_A_FOLDER, trust.SPECIAL):
        return None
    return refusal


def untrusted_message(path, refusal):
    """The one-line refusal of an untrusted cache, with the remedies."""
    return ("the kernel cache %s is not trusted, so no kernel is read from it or written into "
            "it: %s; or start a fresh cache: export %s=<a new folder of your own>"
            % (trust.shown(path), refusal, CACHE_DIR_ENV))


def _key_part(value):
    if value is None:
        return "none"
    cleaned = _KEY_PART.sub("_", str(value))[:48].strip("_")
    return cleaned or "none"


def cache_key(kernel_source_sha256, toolchain_record, entry_naming=None):
    """``<sha[:16]>-triton_ascend_<v>-bishengir_<v>-cann_<v>-entry_naming_<n>``: a folder
    name (no '/', no leading '.') that changes with the source, with any tool's version and
    with the entry naming (default: this package's, ``kernel_contract.ENTRY_NAMING``)."""
    if entry_naming is None:
        entry_naming = kernel_contract.ENTRY_NAMING
    if isinstance(entry_naming, bool) or not isinstance(entry_naming, int) or entry_naming < 1:
        raise ValueError("entry_naming must be an integer >= 1, got %r" % (entry_naming,))
    if not re.match(r"^[0-9a-f]{64}$", kernel_source_sha256 or ""):
        raise ValueError("kernel_source_sha256 must be 64 lowercase hex digits, got %r"
                         % (kernel_source_sha256,))
    parts = [kernel_source_sha256[:SHORT_SHA]]
    parts += ["%s_%s" % (field, _key_part(toolchain_record.get(field)))
              for field in TOOLCHAIN_FIELDS]
    parts.append("entry_naming_%d" % entry_naming)
    return "-".join(parts)


def kernel_source_sha256(op=None):
    """sha256 of ``op``'s kernel source file, as the builder records it in the manifest; of
    every op's (``op_def.OPS``) without one: the key's (the module docstring)."""
    if op is not None:
        with open(frontend.kernel_source_path(op.kernel), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    return _key_source(_sources(op_def.OPS))


def _sources(ops):
    return dict((o.type_name, kernel_source_sha256(o)) for o in ops)


def _key_source(sources):
    digests = set(sources.values())
    return digests.pop() if len(digests) == 1 else kernel_manifest.combined_source_sha256(sources)


def identity(env=None, op=None):
    """The :class:`Identity` of a build in this environment, read the way the builder reads
    its toolchain record (kernels/builder.py), without importing triton. The key covers the
    kernel sources of every op of ``op_def.OPS`` (and of ``op``, when it is not one of them),
    so that the GE library asks once per process for the key of every op's entries."""
    env = dict(os.environ if env is None else env)
    missing = []
    triton_version = toolchain.distribution_version("triton-ascend")
    if triton_version is None:
        missing.append("triton-ascend")
    try:
        compiler = toolchain.find_bishengir_compile(env)
    except ToolchainError:
        compiler = None
    bishengir = None
    if compiler is None:
        missing.append("bishengir-compile")
    else:
        try:
            bishengir = toolchain.tool_version(compiler, "bishengir-compile")
        except ToolchainError:
            missing.append("bishengir-compile")
    cann = None  # as in the builder: no hivmc, nothing of CANN is used
    if toolchain.find_hivmc(env) is None:
        missing.append("hivmc")
    else:
        cann = toolchain.cann_version(env) or "unknown"
    record = {"triton_ascend": triton_version, "bishengir": bishengir, "cann": cann}
    ops = list(op_def.OPS)
    if op is not None and op.type_name not in [o.type_name for o in ops]:
        ops.append(op)
    sources = _sources(ops)
    return Identity(_key_source(sources), record, tuple(missing), sources)


def check_name(what, value):
    """A SoC, key, op type or dtype becomes a folder name: refuse anything that is not one."""
    if (not isinstance(value, str) or not value or value.startswith(".") or "/" in value
            or "\0" in value or not re.match(r"^[A-Za-z0-9._+-]+$", value)):
        raise ValueError("%s %r cannot name a cache folder (letters, digits and ._+- only, "
                         "not starting with '.')" % (what, value))
    return value


def entry_dir(cache, soc, key, dtype, op=op_def.ADD_CUSTOM):
    """``<cache>/<SoC>/<key>/<op type>/<dtype>``."""
    return os.path.join(cache, check_name("SoC", soc), check_name("key", key),
                        check_name("op type", op.type_name), check_name("dtype", dtype))


def load_entry(path, soc, dtype, op=op_def.ADD_CUSTOM):
    """The validated manifest of the cache entry folder ``path`` (binaries checksummed), or
    raise :class:`ManifestError`; it must carry the npubin of every kernel variant of ``op``
    for ``dtype`` (the GE library refuses a call whose shapes need a missing one)."""
    manifest_path = os.path.join(path, kernel_manifest.MANIFEST_NAME)
    # A board name's entry (<cache>/Ascend910B4-1/...) holds the kernels of the SoC serving it.
    manifest = kernel_manifest.load_manifest(manifest_path, check_files=True,
                                             expected_soc=_served(soc), trust_rule=True)
    missing = manifest.missing_variants(op, dtype)
    without = [v.name for v in op.kernel.variants
               if v.name not in missing and not manifest.kernel(op.type_name, v.name, dtype).binary]
    if missing or without:
        raise ManifestError("mismatch", "the cache entry lacks the %s %s npubin of kernel "
                            "variant(s) %s; an entry holds every variant"
                            % (op.type_name, dtype, ", ".join(missing + without)), manifest_path)
    return manifest


def _served(soc):
    """The buildable SoC whose kernels board ``soc`` takes (itself when buildable)."""
    from . import socs

    try:
        return socs.resolve(soc)
    except KeyError:
        return soc


def _valid(path, soc, dtype, op):
    if not os.path.isdir(path):
        return False
    try:
        load_entry(path, soc, dtype, op)
    except ManifestError:
        return False
    return True


@contextlib.contextmanager
def _locked(path, on_wait=None):
    """Hold an exclusive ``flock`` on ``path`` (created if absent, never through a link) for
    the ``with`` body."""
    fd = _lock_current(path, on_wait)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, ("%d\n" % os.getpid()).encode("ascii"))
        yield
    finally:
        os.close(fd)  # releases the lock


def _lock_current(path, on_wait):
    """A descriptor of ``path`` holding its exclusive lock, once the lock taken is the file
    at ``path``: a clean removes an entry's lock file while holding it, so a process that
    waited on the removed file takes the new one instead."""
    while True:
        try:
            fd = atomic_files.open_no_follow(path, os.O_RDWR, trust.PRIVATE_RECORD_MODE)
        except atomic_files.NotWritable as e:
            raise KernelCacheError("cannot take the cache entry's lock: %s" % e)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                if on_wait is not None:
                    on_wait(_holder(fd))
                fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                now = os.lstat(path)
            except OSError:
                now = None
        except BaseException:
            os.close(fd)
            raise
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)  # removed (or replaced) while we waited: lock the file there now


def _holder(fd):
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _step_aside(target, folder, dtype):
    """With the entry's lock held: move the damaged entry ``target`` out of the way, then
    remove of it what its record says the writer made (the same inodes, whatever bytes they
    hold now: a damaged file is one the writer made); a file of anyone else's stays, in a
    ``.tmp-<dtype>-broken-*`` folder that ``tf-ge-custom clean`` names."""
    from tf_ge_custom import _removing as removing

    aside = tempfile.mkdtemp(prefix="%s%s-broken-" % (TMP_PREFIX, dtype), dir=folder)
    os.rename(target, os.path.join(aside, dtype))
    record, _ = made.read(record_path(target), RECORD_KIND)
    found = removing.Made(same_bytes=False)
    if record is not None:
        found.add_folder_record(record, aside)
    try:
        removing.execute(removing.plan(aside, found))
    except OSError:
        pass  # what could not go stays aside; the entry is rebuilt all the same


def ensure(soc, dtype, cache=None, key=None, env=None, op=op_def.ADD_CUSTOM, build=None,
           progress=None, on_wait=None):
    """Make sure ``<cache>/<SoC>/<key>/<op>/<dtype>`` holds the verified npubins of every
    kernel variant of ``op`` for ``dtype``; build them if not.

    ``cache`` defaults to :func:`cache_dir`; ``key``, when given, is the key the caller
    expects (the GE library's, from ``--describe``): a different toolchain here is refused
    rather than filling another folder. ``build`` is the builder
    (:func:`tf_ge_custom.kernels.builder.build_kernels`, the default), ``progress`` its
    progress callback, ``on_wait(pid)`` is called when another process holds the lock.

    Raises :class:`ToolchainError` naming a missing tool, :class:`KernelBuildError` when the
    build fails or writes something else than the key promises, :class:`KernelCacheError`
    when the cache folder cannot be used, ValueError for a bad SoC or dtype.
    """
    from . import builder  # imports nothing heavy until it builds

    built_soc = builder.parse_socs([soc])[0]  # a board name builds the SoC serving it
    builder.parse_dtypes([dtype], op)
    env = dict(os.environ if env is None else env)
    cache = cache or cache_dir(env).path
    ident = identity(env, op)
    if key is not None and key != ident.key:
        raise KernelCacheError(
            "the toolchain here builds kernels of key %s, but %s was asked for: the "
            "environment changed between finding the key and compiling (triton-ascend, "
            "bishengir-compile or the CANN toolkit)" % (ident.key, key))
    key = ident.key
    target = entry_dir(cache, soc, key, dtype, op)
    refusal = cache_refusal(cache)
    if refusal is not None:
        raise KernelCacheError(untrusted_message(cache, refusal))
    if _valid(target, soc, dtype, op):
        return Ensured(target, False, key)
    folder = os.path.dirname(target)
    try:
        trust.make_private_folders(folder)
    except OSError as e:
        raise KernelCacheError("cannot create the kernel cache folder %s: %s (set %s to a "
                               "writable folder)" % (folder, e, CACHE_DIR_ENV))
    refusal = trust.check(folder, trust.FOLDER)  # e.g. a <SoC> folder an old umask left 0777
    if refusal is not None:
        raise KernelCacheError(untrusted_message(cache, refusal))
    build = build or builder.build_kernels
    with _locked(target + LOCK_SUFFIX, on_wait):
        if _valid(target, soc, dtype, op):  # built by whoever held the lock before us
            return Ensured(target, False, key)
        if os.path.lexists(target):  # there, but damaged: step it aside, then rebuild
            _step_aside(target, folder, dtype)
        # claimed while it builds: a killed build's folder is swept by the next (by its owner
        # file's identity, tf_ge_custom._owned_folders), never a folder merely named like one
        owned = owned_folders.make(folder, "%s%s-" % (TMP_PREFIX, dtype), say=None)
        staging = owned.path
        try:
            try:
                build([built_soc], [dtype], staging, ops=op, env=env, progress=progress)
                built = os.path.join(staging, built_soc)
                trust.privatize_tree(built)  # 0700 / 0644 whatever the umask the build ran under
            except Exception:
                _say_if_removed(staging, folder)
                raise
            _say_if_removed(staging, folder)
            _check_built(built, soc, dtype, op, ident)
            write_record(target, built, target + LOCK_SUFFIX)
            os.rename(built, target)
        finally:
            owned.close()
    return Ensured(target, True, key)


def record_path(entry):
    """``<cache>/<SoC>/<key>/<op>/<dtype>.made.json``: the record of what the writer made for
    the entry folder ``entry``."""
    return entry + RECORD_SUFFIX


def write_record(target, built, lock):
    """Record what the writer made for the entry ``target`` (its folder, every file, still at
    ``built`` before the rename that keeps their identities, and its lock), beside it
    (:mod:`tf_ge_custom._made`): ``tf-ge-custom clean`` removes only what this names."""
    name = os.path.basename(target)
    paths = made.describe_tree(built, name)
    held = made.identity(lock, with_hash=False)
    if held is not None:
        held.pop("size", None)  # a lock's content (its holder's pid) changes; its inode not
        paths[os.path.basename(lock)] = held
    made.write(record_path(target), RECORD_KIND, paths)


def _say_if_removed(staging, folder):
    """Raise :class:`KernelCacheError` when the build's temporary folder was removed under it
    (a ``tf-ge-custom clean`` of an older release, or an ``rm -rf`` of the cache)."""
    if os.path.isdir(staging):
        return
    raise KernelCacheError(
        "the cache entry this build was writing (%s) was removed while it built, by a "
        "`tf-ge-custom clean` or another removal of the kernel cache; nothing was cached: run "
        "the build again (it takes the entry's lock, and a clean leaves an entry whose lock is "
        "held)" % folder)


def _check_built(path, soc, dtype, op, ident):
    try:
        manifest = load_entry(path, soc, dtype, op)
    except ManifestError as e:
        raise KernelBuildError("the builder's output for %s %s is not a usable cache entry: %s"
                               % (soc, dtype, e))
    recorded = {f: manifest.toolchain.get(f) for f in TOOLCHAIN_FIELDS}
    source = manifest.source_sha256(op.type_name)
    expected = (ident.sources or {}).get(op.type_name, ident.kernel_source_sha256)
    if source != expected or recorded != ident.toolchain:
        raise KernelBuildError(
            "the builder recorded kernel source %s and toolchain %s, but the cache key says %s "
            "and %s; the two must be read alike (kernels/cache.py, kernels/builder.py)"
            % (source, recorded, expected, ident.toolchain))


class CachedEntry(NamedTuple):
    soc: str
    key: str
    dtype: str
    path: str
    manifest: Optional[object]  # KernelManifest, None when invalid
    error: Optional[str]  # why it is invalid
    kind: Optional[str] = None  # the ManifestError kind; "trust": the trust rule refuses it
    op: Optional[str] = None  # the op type; None for an entry of the layout before op folders


def list_entries(cache, op=None):
    """Every ``<SoC>/<key>/<op>/<dtype>`` entry under ``cache``, validated (sorted); an entry
    the trust rule refuses has ``manifest`` None and the refusal (kind ``trust``) as
    ``error``. Folders reached through a symbolic link are listed: the rule judges the link.
    The ops are those of ``op_def.OPS`` (and ``op``); a folder of no op is listed as one
    invalid entry (kind ``mismatch``), and an entry of the layout before op folders
    (``<SoC>/<key>/<dtype>``, a dtype's name where an op type belongs) as ``outdated``."""
    ops = dict((o.type_name, o) for o in op_def.OPS)
    if op is not None:
        ops.setdefault(op.type_name, op)
    found = []
    for soc in _subfolders(cache):
        for key in _subfolders(os.path.join(cache, soc)):
            for name in _subfolders(os.path.join(cache, soc, key)):
                path = os.path.join(cache, soc, key, name)
                if name in ops:
                    for dtype in _subfolders(path):
                        entry = os.path.join(path, dtype)
                        try:
                            manifest, error, kind = load_entry(entry, soc, dtype, ops[name]), None, None
                        except ManifestError as e:
                            manifest, error, kind = None, str(e), e.kind
                        found.append(CachedEntry(soc, key, dtype, entry, manifest, error, kind, name))
                elif name in op_def.DTYPES:
                    found.append(CachedEntry(
                        soc, key, name, path, None,
                        "%s: an entry of the layout before op folders (<SoC>/<key>/<dtype>), "
                        "which this release does not read; a graph build compiles the op again "
                        "into <SoC>/<key>/<op>/<dtype>" % path, "outdated"))
                else:
                    found.append(CachedEntry(
                        soc, key, "", path, None, "%s: a folder of no op this package defines "
                        "(%s)" % (path, ", ".join(sorted(ops))), "mismatch", name))
    return found


def _subfolders(path):
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    # A link to a folder counts, as it does for the GE library and the writer (which follow
    # it): load_entry's trust rule then decides whether it is used.
    return [n for n in names if not n.startswith(".") and os.path.isdir(os.path.join(path, n))]
