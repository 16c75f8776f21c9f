"""The OPP root this package installs, the environment variables, and whether TF1's adapter,
TF2's adapter and GE would find our files: their search rules replayed
(:mod:`tf_ge_custom._path_rules`) on this process's environment, which ``import
tf_ge_custom`` has already completed; programs that do not import the package (``atc``)
see the shell's environment, checked separately."""
import os
import shlex
import stat

from .. import _environment as environment, _files as files, op_def, opp, _path_rules as path_rules
from . import remedies
from .results import FAIL, OK, WARN, Check, check, Instruction, is_command, worst

@check("OPP root",
       "the folder exists, its `npu_supported_ops.json` lists what the op definition and the"
       " build record say (the ops, or none without the GE library), every folder is there, "
       "no stray `.so` under `framework/` (GE would load it)", own=True)
def check_opp_root(ctx):
    name = "OPP root"
    root = ctx.root
    if not os.path.isdir(root):
        return Check(name, FAIL, "%s does not exist (the package was not built)" % root, remedies.REBUILD)
    problems, fixes = [], set()
    json_path = os.path.join(root, opp.SUPPORTED_OPS_JSON)
    ops, _ = opp.npu_ops(ctx.build_info)
    try:
        if files.load_json(json_path, path_rules.JSON_MAX_BYTES) != opp.supported_ops_document(ops):
            problems.append("%s does not match the op definition and this build (it should "
                            "list %s)" % (opp.SUPPORTED_OPS_JSON, _listed(ops)))
            fixes.add(remedies.REBUILD)
    except files.FileProblem as e:
        problems.append("%s unusable: %s" % (opp.SUPPORTED_OPS_JSON, e))
        fixes.add(remedies.REBUILD)
    for folder in (opp.GE_INCLUDE_DIR, opp.ge_library_dir(ctx.arch), opp.KERNELS_DIR):
        if not os.path.isdir(os.path.join(root, folder)):
            problems.append("folder %s is missing" % folder)
            fixes.add(remedies.REBUILD)
    # GE dlopens every .so under framework/ (recursively): only our parser plugin belongs.
    ge = ctx.ge_info() or {}
    allowed = set(ge.get("libraries") or ())
    for folder, _dirs, names in os.walk(os.path.join(root, opp.FRAMEWORK_DIR)):
        for file_name in names:
            relative = os.path.relpath(os.path.join(folder, file_name), root).replace(os.sep, "/")
            if file_name.endswith(".so") and relative not in allowed:
                problems.append("%s is not a GE plugin this build made, yet GE would load it"
                                % relative)
                fixes.add("rm -f " + shlex.quote(os.path.join(folder, file_name)))
    if os.path.lexists(os.path.join(root, path_rules.CUST_OPAPI_SO)):
        problems.append("%s found: GE would load it as well as op_graph/lib (ship one layout)"
                        % path_rules.CUST_OPAPI_SO)
        fixes.add("rm -f " + shlex.quote(os.path.join(root, path_rules.CUST_OPAPI_SO)))
    if problems:
        return Check(name, FAIL, "%s: %s" % (root, "; ".join(problems)), "; ".join(sorted(fixes)))
    return Check(name, OK, "%s (npu_supported_ops.json lists %s, as the op definition and this "
                 "build say)" % (root, _listed(ops)))


def _listed(ops):
    return op_def.type_names(ops) if ops else "no op"


@check("NPU placement",
       "which case this install is in: the JSON lists every op, so TF Adapter hands them to"
       " GE; or it lists no op, so they stay on their CPU kernels, and why (the GE "
       "library's skip reason)")
def check_npu_placement(ctx):
    """Which case this install is in: the ops go to GE on the NPU, or stay on the CPU."""
    name = "NPU placement"
    ops, why_none = opp.npu_ops(ctx.build_info)
    data = {"npu_ops": [op.type_name for op in ops], "npu_ops_missing_because": why_none}
    if ops:
        return Check(name, OK, "npu_supported_ops.json lists %s: where TF Adapter runs a graph, "
                     "it hands %s to GE, which launches the npubins" % (_listed(ops), _listed(ops)),
                     data=data)
    return Check(name, WARN, "npu_supported_ops.json lists no op, so %s stay%s on the CPU kernel, "
                 "also where TF Adapter runs the graph, because %s" % (
                     remedies.op_names(), "s" if len(op_def.OPS) == 1 else "", why_none),
                 remedies.ge_rebuild_fix(ctx), data)


