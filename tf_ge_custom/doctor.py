"""``tf-ge-custom doctor``: check the installation and the Ascend stack, one line per check.

Each check says OK, INFO, WARN or FAIL, what it found and, for WARN and FAIL, the fix: a
command that works as printed wherever one exists (``export`` lines hold the exact value,
``source`` lines name the ``set_env.sh`` found on this host), else an :class:`Instruction`
for a person, printed as ``fix (by hand):`` and marked ``"fix_is_command": false`` in the
JSON. The exit status is non-zero only when a check FAILs. On a host with no Ascend
component at all (no TF Adapter, no CANN, no ``ASCEND_*`` variable, no ``/usr/local/Ascend``) the stack's
checks that would only WARN about what is absent fold into one INFO line (CPU mode); WARN is
for a partial or inconsistent stack. What this package installs itself (TensorFlow against
the build record, the op library, the OPP root) decides everywhere. ``--json`` prints the
same checks for machines, folded ones included.

doctor never imports TensorFlow nor loads the op library itself: the TensorFlow and op
library checks read what one child process found (TensorFlow's version, the library's
checks and load, the op it registered), so that a damaged library is a FAIL line rather
than a crash of doctor, and doctor pays TensorFlow's import once.

Whether TF Adapter (TF1 and TF2) and GE would find our JSON and libraries is answered by
replicating their search rules (:mod:`tf_ge_custom.path_rules`) on this process's
environment, which ``import tf_ge_custom`` has already completed; programs that do not
import the package (``atc``) see the shell's environment, checked separately.
"""
import importlib
import importlib.util
import json
import os
import shlex
import shutil
import sys
from typing import NamedTuple, Optional

from . import _library, commands, environment, files, op_def, opp, path_rules
from ._build import cann_toolkit
from ._version import __version__
from .errors import CommandError, OpLibraryError

OK, INFO, WARN, FAIL = "OK", "INFO", "WARN", "FAIL"
STATUSES = (OK, INFO, WARN, FAIL)
_RANK = {OK: 0, INFO: 0, WARN: 1, FAIL: 2}
REBUILD = _library.rebuild_command()


class Instruction(str):
    """A fix that is an instruction for a person, not a command that runs as printed (a
    plain ``str`` fix is such a command)."""


def is_command(fix):
    return bool(fix) and not isinstance(fix, Instruction)


class Check(NamedTuple):
    name: str
    status: str  # OK, WARN or FAIL
    detail: str  # what was found
    fix: str = ""  # what to do (empty when OK): a command, or an Instruction
    data: Optional[dict] = None  # structured findings for --json

    def as_dict(self):
        return {"name": self.name, "status": self.status, "detail": self.detail,
                "fix": self.fix, "fix_is_command": is_command(self.fix), "data": self.data or {}}


def worst(statuses):
    """The most severe status (INFO counts as OK)."""
    found = max(statuses, key=_RANK.__getitem__) if statuses else OK
    return OK if found == INFO else found


_FROM_PROCESS = object()


class Context(object):
    """What the checks look at; tests build one over temporary trees."""

    def __init__(self, root=None, build_info=None, environ=None,
                 shell_custom_opp_path=_FROM_PROCESS,
                 find_spec=None, which=None, arch=None, manifest_reader=None,
                 dlopen_check=None, tensorflow_probe=None, build_info_error="",
                 install_dirs=("/usr/local/Ascend",), cwd=None):
        self.root = root or opp.opp_root()
        self.build_info_error = build_info_error  # why the build record is unusable
        if build_info is None:
            try:
                build_info = _library.build_info()
            except OpLibraryError as e:
                build_info, self.build_info_error = {}, str(e)
        self.build_info = build_info
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
        # () -> what a child process found of TensorFlow and the op library (probe_tensorflow)
        self._tensorflow_probe = tensorflow_probe or probe_tensorflow
        self._tensorflow = None
        self.install_dirs = install_dirs  # where CANN and the driver install by default

    def has_module(self, name):
        return self._find_spec(name) is not None

    def tensorflow(self):
        """What one child process found of TensorFlow and the op library (asked once)."""
        if self._tensorflow is None:
            self._tensorflow = self._tensorflow_probe()
        return self._tensorflow

    def ascend_components(self):
        """What of the Ascend stack this host has, in words (empty: none at all)."""
        found = ["%s (importable)" % m for m in ("npu_bridge", "npu_device") if self.has_module(m)]
        found += ["$%s" % var for var in sorted(self.environ)
                  if var.startswith("ASCEND_") and var != path_rules.CUSTOM_OPP_PATH_VAR]
        others = [e for e in environment.split_path_list(
            self.environ.get(path_rules.CUSTOM_OPP_PATH_VAR) or "")
            if e and not environment.contains_root(e, self.root)]
        if others:
            found.append("other ASCEND_CUSTOM_OPP_PATH entries (%s)" % ", ".join(others))
        path = self.environ.get("PATH")
        found += ["%s on PATH" % tool for tool in ("atc", "npu-smi")
                  if self.which(tool, path=path)]
        found += [folder for folder in self.install_dirs if os.path.isdir(folder)]
        ge = self.ge_info() or {}
        if ge.get("built"):
            found.append("a GE library built by this package")
        if (self.build_info.get("kernels") or {}).get("socs"):
            found.append("npubins recorded by this build")
        return found

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

    def set_env_script(self):
        """The ``set_env.sh`` of a CANN toolkit on this host, or None: beside the toolkit the
        environment names, else in the default install folders (docs/cann.md, "Where CANN
        is installed")."""
        candidates = []
        home = self.cann_home()
        if home:
            home = home.rstrip("/")
            candidates += [os.path.join(home, SET_ENV), os.path.join(os.path.dirname(home), SET_ENV)]
        for folder in self.install_dirs:
            candidates += [os.path.join(folder, sub, SET_ENV) for sub in CANN_INSTALL_SUBDIRS]
        return next((c for c in candidates if os.path.isfile(c)), None)


