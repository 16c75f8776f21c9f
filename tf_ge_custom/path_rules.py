"""How TF Adapter (TF1 and TF2) and GE find custom-op files: their rules, replicated.

Each function follows one program's search rules over the real file system and a given
environment, and returns what that program would read or load, so that
``tf-ge-custom doctor`` can say *why* ``AddCustom`` would or would not be found. The rules
were read off the public sources (hicann/tensorflow, hicann/ge, 2026-11); each function
names the file it replicates. Pure standard library.

Deliberate simplifications (say so in doctor's output where they matter):
- ``aclGetCustomOpLibPath()`` is modelled as ``ASCEND_CUSTOM_OPP_PATH`` itself. GE puts
  the folders of vendors registered through ``libcust_opapi.so`` init functions in front
  of it (graph_metadef/register/op_lib_register.cc, ``CallInitFunc``); we ship none.
- A JSON file that does not parse contributes no ops; nor does one that is not a regular
  file, larger than :data:`JSON_MAX_BYTES` or nested deeper than 512 levels (read through
  :mod:`tf_ge_custom.files`, so a FIFO never blocks doctor and no depth crashes it).
"""
import json
import os

from . import files, opp

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
