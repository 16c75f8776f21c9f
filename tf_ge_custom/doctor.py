"""``tf-ge-custom doctor``: check the installation and the Ascend stack, one line per check.

Each check says OK, WARN or FAIL, what it found and, unless OK, the fix. The exit status
is non-zero only when a check FAILs: on a machine without the NPU stack (no CANN, no TF
Adapter) the missing pieces are WARN, so the command passes there, and everything this
package can check without them (TensorFlow, the op library, the OPP root and its files)
still decides. ``--json`` prints the same checks for machines.

Whether TF Adapter (TF1 and TF2) and GE would find our JSON and libraries is answered by
replicating their search rules (:mod:`tf_ge_custom.path_rules`) on this process's
environment, which ``import tf_ge_custom`` has already completed; programs that do not
import the package (``atc``) see the shell's environment, checked separately.
"""
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from typing import NamedTuple, Optional

from . import _library, environment, op_def, opp, path_rules
from ._build import cann_toolkit
from ._version import __version__

OK, WARN, FAIL = "OK", "WARN", "FAIL"
_RANK = {OK: 0, WARN: 1, FAIL: 2}
REBUILD = _library.REBUILD_COMMAND
SOURCE_CANN = "source <CANN install>/set_env.sh (e.g. /usr/local/Ascend/cann/set_env.sh)"


class Check(NamedTuple):
    name: str
    status: str  # OK, WARN or FAIL
    detail: str  # what was found
    fix: str = ""  # what to do (empty when OK)
    data: Optional[dict] = None  # structured findings for --json

    def as_dict(self):
        return {"name": self.name, "status": self.status, "detail": self.detail,
                "fix": self.fix, "data": self.data or {}}


def worst(statuses):
    return max(statuses, key=_RANK.__getitem__) if statuses else OK


_FROM_PROCESS = object()


class Context(object):
    """What the checks look at; tests build one over temporary trees."""

    def __init__(self, root=None, build_info=None, environ=None,
                 shell_custom_opp_path=_FROM_PROCESS,
                 find_spec=None, which=None, arch=None, manifest_reader=None,
                 dlopen_check=None, cwd=None):
        self.root = root or opp.opp_root()
        self.build_info = _library.build_info() if build_info is None else build_info
        self.environ = os.environ if environ is None else environ
        # ASCEND_CUSTOM_OPP_PATH as the shell exported it (what atc sees; None: unset).
        self.shell_custom_opp_path = (environment.original_custom_opp_path()
                                      if shell_custom_opp_path is _FROM_PROCESS
                                      else shell_custom_opp_path)
        self._find_spec = find_spec or _find_spec
        self.which = which or shutil.which
        self.arch = arch or opp.host_arch()
        self._manifest_reader = manifest_reader
        self.dlopen_check = dlopen_check or _dlopen_in_child
        self.cwd = cwd or os.getcwd()  # where GE's online compile would write (docs/cann.md)

    def has_module(self, name):
        return self._find_spec(name) is not None

    def manifest_reader(self):
        """The kernel manifest reader module (raises ImportError when not built yet)."""
        if self._manifest_reader is None:
            self._manifest_reader = importlib.import_module("tf_ge_custom.kernel_manifest")
        return self._manifest_reader

    def cann_home(self):
        """The CANN toolkit folder from the environment set_env.sh exports, or None."""
        for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
            value = self.environ.get(var)
            if value and os.path.isdir(value):
                return value
        return None

    def ge_info(self):
        return self.build_info.get("ge")