SET_ENV = "set_env.sh"
# Where the CANN installer puts the toolkit under an install folder: cann/ (the layout of
# CANN's documents since 8.5.0), ascend-toolkit/ (the older one, with the toolkit itself in
# ascend-toolkit/latest); docs/cann.md, "Where CANN is installed".
CANN_INSTALL_SUBDIRS = ("cann", "ascend-toolkit")


def _source_cann(ctx, then=None):
    """The fix that sets up the CANN environment (and then runs ``then``): ``source`` of the
    set_env.sh found on this host, or an Instruction where there is none."""
    script = ctx.set_env_script()
    if script:
        command = "source " + shlex.quote(script)
        return command + " && " + then if then else command
    return Instruction("install the CANN toolkit, then source its set_env.sh (/usr/local/Ascend/"
                       "cann/set_env.sh for an install as root)%s" % (", then run: " + then
                                                                      if then else ""))


def _toolkit_home(script):
    folder = os.path.dirname(script)
    latest = os.path.join(folder, "latest")
    return latest if os.path.isdir(latest) else folder


def _ge_rebuild_fix(ctx):
    """How to rebuild so that the GE library is built: the rebuild itself where this shell's
    toolkit can host it, ``source`` + rebuild where a found one can, else an Instruction."""
    if cann_toolkit.from_environment(ctx.environ).build:
        return REBUILD
    script = ctx.set_env_script()
    if script and cann_toolkit.inspect(_toolkit_home(script)).build:
        return _source_cann(ctx, REBUILD)
    return Instruction("install a CANN toolkit >= %s, source its set_env.sh, then rebuild: %s"
                       % (cann_toolkit.MINIMUM_CANN, REBUILD))


def _op_names():
    return ", ".join(op.type_name for op in op_def.OPS)


def _find_spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _dlopen_in_child(path, environ):
    """Load ``path`` with RTLD_NOW in a child process (as GE does); return an error or ""."""
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"  # CPython's dlopen adds RTLD_NOW
    try:
        proc = commands.run([sys.executable, "-c", code, path], timeout=120, env=dict(environ),
                            check=False, separate_stderr=True)
    except CommandError as e:
        return str(e)
    return "" if proc.returncode == 0 else (proc.errors.strip().splitlines() or ["failed"])[-1]


# Run in a child by probe_tensorflow: TensorFlow's version, then every check import
# tf_ge_custom makes and the load itself, then what the library registered. The package is
# imported without TensorFlow, so that nothing loads before the step that reports it.
_PROBE = r"""
import builtins, json, sys
builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True
sys.path.insert(0, sys.argv[1])  # this very package; everything else as the parent finds it
import tf_ge_custom
from tf_ge_custom import _library, op_def
del sys.path[0]

def say(key, value):
    sys.stdout.write("\nTF_GE_CUSTOM_PROBE " + json.dumps([key, value]) + "\n")
    sys.stdout.flush()

say("package", tf_ge_custom.__file__)
try:
    import tensorflow as tf
except Exception as e:
    say("tensorflow_error", "%s: %s" % (type(e).__name__, e))
    sys.exit(0)
say("tensorflow", tf.__version__)
try:
    _library.load()
except tf_ge_custom.OpLibraryError as e:
    say("library_error", str(e))
    sys.exit(0)
from tensorflow.python.framework import op_def_registry
ops = {}
for op in op_def.OPS:
    if hasattr(op_def_registry, "get"):
        registered = op_def_registry.get(op.type_name)
    else:  # TensorFlow 1.15
        registered = op_def_registry.get_registered_ops().get(op.type_name)
    if registered is None:
        ops[op.type_name] = None
        continue
    attrs = {a.name: a for a in registered.attr}
    dtypes = []
    if op.type_attr in attrs:
        dtypes = [tf.as_dtype(t).name for t in attrs[op.type_attr].allowed_values.list.type]
    ops[op.type_name] = {"inputs": [a.name for a in registered.input_arg],
                         "outputs": [a.name for a in registered.output_arg], "dtypes": dtypes}
say("ops", ops)
"""
_PROBE_MARK = "TF_GE_CUSTOM_PROBE "


