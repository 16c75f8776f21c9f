"""How TF Adapter (TF1 and TF2) and GE find custom-op files: their rules, replicated.

Each function follows one program's search rules over the real file system and a given
environment, and returns what that program would read or load, so that
``tf-ge-custom doctor`` can say *why* an op (``AddCustom``) would or would not be found. The rules
were read off the public sources (hicann/tensorflow, hicann/ge, 2026-11); each function
names the file it replicates. Pure standard library.

GE's custom OPP search path (``aclGetCustomOpLibPath()``) is not ``ASCEND_CUSTOM_OPP_PATH``
alone: after loading the custom-op libraries of its entries, GE runs the init function that
each *vendor* library registered (``REGISTER_OP_LIB(vendor).RegOpLibInit(fn)``) and puts the
folders they return in front of the entries (graph_metadef/register/op_lib_register.cc,
``CallInitFunc``; docs/cann.md). Those folders exist only once GE has run the functions, so
:func:`ge_custom_op_lib_path` names the libraries that register them, and the other rules here
follow the entries alone. This package's own library registers none.

Deliberate simplifications: a JSON file that does not parse contributes no ops; nor does one
that is not a regular file, larger than :data:`JSON_MAX_BYTES` or nested deeper than 512
levels (read through :mod:`tf_ge_custom._files`, so a FIFO never blocks doctor and no depth
crashes it).
"""
import json
import os
import re
import stat

from . import _files as files, opp

CUSTOM_OPP_PATH_VAR = "ASCEND_CUSTOM_OPP_PATH"
OPP_PATH_VAR = "ASCEND_OPP_PATH"
# npu_ops_identifier.cc: used when ASCEND_OPP_PATH is unset (or longer than 1 MiB).
TF1_DEFAULT_OPP_PATH = "/usr/local/Ascend/opp"
_ADAPTER_ENV_MAX_LENGTH = 1024 * 1024
# An op list is a few KiB even for CANN's built-in one; beyond this it is not one.
JSON_MAX_BYTES = 64 << 20
_CONFIG_MAX_BYTES = 1 << 20
_CUSTOM_JSON = "/" + opp.SUPPORTED_OPS_JSON  # "/framework/tensorflow/npu_supported_ops.json"
_OLD_BUILTIN_JSON = "/framework/built-in/tensorflow/npu_supported_ops.json"
_NEW_BUILTIN_JSON = "/built-in/framework/tensorflow/npu_supported_ops.json"
_OLD_CUSTOM_JSON = "/framework/custom/tensorflow/npu_supported_ops.json"
# op_lib_register.cc: GE loads <entry>/libcust_opapi.so by this exact name.
CUST_OPAPI_SO = "libcust_opapi.so"


def _split(value, sep=":"):
    return value.split(sep) if value else []


def _environ(environ):
    return os.environ if environ is None else environ


class JsonRead(object):
    """One ``npu_supported_ops.json`` a program tried to read."""

    def __init__(self, path, role):
        self.path = path
        # "built-in"; "entry" (of ASCEND_CUSTOM_OPP_PATH); "vendor" (vendors/config.ini);
        # "opp-custom" (<opp>/framework/custom, the old place for custom ops)
        self.role = role
        self.exists = os.path.lexists(path)
        self.ops = None  # the parsed top-level object, or None
        self.error = ""
        if self.exists:
            try:
                document = files.load_json(path, JSON_MAX_BYTES)
            except files.FileProblem as e:
                self.error = "cannot %s: %s" % ("read" if e.kind == "io" else "parse", e)
            else:
                if isinstance(document, dict):
                    self.ops = document
                else:
                    self.error = "top level is a JSON %s, not an object" % type(document).__name__

    def as_dict(self):
        return {"path": self.path, "role": self.role, "exists": self.exists,
                "error": self.error, "ops": sorted(self.ops) if self.ops else []}


class Lookup(object):
    """Whether one program would treat ``op_type`` as NPU-supported, and why."""

    def __init__(self, program, op_type):
        self.program = program
        self.op_type = op_type
        self.supported = False
        self.source = None  # the file whose entry decided it
        self.value = None  # the entry's JSON value (TF1 merges values; TF2 only keys)
        self.reads = []  # JsonRead, in the order the program reads them
        self.notes = []  # why entries were skipped, layout facts

    def as_dict(self):
        return {"program": self.program, "op": self.op_type, "supported": self.supported,
                "source": self.source, "value": self.value, "notes": list(self.notes),
                "reads": [r.as_dict() for r in self.reads]}