def _find_spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _dlopen_in_child(path, environ):
    """Load ``path`` with RTLD_NOW in a child process (as GE does); return an error or ""."""
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"  # CPython's dlopen adds RTLD_NOW
    try:
        proc = subprocess.run([sys.executable, "-c", code, path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              env=dict(environ), timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["failed"])[-1]


# --- TensorFlow and the op library -------------------------------------------------


def check_tensorflow(ctx):
    built = (ctx.build_info.get("tensorflow") or {}).get("version")
    try:
        import tensorflow as tf
    except ImportError as e:
        return Check("TensorFlow", FAIL, "cannot import tensorflow: %s" % e,
                     "install the TensorFlow the package was built for (%s), then %s"
                     % (built or "unknown", REBUILD))
    if built is None:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s; the package records no TensorFlow build (not built?)"
                     % tf.__version__, REBUILD)
    if built != tf.__version__:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s is running but the op library was built for %s"
                     % (tf.__version__, built), "rebuild against this TensorFlow: " + REBUILD)
    return Check("TensorFlow", OK, "%s, the version the op library was built for" % built)


def _registered_op(name):
    from tensorflow.python.framework import op_def_registry

    if hasattr(op_def_registry, "get"):
        return op_def_registry.get(name)
    return op_def_registry.get_registered_ops().get(name)  # TensorFlow 1.15


def check_op_library(ctx):
    name = "op library"
    try:
        _library.load()
    except Exception as e:  # OpLibraryError, or TensorFlow itself missing
        return Check(name, FAIL, str(e).split(". ")[0], REBUILD)
    import tensorflow as tf

    problems = []
    for op in op_def.OPS:
        registered = _registered_op(op.type_name)
        if registered is None:
            problems.append("%s is not registered" % op.type_name)
            continue
        inputs = tuple(a.name for a in registered.input_arg)
        outputs = tuple(a.name for a in registered.output_arg)
        attrs = {a.name: a for a in registered.attr}
        dtypes = ()
        if op.type_attr in attrs:
            dtypes = tuple(tf.as_dtype(t).name for t in attrs[op.type_attr].allowed_values.list.type)
        if (inputs, outputs) != (op.inputs, op.outputs) or set(dtypes) != set(op.dtypes):
            problems.append("%s registered as %s -> %s over %s; the op definition says %s -> %s "
                            "over %s" % (op.type_name, inputs, outputs, dtypes, op.inputs,
                                         op.outputs, op.dtypes))
    if problems:
        return Check(name, FAIL, "; ".join(problems), REBUILD)
    return Check(name, OK, "%s loads and registers %s" % (
        os.path.basename(_library.library_path()), ", ".join(o.type_name for o in op_def.OPS)))


# --- the OPP root -------------------------------------------------------------------


def check_opp_root(ctx):
    name = "OPP root"
    root = ctx.root
    if not os.path.isdir(root):
        return Check(name, FAIL, "%s does not exist (the package was not built)" % root, REBUILD)
    problems, fixes = [], set()
    json_path = os.path.join(root, opp.SUPPORTED_OPS_JSON)
    try:
        with open(json_path) as f:
            text = f.read()
        if json.loads(text) != opp.supported_ops_document():
            problems.append("%s does not match the op definition" % opp.SUPPORTED_OPS_JSON)
            fixes.add(REBUILD)
    except (IOError, OSError, ValueError) as e:
        problems.append("%s unreadable: %s" % (opp.SUPPORTED_OPS_JSON, e))
        fixes.add(REBUILD)
    for folder in (opp.GE_INCLUDE_DIR, opp.ge_library_dir(ctx.arch), opp.KERNELS_DIR):
        if not os.path.isdir(os.path.join(root, folder)):
            problems.append("folder %s is missing" % folder)
            fixes.add(REBUILD)
    # GE dlopens every .so under framework/ (recursively): only our parser plugin belongs.
    ge = ctx.ge_info() or {}
    allowed = set(ge.get("libraries") or ())
    for folder, _dirs, files in os.walk(os.path.join(root, opp.FRAMEWORK_DIR)):
        for file_name in files:
            relative = os.path.relpath(os.path.join(folder, file_name), root).replace(os.sep, "/")
            if file_name.endswith(".so") and relative not in allowed:
                problems.append("%s is not a GE plugin this build made, yet GE would load it"
                                % relative)
                fixes.add("delete it, or rebuild from a clean tree: make clean; " + REBUILD)
    if os.path.exists(os.path.join(root, path_rules.CUST_OPAPI_SO)):
        problems.append("%s found: GE would load it as well as op_graph/lib (ship one layout)"
                        % path_rules.CUST_OPAPI_SO)
        fixes.add("delete %s" % os.path.join(root, path_rules.CUST_OPAPI_SO))
    if problems:
        return Check(name, FAIL, "%s: %s" % (root, "; ".join(problems)), "; ".join(sorted(fixes)))
    return Check(name, OK, "%s (npu_supported_ops.json matches the op definition)" % root)