def probe_tensorflow(timeout=600):
    """TensorFlow and this package's op library, as a child process sees them.

    Returns a dict: ``tensorflow`` (its version) or ``tensorflow_error``; then
    ``library_error`` or ``ops`` (what the library registered); ``crash`` when the child died
    of a signal (a library the recorded checks cannot fault may still crash the loader:
    in a child that is a message, not the end of doctor); ``failure`` for anything else.
    """
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        proc = commands.run([sys.executable, "-c", _PROBE, package_parent], timeout=timeout,
                            env=env, check=False, separate_stderr=True)
    except CommandError as e:
        if e.reason == commands.TIMED_OUT:
            return {"failure": "a child process importing TensorFlow and loading the op library "
                               "did not finish within %d s" % timeout}
        return {"failure": "cannot start a child process: %s" % e}
    found = {}
    for line in proc.output.splitlines():
        if line.startswith(_PROBE_MARK):
            key, value = json.loads(line[len(_PROBE_MARK):])
            found[key] = value
    if proc.returncode < 0:
        if "tensorflow" in found:
            found["crash"] = ("loading %s killed a child process with %s: the file is damaged "
                              "in a way the build record cannot show"
                              % (_library.library_path_unchecked(),
                                 commands.signal_name(proc.returncode)))
        else:
            found["crash"] = ("importing TensorFlow killed a child process with %s"
                              % commands.signal_name(proc.returncode))
    elif not found or ("ops" not in found and not set(found) & {"tensorflow_error",
                                                                "library_error"}):
        tail = (proc.errors.strip().splitlines() or ["no output"])[-1]
        found["failure"] = "a child process importing TensorFlow failed (exit %d): %s" % (
            proc.returncode, tail)
    return found


# --- TensorFlow and the op library -------------------------------------------------
# Both checks read one child process's findings (Context.tensorflow): doctor itself never
# imports TensorFlow nor maps the op library.


def _without_fix(message):
    """An OpLibraryError's message without its closing rebuild advice (doctor prints its own)."""
    for marker in (" Rebuild", " Build and install it:"):
        at = message.find(marker)
        if at > 0:
            return message[:at].rstrip(" .:")
    return message


def check_tensorflow(ctx):
    built = (ctx.build_info.get("tensorflow") or {}).get("version")
    probe = ctx.tensorflow()
    running = probe.get("tensorflow")
    if running is None:
        why = (probe.get("tensorflow_error") or probe.get("crash") or probe.get("failure")
               or "no answer")
        return Check("TensorFlow", FAIL, "cannot import tensorflow: %s" % why,
                     Instruction("install the TensorFlow the package was built for (%s), then "
                                 "rebuild: %s" % (built or "unknown", REBUILD)))
    if ctx.build_info_error:
        return Check("TensorFlow", FAIL, "TensorFlow %s; %s" % (
            running, _without_fix(ctx.build_info_error)), REBUILD)
    if built is None:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s; the package records no TensorFlow build (not built?)"
                     % running, REBUILD)
    if built != running:
        return Check("TensorFlow", FAIL,
                     "TensorFlow %s is running but the op library was built for %s"
                     % (running, built), REBUILD)
    return Check("TensorFlow", OK, "%s, the version the op library was built for" % built)


def check_op_library(ctx):
    name = "op library"
    if ctx.build_info_error:
        return Check(name, FAIL, _without_fix(ctx.build_info_error), REBUILD)
    probe = ctx.tensorflow()
    for key in ("tensorflow_error", "library_error", "crash", "failure"):
        if probe.get(key):
            detail = _without_fix(probe[key])
            if key == "tensorflow_error":
                detail = "cannot be loaded without TensorFlow (%s)" % detail
            return Check(name, FAIL, detail, REBUILD)
    problems = []
    for op in op_def.OPS:
        registered = (probe.get("ops") or {}).get(op.type_name)
        if registered is None:
            problems.append("%s is not registered" % op.type_name)
            continue
        inputs, outputs = tuple(registered["inputs"]), tuple(registered["outputs"])
        dtypes = tuple(registered["dtypes"])
        if (inputs, outputs) != (op.inputs, op.outputs) or set(dtypes) != set(op.dtypes):
            problems.append("%s registered as %s -> %s over %s; the op definition says %s -> %s "
                            "over %s" % (op.type_name, inputs, outputs, dtypes, op.inputs,
                                         op.outputs, op.dtypes))
    if problems:
        return Check(name, FAIL, "; ".join(problems), REBUILD)
    return Check(name, OK, "%s matches its build record, loads and registers %s" % (
        os.path.basename(_library.library_path_unchecked()),
        ", ".join(o.type_name for o in op_def.OPS)))


