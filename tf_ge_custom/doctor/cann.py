"""TF Adapter, the CANN toolkit and ``atc``, the GE library this build made, and whether GE
would load it (docs/cann.md). What GE's online op compile needs: :mod:`.online_compile`."""
import os

from .. import _path_rules as path_rules
from .._build import cann_toolkit
from . import remedies
from .results import FAIL, OK, WARN, Check, check, Instruction

@check("npu_bridge (TF1)",
       "TF Adapter for TF1 is importable")
def check_npu_bridge(ctx):
    if ctx.has_module("npu_bridge"):
        return Check("npu_bridge (TF1)", OK, "importable")
    return Check("npu_bridge (TF1)", WARN, "not installed: TF1 sessions run on the CPU",
                 Instruction("install TF Adapter for TF1 (npu_bridge) matching your CANN and "
                             "TensorFlow 1.15"))


@check("npu_device (TF2)",
       "TF Adapter for TF2 is importable")
def check_npu_device(ctx):
    if ctx.has_module("npu_device"):
        return Check("npu_device (TF2)", OK, "importable")
    return Check("npu_device (TF2)", WARN, "not installed: TF2 programs run on the CPU",
                 Instruction("install TF Adapter for TF2 (npu_device) matching your CANN and "
                             "TensorFlow 2.6.5"))


@check("CANN toolkit",
       "toolkit folder, its version (from its install record), and `atc` on `PATH`")
def check_cann(ctx):
    name = "CANN toolkit"
    home = ctx.cann_home()
    atc = ctx.which("atc", path=ctx.environ.get("PATH"))
    found = home and "%s at %s" % (cann_toolkit.describe(cann_toolkit.toolkit_version(home)[0]), home)
    if home and atc:
        return Check(name, OK, "%s; atc: %s" % (found, atc))
    missing = [found] if home else []
    if not home:
        missing.append("no toolkit (ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME unset or not a folder)")
    if not atc:
        missing.append("atc is not on PATH")
    return Check(name, WARN, "; ".join(missing) + ": no NPU compilation or offline conversion "
                 "here", remedies.source_cann(ctx))


@check("GE library",
       "built against which CANN, or the build's one-line reason for skipping it; its files "
       "present; with CANN, it loads with every dependency resolved")
def check_ge_library(ctx):
    name = "GE library"
    ge = ctx.ge_info()
    if ge is None:
        return Check(name, WARN, "this build has no GE step record (build_info.json has no 'ge')",
                     remedies.ge_rebuild_fix(ctx))
    if not ge.get("built"):
        return Check(name, WARN, "not built: %s" % (ge.get("reason") or "no reason recorded"),
                     remedies.ge_rebuild_fix(ctx))
    recorded = list(ge.get("libraries") or ()) + list(ge.get("headers") or ())
    absent = [p for p in recorded if not os.path.isfile(os.path.join(ctx.root, p))]
    if absent:
        return Check(name, FAIL, "recorded but missing: %s" % ", ".join(absent), remedies.REBUILD)
    toolkit = ge.get("toolkit") or {}
    detail = "built against %s: %s" % (
        "%s at %s" % (cann_toolkit.describe(toolkit.get("version")), toolkit.get("home"))
        if toolkit else ge.get("ascend_home") or "CANN", ", ".join(recorded))
    if ctx.cann_home() is None:
        return Check(name, OK, detail + " (its dependencies were not checked: no CANN here)")
    failures = []
    for p in _expected_ge_libraries(ctx):
        error = ctx.dlopen_check(os.path.join(ctx.root, p), ctx.environ)
        if error:
            failures.append("%s: %s" % (p, error))
    if failures:
        return Check(name, FAIL, "GE opens it with RTLD_NOW and fails init when that fails: "
                     + "; ".join(failures), remedies.source_cann(ctx, remedies.REBUILD))
    return Check(name, OK, detail + " (loads with every dependency resolved)")


def _expected_ge_libraries(ctx):
    ge = ctx.ge_info() or {}
    return [p for p in (ge.get("libraries") or ()) if p.startswith("op_graph/")]


@check("GE finds the library",
       "GE's rules: `op_graph/lib/linux/<arch>/*.so` of every entry, and the parser plugin "
       "under `framework/` (new layout only)")