# --- environment ---------------------------------------------------------------------


def _export_line(root):
    return 'export ASCEND_CUSTOM_OPP_PATH=%s${ASCEND_CUSTOM_OPP_PATH:+:$ASCEND_CUSTOM_OPP_PATH}' % root


def check_custom_opp_path(ctx):
    name = "ASCEND_CUSTOM_OPP_PATH"
    value = ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)
    entries = environment.split_path_list(value or "")
    notes, status = [], OK
    fix = ""
    if not environment.contains_root(value, ctx.root):
        status = WARN
        if environment.opted_out(ctx.environ):
            notes.append("%s=%s: import tf_ge_custom leaves it alone and it lacks %s" % (
                environment.OPT_OUT_VAR, ctx.environ.get(environment.OPT_OUT_VAR), ctx.root))
        else:
            notes.append("does not contain %s" % ctx.root)
        fix = _export_line(ctx.root)
    elif entries and entries[0] != ctx.root:
        notes.append("contains the OPP root, not first")
    odd = [e for e in entries if e and not os.path.isabs(e)]
    if odd:
        status = worst([status, WARN])
        notes.append("relative entries (resolved against each program's CWD): %s" % ", ".join(odd))
    if value is not None and "" in entries:
        status = worst([status, WARN])
        notes.append("has empty entries")
    missing = [e for e in entries if e and os.path.isabs(e) and not os.path.isdir(e)]
    if missing:
        status = worst([status, WARN])
        notes.append("entries that are not folders: %s" % ", ".join(missing))
    # Another OPP root that also declares one of our op types competes with ours.
    rivals = []
    for entry in entries:
        if not entry or environment.contains_root(entry, ctx.root):
            continue
        read = path_rules.JsonRead(entry + "/" + opp.SUPPORTED_OPS_JSON, "entry")
        clash = [op.type_name for op in op_def.OPS if read.ops and op.type_name in read.ops]
        if clash:
            rivals.append("%s (%s)" % (entry, ", ".join(clash)))
    if rivals:
        status = worst([status, WARN])
        notes.append("other entries also declare our ops: %s; TF1 takes the later entry's "
                     "value and GE loads both libraries" % "; ".join(rivals))
        fix = fix or "remove those entries, or rename one of the ops"
    if status != OK and not fix:
        fix = "leave only existing absolute folders in it: " + _export_line(ctx.root)
    detail = value if value is not None else "(unset)"
    if notes:
        detail += " -- " + "; ".join(notes)
    return Check(name, status, detail, fix, {"value": value, "entries": entries})


def check_shell_environment(ctx):
    name = "shell environment (atc)"
    value = ctx.shell_custom_opp_path
    if environment.contains_root(value, ctx.root):
        return Check(name, OK, "the shell's ASCEND_CUSTOM_OPP_PATH contains the OPP root, so "
                     "atc and ACL programs find AddCustom too")
    return Check(name, WARN,
                 "the shell's ASCEND_CUSTOM_OPP_PATH (%s) lacks the OPP root: Python programs "
                 "that import tf_ge_custom are fine, but atc and other programs are not"
                 % ("unset" if value is None else value or "empty"),
                 "before running atc: " + _export_line(ctx.root))


