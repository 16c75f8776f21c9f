"""``tf-ge-custom doctor``: the installation and the Ascend stack, one line per check
(the checks: :mod:`tf_ge_custom.doctor`). Exit status 1 when a check FAILs, else 0."""
import json
import sys


def add_arguments(parser):
    parser.description = ("Check the installation and the Ascend stack. Exit status 1 when a "
                          "check FAILs, else 0 (WARN included).")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--soc", help="also say which kernel set a graph build for this board "
                                      "takes (a SoC or a board name such as Ascend910B4-1)")


def run(args):
    from .. import _lifecycle
    from ..doctor import reporting
    from ..errors import UsageError

    board = getattr(args, "soc", None)
    if board:
        from ..kernels import socs

        try:
            socs.resolve(board)
        except KeyError as e:
            raise UsageError("--soc: %s" % e.args[0])
    with _lifecycle.doing("running doctor's checks"):
        results, root = reporting.diagnose(board)
    if args.json:
        sys.stdout.write(json.dumps(reporting.report(results, root), indent=2) + "\n")
    else:
        sys.stdout.write(reporting.format_text(results, root))
    return reporting.exit_status(results)