def check_xla_library(ctx):
    """The XLA kernel library (``jit_compile``): the file the build recorded, undamaged."""
    name = "XLA kernels"
    if ctx.build_info_error:
        return Check(name, FAIL, _without_fix(ctx.build_info_error), REBUILD)
    built = ctx.build_info.get("tensorflow") or {}
    relative = built.get("xla_library")
    if not relative:
        return Check(name, OK, "this build has no XLA kernel library (%s): under "
                     "jit_compile=True add_custom lowers to tf.math.add, the same numbers" % (
                         built.get("xla_library_missing_because") or "not recorded"))
    path = os.path.join(os.path.dirname(os.path.abspath(_library.__file__)), relative)
    try:
        _library.check_library_file(path, ctx.build_info, key="xla_library")
    except OpLibraryError as e:
        return Check(name, FAIL, _without_fix(str(e)) + "; jit_compile graphs would hold "
                     "tf.math.add instead of AddCustom", REBUILD)
    return Check(name, OK, "%s matches its build record: jit_compile graphs keep AddCustom"
                 % relative)


# --- the OPP root -------------------------------------------------------------------


def check_opp_root(ctx):
    name = "OPP root"
    root = ctx.root
    if not os.path.isdir(root):
        return Check(name, FAIL, "%s does not exist (the package was not built)" % root, REBUILD)
    problems, fixes = [], set()
    json_path = os.path.join(root, opp.SUPPORTED_OPS_JSON)
    ops, _ = opp.npu_ops(ctx.build_info)
    try:
        if files.load_json(json_path, path_rules.JSON_MAX_BYTES) != opp.supported_ops_document(ops):
            problems.append("%s does not match the op definition and this build (it should "
                            "list %s)" % (opp.SUPPORTED_OPS_JSON, _listed(ops)))
            fixes.add(REBUILD)
    except files.FileProblem as e:
        problems.append("%s unusable: %s" % (opp.SUPPORTED_OPS_JSON, e))
        fixes.add(REBUILD)
    for folder in (opp.GE_INCLUDE_DIR, opp.ge_library_dir(ctx.arch), opp.KERNELS_DIR):
        if not os.path.isdir(os.path.join(root, folder)):
            problems.append("folder %s is missing" % folder)
            fixes.add(REBUILD)
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
    return ", ".join(op.type_name for op in ops) if ops else "no op"


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
                     _op_names(), "s" if len(op_def.OPS) == 1 else "", why_none),
                 _ge_rebuild_fix(ctx), data)


# --- environment ---------------------------------------------------------------------


def _export_line(root, value=None):
    """The shell command that puts ``root`` first in ASCEND_CUSTOM_OPP_PATH, keeping only the
    entries of ``value`` that every program resolves alike (existing absolute folders)."""
    kept = [e for e in environment.split_path_list(value or "")
            if e and os.path.isabs(e) and os.path.isdir(e)
            and not environment.contains_root(e, root)]
    return "export %s=%s" % (path_rules.CUSTOM_OPP_PATH_VAR,
                             shlex.quote(":".join([root] + list(dict.fromkeys(kept)))))


def _root_problem(ctx):
    """Why the OPP root cannot be listed in ASCEND_CUSTOM_OPP_PATH at all ("" normally)."""
    return environment.separator_problem(ctx.root)


def check_custom_opp_path(ctx):
    name = "ASCEND_CUSTOM_OPP_PATH"
    value = ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)
    entries = environment.split_path_list(value or "")
    if _root_problem(ctx):
        return Check(name, FAIL, "%s; import tf_ge_custom leaves the variable alone, so TF "
                     "Adapter and GE never find %s" % (_root_problem(ctx), _op_names()),
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
            drop.add(entry)
    if rivals:
        status = worst([status, WARN])
        notes.append("other entries also declare our ops: %s; TF1 takes the later entry's "
                     "value and GE loads both libraries; the fix drops them" % "; ".join(rivals))
    fix = ""
    if status != OK:
        fix = _export_line(ctx.root, ":".join(e for e in entries if e not in drop))
    detail = value if value is not None else "(unset)"
    if notes:
        detail += " -- " + "; ".join(notes)
    return Check(name, status, detail, fix, {"value": value, "entries": entries})


def check_shell_environment(ctx):
    name = "shell environment (atc)"
    value = ctx.shell_custom_opp_path
    if environment.contains_root(value, ctx.root):
        return Check(name, OK, "the shell's ASCEND_CUSTOM_OPP_PATH contains the OPP root, so "
                     "atc and ACL programs find %s too" % _op_names())
    if _root_problem(ctx):
        return Check(name, WARN, "atc cannot be shown the OPP root: its path contains ':' "
                     "(see ASCEND_CUSTOM_OPP_PATH)", Instruction(environment.INSTALL_ELSEWHERE))
    return Check(name, WARN,
                 "the shell's ASCEND_CUSTOM_OPP_PATH (%s) lacks the OPP root: Python programs "
                 "that import tf_ge_custom are fine, but atc and other programs are not; run "
                 "the fix in the shell before atc" % ("unset" if value is None else value or "empty"),
                 _export_line(ctx.root, value))


NEW_OPP_LAYOUT = Instruction("use a CANN whose opp folder has built-in/ (CANN 6.0 or later) "
                             "and source its set_env.sh")


def check_opp_path(ctx):
    name = "ASCEND_OPP_PATH"
    value = ctx.environ.get(path_rules.OPP_PATH_VAR)
    if value is None:
        return Check(name, WARN, "unset (no CANN environment; TF1's adapter would use %s)"
                     % path_rules.TF1_DEFAULT_OPP_PATH, _source_cann(ctx))
    if not os.path.isdir(value):
        return Check(name, WARN, "%s is not a folder" % value, _source_cann(ctx))
    if path_rules.opp_layout(value) == "old":
        return Check(name, WARN, "%s has no built-in/ folder (old OPP layout): TF1's adapter "
                     "and GE's parser ignore ASCEND_CUSTOM_OPP_PATH" % value, NEW_OPP_LAYOUT)
    return Check(name, OK, "%s (new OPP layout: custom OPP roots are honoured)" % value)


def check_home_path(ctx):
    name = "ASCEND_HOME_PATH"
    value = ctx.environ.get("ASCEND_HOME_PATH")
    if value and os.path.isdir(value):
        return Check(name, OK, value)
    if value:
        return Check(name, WARN, "%s is not a folder" % value, _source_cann(ctx))
    return Check(name, WARN, "unset: GE's online path compiles the auto-generated op proto "
                 "under it, so NPU runs need it", _source_cann(ctx))


# --- would the stack find our files? ---------------------------------------------------


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
           else _export_line(root, ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)))
    return Check(name, status, detail, fix, data)