def check_opp_path(ctx):
    name = "ASCEND_OPP_PATH"
    value = ctx.environ.get(path_rules.OPP_PATH_VAR)
    if value is None:
        return Check(name, WARN, "unset (no CANN environment; TF1's adapter would use %s)"
                     % path_rules.TF1_DEFAULT_OPP_PATH, SOURCE_CANN)
    if not os.path.isdir(value):
        return Check(name, WARN, "%s is not a folder" % value, SOURCE_CANN)
    if path_rules.opp_layout(value) == "old":
        return Check(name, WARN, "%s has no built-in/ folder (old OPP layout): TF1's adapter "
                     "and GE's parser ignore ASCEND_CUSTOM_OPP_PATH" % value,
                     "use a CANN whose opp folder has built-in/ (CANN 6.0 or later) and " + SOURCE_CANN)
    return Check(name, OK, "%s (new OPP layout: custom OPP roots are honoured)" % value)


def check_home_path(ctx):
    name = "ASCEND_HOME_PATH"
    value = ctx.environ.get("ASCEND_HOME_PATH")
    if value and os.path.isdir(value):
        return Check(name, OK, value)
    if value:
        return Check(name, WARN, "%s is not a folder" % value, SOURCE_CANN)
    return Check(name, WARN, "unset: GE's online path compiles the auto-generated op proto "
                 "under it, so NPU runs need it", SOURCE_CANN)


# --- would the stack find our files? ---------------------------------------------------


def _lookup_check(name, lookup, root, adapter_installed, adapter_module):
    data = lookup.as_dict()
    ours = root.rstrip("/") + "/"
    if lookup.supported and lookup.source and lookup.source.startswith(ours):
        return Check(name, OK, "would place %s on the NPU: %s" % (lookup.op_type, lookup.source),
                     data=data)
    if lookup.supported:
        return Check(name, WARN, "would place %s on the NPU, but the deciding entry comes from %s, "
                     "not from this package" % (lookup.op_type, lookup.source),
                     "make sure that OPP root's AddCustom is this one, or drop it from "
                     "ASCEND_CUSTOM_OPP_PATH", data)
    why = "; ".join(lookup.notes) or "no JSON it reads declares it"
    status = FAIL if adapter_installed else WARN
    detail = "would keep %s on the CPU: %s" % (lookup.op_type, why)
    if not adapter_installed:
        detail += " (%s is not installed, so this only matters on an NPU host)" % adapter_module
    fix = ("import tf_ge_custom before %s reads the op list, or %s; on the old OPP layout, "
           "source a newer CANN's set_env.sh" % (adapter_module, _export_line(root)))
    return Check(name, status, detail, fix, data)


def check_tf1_finds_json(ctx):
    lookup = path_rules.tf1_lookup(op_def.ADD_CUSTOM.type_name, ctx.environ)
    return _lookup_check("TF1 adapter finds the JSON", lookup, ctx.root,
                         ctx.has_module("npu_bridge"), "npu_bridge")


def check_tf2_finds_json(ctx):
    lookup = path_rules.tf2_lookup(op_def.ADD_CUSTOM.type_name, ctx.environ)
    return _lookup_check("TF2 adapter finds the JSON", lookup, ctx.root,
                         ctx.has_module("npu_device"), "npu_device")


def _expected_ge_libraries(ctx):
    ge = ctx.ge_info() or {}
    return [p for p in (ge.get("libraries") or ()) if p.startswith("op_graph/")]


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
                     "see the check 'GE library'", data)
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
                     _export_line(ctx.root), data)
    if missing_parsers:
        return Check(name, WARN, "GE loads the custom-op library, but its TF parser would not "
                     "load %s (%s): atc --framework=3 cannot parse AddCustom"
                     % (", ".join(missing_parsers), "; ".join(parser_notes) or "not found"),
                     SOURCE_CANN, data)
    return Check(name, OK, "GE loads %d librar%s from the OPP root" % (
        len(_expected_ge_libraries(ctx)), "y" if len(_expected_ge_libraries(ctx)) == 1 else "ies"),
        data=data)


# --- the NPU stack -------------------------------------------------------------------


def check_npu_bridge(ctx):
    if ctx.has_module("npu_bridge"):
        return Check("npu_bridge (TF1)", OK, "importable")
    return Check("npu_bridge (TF1)", WARN, "not installed: TF1 sessions run on the CPU",
                 "install TF Adapter for TF1 (npu_bridge) matching your CANN and TensorFlow 1.15")


