"""``tf-ge-custom list-kernels``: which SoCs and dtypes a package (or wheel) carries.

    tf-ge-custom list-kernels                         # the installed package
    tf-ge-custom list-kernels --soc Ascend910B1       # exit 1 unless it carries that SoC
    tf-ge-custom list-kernels --wheel dist/tf_ge_custom-*.whl --soc Ascend910_9392
    tf-ge-custom list-kernels --dir OUT               # a build-kernels output folder
    tf-ge-custom list-kernels --cache                 # the per-user kernel cache

Every manifest is validated and every npubin checksummed; any defect is an error. What comes
from a kernel bundle or the per-user cache must also pass the trust rule (docs/kernels.md,
"What the package trusts"): a refused ``TF_GE_CUSTOM_KERNELS`` entry, cache or cache entry
is listed as REFUSED with the reason and counts as a defect. Exit
status: 0 when everything listed is valid (and ``--soc``/``--dtype`` are carried), 1 when
not, 2 for a usage error (an option combination that would be ignored, a ``--wheel`` that
is not a tf-ge-custom wheel, a ``--dir`` that is not a folder). No TensorFlow is imported.
"""
import os
import shutil
import sys
import tempfile
import zipfile

from .. import _zip_members
from ..errors import UsageError

_WHEEL_KERNELS = "tf_ge_custom/opp/kernels/"
# A wheel's kernels folder holds a manifest and a few npubins per SoC; a member or a sum far
# beyond the manifest reader's own limits is not one (and would fill the disk on extraction).
_MAX_MEMBER_BYTES = 1 << 30
_MAX_TOTAL_BYTES = 4 << 30


def add_arguments(parser):
    parser.description = ("List and verify the precompiled NPU kernels (SoC, dtypes, toolchain, "
                          "checksums) of the installed package, a wheel or a folder.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--wheel", help="inspect this tf-ge-custom wheel (.whl) instead of the "
                                       "installed package")
    where.add_argument("--dir", help="inspect a folder holding <SoC>/manifest.json")
    where.add_argument("--cache", action="store_true",
                       help="inspect the per-user kernel cache (what graph builds compiled on "
                            "this host, and build-kernels --cache); --soc/--dtype then require "
                            "entries of the current toolchain")
    parser.add_argument("--soc", help="require kernels for this SoC (exit 1 if absent)")
    parser.add_argument("--dtype", default=None,
                        help="with --soc: require these comma-separated dtypes too")


def _installed_kernels_dir():
    from tf_ge_custom import opp

    return os.path.join(opp.opp_root(), "kernels")


def check_wheel(path):
    """Raise UsageError unless ``path`` is a tf-ge-custom wheel; returns its ZipFile."""
    if not path.endswith(".whl"):
        raise UsageError("--wheel %s: not a wheel (a wheel's file name ends in .whl)" % path)
    if not os.path.isfile(path):  # first: a missing path is not "not a tf-ge-custom wheel"
        what = "does not exist" if not os.path.lexists(path) else "is not a regular file"
        raise UsageError("--wheel %s %s" % (path, what))
    base = os.path.basename(path)
    if not base.lower().startswith("tf_ge_custom-"):
        raise UsageError("--wheel %s: not a tf-ge-custom wheel (expected "
                         "tf_ge_custom-<version>-<tags>.whl)" % path)
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise UsageError("--wheel %s: not a wheel (not a readable zip archive: %s)" % (path, e))
    names = zf.namelist()
    wheel_files = [n for n in names if n.count("/") == 1 and n.endswith(".dist-info/WHEEL")
                   and n.lower().startswith("tf_ge_custom-")]
    if not wheel_files:
        zf.close()
        raise UsageError("--wheel %s: not a tf-ge-custom wheel (no tf_ge_custom-*.dist-info/"
                         "WHEEL inside)" % path)
    try:
        head = _zip_members.head(zf, wheel_files[0]).decode("utf-8", "replace")  # a sniff, not the member
    except (OSError, zipfile.BadZipFile, RuntimeError) as e:
        zf.close()
        raise UsageError("--wheel %s: cannot read %s: %s" % (path, wheel_files[0], e))
    if "Wheel-Version:" not in head:
        zf.close()
        raise UsageError("--wheel %s: %s has no Wheel-Version (not a wheel)" % (path, wheel_files[0]))
    return zf


