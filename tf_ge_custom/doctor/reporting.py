"""Which checks run, in which order; the CPU-mode folding; the text and JSON reports; the table
of docs/npu.md. The command line: ``tf_ge_custom/_commands/doctor.py``."""
import re

from .. import _lifecycle, op_def
from .._version import __version__
from . import cann, kernels, online_compile, op_library, opp_paths
from .context import Context
from .results import FAIL, INFO, STATUSES, WARN, Check, Instruction, is_command, worst

CHECKS = (
    op_library.check_tensorflow, op_library.check_op_library, op_library.check_xla_library,
    opp_paths.check_opp_root, opp_paths.check_custom_opp_path,
    opp_paths.check_shell_environment, opp_paths.check_opp_path, opp_paths.check_home_path,
    opp_paths.check_tf1_finds_json, opp_paths.check_tf2_finds_json, cann.check_ge_finds_library,
    cann.check_npu_bridge, cann.check_npu_device, cann.check_cann, cann.check_ge_library,
    opp_paths.check_npu_placement, kernels.check_kernels, kernels.check_kernel_cache,
    online_compile.check_online_compiler, online_compile.check_online_toolkit,
    online_compile.check_online_working_directory, opp_paths.check_custom_opp_search_order,
    kernels.check_npubin_toolchain, kernels.check_board_kernels, kernels.check_kernel_builder,
    cann.check_static_graph_path,
)


# What the package installs itself: these decide on every host, CPU-only ones included.
# Every other check is about the Ascend stack (see fold_cpu_mode).
OWN_CHECKS = tuple(c for c in CHECKS if c.own)


CPU_MODE = "Ascend stack"


def fold_cpu_mode(ctx, pairs):
    """On a host with no Ascend component at all, every stack check that does not FAIL
    becomes part of one short INFO line (its results kept under the line's
    ``data["folded"]`` for --json); ``pairs`` are (check function, result). A FAIL is never
    folded, nor what the user asked for by name (``--soc``), and once any component is
    present every check speaks for itself."""
    components = ctx.ascend_components()
    # Only ASCEND_* variables (left over from another shell, a container image...) and no
    # toolkit they point to: said once, naming them, instead of a line per stack check.
    stray = [c[1:] for c in components if c.startswith("$ASCEND_")]
    if components and (len(stray) != len(components) or ctx.cann_home()):
        return [result for _, result in pairs]
    folded = [r for check, r in pairs if not getattr(check, "own", False) and r.status != FAIL
              and not (r.data or {}).get("asked_for")]
    # Why the build left the GE library out stays a line of its own (INFO: expected here).
    ge = ctx.build_info.get("ge") or {}
    skipped = {}
    if not ge.get("built") and ge.get("reason"):
        skipped = {id(r): r._replace(status=INFO, detail="skipped by the build (expected on a "
                                     "CPU host): %s" % ge["reason"], fix="")
                   for check, r in pairs if check is cann.check_ge_library and r.status != FAIL}
        folded = [r for r in folded if id(r) not in skipped]
    if not folded:
        return [result for _, result in pairs]
    runs = (" and ".join(op.python_name for op in op_def.OPS)
            + (" runs" if len(op_def.OPS) == 1 else " run"))
    what = ("%s set, but nothing of the Ascend stack where they point" % ", ".join(stray) if stray
            else "no Ascend stack here")
    detail = "%s: CPU mode, %s on its CPU kernel (%d Ascend checks not applicable; --json lists them)" % (
        what, runs, len(folded))
    info = Check(CPU_MODE, INFO, detail,
                 data={"cpu_mode": True, "stray_variables": stray,
                       "looked_for": "TF Adapter, a CANN toolkit or atc, npu-smi, ASCEND_* variables, %s"
                                     % (" or ".join(ctx.install_dirs) or "an install folder"),
                       "folded": [r.as_dict() for r in folded]})
    results, placed = [], False
    for _, result in pairs:
        if any(result is f for f in folded):
            if not placed:
                results.append(info)
                placed = True
            continue
        results.append(skipped.get(id(result), result))
    return results