def _root_problem(ctx):
    """Why the OPP root cannot be listed in ASCEND_CUSTOM_OPP_PATH at all ("" normally)."""
    return environment.separator_problem(ctx.root)


@check("ASCEND_CUSTOM_OPP_PATH",
       "contains the OPP root; no relative, empty or missing entries; no other root "
       "declaring one of the package's ops; whether your shell set the value or `import tf_ge_custom` did",
       own=True)
def check_custom_opp_path(ctx):
    name = "ASCEND_CUSTOM_OPP_PATH"
    value = ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)
    entries = environment.split_path_list(value or "")
    if _root_problem(ctx):
        return Check(name, FAIL, "%s; import tf_ge_custom leaves the variable alone, so TF "
                     "Adapter and GE never find %s" % (_root_problem(ctx), remedies.op_names()),
                     Instruction(environment.INSTALL_ELSEWHERE), {"value": value, "entries": entries})
    notes, status = [], OK
    drop = set()  # entries the fix leaves out
    if not environment.contains_root(value, ctx.root):
        status = WARN
        if environment.opted_out(ctx.environ):
            notes.append("%s=%s: import tf_ge_custom leaves it alone and it lacks %s" % (
                environment.OPT_OUT_VAR, ctx.environ.get(environment.OPT_OUT_VAR), ctx.root))
        else:
            notes.append("does not contain %s" % ctx.root)
    elif entries and entries[0] != ctx.root:
        notes.append("contains the OPP root, not first")
    odd = [e for e in entries if e and not os.path.isabs(e)]
    if odd:
        status = worst([status, WARN])
        notes.append("relative entries (resolved against each program's CWD): %s" % ", ".join(files.shown(e) for e in odd))
    if value is not None and "" in entries:
        status = worst([status, WARN])
        notes.append("has empty entries")
    odd_characters = [e for e in entries if files.shown(e) != e]
    if odd_characters:
        status = worst([status, WARN])
        notes.append("entries with control characters (shown escaped), which no OPP root's path "
                     "holds: %s; the fix drops them" % ", ".join(files.shown(e) for e in odd_characters))
        drop.update(odd_characters)
    # Looked at with stat only: a FIFO or device entry never blocks doctor.
    missing = [(e, _what_is(e)) for e in entries if e and os.path.isabs(e) and not os.path.isdir(e)]
    if missing:
        status = worst([status, WARN])
        notes.append("entries that are not folders: %s" % ", ".join(
            "%s (%s)" % (files.shown(e), what) for e, what in missing))
    # GE dlopens every *.so there (and <entry>/libcust_opapi.so): one that is no regular file
    # (a FIFO would block GE's initialisation) is named, never opened.
    unloadable = path_rules.not_regular_libraries(
        path_rules.ge_custom_op_libraries(ctx.environ, ctx.arch).libraries)
    if unloadable:
        status = worst([status, WARN])
        notes.append("GE would load libraries that are no regular files: %s; remove them"
                     % ", ".join("%s (%s)" % (files.shown(p), what) for p, what in unloadable))
    # Another OPP root that also declares one of our op types competes with ours.
    rivals = []
    for entry in entries:
        if not entry or environment.contains_root(entry, ctx.root):
            continue
        read = path_rules.JsonRead(entry + "/" + opp.SUPPORTED_OPS_JSON, "entry")
        clash = [op.type_name for op in op_def.OPS if read.ops and op.type_name in read.ops]
        if clash:
            rivals.append("%s (%s)" % (entry, ", ".join(clash)))
            drop.add(entry)
    if rivals:
        status = worst([status, WARN])
        notes.append("other entries also declare our ops: %s; TF1 takes the later entry's "
                     "value and GE loads both libraries; the fix drops them" % "; ".join(rivals))
    fix = ""
    if status != OK:
        fix = remedies.export_line(ctx.root, ":".join(e for e in entries if e not in drop))
    detail = files.shown(value) if value is not None else "(unset)"
    shell = ctx.shell_custom_opp_path
    if value is not None and value != shell:  # import tf_ge_custom changed it in this process
        detail += (" (set by tf_ge_custom at import, not by your shell)" if shell is None else
                   " (tf_ge_custom put the OPP root first at import; your shell has %s)"
                   % (files.shown(shell) if shell else "it empty"))
    if notes:
        detail += " -- " + "; ".join(notes)
    return Check(name, status, detail, fix, {"value": value, "entries": entries})