def check_ge_finds_library(ctx):
    name = "GE finds the library"
    ge = ctx.ge_info()
    found = path_rules.ge_custom_op_libraries(ctx.environ, ctx.arch)
    parsers, parser_notes = path_rules.ge_parser_plugins(ctx.environ)
    data = {"custom_op_libraries": found.as_dict(),
            "parser_plugins": [{"path": p, "entry": e} for p, e in parsers],
            "parser_notes": parser_notes}
    if not ge or not ge.get("built"):
        return Check(name, WARN, "no GE library was built, so GE has nothing of ours to load",
                     Instruction("see the check 'GE library'"), data)
    loaded = set(os.path.realpath(p) for p, _ in found.libraries)
    missing = [p for p in _expected_ge_libraries(ctx)
               if os.path.realpath(os.path.join(ctx.root, p)) not in loaded]
    wanted_parsers = [p for p in (ge.get("libraries") or ()) if p.startswith("framework/")]
    found_parsers = set(os.path.realpath(p) for p, _ in parsers)
    missing_parsers = [p for p in wanted_parsers
                       if os.path.realpath(os.path.join(ctx.root, p)) not in found_parsers]
    cann = ctx.cann_home() is not None
    if missing:
        return Check(name, FAIL if cann else WARN,
                     "GE would not load %s (%s)" % (", ".join(missing),
                                                    "; ".join(found.notes) or "not on its path"),
                     remedies.export_line(ctx.root, ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)), data)
    if missing_parsers:
        opp_path = ctx.environ.get(path_rules.OPP_PATH_VAR)
        if opp_path is None:
            fix = remedies.source_cann(ctx)  # GE then derives the OPP path itself
        elif path_rules.opp_layout(opp_path) == "old":
            fix = remedies.NEW_OPP_LAYOUT
        else:
            fix = remedies.REBUILD  # the layout is right: the plugin itself is missing
        return Check(name, WARN, "GE loads the custom-op library, but its TF parser would not "
                     "load %s (%s): atc --framework=3 cannot parse %s"
                     % (", ".join(missing_parsers), "; ".join(parser_notes) or "not found",
                        remedies.op_names()), fix, data)
    return Check(name, OK, "GE loads %d librar%s from the OPP root" % (
        len(_expected_ge_libraries(ctx)), "y" if len(_expected_ge_libraries(ctx)) == 1 else "ies"),
        data=data)


@check("static graphs (sunk / eager)",
       "which path a graph with known static shapes takes: sunk (the GE library declares "
       "each op's launch), with the per-launch element limit above which a static shape is"
       " refused, and the packaged kernels that could not be declared (WARN); none without "
       "the GE library")
def check_static_graph_path(ctx):
    """Which path a graph whose shapes are all known takes on this build (docs/npu.md, "Static,
    sunk graphs"): sunk, its launch declared (the GE library is an AnnotatedArgsOp, which
    every toolkit that can host the library has: both since CANN 9.2.0-beta.1), or none."""
    name = "static graphs (sunk / eager)"
    ge = ctx.ge_info()
    if not ge or not ge.get("built"):
        why = (ge or {}).get("reason") or "this build has no GE library"
        return Check(name, WARN, "no GE path at all (%s): %s run on their CPU kernels in any graph"
                     % (why, remedies.op_names()),
                     remedies.ge_rebuild_fix(ctx))
    try:
        reader = ctx.manifest_reader()
        manifests = reader.find_manifests(ctx.root)
    except ImportError:
        manifests, reader = {}, None
    refused, limit = [], None
    for soc in sorted(manifests):
        try:
            manifest = reader.load_manifest(manifests[soc], check_files=False)
        except reader.ManifestError:
            continue  # the npubins check reports it
        for k in manifest.kernels:
            if k.mix_mode != "aiv" or k.lock_num > 0:
                refused.append("%s %s %s %s (%s%s)" % (soc, k.op, k.variant, k.dtype, "mix_mode " + k.mix_mode,
                                                     ", %d locks" % k.lock_num if k.lock_num > 0 else ""))
            limit = k.max_elements_per_launch if limit is None else min(limit, k.max_elements_per_launch)
    detail = ("sunk: GE runs %s as tasks of the model with the launches they declared when it built the "
              "graph (DeclareLaunchArgs): no host call per step, no copies inserted around them; a dynamic "
              "graph (compile_dynamic_mode, unknown dims) runs Execute on the host at every step"
              % remedies.op_names())
    if limit is not None:
        detail += "; a static shape of more than %d output elements needs several launches and is refused " \
                  "when GE builds the graph" % limit
    if refused:
        return Check(name, WARN, detail + "; these kernels cannot be declared, so a static graph using them "
                     "fails to build: " + ", ".join(refused),
                     Instruction("use their dtypes and shapes in dynamic graphs (compile_dynamic_mode=True), "
                                 "or rebuild the kernels as vector-core kernels without locks"))
    return Check(name, OK, detail)