# "(see 'NAME')", "see 'NAME'" and "see the check 'NAME'": how a line points at another
_POINTER = re.compile(r"(?:\s*\(see (?:the check )?'([^']+)'\))|(?:[:;,]?\s*see (?:the check )?'([^']+)')")


def drop_pointers(results):
    """``results`` without pointers to checks that are not among them (folded away)."""
    shown = set(r.name for r in results)

    def clean(text):
        def keep_or_drop(m):
            return m.group(0) if (m.group(1) or m.group(2)) in shown else ""
        return _POINTER.sub(keep_or_drop, text)

    out = []
    for r in results:
        detail = clean(r.detail)
        fix = r.fix
        if fix and clean(fix) != fix:
            fix = type(fix)(clean(fix)) if clean(fix).strip() else fix
        out.append(r._replace(detail=detail, fix=fix) if (detail, fix) != (r.detail, r.fix) else r)
    return out


def run_checks(ctx=None, checks=CHECKS):
    """Run every check; a check that raises becomes a FAIL naming the exception."""
    ctx = ctx or Context()
    pairs = []
    for check in checks:
        try:
            pairs.append((check, check(ctx)))
        except Exception as e:  # a doctor must report, never crash
            name = getattr(check, "check_name", None) or check.__name__[len("check_"):].replace("_", " ")
            pairs.append((check, Check(name, FAIL,
                                       "the check itself failed: %s: %s" % (type(e).__name__, e),
                                       Instruction("please report this as a bug"))))
    return drop_pointers(fold_cpu_mode(ctx, pairs))


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


def _unbuilt_source_tree():
    """The one FAIL when this is a clone's source tree, imported in place because no copy
    installed from the clone's sources as they are could take over (tf_ge_custom/_checkout.py),
    else None."""
    import os

    from .. import _checkout
    from . import remedies

    why = _checkout.why_not_handed_over(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not why:
        return None
    return Check("installation", FAIL, "%s%s: there is no build here to check" % (why[0].upper(), why[1:]),
                 remedies.REBUILD)


def _broken_report(error):
    """The one line when the doctor itself could not start its checks."""
    return Check("doctor", FAIL, "the doctor could not run its checks: %s: %s"
                 % (type(error).__name__, str(error)[:2000]),
                 Instruction("please report this as a bug"))


def diagnose(board=None):
    """(results, OPP root) of every check on this host; ``board`` adds which kernel set a
    graph build for it takes. A doctor reports, never crashes: when the checks cannot even
    start, the result is one FAIL saying why (and the root None)."""
    unbuilt = _unbuilt_source_tree()
    if unbuilt is not None:  # nothing of an installation to check: say that, once
        from .. import opp

        return [unbuilt], opp.opp_root()
    try:
        ctx = Context()
        if board:
            ctx.board = board
        results = run_checks(ctx)
    except Exception as e:  # --json promises one JSON document, whatever happened
        return [_broken_report(e)], None
    if _lifecycle.working_directory() is None:  # every check ran; this is said first
        results.insert(0, Check("working directory", WARN, "%s: relative paths name nothing, and GE's "
                                "online compile (custom_op_tmp_<pid>/ there) would fail"
                                % _lifecycle.vanished_directory_words(),
                                Instruction("cd to an existing folder")))
    return results, ctx.root


def exit_status(results):
    """1 when a check FAILs, else 0 (WARN included)."""
    return 1 if any(r.status == FAIL for r in results) else 0


def markdown_table(checks=CHECKS):
    """docs/npu.md's table of the checks, from the checks themselves (a test holds the page to it)."""
    lines = ["| check | looks at |", "| --- | --- |"]
    lines += ["| %s | %s |" % (c.check_name, c.looks_at) for c in checks]
    return "\n".join(lines) + "\n"