def _what_is(path):
    """What ``path`` is, for an entry that is no folder (``stat`` only: never blocks)."""
    if not os.path.lexists(path):
        return "does not exist"
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return "a dangling link" if os.path.islink(path) else "cannot be looked at: %s" % (e.strerror or e)
    return "a file" if stat.S_ISREG(mode) else files.describe_mode(mode)


@check("shell environment (atc)",
       "whether programs that do not import the package (atc) see the OPP root in the "
       "shell's `ASCEND_CUSTOM_OPP_PATH`")
def check_shell_environment(ctx):
    name = "shell environment (atc)"
    value = ctx.shell_custom_opp_path
    if environment.contains_root(value, ctx.root):
        return Check(name, OK, "the shell's ASCEND_CUSTOM_OPP_PATH contains the OPP root, so "
                     "atc and ACL programs find %s too" % remedies.op_names())
    if _root_problem(ctx):
        return Check(name, WARN, "atc cannot be shown the OPP root: its path contains ':' "
                     "(see ASCEND_CUSTOM_OPP_PATH)", Instruction(environment.INSTALL_ELSEWHERE))
    return Check(name, WARN,
                 "the shell's ASCEND_CUSTOM_OPP_PATH (%s) lacks the OPP root: Python programs "
                 "that import tf_ge_custom are fine, but atc and other programs are not; run "
                 "the fix in the shell before atc" % ("unset" if value is None else files.shown(value) or "empty"),
                 remedies.export_line(ctx.root, value))


@check("ASCEND_OPP_PATH",
       "set by CANN's `set_env.sh`; the OPP layout (new: `built-in/`, without which TF1's "
       "adapter ignores custom roots)")
def check_opp_path(ctx):
    name = "ASCEND_OPP_PATH"
    value = ctx.environ.get(path_rules.OPP_PATH_VAR)
    if value is None:
        return Check(name, WARN, "unset (no CANN environment; TF1's adapter would use %s)"
                     % path_rules.TF1_DEFAULT_OPP_PATH, remedies.source_cann(ctx))
    if not os.path.isdir(value):
        return Check(name, WARN, "%s is not a folder (%s)" % (files.shown(value), _what_is(value)),
                     remedies.source_cann(ctx))
    if path_rules.opp_layout(value) == "old":
        return Check(name, WARN, "%s has no built-in/ folder (old OPP layout): TF1's adapter "
                     "and GE's parser ignore ASCEND_CUSTOM_OPP_PATH" % files.shown(value),
                     remedies.NEW_OPP_LAYOUT)
    return Check(name, OK, "%s (new OPP layout: custom OPP roots are honoured)" % files.shown(value))


@check("ASCEND_HOME_PATH",
       "set by CANN's `set_env.sh` to a folder (GE's online path compiles the generated op "
       "proto under it)")
def check_home_path(ctx):
    name = "ASCEND_HOME_PATH"
    value = ctx.environ.get("ASCEND_HOME_PATH")
    if value and os.path.isdir(value):
        return Check(name, OK, files.shown(value))
    if value:
        return Check(name, WARN, "%s is not a folder (%s)" % (files.shown(value), _what_is(value)),
                     remedies.source_cann(ctx))
    return Check(name, WARN, "unset: GE's online path compiles the auto-generated op proto "
                 "under it, so NPU runs need it", remedies.source_cann(ctx))


def _merge(name, checks):
    """One line for the findings of each op of op_def.OPS, in order (the line itself when
    there is one op)."""
    if len(checks) == 1:
        return checks[0]
    fixes = list(dict.fromkeys(c.fix for c in checks if c.fix))
    fix = "; ".join(fixes)
    if not all(is_command(f) for f in fixes):
        fix = Instruction(fix)
    return Check(name, worst([c.status for c in checks]), "; ".join(c.detail for c in checks),
                 fix, {"ops": {op.type_name: c.data for op, c in zip(op_def.OPS, checks)}})