def check_tf1_finds_json(ctx):
    name = "TF1 adapter finds the JSON"
    return _merge(name, [_lookup_check(name, path_rules.tf1_lookup(op.type_name, ctx.environ), ctx,
                                       "npu_bridge") for op in op_def.OPS])


def check_tf2_finds_json(ctx):
    name = "TF2 adapter finds the JSON"
    return _merge(name, [_lookup_check(name, path_rules.tf2_lookup(op.type_name, ctx.environ), ctx,
                                       "npu_device") for op in op_def.OPS])


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
                     _export_line(ctx.root, ctx.environ.get(path_rules.CUSTOM_OPP_PATH_VAR)), data)
    if missing_parsers:
        opp_path = ctx.environ.get(path_rules.OPP_PATH_VAR)
        if opp_path is None:
            fix = _source_cann(ctx)  # GE then derives the OPP path itself
        elif path_rules.opp_layout(opp_path) == "old":
            fix = NEW_OPP_LAYOUT
        else:
            fix = REBUILD  # the layout is right: the plugin itself is missing
        return Check(name, WARN, "GE loads the custom-op library, but its TF parser would not "
                     "load %s (%s): atc --framework=3 cannot parse %s"
                     % (", ".join(missing_parsers), "; ".join(parser_notes) or "not found",
                        _op_names()), fix, data)
    return Check(name, OK, "GE loads %d librar%s from the OPP root" % (
        len(_expected_ge_libraries(ctx)), "y" if len(_expected_ge_libraries(ctx)) == 1 else "ies"),
        data=data)


# --- the NPU stack -------------------------------------------------------------------


def check_npu_bridge(ctx):
    if ctx.has_module("npu_bridge"):
        return Check("npu_bridge (TF1)", OK, "importable")
    return Check("npu_bridge (TF1)", WARN, "not installed: TF1 sessions run on the CPU",
                 Instruction("install TF Adapter for TF1 (npu_bridge) matching your CANN and "
                             "TensorFlow 1.15"))


def check_npu_device(ctx):
    if ctx.has_module("npu_device"):
        return Check("npu_device (TF2)", OK, "importable")
    return Check("npu_device (TF2)", WARN, "not installed: TF2 programs run on the CPU",
                 Instruction("install TF Adapter for TF2 (npu_device) matching your CANN and "
                             "TensorFlow 2.6.5"))


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
                 "here", _source_cann(ctx))


def check_ge_library(ctx):
    name = "GE library"
    ge = ctx.ge_info()
    if ge is None:
        return Check(name, WARN, "this build has no GE step record (build_info.json has no 'ge')",
                     _ge_rebuild_fix(ctx))
    if not ge.get("built"):
        return Check(name, WARN, "not built: %s" % (ge.get("reason") or "no reason recorded"),
                     _ge_rebuild_fix(ctx))
    recorded = list(ge.get("libraries") or ()) + list(ge.get("headers") or ())
    absent = [p for p in recorded if not os.path.isfile(os.path.join(ctx.root, p))]
    if absent:
        return Check(name, FAIL, "recorded but missing: %s" % ", ".join(absent), REBUILD)
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
                     + "; ".join(failures), _source_cann(ctx, REBUILD))
    return Check(name, OK, detail + " (loads with every dependency resolved)")