def check_npu_device(ctx):
    if ctx.has_module("npu_device"):
        return Check("npu_device (TF2)", OK, "importable")
    return Check("npu_device (TF2)", WARN, "not installed: TF2 programs run on the CPU",
                 "install TF Adapter for TF2 (npu_device) matching your CANN and TensorFlow 2.6.5")


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
                 "here", "install the CANN toolkit and " + SOURCE_CANN)


def check_ge_library(ctx):
    name = "GE library"
    ge = ctx.ge_info()
    if ge is None:
        return Check(name, WARN, "this build has no GE step record (build_info.json has no 'ge')",
                     "rebuild with a CANN toolkit in the environment: " + REBUILD)
    if not ge.get("built"):
        return Check(name, WARN, "not built: %s" % (ge.get("reason") or "no reason recorded"),
                     "install the CANN toolkit, %s, then %s" % (SOURCE_CANN, REBUILD))
    files = list(ge.get("libraries") or ()) + list(ge.get("headers") or ())
    absent = [p for p in files if not os.path.isfile(os.path.join(ctx.root, p))]
    if absent:
        return Check(name, FAIL, "recorded but missing: %s" % ", ".join(absent), REBUILD)
    recorded = ge.get("toolkit") or {}
    detail = "built against %s: %s" % (
        "%s at %s" % (cann_toolkit.describe(recorded.get("version")), recorded.get("home"))
        if recorded else ge.get("ascend_home") or "CANN", ", ".join(files))
    if ctx.cann_home() is None:
        return Check(name, OK, detail + " (its dependencies were not checked: no CANN here)")
    failures = []
    for p in _expected_ge_libraries(ctx):
        error = ctx.dlopen_check(os.path.join(ctx.root, p), ctx.environ)
        if error:
            failures.append("%s: %s" % (p, error))
    if failures:
        return Check(name, FAIL, "GE opens it with RTLD_NOW and fails init when that fails: "
                     + "; ".join(failures), "%s, then %s" % (SOURCE_CANN, REBUILD))
    return Check(name, OK, detail + " (loads with every dependency resolved)")


def check_kernels(ctx):
    name = "npubins"
    try:
        reader = ctx.manifest_reader()
    except ImportError as e:
        return Check(name, WARN, "the kernel manifest reader is not in this build (%s)" % e,
                     "update tf-ge-custom to a version with precompiled kernels")
    recorded = (ctx.build_info.get("kernels") or {}).get("socs") or {}
    manifests = reader.find_manifests(ctx.root)
    if not manifests:
        if recorded:
            return Check(name, FAIL, "the build recorded npubins for %s, but %s has none"
                         % (", ".join(sorted(recorded)), os.path.join(ctx.root, opp.KERNELS_DIR)),
                         REBUILD)
        return Check(name, WARN, "no precompiled npubins under %s: the GE library has no "
                     "kernel to launch" % os.path.join(ctx.root, opp.KERNELS_DIR),
                     "build them on a CANN host (tf-ge-custom build-kernels --help), then "
                     + REBUILD)
    status, parts, socs = OK, [], {}
    for soc in sorted(manifests):
        try:
            manifest = reader.load_manifest(manifests[soc], check_files=True)
        except reader.ManifestError as e:
            status = FAIL
            parts.append("%s: %s error: %s" % (soc, getattr(e, "kind", "?"), e))
            socs[soc] = {"error": getattr(e, "kind", None)}
            continue
        have = sorted(set(k.dtype for k in manifest.kernels
                          if k.op == op_def.ADD_CUSTOM.type_name and k.binary))
        missing = [d for d in op_def.ADD_CUSTOM.dtypes if d not in have]
        socs[soc] = {"dtypes": have, "missing": missing}
        if missing:
            status = worst([status, WARN])
            parts.append("%s: %s (no npubin for %s)" % (soc, ", ".join(have) or "IR only",
                                                         ", ".join(missing)))
        else:
            parts.append("%s: %s" % (soc, ", ".join(have)))
    fix = ""
    if status == FAIL:
        fix = "the files were changed after the build: " + REBUILD
    elif status == WARN:
        fix = "build the missing dtypes on a CANN host (tf-ge-custom build-kernels --help)"
    return Check(name, status, "checksums verified; " + "; ".join(parts) if status != FAIL
                 else "; ".join(parts), fix, {"socs": socs})


