"""Which checks run, in which order; the CPU-mode folding; the text and JSON reports; the
``doctor`` command itself."""
import json
import sys

from .. import op_def
from .._version import __version__
from . import cann, kernels, op_library, opp_paths
from .context import Context
from .results import FAIL, INFO, STATUSES, WARN, Check, Instruction, is_command, worst

CHECKS = (
    op_library.check_tensorflow, op_library.check_op_library, op_library.check_xla_library,
    opp_paths.check_opp_root, opp_paths.check_custom_opp_path,
    opp_paths.check_shell_environment, opp_paths.check_opp_path, opp_paths.check_home_path,
    opp_paths.check_tf1_finds_json, opp_paths.check_tf2_finds_json, cann.check_ge_finds_library,
    cann.check_npu_bridge, cann.check_npu_device, cann.check_cann, cann.check_ge_library,
    opp_paths.check_npu_placement, kernels.check_kernels, kernels.check_kernel_cache,
    cann.check_online_compile, opp_paths.check_custom_opp_search_order,
    kernels.check_npubin_toolchain, kernels.check_board_kernels, kernels.check_kernel_builder,
    cann.check_static_graph_path,
)


# What the package installs itself: these decide on every host, CPU-only ones included.
# Every other check is about the Ascend stack (see fold_cpu_mode).
OWN_CHECKS = (op_library.check_tensorflow, op_library.check_op_library, op_library.check_xla_library,
              opp_paths.check_opp_root, opp_paths.check_custom_opp_path)


CPU_MODE = "Ascend stack"


def fold_cpu_mode(ctx, pairs):
    """On a host with no Ascend component at all, the stack checks that only WARN about
    what is absent become one INFO line; ``pairs`` are (check function, result)."""
    components = ctx.ascend_components()
    # Only ASCEND_* variables (left over from another shell, a container image...) and no
    # toolkit they point to: said once, naming them, instead of a WARN per stack check.
    stray = [c[1:] for c in components if c.startswith("$ASCEND_")]
    if components and (len(stray) != len(components) or ctx.cann_home()):
        return [result for _, result in pairs]
    folded = [r for check, r in pairs if check not in OWN_CHECKS and r.status == WARN]
    if not folded:
        return [result for _, result in pairs]
    runs = (" and ".join(op.python_name for op in op_def.OPS)
            + (" runs" if len(op_def.OPS) == 1 else " run"))
    if stray:
        detail = ("ASCEND_* variables are set (%s), but there is no Ascend component on this "
                  "host (no TF Adapter, no CANN toolkit where they point, no atc, no %s): CPU "
                  "mode, %s on its CPU kernel; the variables are left over or point nowhere. "
                  "Not applicable here: %s" % (", ".join(stray), " or ".join(ctx.install_dirs)
                                               or "install folder", runs,
                                               ", ".join(r.name for r in folded)))
    else:
        detail = ("no Ascend component on this host (no TF Adapter, no CANN toolkit or atc, no "
                  "ASCEND_* variable, no %s): CPU mode, %s on its CPU kernel. "
                  "Not applicable here: %s" % (" or ".join(ctx.install_dirs) or "install folder",
                                               runs, ", ".join(r.name for r in folded)))
    info = Check(CPU_MODE, INFO, detail,
                 data={"cpu_mode": True, "stray_variables": stray,
                       "folded": [r.as_dict() for r in folded]})
    results, placed = [], False
    for _, result in pairs:
        if result in folded:
            if not placed:
                results.append(info)
                placed = True
            continue
        results.append(result)
    return results


def run_checks(ctx=None, checks=CHECKS):
    """Run every check; a check that raises becomes a FAIL naming the exception."""
    ctx = ctx or Context()
    pairs = []
    for check in checks:
        try:
            pairs.append((check, check(ctx)))
        except Exception as e:  # a doctor must report, never crash
            pairs.append((check, Check(check.__name__[len("check_"):].replace("_", " "), FAIL,
                                       "the check itself failed: %s: %s" % (type(e).__name__, e),
                                       Instruction("please report this as a bug"))))
    return fold_cpu_mode(ctx, pairs)


def report(results, root):
    return {"tf_ge_custom": __version__, "opp_root": root,
            "status": worst([r.status for r in results]),
            "counts": {s: sum(r.status == s for r in results) for s in STATUSES},
            "checks": [r.as_dict() for r in results]}


def format_text(results, root):
    lines = ["tf-ge-custom %s doctor (OPP root: %s)" % (__version__, root)]
    width = max(len(r.name) for r in results) if results else 0
    for r in results:
        lines.append("%-4s  %-*s  %s" % (r.status, width, r.name, r.detail))
        if r.fix:
            lines.append("%-4s  %-*s  %s: %s" % ("", width, "", "fix" if is_command(r.fix)
                                                  else "fix (by hand)", r.fix))
    counts = report(results, root)["counts"]
    lines.append(", ".join("%d %s" % (counts[s], s) for s in STATUSES))
    return "\n".join(lines) + "\n"


def add_arguments(parser):
    parser.description = ("Check the installation and the Ascend stack. Exit status 1 when a "
                          "check FAILs, else 0 (WARN included).")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--soc", help="also say which kernel set a graph build for this board "
                                      "takes (a SoC or a board name such as Ascend910B4-1)")


def _broken_report(error):
    """The --json document when the doctor itself could not start its checks."""
    check = Check("doctor", FAIL, "the doctor could not run its checks: %s: %s"
                  % (type(error).__name__, str(error)[:2000]),
                  Instruction("please report this as a bug"))
    return report([check], None), check


def run(args):
    board = getattr(args, "soc", None)
    if board:
        from ..kernels import socs

        try:
            socs.resolve(board)
        except KeyError as e:
            sys.stderr.write("tf-ge-custom doctor: error: --soc: %s\n" % e.args[0])
            return 2
    try:
        ctx = Context()
        if board:
            ctx.board = board
        results = run_checks(ctx)
    except Exception as e:  # --json promises one JSON document, whatever happened
        document, check = _broken_report(e)
        if args.json:
            sys.stdout.write(json.dumps(document, indent=2) + "\n")
        else:
            sys.stdout.write(format_text([check], None))
        return 1
    if args.json:
        sys.stdout.write(json.dumps(report(results, ctx.root), indent=2) + "\n")
    else:
        sys.stdout.write(format_text(results, ctx.root))
    return 1 if any(r.status == FAIL for r in results) else 0