def check_kernels(ctx):
    name = "npubins"
    try:
        reader = ctx.manifest_reader()
    except ImportError as e:
        return Check(name, WARN, "the kernel manifest reader is not in this build (%s)" % e,
                     Instruction("update tf-ge-custom to a version with precompiled kernels"))
    recorded = (ctx.build_info.get("kernels") or {}).get("socs") or {}
    manifests = reader.find_manifests(ctx.root)
    if not manifests:
        if recorded:
            return Check(name, FAIL, "the build recorded npubins for %s, but %s has none"
                         % (", ".join(sorted(recorded)), os.path.join(ctx.root, opp.KERNELS_DIR)),
                         REBUILD)
        return Check(name, WARN, "no precompiled npubins under %s: a graph build must compile "
                     "each kernel it needs on this host (see 'kernel cache')"
                     % os.path.join(ctx.root, opp.KERNELS_DIR),
                     Instruction("build them on a CANN host (tf-ge-custom build-kernels --help), "
                                 "then rebuild with them: docs/kernels.md"))
    status, parts, socs = OK, [], {}
    for soc in sorted(manifests):
        try:
            manifest = reader.load_manifest(manifests[soc], check_files=True)
        except reader.ManifestError as e:
            status = FAIL
            parts.append("%s: %s error: %s" % (soc, getattr(e, "kind", "?"), e))
            socs[soc] = {"error": getattr(e, "kind", None)}
            continue
        built = set((k.op, k.dtype) for k in manifest.kernels if k.binary)
        have = sorted(_kernel_label(op, d) for op in op_def.OPS for d in op.dtypes
                      if (op.type_name, d) in built)
        missing = [_kernel_label(op, d) for op in op_def.OPS for d in op.dtypes
                   if (op.type_name, d) not in built]
        socs[soc] = {"dtypes": have, "missing": missing}
        if missing:
            status = worst([status, WARN])
            parts.append("%s: %s (no npubin for %s)" % (soc, ", ".join(have) or "IR only",
                                                         ", ".join(missing)))
        else:
            parts.append("%s: %s" % (soc, ", ".join(have)))
    fix = ""
    if status == FAIL:
        parts.append("the files were changed after the build")
        fix = REBUILD
    elif status == WARN:
        fix = Instruction("build the missing dtypes on a CANN host (tf-ge-custom build-kernels "
                          "--help), then rebuild with them: docs/kernels.md")
    return Check(name, status, "checksums verified; " + "; ".join(parts) if status != FAIL
                 else "; ".join(parts), fix, {"socs": socs})


def _kernel_label(op, dtype):
    """A dtype, or ``<op type> <dtype>`` when the package defines more than one op."""
    return dtype if len(op_def.OPS) == 1 else "%s %s" % (op.type_name, dtype)


def _nearest_existing(path):
    probe = os.path.abspath(path)
    while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    return probe


def check_kernel_cache(ctx):
    """Where the GE library compiles the kernels the package lacks, and whether it can."""
    name = "kernel cache"
    try:
        cache = importlib.import_module("tf_ge_custom.kernels.cache")
        compile_kernel = importlib.import_module("tf_ge_custom.kernels.compile_kernel")
    except ImportError as e:
        return Check(name, WARN, "the kernel builder is not in this build (%s)" % e,
                     Instruction("update tf-ge-custom to a version that compiles kernels on "
                                 "first graph build"))
    try:
        location = cache.cache_dir(ctx.environ)
    except cache.KernelCacheError as e:
        return Check(name, WARN, "a graph build for a SoC without a packaged npubin could not "
                     "compile it: %s" % e,
                     Instruction("export %s=<a writable folder>" % cache.CACHE_DIR_ENV))
    problems, fixes = [], []
    probe = _nearest_existing(location.path)
    if not os.path.isdir(probe) or not os.access(probe, os.W_OK | os.X_OK):
        problems.append("%s is not writable by this user (%s)" % (location.path, probe))
        fixes.append("export %s=<a writable folder>" % cache.CACHE_DIR_ENV)
    python = ctx.environ.get("TF_GE_CUSTOM_PYTHON") or \
        (ctx.build_info.get("kernels") or {}).get("python")
    if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        problems.append("the Python it would run, %s, is not an executable file" % python)
        fixes.append("export TF_GE_CUSTOM_PYTHON=<the Python with tf-ge-custom and "
                     "triton-ascend>")
    ident = cache.identity(ctx.environ)
    for tool in ident.missing:
        problems.append("%s is missing" % tool)
        fixes.append(compile_kernel.hint(tool, python))
    entries = cache.list_entries(location.path) if os.path.isdir(location.path) else []
    current = [e for e in entries if e.key == ident.key and e.manifest is not None]
    invalid = [e for e in entries if e.manifest is None]
    data = {"path": location.path, "from": location.source, "key": ident.key,
            "missing": list(ident.missing), "python": python,
            "entries": ["%s/%s/%s" % (e.soc, e.key, e.dtype) for e in entries],
            "invalid": [e.path for e in invalid]}
    held = "%d kernel set(s) of this toolchain (%s)" % (len(current), ", ".join(
        sorted("%s %s" % (e.soc, e.dtype) for e in current))) if current else "empty"
    if invalid:
        problems.append("%d entr%s fail verification (%s); the next compile replaces them"
                        % (len(invalid), "y" if len(invalid) == 1 else "ies",
                           ", ".join(e.path for e in invalid)))
    detail = "%s (from %s), key %s: %s" % (location.path, location.source, ident.key, held)
    if problems:
        return Check(name, WARN, "%s; a graph build for a SoC or dtype without a packaged "
                     "npubin could not compile it: %s" % (detail, "; ".join(problems)),
                     Instruction("; ".join(dict.fromkeys(fixes))), data)
    return Check(name, OK, detail + "; kernels the package lacks are compiled here on first "
                 "graph build (pre-warm: tf-ge-custom build-kernels --soc <SoC> --cache)", data=data)