def _lookup_check(name, lookup, ctx, adapter_module):
    data = lookup.as_dict()
    root = ctx.root
    ours = root.rstrip("/") + "/"
    if lookup.supported and lookup.source and lookup.source.startswith(ours):
        return Check(name, OK, "would place %s on the NPU: %s" % (lookup.op_type, lookup.source),
                     data=data)
    if lookup.supported:
        return Check(name, WARN, "would place %s on the NPU, but the deciding entry comes from %s, "
                     "not from this package" % (lookup.op_type, lookup.source),
                     Instruction("make sure that OPP root's %s is this one, or drop that root from "
                                 "ASCEND_CUSTOM_OPP_PATH" % lookup.op_type), data)
    if lookup.op_type not in [op.type_name for op in opp.npu_ops(ctx.build_info)[0]]:
        return Check(name, OK, "would keep %s on the CPU kernel, as this install intends (see "
                     "'NPU placement')" % lookup.op_type, data=data)
    adapter_installed = ctx.has_module(adapter_module)
    why = "; ".join(lookup.notes) or "no JSON it reads declares it"
    status = FAIL if adapter_installed else WARN
    detail = "would keep %s on the CPU: %s" % (lookup.op_type, why)
    if not adapter_installed:
        detail += " (%s is not installed, so this only matters on an NPU host)" % adapter_module
    detail += ("; import tf_ge_custom before %s reads the op list, or export the OPP root "
               "in the shell (the fix); on the old OPP layout, source a newer CANN's "
               "set_env.sh" % adapter_module)
    fix = (Instruction(environment.INSTALL_ELSEWHERE) if environment.separator_problem(root)
           else remedies.export_line(root, ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)))
    return Check(name, status, detail, fix, data)


@check("TF1 adapter finds the JSON",
       "TF Adapter's (TF1) search rules replayed on this environment: which JSON files it "
       "reads, in which order, and which one decides (without the GE library: that it keeps "
       "each op on the CPU, as intended, and no other root hands one to GE)")
def check_tf1_finds_json(ctx):
    name = "TF1 adapter finds the JSON"
    return _merge(name, [_lookup_check(name, path_rules.tf1_lookup(op.type_name, ctx.environ), ctx,
                                       "npu_bridge") for op in op_def.OPS])


@check("TF2 adapter finds the JSON",
       "the same for TF Adapter for TF2 (`npu_device`), which reads the JSON whatever the "
       "OPP layout")
def check_tf2_finds_json(ctx):
    name = "TF2 adapter finds the JSON"
    return _merge(name, [_lookup_check(name, path_rules.tf2_lookup(op.type_name, ctx.environ), ctx,
                                       "npu_device") for op in op_def.OPS])


@check("custom OPP search order (GE)",
       "the `ASCEND_CUSTOM_OPP_PATH` entries in order, and the libraries there that register"
       " vendor folders GE searches before them")
def check_custom_opp_search_order(ctx):
    """GE searches the folders vendor libraries register before ASCEND_CUSTOM_OPP_PATH."""
    name = "custom OPP search order (GE)"
    order = path_rules.ge_custom_op_lib_path(ctx.environ, ctx.arch)
    data = order.as_dict()
    entries = ", ".join(files.shown(e) for e in order.entries) or "(none)"
    if order.vendor_libraries:
        return Check(name, WARN, "GE searches, in front of the ASCEND_CUSTOM_OPP_PATH entries (%s), "
                     "the folders that %d vendor librar%s register%s: %s; their parser plugins and "
                     "op protos win over ours, and the folders are known only once GE has run them"
                     % (entries, len(order.vendor_libraries),
                        "y" if len(order.vendor_libraries) == 1 else "ies",
                        "s" if len(order.vendor_libraries) == 1 else "",
                        ", ".join(files.shown(p) for p, _ in order.vendor_libraries)),
                     Instruction("make sure no such vendor package defines %s, or drop its entry "
                                 "from ASCEND_CUSTOM_OPP_PATH" % remedies.op_names()), data)
    return Check(name, OK, "ASCEND_CUSTOM_OPP_PATH entries in GE's order: %s; no library there "
                 "registers a vendor folder in front of them" % entries, data=data)
