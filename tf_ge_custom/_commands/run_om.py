"""``tf-ge-custom run-om``: run an OM on the NPU through ACL and compare it with TensorFlow.

    tf-ge-custom run-om MODEL.om --input x.npy --input y.npy [--compare-with MODEL] [--output-dir DIR]

Exit status: 0 RUN_OM=PASS (or UNCHECKED: nothing to compare with), 1 RUN_OM=FAIL or a
refusal, 2 the OM runner or the CANN environment is missing, 130 / 143 / 129 / 131 interrupted.
The work is :func:`tf_ge_custom.export.om_runner.run_om`.
"""
import sys

from .export import _split, verbose_details

def add_arguments(parser):
    parser.description = (
        "Run an OM once through ACL (the package's OM runner, built with a CANN toolkit) with "
        "ASCEND_CUSTOM_OPP_PATH cleared, write its outputs as .npy, and compare them with the "
        "source model run by TensorFlow on the CPU. Needs an Ascend NPU.")
    parser.add_argument("model", metavar="MODEL.om")
    parser.add_argument("--input", action="append", default=[], metavar="FILE.npy",
                        help="one per model input, in order (or name=FILE.npy); repeat")
    parser.add_argument("--compare-with", metavar="MODEL",
                        help="the TensorFlow model to compare with (default: the source recorded "
                             "in MODEL.json beside the OM)")
    parser.add_argument("--signature", help="SavedModel signature of --compare-with")
    parser.add_argument("--tag", action="append", metavar="TAG", help="SavedModel tag of --compare-with")
    parser.add_argument("--outputs", metavar="NODES", help="output nodes of a --compare-with checkpoint/.pb")
    parser.add_argument("--checkpoint", metavar="PREFIX", help="checkpoint prefix of a --compare-with .meta")
    parser.add_argument("--output-dir", metavar="DIR", help="where the .npy outputs go: a new or empty folder, or "
                                                             "one run-om made (default: MODEL.outputs/)")
    parser.add_argument("--device", type=int, default=0, help="NPU device id (default: 0)")
    parser.add_argument("--dynamic-batch", type=int, help="batch size to run an OM built with dynamic batch sizes")
    parser.add_argument("--rtol", type=float, help="comparison tolerance (default: by dtype)")
    parser.add_argument("--atol", type=float, help="comparison tolerance (default: by dtype)")
    parser.add_argument("--verbose", action="store_true",
                        help="also show TensorFlow's own log lines and Python warnings")


def check_arguments(args):
    """The options by what they say alone, before the OM runs or TensorFlow is imported."""
    from tf_ge_custom import _lifecycle
    from tf_ge_custom.export import options

    _lifecycle.absolute(args.model, "MODEL.om")  # a relative path in a vanished folder: named first
    options.check_run_om(device=args.device, dynamic_batch=args.dynamic_batch, rtol=args.rtol, atol=args.atol)
    if args.compare_with:
        options.check_model_options(_lifecycle.absolute(args.compare_with, "--compare-with"),
                                    signature=args.signature, tags=_split(args.tag) or None,
                                    outputs=_split([args.outputs] if args.outputs else []) or None,
                                    checkpoint=args.checkpoint and _lifecycle.absolute(args.checkpoint,
                                                                                       "--checkpoint"))
    elif args.signature or args.tag or args.outputs or args.checkpoint:
        from tf_ge_custom.errors import ExportError

        raise ExportError("--signature, --tag, --outputs and --checkpoint describe the --compare-with "
                          "model; pass --compare-with MODEL too (the source recorded beside the OM "
                          "is loaded with the options recorded at export)")


def run(args):
    from tf_ge_custom import _lifecycle, _quiet
    from tf_ge_custom.errors import MissingToolchainError, TfGeCustomError
    from tf_ge_custom.export.om_runner import run_om

    _quiet.quiet_tensorflow(args.verbose)
    try:
        with verbose_details(args.verbose):
            result = run_om(_lifecycle.absolute(args.model, "MODEL.om"), _split(args.input),
                            output_dir=args.output_dir, compare_with=args.compare_with, device=args.device,
                            dynamic_batch=args.dynamic_batch, signature=args.signature,
                            tags=_split(args.tag) or None,
                            outputs=_split([args.outputs] if args.outputs else []) or None,
                            checkpoint=args.checkpoint, rtol=args.rtol, atol=args.atol, out=sys.stdout)
    except MissingToolchainError:
        raise
    except TfGeCustomError:
        sys.stdout.write("RUN_OM=FAIL\n")  # the verdict line scripts read, then the error
        raise
    return 1 if result.status == "FAIL" else 0