# --- the online path and the toolchain pairing (docs/cann.md) ---------------------------


def check_online_compile(ctx):
    """GE's TF parser compiles a REG_OP for each op at graph parse time: can it?"""
    name = "online op compile (GE)"
    source = _source_cann(ctx)
    found = path_rules.ge_online_compile(ctx.environ, ctx.cwd, ctx.which, source)
    data = found.as_dict()
    if not found.problems:
        return Check(name, OK, "GE's TF parser can compile the REG_OP it generates: %s, headers "
                     "and libraries under %s, writable %s" % (found.compiler, found.home, found.cwd),
                     data=data)
    adapter = ctx.has_module("npu_bridge") or ctx.has_module("npu_device")
    detail = ("GE's TF parser compiles a REG_OP for %s when it parses a graph, and would fail: %s"
              % (_op_names(), "; ".join(what for what, _ in found.problems)))
    if not adapter:
        detail += " (TF Adapter is not installed, so this only matters on an NPU host)"
    fixes = []
    for _, fix in found.problems:
        if fix not in fixes:
            fixes.append(fix)
    fix = "; ".join(fixes)
    if not all(f == source and is_command(source) for f in fixes):  # the others are prose
        fix = Instruction(fix)
    return Check(name, FAIL if adapter else WARN, detail, fix, data)


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
                     Instruction("make sure no such vendor package defines %s, or drop its entry "
                                 "from ASCEND_CUSTOM_OPP_PATH" % _op_names()), data)
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
            "version" % home), _source_cann(ctx), data)
    other = sorted(soc for soc, t in built.items() if str(t.get("cann")) != installed)
    if other:
        rebuild = Instruction(
            "rebuild them with this toolkit, in the source checkout: tf-ge-custom build-kernels "
            "--soc %s --out kernels-out, then TF_GE_CUSTOM_KERNELS_DIR=$PWD/kernels-out pip "
            "install --no-deps --force-reinstall . (docs/kernels.md)" % ",".join(other))
        return Check(name, WARN, "npubins for %s; the installed toolkit is CANN %s (%s): a kernel "
                     "from another CANN's hivmc is a pairing nobody has checked" % (
                         made, installed, home), rebuild, data)
    return Check(name, OK, "npubins for %s, the installed toolkit's version" % made, data=data)


_DESCRIBED = {}  # (python, package parent) -> the builder's --describe result, once per process


def _describe_builder(python, package_parent, environ):
    from . import builder_venv

    key = (python, package_parent, environ.get("TF_GE_CUSTOM_CACHE_DIR"))
    if key not in _DESCRIBED:
        _DESCRIBED[key] = builder_venv.describe(python, package_parent, environ=dict(environ))
    return _DESCRIBED[key]


def check_kernel_builder(ctx):
    """Which Python the GE library's Compile would run the kernel builder with (the rule of
    ge_ops/core kernel_compiler.cc): TF_GE_CUSTOM_PYTHON, else this package's own Python, else
    the setup-builder venv; each only when its --describe imports tf_ge_custom and triton."""
    from . import builder_venv

    name = "kernel builder"
    describe = getattr(ctx, "builder_describe", None) or _describe_builder
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctx.root)))
    explicit = ctx.environ.get("TF_GE_CUSTOM_PYTHON")
    if explicit:
        candidates = [(explicit, "TF_GE_CUSTOM_PYTHON", package_parent)]
    else:
        candidates = [(sys.executable, "this package's Python", package_parent)]
        venv = builder_venv.default_venv(ctx.environ)
        if venv and os.path.isfile(builder_venv.venv_python(venv)):
            candidates.append((builder_venv.venv_python(venv), "the setup-builder venv", ""))
    refusals, old = [], sys.version_info < builder_venv.MIN_PYTHON
    for python, origin, parent in candidates:
        result = describe(python, parent, ctx.environ)
        if result.get("ok"):
            return Check(name, OK, "%s (%s, Python %s) imports tf_ge_custom and triton: a graph build "
                         "compiles missing kernels with it" % (python, origin, result.get("python_version")),
                         data={"python": python, "from": origin})
        refusals.append("%s (%s): %s" % (python, origin, result.get("error")))
    if old:
        fix = Instruction("run `tf-ge-custom setup-builder` once: triton-ascend has no build for "
                          "Python %d.%d, so the builder needs a Python >= 3.9 venv (docs/kernels.md)"
                          % sys.version_info[:2])
    else:
        fix = Instruction("pip install triton-ascend==3.2.0 pybind11 ascendnpu-ir==1.2.0 into %s, or run "
                          "`tf-ge-custom setup-builder`" % sys.executable)
    return Check(name, WARN, "no Python here can run the kernel builder, so a graph build can use only "
                 "packaged, bundled or cached kernels: %s" % "; ".join(refusals), fix,
                 {"candidates": [c[0] for c in candidates]})