def opp_layout(opp_path):
    """``"new"`` when ``<opp_path>/built-in`` is a folder (CANN's current layout), else ``"old"``.

    Both adapters and GE test exactly this (``IsNewOppPathStruct``).
    """
    return "new" if os.path.isdir(opp_path + "/built-in") else "old"


def tf1_opp_path(environ=None):
    """The OPP path TF1's adapter uses: ``ASCEND_OPP_PATH`` or ``/usr/local/Ascend/opp``."""
    value = _environ(environ).get(OPP_PATH_VAR)
    if value is not None and len(value) < _ADAPTER_ENV_MAX_LENGTH:
        return value
    return TF1_DEFAULT_OPP_PATH


def _vendors(opp_path):
    """Vendors listed in ``<opp>/vendors/config.ini`` (first line ``load_priority=a,b``),
    or None when the file is missing or malformed."""
    try:
        text = files.read_text(opp_path + "/vendors/config.ini", _CONFIG_MAX_BYTES)
    except files.FileProblem:
        return None
    line = text.split("\n", 1)[0]  # std::getline drops only the newline
    parts = line.split("=")
    if not line or len(parts) != 2:
        return None
    names = [name.strip(" ") for name in parts[1].split(",")]
    return names or None


def tf1_lookup(op_type, environ=None, mix_compile_mode=False):
    """TF1 (``npu_bridge``): would ``op_type`` be placed on the NPU?

    Replicates tf_adapter/util/npu_ops_identifier.cc: with the new OPP layout, read the
    built-in JSON, then ``<entry>/framework/tensorflow/npu_supported_ops.json`` for every
    non-empty ``ASCEND_CUSTOM_OPP_PATH`` entry that is a folder, in order, then the vendor
    JSONs of ``vendors/config.ini`` (or ``framework/custom`` without it); with the old
    layout, only ``framework/custom``: the custom path is ignored. Later files override
    earlier ones key by key. The op is supported when its value is a JSON object; in
    mix-compile mode ``"isGray": true`` keeps it on the CPU.
    """
    environ = _environ(environ)
    result = Lookup("TF1 adapter (npu_bridge)", op_type)
    opp_path = tf1_opp_path(environ)
    if environ.get(OPP_PATH_VAR) is None:
        result.notes.append("ASCEND_OPP_PATH is unset: TF1 uses %s" % TF1_DEFAULT_OPP_PATH)
    layout = opp_layout(opp_path)
    if layout == "old":
        result.notes.append(
            "%s/built-in is not a folder (old OPP layout): ASCEND_CUSTOM_OPP_PATH is ignored"
            % opp_path)
        result.reads.append(JsonRead(opp_path + _OLD_BUILTIN_JSON, "built-in"))
        result.reads.append(JsonRead(opp_path + _OLD_CUSTOM_JSON, "opp-custom"))
    else:
        result.reads.append(JsonRead(opp_path + _NEW_BUILTIN_JSON, "built-in"))
        custom = environ.get(CUSTOM_OPP_PATH_VAR)
        if not custom:
            result.notes.append("ASCEND_CUSTOM_OPP_PATH is %s" % ("empty" if custom == "" else "unset"))
        for entry in _split(custom or ""):
            if entry and os.path.isdir(entry):
                result.reads.append(JsonRead(entry + _CUSTOM_JSON, "entry"))
            else:
                result.notes.append("ASCEND_CUSTOM_OPP_PATH entry %r skipped: %s" % (
                    entry, "empty" if not entry else "not a folder"))
        vendors = _vendors(opp_path)
        if vendors is None:
            result.reads.append(JsonRead(opp_path + _OLD_CUSTOM_JSON, "opp-custom"))
        else:
            for vendor in vendors:
                result.reads.append(JsonRead(
                    "%s/vendors/%s%s" % (opp_path, vendor, _CUSTOM_JSON), "vendor"))
    merged, source = {}, {}
    for read in result.reads:
        for key, value in (read.ops or {}).items():
            merged[key] = value
            source[key] = read.path
    if op_type in merged:
        result.value, result.source = merged[op_type], source[op_type]
        if not isinstance(result.value, dict):
            result.notes.append("%s maps %s to %s, not a JSON object" % (
                result.source, op_type, json.dumps(result.value)))
        elif mix_compile_mode and result.value.get("isGray") is True:
            result.notes.append("isGray is true: kept on the CPU in mix-compile mode")
        else:
            result.supported = True
    return result