def _extract_kernels(zf, wheel, into):
    total = 0
    for info in zf.infolist():
        name = info.filename
        if not name.startswith(_WHEEL_KERNELS) or name.endswith("/"):
            continue
        rel = name[len(_WHEEL_KERNELS):]
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\0" in rel:
            raise UsageError("--wheel %s: member %r has an unsafe path" % (wheel, name))
        total += info.file_size
        if info.file_size > _MAX_MEMBER_BYTES or total > _MAX_TOTAL_BYTES:
            raise UsageError("--wheel %s: member %s is too large (%d bytes) for a kernel file"
                             % (wheel, name, info.file_size))
        target = os.path.join(into, *parts)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with zf.open(info) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)


def _check_options(args):
    from tf_ge_custom import _lifecycle

    if args.dtype is not None and not args.soc:
        raise UsageError("--dtype needs --soc (it names the dtypes that SoC must carry)")
    if args.dtype is not None:
        from tf_ge_custom import op_def

        known = list(dict.fromkeys(d for op in op_def.OPS for d in op.dtypes))
        choices = ", ".join(known)
        if not args.dtype.strip():
            raise UsageError("--dtype is empty; choose from %s" % choices)
        wanted = [d.strip() for d in args.dtype.split(",")]
        unknown = [d for d in wanted if d not in known]
        if unknown:
            raise UsageError("--dtype %r: unknown dtype(s) %s; choose from %s" % (
                args.dtype, ", ".join(repr(d) for d in unknown), choices))
    if args.soc is not None and not args.soc.strip():
        raise UsageError("--soc is empty")
    if args.dir is not None and not os.path.isdir(_lifecycle.absolute(args.dir, "--dir")):
        what = "does not exist" if not os.path.lexists(args.dir) else "is not a folder"
        raise UsageError("--dir %s %s" % (args.dir, what))


def run(args):
    from tf_ge_custom import _lifecycle, kernel_manifest
    from tf_ge_custom.errors import ManifestError, TfGeCustomError

    _check_options(args)
    if args.cache:
        return _run_cache(args)
    temp = None
    try:
        if args.wheel:
            zf = check_wheel(_lifecycle.absolute(args.wheel, "--wheel"))
            temp = tempfile.mkdtemp(prefix="tf-ge-custom-wheel-")
            try:
                with zf:
                    _extract_kernels(zf, args.wheel, temp)
            except (OSError, zipfile.BadZipFile, RuntimeError) as e:
                raise TfGeCustomError("cannot read wheel %s: %s" % (args.wheel, e))
            kernels_dir, label = temp, args.wheel
        elif args.dir:
            kernels_dir, label = args.dir, args.dir
        else:
            kernels_dir = _installed_kernels_dir()
            label = kernels_dir
        found = kernel_manifest.find_manifests_in(kernels_dir)
        sources = {soc: "package" if not (args.wheel or args.dir) else None for soc in found}
        if not (args.wheel or args.dir):
            # the kernel bundles of $TF_GE_CUSTOM_KERNELS, as the GE library reads them
            from tf_ge_custom.kernels.kernel_sources import kernel_sets

            for s in kernel_sets(kernels_dir):
                if s.soc not in found:
                    found[s.soc] = s.manifest_path
                    sources[s.soc] = "bundle %s" % s.folder
        valid, failures = {}, 0
        if not found:
            sys.stdout.write("%s: no precompiled kernels\n" % label)
        if not (args.wheel or args.dir):
            from tf_ge_custom.kernels.kernel_sources import refused_bundles

            for refused in refused_bundles():
                sys.stdout.write("REFUSED: %s\n" % (refused,))
                failures += 1
        for soc, path in found.items():
            try:
                m = valid[soc] = kernel_manifest.load_manifest(
                    path, check_files=True, trust_rule=(sources.get(soc) or "").startswith("bundle"))
            except ManifestError as e:
                message = str(e)
                if temp:  # name the wheel's member, not where it was unpacked for reading
                    message = message.replace(temp + os.sep, "%s:%s" % (args.wheel, _WHEEL_KERNELS))
                sys.stdout.write("%-15s %s: %s\n" % (soc, "REFUSED" if e.kind == "trust" else "INVALID",
                                                     message))
                failures += 1
                continue
            tc = m.toolchain
            sys.stdout.write("%-15s %-32s %s (triton-ascend %s, bishengir %s, CANN %s)%s\n" % (
                soc, " ".join(m.dtypes()),
                "IR only, no npubins" if m.ir_only else "npubins verified",
                tc["triton_ascend"], tc["bishengir"], tc["cann"] or "none",
                _where(m, sources.get(soc))))
        if args.soc:
            board = args.soc
            served = _served_by(board, found, sources)
            if served is not None:
                sys.stdout.write("%s\n" % served[1])
                board = served[0]
            problem = _missing(valid.get(board), board, args.dtype)
            if problem:
                raise TfGeCustomError("%s in %s" % (problem, label))
        return 1 if failures else 0
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def _where(manifest, source):
    """`` [dav-2201; from the package]``: the architecture and where the set came from."""
    parts = []
    if manifest.architecture:
        parts.append(manifest.architecture)
    if source:
        parts.append("from the %s" % source)
    return " [%s]" % "; ".join(parts) if parts else ""


