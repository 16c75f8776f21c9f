"""``tf-ge-custom list-kernels``: which SoCs and dtypes a package (or wheel) carries.

    tf-ge-custom list-kernels                         # the installed package
    tf-ge-custom list-kernels --soc Ascend910B1       # exit 1 unless it carries that SoC
    tf-ge-custom list-kernels --wheel dist/tf_ge_custom-*.whl --soc Ascend910_9392
    tf-ge-custom list-kernels --dir OUT               # a build-kernels output folder

Every manifest is validated and every npubin checksummed; any defect is an error.
"""
import os
import shutil
import sys
import tempfile
import zipfile

_WHEEL_KERNELS = "tf_ge_custom/opp/kernels/"


def add_arguments(parser):
    parser.description = ("List and verify the precompiled NPU kernels (SoC, dtypes, toolchain, "
                          "checksums) of the installed package, a wheel or a folder.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--wheel", help="inspect this wheel instead of the installed package")
    where.add_argument("--dir", help="inspect a folder holding <SoC>/manifest.json")
    parser.add_argument("--soc", help="require kernels for this SoC (exit 1 if absent)")
    parser.add_argument("--dtype", default=None,
                        help="with --soc: require these comma-separated dtypes too")


def _installed_kernels_dir():
    import tf_ge_custom

    opp_root = getattr(tf_ge_custom, "opp_root", None)
    root = opp_root() if callable(opp_root) else os.path.join(
        os.path.dirname(os.path.abspath(tf_ge_custom.__file__)), "opp")
    return os.path.join(root, "kernels")


def _extract_wheel(wheel, into):
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith(_WHEEL_KERNELS) and not name.endswith("/"):
                rel = name[len(_WHEEL_KERNELS):]
                if ".." in rel.split("/"):
                    continue
                target = os.path.join(into, *rel.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with zf.open(name) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)


def run(args):
    from tf_ge_custom import kernel_manifest
    from tf_ge_custom.errors import ManifestError

    temp = None
    try:
        if args.wheel:
            temp = tempfile.mkdtemp(prefix="tf-ge-custom-wheel-")
            try:
                _extract_wheel(args.wheel, temp)
            except (OSError, zipfile.BadZipFile) as e:
                sys.stderr.write("tf-ge-custom list-kernels: error: cannot read wheel %s: %s\n"
                                 % (args.wheel, e))
                return 1
            kernels_dir, label = temp, args.wheel
        elif args.dir:
            kernels_dir, label = args.dir, args.dir
        else:
            kernels_dir = _installed_kernels_dir()
            label = kernels_dir
        found = kernel_manifest.find_manifests_in(kernels_dir)
        valid, failures = {}, 0
        if not found:
            sys.stdout.write("%s: no precompiled kernels\n" % label)
        for soc, path in found.items():
            try:
                m = valid[soc] = kernel_manifest.load_manifest(path, check_files=True)
            except ManifestError as e:
                sys.stdout.write("%-15s INVALID: %s\n" % (soc, e))
                failures += 1
                continue
            tc = m.toolchain
            sys.stdout.write("%-15s %-32s %s (triton-ascend %s, bishengir %s, CANN %s)\n" % (
                soc, " ".join(m.dtypes()),
                "IR only, no npubins" if m.ir_only else "npubins verified",
                tc["triton_ascend"], tc["bishengir"], tc["cann"] or "none"))
        if args.soc:
            problem = _missing(valid.get(args.soc), args.soc, args.dtype)
            if problem:
                sys.stderr.write("tf-ge-custom list-kernels: %s in %s\n" % (problem, label))
                return 1
        return 1 if failures else 0
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


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
    return None
