"""``tf-ge-custom selftest``: run every stage this host can run; one line each.

    tf-ge-custom selftest [--soc SOC] [--json FILE] [--keep DIR] [--only A,B] [--timeout S] [--list]

Exit status: 0 when no stage FAILs (SKIPs included), 1 when one does, 2 for a bad argument
(nothing runs then), 130 / 143 / 129 interrupted. The work: :mod:`tf_ge_custom.selftest.suite`.
"""


def add_arguments(parser):
    from ..selftest.stages import NAMES

    parser.description = ("Run, stage by stage, everything this host can run: the installation, each op "
                          "on the CPU, and on an Ascend host the NPU session, device, kernels, broadcasting, "
                          "large tensors, the GE library and the offline OM route. One line per stage: "
                          "NAME=PASS / FAIL / SKIP. Exit status 1 when a stage FAILs.")
    parser.add_argument("--soc", help="the SoC to check kernels and build OMs for, e.g. Ascend910B1 "
                                      "(default: asked of the NPU, when there is one)")
    parser.add_argument("--json", metavar="FILE", help="also write a JSON report (versions, every stage) here")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the logs and files of every stage in DIR (a new or empty folder, or one "
                             "an earlier selftest --keep wrote: its files are replaced)")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated stages to run, among: " + ", ".join(NAMES))
    parser.add_argument("--timeout", type=int, metavar="SECONDS",
                        help="limit every stage to SECONDS (default: each stage's own, 5 to 60 minutes)")
    parser.add_argument("--list", action="store_true", help="list the stages and what each checks, then exit")


def run(args):
    from ..selftest import suite

    if args.list:
        return suite.list_stages()
    return suite.selftest(soc=args.soc, json_path=args.json, keep=args.keep, only=args.only, timeout=args.timeout)