# --- the online path and the toolchain pairing (docs/cann.md) ---------------------------


def check_online_compile(ctx):
    """GE's TF parser compiles a REG_OP for AddCustom at graph parse time: can it?"""
    name = "online op compile (GE)"
    found = path_rules.ge_online_compile(ctx.environ, ctx.cwd, ctx.which)
    data = found.as_dict()
    if not found.problems:
        return Check(name, OK, "GE's TF parser can compile the REG_OP it generates: %s, headers "
                     "and libraries under %s, writable %s" % (found.compiler, found.home, found.cwd),
                     data=data)
    adapter = ctx.has_module("npu_bridge") or ctx.has_module("npu_device")
    detail = ("GE's TF parser compiles a REG_OP for %s when it parses a graph, and would fail: %s"
              % (op_def.ADD_CUSTOM.type_name, "; ".join(what for what, _ in found.problems)))
    if not adapter:
        detail += " (TF Adapter is not installed, so this only matters on an NPU host)"
    fixes = []
    for _, fix in found.problems:
        if fix not in fixes:
            fixes.append(fix)
    return Check(name, FAIL if adapter else WARN, detail, "; ".join(fixes), data)


def check_custom_opp_search_order(ctx):
    """GE searches the folders vendor libraries register before ASCEND_CUSTOM_OPP_PATH."""
    name = "custom OPP search order (GE)"
    order = path_rules.ge_custom_op_lib_path(ctx.environ, ctx.arch)
    data = order.as_dict()
    entries = ", ".join(order.entries) or "(none)"
    if order.vendor_libraries:
        return Check(name, WARN, "GE searches, in front of the ASCEND_CUSTOM_OPP_PATH entries (%s), "
                     "the folders that %d vendor librar%s register%s: %s; their parser plugins and "
                     "op protos win over ours, and the folders are known only once GE has run them"
                     % (entries, len(order.vendor_libraries),
                        "y" if len(order.vendor_libraries) == 1 else "ies",
                        "s" if len(order.vendor_libraries) == 1 else "",
                        ", ".join(p for p, _ in order.vendor_libraries)),
                     "make sure no such vendor package defines %s, or drop its entry from "
                     "ASCEND_CUSTOM_OPP_PATH" % op_def.ADD_CUSTOM.type_name, data)
    return Check(name, OK, "ASCEND_CUSTOM_OPP_PATH entries in GE's order: %s; no library there "
                 "registers a vendor folder in front of them" % entries, data=data)


def _npubin_toolchains(ctx):
    """{soc: toolchain record} of the packaged manifests that carry npubins."""
    reader = ctx.manifest_reader()
    found = {}
    for soc, path in sorted(reader.find_manifests(ctx.root).items()):
        try:
            manifest = reader.load_manifest(path, check_files=False)
        except reader.ManifestError:
            continue  # the check 'npubins' reports it
        toolchain = manifest.toolchain
        if toolchain.get("cann") is not None:  # None: IR only, nothing of CANN was used
            found[soc] = toolchain
    return found


def _toolchain_phrase(toolchain):
    return "CANN %s (triton-ascend %s, bishengir-compile %s)" % (
        toolchain.get("cann"), toolchain.get("triton_ascend"), toolchain.get("bishengir"))