def tf2_lookup(op_type, environ=None):
    """TF2 (``npu_device``): would ``op_type`` be placed on the NPU?

    Replicates tf_adapter_2.x/npu_device/core/npu_device.cpp,
    ``NpuDevice::LoadCustomSupportedOps``: for every non-empty ``ASCEND_CUSTOM_OPP_PATH``
    entry whose ``framework/tensorflow/npu_supported_ops.json`` exists, every top-level
    key counts (values are not looked at), whatever the OPP layout.
    """
    environ = _environ(environ)
    result = Lookup("TF2 adapter (npu_device)", op_type)
    custom = environ.get(CUSTOM_OPP_PATH_VAR)
    if not custom:
        result.notes.append("ASCEND_CUSTOM_OPP_PATH is %s" % ("empty" if custom == "" else "unset"))
    for entry in _split(custom or ""):
        path = entry + _CUSTOM_JSON
        if entry and os.path.isfile(path):
            read = JsonRead(path, "entry")
            result.reads.append(read)
            if read.ops is not None and op_type in read.ops and not result.supported:
                result.supported, result.source = True, path
                result.value = read.ops[op_type]
        else:
            result.notes.append("ASCEND_CUSTOM_OPP_PATH entry %r skipped: %s" % (
                entry, "empty" if not entry else "no " + opp.SUPPORTED_OPS_JSON))
    return result


def _so_files(folder):
    """``GetFileListWithSuffix``: non-folder entries ending in ``.so``, in name order."""
    try:
        real = os.path.realpath(folder)
        names = sorted(os.listdir(real)) if os.path.isdir(real) else []
    except OSError:
        return []
    return [folder.rstrip("/") + "/" + name for name in names
            if name.endswith(".so") and not _is_real_dir(os.path.join(real, name))]


def _is_real_dir(path):
    # d_type of a symlink is DT_LNK, so GE only skips real folders.
    return os.path.isdir(path) and not os.path.islink(path)


class GeLibraries(object):
    """The custom-op libraries GE would dlopen (``RTLD_NOW``; one failure fails GE init)."""

    def __init__(self, arch):
        self.arch = arch
        self.libraries = []  # (path, entry) in load order
        self.notes = []

    def from_entry(self, entry):
        return [path for path, e in self.libraries if e == entry]

    def as_dict(self):
        return {"arch": self.arch, "notes": list(self.notes),
                "libraries": [{"path": p, "entry": e} for p, e in self.libraries]}


def ge_custom_op_libraries(environ=None, arch=None):
    """GE: the custom-op libraries it loads at initialisation, in order.

    Replicates graph_metadef/register/op_lib_register.cc, ``GetAllCustomOpApiSoPaths``:
    for every non-empty ``ASCEND_CUSTOM_OPP_PATH`` entry, ``<entry>/libcust_opapi.so`` if it
    exists, then every ``*.so`` directly in ``<entry>/op_graph/lib/linux/<arch>/``.
    ``arch`` is the host's (GE reads it from CANN's ``scene.info``).
    """
    environ = _environ(environ)
    result = GeLibraries(arch or opp.host_arch())
    custom = environ.get(CUSTOM_OPP_PATH_VAR)
    if not custom:
        result.notes.append("ASCEND_CUSTOM_OPP_PATH is %s" % ("empty" if custom == "" else "unset"))
    for entry in _split(custom or ""):
        if not entry:
            continue
        opapi = entry + "/" + CUST_OPAPI_SO
        if os.path.exists(opapi):
            result.libraries.append((os.path.realpath(opapi), entry))
        folder = "%s/%s/" % (entry, opp.ge_library_dir(result.arch))
        for path in _so_files(folder):
            result.libraries.append((path, entry))
    return result