def check_board_kernels(ctx):
    """Every kernel set the GE library sees (the package's, the bundles of TF_GE_CUSTOM_KERNELS)
    with where it came from; with --soc, which one a graph build for that board takes."""
    from .kernels import kernel_sources

    board = getattr(ctx, "board", None)
    sets = kernel_sources.kernel_sets(os.path.join(ctx.root, opp.KERNELS_DIR), ctx.environ)
    listing = ", ".join("%s (%s%s)" % (s.soc, s.source, "" if s.source == "package" else " " + s.folder)
                        for s in sets) or "none"
    data = {"sets": [s._asdict() for s in sets]}
    if not board:
        return Check("kernel sets", OK, "kernel sets the GE library sees: %s%s" % (
            listing, "" if sets else " (a graph build compiles what it needs: see 'kernel builder')"), data=data)
    served = kernel_sources.serving(board, sets)
    data["board"] = board
    data["served_by"] = served.kernel_set.soc if served.kernel_set else None
    name = "kernels for %s" % board
    if served.kernel_set is None:
        return Check(name, WARN, "%s (kernel sets: %s)" % (kernel_sources.describe(served), listing),
                     Instruction("build a bundle of its architecture on a CANN host (tf-ge-custom "
                                 "build-kernels --bundle DIR --soc %s) and set TF_GE_CUSTOM_KERNELS=DIR "
                                 "here, or let the graph build compile them (see 'kernel builder')" % board),
                     data)
    return Check(name, OK, kernel_sources.describe(served), data=data)


def check_static_graph_path(ctx):
    """Which path a graph whose shapes are all known takes on this build (docs/npu.md, "Static,
    sunk graphs"): sunk, its launch declared (the GE library is an AnnotatedArgsOp, which
    every toolkit that can host the library has: both since CANN 9.2.0-beta.1), or none."""
    name = "static graphs (sunk / eager)"
    ge = ctx.ge_info()
    if not ge or not ge.get("built"):
        why = (ge or {}).get("reason") or "this build has no GE library"
        return Check(name, WARN, "no GE path at all (%s): AddCustom runs on the CPU kernel in any graph" % why,
                     _ge_rebuild_fix(ctx))
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
                refused.append("%s %s %s (%s%s)" % (soc, k.variant, k.dtype, "mix_mode " + k.mix_mode,
                                                     ", %d locks" % k.lock_num if k.lock_num > 0 else ""))
            limit = k.max_elements_per_launch if limit is None else min(limit, k.max_elements_per_launch)
    detail = ("sunk: GE runs AddCustom as a task of the model with the launch it declared when it built the "
              "graph (DeclareLaunchArgs): no host call per step, no copies inserted around it; a dynamic "
              "graph (compile_dynamic_mode, unknown dims) runs Execute on the host at every step")
    if limit is not None:
        detail += "; a static shape of more than %d output elements needs several launches and is refused " \
                  "when GE builds the graph" % limit
    if refused:
        return Check(name, WARN, detail + "; these kernels cannot be declared, so a static graph using them "
                     "fails to build: " + ", ".join(refused),
                     Instruction("use their dtypes and shapes in dynamic graphs (compile_dynamic_mode=True), "
                                 "or rebuild the kernels as vector-core kernels without locks"))
    return Check(name, OK, detail)


CHECKS = (
    check_tensorflow, check_op_library, check_xla_library, check_opp_root,
    check_custom_opp_path, check_shell_environment, check_opp_path, check_home_path,
    check_tf1_finds_json, check_tf2_finds_json, check_ge_finds_library,
    check_npu_bridge, check_npu_device, check_cann, check_ge_library, check_npu_placement,
    check_kernels, check_kernel_cache,
    check_online_compile, check_custom_opp_search_order, check_npubin_toolchain,
    check_board_kernels, check_kernel_builder,
    check_static_graph_path,
)


# What the package installs itself: these decide on every host, CPU-only ones included.
# Every other check is about the Ascend stack (see fold_cpu_mode).
OWN_CHECKS = (check_tensorflow, check_op_library, check_xla_library, check_opp_root,
              check_custom_opp_path)
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
        from .kernels import socs

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
