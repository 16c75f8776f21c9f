"""``tf-ge-custom export``: a TensorFlow model to a frozen graph, AIR or OM.

    tf-ge-custom export MODEL --to pb|air|om --output PREFIX [--soc Ascend910B1] [--via air|pb]
        [--input-shape "x:8,2048;y:8,2048"] [--dynamic-batch-size 1,2,4 | --dynamic-dims ...]
        [--signature KEY] [--tag serve] [--outputs NODE,...] [--checkpoint PREFIX]
        [--inputs x.npy,y.npy] [--atc-option precision_mode_v2=origin ...] [--dry-run] [--force]

Exit status: 0 done, 1 the model or an option was refused or a tool failed, 2 a tool or
deliverable is missing (the message says what to install or ``source``), 130 interrupted.
Nothing heavy is imported until the command runs (no TensorFlow for ``--help``).
"""
import sys

PROG = "tf-ge-custom export"
EXIT_MISSING_TOOLCHAIN = 2
EXIT_INTERRUPTED = 130


def _split(values):
    out = []
    for value in values or ():
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def add_arguments(parser):
    parser.description = (
        "Export a TensorFlow model to a frozen graph (.pb: needs only TensorFlow), AIR (.air: the "
        "AIR tool, built with a CANN toolkit) or OM (.om: CANN's atc). The .pb is checked and "
        "verified against the source model in a fresh process before anything else runs.")
    parser.add_argument("model", help="SavedModel directory, Keras .keras/.h5 file, TF1 checkpoint "
                                      ".meta file, or frozen .pb")
    parser.add_argument("--to", choices=("pb", "air", "om"), default="pb",
                        help="what to produce (default: pb)")
    parser.add_argument("--output", "-o", required=True, metavar="PREFIX",
                        help="path prefix of the files written: PREFIX.pb, PREFIX.json (inputs, "
                             "outputs, op counts), PREFIX.air, PREFIX.om, logs")
    parser.add_argument("--soc", help="target SoC for --to om, as --soc_version spells it (e.g. Ascend910B1)")
    parser.add_argument("--via", choices=("air", "pb"),
                        help="how the OM is made: atc from the AIR (--framework=1) or from the .pb "
                             "(--framework=3); default: air when the AIR tool is built")
    parser.add_argument("--input-shape", metavar="SHAPES",
                        help='input shapes for ATC, "name:d,d;name:d" (-1 dynamic, lo~hi a range); '
                             "default: the shapes recorded in the graph")
    parser.add_argument("--dynamic-batch-size", metavar="SIZES",
                        help="ATC dynamic batch sizes, e.g. 1,2,4,8 (the inputs' first dim becomes -1)")
    parser.add_argument("--dynamic-dims", metavar="SETS",
                        help='ATC dynamic dims: one value per -1 dim per set, e.g. "1,64;4,128"')
    parser.add_argument("--signature", help="SavedModel signature key (default: serving_default)")
    parser.add_argument("--tag", action="append", metavar="TAG",
                        help="SavedModel meta graph tag (repeat or comma-separate; default: serve)")
    parser.add_argument("--outputs", action="append", metavar="NODES",
                        help="output node or tensor names, comma-separated (TF1 checkpoint: "
                             "required; frozen .pb: default every unconsumed node)")
    parser.add_argument("--checkpoint", metavar="PREFIX",
                        help="TF1 checkpoint prefix (default: the .meta path without .meta)")
    parser.add_argument("--inputs", action="append", metavar="FILES",
                        help="inputs for the verification: .npy files in input order, or "
                             "name=FILE.npy (default: generated)")
    parser.add_argument("--atc-option", action="append", default=[], metavar="NAME=VALUE",
                        help="an extra ATC option, passed through (repeat), e.g. "
                             "precision_mode_v2=origin")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip running the .pb in a fresh process against the source model")
    parser.add_argument("--rtol", type=float, help="verification tolerance (default: by dtype)")
    parser.add_argument("--atol", type=float, help="verification tolerance (default: by dtype)")
    parser.add_argument("--force", action="store_true",
                        help="replace existing PREFIX.pb/.json/... files even when no export "
                             "record shows that tf-ge-custom export wrote them")
    parser.add_argument("--dry-run", action="store_true",
                        help="freeze and check, print every command, write nothing")


def run(args, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    from tf_ge_custom.errors import (ExportError, ExternalToolError, MissingToolchainError,
                                     TfGeCustomError)

    from tf_ge_custom.export.pipeline import export

    try:
        export(args.model, to=args.to, output=args.output, soc=args.soc, via=args.via,
               input_shape=args.input_shape, signature=args.signature, tags=_split(args.tag) or None,
               outputs=_split(args.outputs) or None, checkpoint=args.checkpoint,
               inputs=_split(args.inputs) or None, dynamic_batch_size=args.dynamic_batch_size,
               dynamic_dims=args.dynamic_dims, atc_options=args.atc_option,
               verify=not args.no_verify, dry_run=args.dry_run, force=args.force, rtol=args.rtol, atol=args.atol, out=out)
    except MissingToolchainError as e:
        err.write("%s: error: %s\n" % (PROG, e))
        return EXIT_MISSING_TOOLCHAIN
    except (ExportError, ExternalToolError, TfGeCustomError) as e:
        err.write("%s: error: %s\n" % (PROG, e))
        return 1
    except OSError as e:  # the file system refused a write the checks could not foresee
        err.write("%s: error: %s%s\n" % (PROG, e.strerror or e,
                                         ": %s" % e.filename if getattr(e, "filename", None) else ""))
        return 1
    except KeyboardInterrupt:
        err.write("%s: interrupted; no partial .pb/.air/.om was left behind\n" % PROG)
        return EXIT_INTERRUPTED
    return 0
