"""``tf-ge-custom export``: a TensorFlow model to a frozen graph, AIR or OM.

    tf-ge-custom export MODEL --to pb|air|om --output PREFIX [--soc Ascend910B1] [--via air|pb]
        [--input-shape "x:8,2048;y:8,2048"] [--dynamic-batch-size 1,2,4 | --dynamic-dims ...]
        [--signature KEY] [--tag serve] [--outputs NODE,...] [--checkpoint PREFIX]
        [--inputs x.npy,y.npy] [--atc-option precision_mode_v2=origin ...] [--import MODULE ...]
        [--dry-run] [--force] [--verbose]

Exit status: 0 done, 1 the model or an option was refused or a tool failed, 2 a tool or
deliverable is missing (the message says what to install or ``source``), 130 / 143 / 129 / 131
interrupted (SIGINT / SIGTERM / SIGHUP / SIGQUIT). Nothing heavy is imported until the command runs
(no TensorFlow for ``--help``), and paths and options are checked before TensorFlow is
(:func:`check_arguments`, then the pipeline's own checks); "loading TensorFlow..." and a line on
every silence say what a long wait is doing. The work is :func:`tf_ge_custom.export.pipeline.export`.
"""
import contextlib
import sys


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
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE (a module name, found on the Python path or in the working "
                             "directory, or a .py file) before loading the model: for a Keras model "
                             "whose layers are your own registered classes; repeat for several")
    parser.add_argument("--verbose", action="store_true",
                        help="also show TensorFlow's own log lines and Python warnings")


def check_arguments(args):
    """The options by what they say alone (tf_ge_custom/export/options.py), before ``run``
    imports the pipeline and TensorFlow: a mistake is refused in a fraction of a second."""
    from tf_ge_custom import _lifecycle
    from tf_ge_custom.export import options

    model = _lifecycle.absolute(args.model, "MODEL")
    _lifecycle.absolute(args.output, "--output")  # a relative path in a vanished folder: named first
    options.check_export(model, to=args.to, soc=args.soc, via=args.via,
                         input_shape=args.input_shape, signature=args.signature, tags=_split(args.tag) or None,
                         outputs=_split(args.outputs) or None,
                         checkpoint=args.checkpoint and _lifecycle.absolute(args.checkpoint, "--checkpoint"),
                         dynamic_batch_size=args.dynamic_batch_size, dynamic_dims=args.dynamic_dims,
                         atc_options=args.atc_option, rtol=args.rtol, atol=args.atol)


def run(args):
    from tf_ge_custom import _lifecycle, _quiet
    from tf_ge_custom.export.pipeline import export

    _quiet.quiet_tensorflow(args.verbose)
    model = _lifecycle.absolute(args.model, "MODEL")
    with verbose_details(args.verbose):
        export(model, to=args.to, output=_lifecycle.absolute(args.output, "--output"), soc=args.soc,
               via=args.via, input_shape=args.input_shape, signature=args.signature,
               tags=_split(args.tag) or None, outputs=_split(args.outputs) or None,
               checkpoint=args.checkpoint and _lifecycle.absolute(args.checkpoint, "--checkpoint"),
               inputs=_split(args.inputs) or None, dynamic_batch_size=args.dynamic_batch_size,
               dynamic_dims=args.dynamic_dims, atc_options=args.atc_option, verify=not args.no_verify,
               dry_run=args.dry_run, force=args.force, rtol=args.rtol, atol=args.atol,
               out=sys.stdout, imports=args.imports)
    return 0


@contextlib.contextmanager
def verbose_details(verbose):
    """With ``--verbose``, an error that carries more than its one line (a TensorFlow that cannot
    be imported: the whole traceback, in ``details``) prints that first."""
    try:
        yield
    except Exception as e:
        if verbose and getattr(e, "details", ""):
            sys.stderr.write(e.details)
        raise
