"""``tf-ge-custom build-kernels``: compile the Triton kernel to npubins for a list of SoCs.

    tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out DIR
    tf-ge-custom build-kernels --ir-only          # any host: IR + argument layout only

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
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output folder; gets <out>/<SoC>/ (default: %(default)s)")
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
    try:
        result = builder.build_kernels(
            soc_names, args.dtype, args.out, ir_only=args.ir_only,
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