def check_npubin_toolchain(ctx):
    """The CANN whose hivmc built the packaged npubins against the installed one."""
    name = "npubin toolchain"
    try:
        built = _npubin_toolchains(ctx)
    except ImportError as e:
        return Check(name, WARN, "the kernel manifest reader is not in this build (%s)" % e,
                     "update tf-ge-custom to a version with precompiled kernels")
    home = ctx.cann_home()
    installed, version_file = cann_toolkit.toolkit_version(home) if home else (None, None)
    data = {"installed": installed, "home": home, "version_file": version_file, "socs": built}
    if not built:
        return Check(name, OK, "no packaged npubins, so no toolchain to compare (see 'npubins')",
                     data=data)
    groups = {}
    for soc, toolchain in built.items():
        groups.setdefault(_toolchain_phrase(toolchain), []).append(soc)
    made = "; ".join("%s built with %s" % (", ".join(socs), phrase)
                     for phrase, socs in sorted(groups.items()))
    if home is None or installed is None:
        return Check(name, WARN, "npubins for %s; %s, so the pairing is unchecked" % (
            made, "no CANN toolkit here" if home is None else "the toolkit at %s records no "
            "version" % home), SOURCE_CANN, data)
    other = sorted(soc for soc, t in built.items() if str(t.get("cann")) != installed)
    if other:
        rebuild = ("rebuild them with this toolkit, in the source checkout: tf-ge-custom "
                   "build-kernels --soc %s --out kernels-out, then TF_GE_CUSTOM_KERNELS_DIR="
                   "$PWD/kernels-out pip install --no-deps --force-reinstall . (docs/kernels.md)"
                   % ",".join(other))
        return Check(name, WARN, "npubins for %s; the installed toolkit is CANN %s (%s): a kernel "
                     "from another CANN's hivmc is a pairing nobody has checked" % (
                         made, installed, home), rebuild, data)
    return Check(name, OK, "npubins for %s, the installed toolkit's version" % made, data=data)


CHECKS = (
    check_tensorflow, check_op_library, check_opp_root,
    check_custom_opp_path, check_shell_environment, check_opp_path, check_home_path,
    check_tf1_finds_json, check_tf2_finds_json, check_ge_finds_library,
    check_npu_bridge, check_npu_device, check_cann, check_ge_library, check_kernels,
    check_online_compile, check_custom_opp_search_order, check_npubin_toolchain,
)


def run_checks(ctx=None, checks=CHECKS):
    """Run every check; a check that raises becomes a FAIL naming the exception."""
    ctx = ctx or Context()
    results = []
    for check in checks:
        try:
            results.append(check(ctx))
        except Exception as e:  # a doctor must report, never crash
            results.append(Check(check.__name__[len("check_"):].replace("_", " "), FAIL,
                                 "the check itself failed: %s: %s" % (type(e).__name__, e),
                                 "please report this as a bug"))
    return results


def report(results, root):
    return {"tf_ge_custom": __version__, "opp_root": root,
            "status": worst([r.status for r in results]),
            "counts": {s: sum(r.status == s for r in results) for s in (OK, WARN, FAIL)},
            "checks": [r.as_dict() for r in results]}


def format_text(results, root):
    lines = ["tf-ge-custom %s doctor (OPP root: %s)" % (__version__, root)]
    width = max(len(r.name) for r in results) if results else 0
    for r in results:
        lines.append("%-4s  %-*s  %s" % (r.status, width, r.name, r.detail))
        if r.fix:
            lines.append("%-4s  %-*s  fix: %s" % ("", width, "", r.fix))
    counts = report(results, root)["counts"]
    lines.append("%d OK, %d WARN, %d FAIL" % (counts[OK], counts[WARN], counts[FAIL]))
    return "\n".join(lines) + "\n"


def add_arguments(parser):
    parser.description = ("Check the installation and the Ascend stack. Exit status 1 when a "
                          "check FAILs, else 0 (WARN included).")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def run(args):
    ctx = Context()
    results = run_checks(ctx)
    if args.json:
        sys.stdout.write(json.dumps(report(results, ctx.root), indent=2) + "\n")
    else:
        sys.stdout.write(format_text(results, ctx.root))
    return 1 if any(r.status == FAIL for r in results) else 0