def _served_by(board, found, sources):
    """For a board without a kernel set of its own name (an alias such as Ascend910B4-1):
    (the SoC whose set serves it, a line saying so), or None."""
    from tf_ge_custom.kernels import socs
    from tf_ge_custom.kernels.kernel_sources import KernelSet, describe, serving

    if board in found:
        return None
    try:
        socs.get(board)
    except KeyError:
        return None
    sets = [KernelSet(soc, path, "bundle" if (sources.get(soc) or "").startswith("bundle") else
                      "package", (sources.get(soc) or "")[len("bundle "):])
            for soc, path in found.items()]
    result = serving(board, sets)
    if result.kernel_set is None:
        return None
    return result.kernel_set.soc, describe(result)


def _run_cache(args):
    """``--cache``: one line per (SoC, key) with its dtypes; ``current`` marks the key the
    toolchain here builds (the one a graph build looks up)."""
    from tf_ge_custom import _trust as trust, op_def
    from tf_ge_custom.errors import KernelCacheError, TfGeCustomError
    from tf_ge_custom.kernels import cache

    location = cache.cache_dir()  # a KernelCacheError says why there is none
    refusal = cache.cache_refusal(location.path)
    if refusal is not None:
        sys.stdout.write("kernel cache: %s (from %s) REFUSED\n" % (trust.shown(location.path),
                                                                   location.source))
        raise KernelCacheError(cache.untrusted_message(location.path, refusal))
    current = cache.identity()
    sys.stdout.write("kernel cache: %s (from %s)\n" % (trust.shown(location.path), location.source))
    sys.stdout.write("current key: %s%s\n" % (current.key, "; a compile here would lack %s"
                                               % ", ".join(current.missing)
                                               if current.missing else ""))
    entries = cache.list_entries(location.path)
    if not entries:
        sys.stdout.write("%s: no kernels compiled yet\n" % location.path)
    groups, failures = {}, 0
    for e in entries:
        groups.setdefault((e.soc, e.key), []).append(e)
    several = len(op_def.OPS) > 1

    def label(e):  # the op's type only when the package has more than one
        return "%s/%s" % (e.op, e.dtype) if several and e.op else e.dtype

    for (soc, key), found in sorted(groups.items()):
        good = [label(e) for e in found if e.manifest is not None]
        sys.stdout.write("%-15s %-32s %s%s\n" % (soc, " ".join(good) or "-", key,
                                                 " (current)" if key == current.key else ""))
        for e in found:
            if e.manifest is None:
                failures += 1
                sys.stdout.write("%-15s %-32s %s: %s\n" % (
                    soc, label(e) or "-", "REFUSED" if e.kind == "trust" else "INVALID", e.error))
    if args.soc:
        have = [e.dtype for e in entries if e.soc == args.soc and e.key == current.key
                and e.manifest is not None]
        wanted = [d.strip() for d in (args.dtype or "").split(",") if d.strip()]
        absent = [d for d in wanted if d not in have]
        if not have or absent:
            raise TfGeCustomError("the cache %s has no kernels of the current toolchain for %s%s"
                                  % (location.path, args.soc, " (%s)" % ", ".join(absent) if have else ""))
    return 1 if failures else 0


def _missing(manifest, soc, dtypes):
    """Why ``manifest`` does not provide ``soc`` (and ``dtypes``), or None."""
    if manifest is None:
        return "no valid kernels for %s" % soc
    if manifest.ir_only:
        return "%s has an IR-only manifest (no npubins)" % soc
    wanted = [d.strip() for d in (dtypes or "").split(",") if d.strip()]
    absent = [d for d in wanted if d not in manifest.dtypes()]
    if absent:
        return "%s lacks dtype(s) %s" % (soc, ", ".join(absent))
    # a dtype counts only with every kernel variant of every op that has it: the GE library
    # needs each for some shapes (AddCustom's sentence as it always read; another op's named)
    from tf_ge_custom import op_def

    for d in wanted:
        for op in op_def.OPS:
            missing = manifest.missing_variants(op, d) if d in op.dtypes else []
            if missing:
                return "%s lacks %skernel variant(s) %s for dtype %s" % (
                    soc, "" if op is op_def.ADD_CUSTOM else op.type_name + "'s ", ", ".join(missing), d)
    return None
