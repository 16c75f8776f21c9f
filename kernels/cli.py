"""``tf-ge-custom build-kernels``: compile the Triton kernel to npubins for a list of SoCs.

    tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out DIR
    tf-ge-custom build-kernels --ir-only          # any host: IR + argument layout only
    tf-ge-custom build-kernels --soc Ascend910B1 --cache   # pre-warm the per-user cache

The Python API is :func:`tf_ge_custom.kernels.builder.build_kernels`. Nothing heavy is
imported until the command runs.
"""
import sys

DEFAULT_OUT = "tf-ge-custom-kernels"


def comma_list(value):
    """The argparse type of ``--soc``/``--dtype``: ``"a, b"`` -> ``["a", "b"]``."""
    return [item.strip() for item in value.split(",") if item.strip()]


def add_arguments(parser):
    from tf_ge_custom import op_def

    dtypes = list(dict.fromkeys(d for op in op_def.OPS for d in op.dtypes))
    parser.description = ("Compile the Triton kernels of %s ahead of time: one npubin per "
                          "(SoC, dtype) plus one manifest.json per SoC. Needs triton-ascend "
                          "and bishengir-compile; the npubins also need CANN's hivmc."
                          % ", ".join(op.type_name for op in op_def.OPS))
    parser.add_argument("--soc", type=comma_list, default="all",
                        help="comma-separated SoCs as --soc_version spells them, or 'all' "
                             "(default: all)")
    parser.add_argument("--dtype", type=comma_list, default="all",
                        help="comma-separated dtypes (%s) or 'all'" % ",".join(dtypes))
    parser.add_argument("--out", default=None,
                        help="output folder; gets <out>/<SoC>/ (default: %s)" % DEFAULT_OUT)
    parser.add_argument("--cache", action="store_true",
                        help="build into the per-user kernel cache the GE library compiles into "
                             "on first graph build ($TF_GE_CUSTOM_CACHE_DIR, else "
                             "$XDG_CACHE_HOME/tf-ge-custom/kernels, else ~/.cache/...); entries "
                             "already there are kept (docs/kernels.md)")
    parser.add_argument("--ir-only", action="store_true",
                        help="stop at HIVM IR: write the IR and a manifest with the argument "
                             "layout but no npubins (no CANN needed)")
    parser.add_argument("--max-programs", type=int, default=None,
                        help="cap on programs per launch (default: the SoC's vector cores)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing <out>/<SoC>/ even when it holds files "
                             "build-kernels did not write (they are deleted)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def run(args):
    from tf_ge_custom.errors import KernelBuildError

    from . import builder, socs

    soc_names = list(socs.SOCS) if args.soc == ["all"] else args.soc
    if args.cache:
        return _run_cache(args, soc_names)
    try:
        result = builder.build_kernels(
            soc_names, args.dtype, args.out or DEFAULT_OUT, ir_only=args.ir_only,
            max_programs=args.max_programs, force=args.force,
            progress=None if args.quiet else builder.print_progress)
    except ValueError as e:
        sys.stderr.write("tf-ge-custom build-kernels: error: %s\n" % e)
        return 2
    except KernelBuildError as e:
        sys.stderr.write("tf-ge-custom build-kernels: error: %s\n" % e)
        return 1
    for soc, path in result.manifests.items():
        sys.stdout.write("%s: %s%s\n" % (soc, path, " (IR only, no npubins)"
                                         if result.ir_only else ""))
    return 0


def _run_cache(args, soc_names):
    """``--cache``: each (SoC, dtype) into the per-user cache, as a graph build would."""
    from tf_ge_custom.errors import KernelBuildError, KernelCacheError

    from . import builder, cache

    conflicts = [flag for flag, used in (("--out", args.out is not None),
                                         ("--ir-only", args.ir_only),
                                         ("--max-programs", args.max_programs is not None),
                                         ("--force", args.force)) if used]
    if conflicts:
        sys.stderr.write("tf-ge-custom build-kernels: error: --cache cannot be combined with %s "
                         "(the cache holds what a graph build would compile, where it would "
                         "look)\n" % ", ".join(conflicts))
        return 2
    try:
        soc_names = builder.parse_socs(soc_names)
        dtype_names = builder.parse_dtypes(args.dtype)
        location = cache.cache_dir()
    except (ValueError, KernelCacheError) as e:
        sys.stderr.write("tf-ge-custom build-kernels: error: %s\n" % e)
        return 2
    progress = None if args.quiet else builder.print_progress

    def on_wait(pid):
        sys.stderr.write("waiting for %s, which is building the same kernel into the cache\n"
                         % ("process %d" % pid if pid else "another process"))

    if not args.quiet:
        sys.stderr.write("kernel cache: %s (from %s)\n" % (location.path, location.source))
    for soc in soc_names:
        for dtype in dtype_names:
            try:
                done = cache.ensure(soc, dtype, cache=location.path, progress=progress,
                                    on_wait=on_wait)
            except ValueError as e:
                sys.stderr.write("tf-ge-custom build-kernels: error: %s\n" % e)
                return 2
            except (KernelBuildError, KernelCacheError, OSError) as e:
                sys.stderr.write("tf-ge-custom build-kernels: error: %s %s: %s\n" % (soc, dtype, e))
                return 1
            sys.stdout.write("%s %s: %s (%s)\n" % (soc, dtype, done.path, "built" if done.built
                                                   else "already in the cache"))
    return 0