def ge_parser_plugins(environ=None):
    """GE's TF parser: the plugin libraries it loads from custom OPP roots.

    Replicates parser/parser/common/tbe_plugin_loader.cc (``GetCustomOpPath``,
    ``FindParserSo``) with graph_metadef's ``GetPluginPathFromCustomOppPath``: only with
    the new OPP layout (``ASCEND_OPP_PATH/built-in``), for every entry with a
    ``framework/`` folder, every ``*.so`` below it, recursively. Returns
    ``(libraries, notes)``; ``libraries`` are ``(path, entry)`` pairs.
    """
    environ = _environ(environ)
    notes, libraries = [], []
    opp_path = environ.get(OPP_PATH_VAR)
    if not opp_path:
        notes.append("ASCEND_OPP_PATH is unset: GE derives it from its install folder; "
                     "custom parser plugins are only searched with the new OPP layout")
        return libraries, notes
    if opp_layout(opp_path) == "old":
        notes.append("%s/built-in is not a folder (old OPP layout): GE's parser ignores "
                     "ASCEND_CUSTOM_OPP_PATH" % opp_path)
        return libraries, notes
    for entry in _split(environ.get(CUSTOM_OPP_PATH_VAR) or ""):
        framework = entry + "/framework/"
        if not entry or not os.path.isdir(framework):
            continue
        # FindParserSo follows symlinks (realpath + stat); GE also checks <entry>/version.info
        # against its ABI range when present (IsVendorVersionValid): we ship none. A folder
        # reached twice (a symlink cycle) is walked once.
        seen = set()
        for folder, dirs, names in os.walk(os.path.realpath(framework), followlinks=True):
            try:
                info = os.stat(folder)
            except OSError:
                dirs[:] = []
                continue
            if (info.st_dev, info.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((info.st_dev, info.st_ino))
            dirs.sort()
            for name in sorted(names):
                if name.endswith(".so") and not name.endswith("lib_caffe_parser.so"):
                    libraries.append((os.path.join(folder, name), entry))
    return libraries, notes


# op_lib_register.h: REGISTER_OP_LIB constructs a ge::OpLibRegister; a library that does so
# names the class's mangled symbols in its dynamic symbol table.
OP_LIB_REGISTER_SYMBOL = b"_ZN2ge13OpLibRegister"


def registers_vendor_folder(path, chunk_size=1 << 20):
    """Whether the library at ``path`` calls ``ge::OpLibRegister`` (registers a vendor op-lib
    init function); False when it cannot be read or is no regular file (opened without
    blocking: a FIFO named ``*.so`` never hangs doctor)."""
    keep = len(OP_LIB_REGISTER_SYMBOL) - 1
    tail = b""
    try:
        fd, _ = files.open_regular(path)
    except files.FileProblem:
        return False
    try:
        with os.fdopen(fd, "rb") as f:
            while True:
                block = f.read(chunk_size)
                if not block:
                    return False
                window = tail + block
                if OP_LIB_REGISTER_SYMBOL in window:
                    return True
                tail = window[-keep:]
    except (IOError, OSError):
        return False


def not_regular_libraries(libraries):
    """``[(path, what it is)]`` for the libraries of :func:`ge_custom_op_libraries` that are
    not regular files (a FIFO, a device, a dangling link): GE would dlopen each, and a FIFO
    would block it at initialisation. Looked at with ``lstat``/``stat`` only."""
    found = []
    for path, _entry in libraries:
        try:
            info = os.stat(path)
        except OSError as e:
            found.append((path, "cannot be read (%s)" % (e.strerror or e)))
            continue
        if not stat.S_ISREG(info.st_mode):
            found.append((path, files.describe_mode(info.st_mode)))
    return found


class CustomOpLibPath(object):
    """GE's custom OPP search path: the folders of vendor libraries, then the entries."""

    def __init__(self, arch):
        self.vendor_libraries = []  # (path, entry): each puts a folder in front, in load order
        self.entries = []  # the non-empty ASCEND_CUSTOM_OPP_PATH entries, in order
        self.libraries = GeLibraries(arch)

    def as_dict(self):
        return {"vendor_libraries": [{"path": p, "entry": e} for p, e in self.vendor_libraries],
                "entries": list(self.entries), "libraries": self.libraries.as_dict()}


def ge_custom_op_lib_path(environ=None, arch=None):
    """GE's ``aclGetCustomOpLibPath()``, as far as it can be known before GE runs.

    Replicates graph_metadef/register/op_lib_register.cc, ``PreProcessForCustomOp``: GE
    loads the libraries of :func:`ge_custom_op_libraries`, calls the init function of every
    vendor library among them, and searches ``<folder of each>:...:ASCEND_CUSTOM_OPP_PATH``.
    """
    environ = _environ(environ)
    result = CustomOpLibPath(arch or opp.host_arch())
    result.libraries = ge_custom_op_libraries(environ, result.libraries.arch)
    result.vendor_libraries = [(p, e) for p, e in result.libraries.libraries
                               if registers_vendor_folder(p)]
    result.entries = [e for e in _split(environ.get(CUSTOM_OPP_PATH_VAR) or "") if e]
    return result


# tensorflow_custom_op_parser.cc: the online TF parse compiles, for every REG_AUTO_MAPPING_OP
# node type, a REG_OP generated from the node's OpDef (docs/cann.md).
ONLINE_COMPILE_HEADERS = ("graph/operator_reg.h", "register/register.h", "graph/operator.h")
ONLINE_COMPILE_LIBRARIES = ("libregister.so", "libgraph.so", "libruntime.so")
# kSafePathRegex: GE refuses to run the compile when a path does not match.
_GE_SAFE_PATH = re.compile(r"^(?!.*\.{2})[A-Za-z0-9./+\-_]+$")


# The three things GE's online REG_OP compile needs, each its own doctor line.
COMPILER, TOOLKIT, WORKING_DIRECTORY = "g++", "ASCEND_HOME_PATH", "working directory"
ONLINE_COMPILE_NEEDS = (COMPILER, TOOLKIT, WORKING_DIRECTORY)


class OnlineCompile(object):
    """What GE's online REG_OP compile would find: ``problems`` is empty when it can run."""

    def __init__(self):
        self.compiler = None  # g++ as found on PATH
        self.home = None  # ASCEND_HOME_PATH
        self.cwd = None
        self.problems = []  # (need, what, fix): need is one of ONLINE_COMPILE_NEEDS

    def of(self, need):
        """The (what, fix) pairs of one need."""
        return [(what, fix) for n, what, fix in self.problems if n == need]

    def as_dict(self):
        return {"compiler": self.compiler, "ascend_home": self.home, "cwd": self.cwd,
                "problems": [what for _, what, _ in self.problems]}


def ge_online_compile(environ=None, cwd=None, which=None, source_cann=None):
    """GE's TF parser, online path: can it compile the ``REG_OP`` it generates?

    Replicates parser/parser/tensorflow/tensorflow_custom_op_parser.cc (``GetCompilePath``,
    ``CompileCustomOpFiles``, ``ParseCustomOp``): ``g++`` from ``PATH``, run on files in
    ``./custom_op_tmp_<pid>/`` of the working directory, with ``-I $ASCEND_HOME_PATH/include/``
    (for the three headers the generated code includes) and ``-L $ASCEND_HOME_PATH/lib64/
    -lregister -lgraph -lruntime``; both folders must pass GE's safe-path rule, and GE leaves
    one out when ``ASCEND_HOME_PATH`` already contains ``include/`` or ``lib64/``.
    ``source_cann`` is the fix that sets up CANN's environment (doctor names the set_env.sh
    it found).
    """
    import shutil

    environ = _environ(environ)
    which = which or shutil.which
    result = OnlineCompile()
    result.cwd = cwd or os.getcwd()
    result.compiler = which("g++", path=environ.get("PATH", os.defpath))
    if result.compiler is None:
        result.problems.append((COMPILER, "g++ is not on PATH", "install g++ (e.g. apt-get install g++)"))
    source = source_cann or "source the set_env.sh of your CANN install"
    home = environ.get("ASCEND_HOME_PATH")
    result.home = home
    if not home:
        result.problems.append((TOOLKIT, "ASCEND_HOME_PATH is unset", source))
    elif not os.path.isdir(home):
        result.problems.append((TOOLKIT, "ASCEND_HOME_PATH=%s is not a folder" % home, source))
    else:
        folder = home if home.endswith("/") else home + "/"
        for sub in ("include/", "lib64/"):
            if sub in folder:
                result.problems.append((TOOLKIT, "ASCEND_HOME_PATH=%s contains %r, so GE passes no %s "
                                        "folder to g++" % (home, sub, "-I" if sub == "include/" else "-L"),
                                        "set ASCEND_HOME_PATH to the toolkit folder: " + source))
        if not _GE_SAFE_PATH.match(folder + "include/"):
            result.problems.append((TOOLKIT, "ASCEND_HOME_PATH=%s has '..' or characters GE refuses in the "
                                    "compile command (it allows A-Za-z0-9./+-_)" % home,
                                    "install CANN under such a path, or point ASCEND_HOME_PATH at a "
                                    "link that has one"))
        missing = [os.path.join(home, "include", h) for h in ONLINE_COMPILE_HEADERS
                   if not os.path.isfile(os.path.join(home, "include", h))]
        missing += [os.path.join(home, "lib64", l) for l in ONLINE_COMPILE_LIBRARIES
                    if not os.path.isfile(os.path.join(home, "lib64", l))]
        if missing:
            result.problems.append((TOOLKIT, "missing under ASCEND_HOME_PATH: %s" % ", ".join(missing),
                                    "point ASCEND_HOME_PATH at a full CANN toolkit: " + source))
    if not (os.path.isdir(result.cwd) and os.access(result.cwd, os.W_OK | os.X_OK)):
        result.problems.append((WORKING_DIRECTORY, "the working directory %s is not writable (GE writes "
                                "custom_op_tmp_<pid>/ there)" % result.cwd,
                                "run the program from a writable directory"))
    return result
