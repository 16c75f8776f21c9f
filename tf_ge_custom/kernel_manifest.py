"""Read, check and write kernel manifests (docs/kernel-manifest.md, format version 2,
entry naming 2).

One ``manifest.json`` per SoC describes how to load and launch each precompiled npubin
beside it. This module is the one full validator: ``setup.py`` refuses a bad manifest with
it, the kernel builder validates what it is about to write with it, and ``list-kernels`` and
``doctor`` report with it. The GE library reads the fields it uses with a thin C++ reader
that keeps the checks its safety rests on; both check every object's keys and their JSON
kinds by one list of rules (``kernel_contract.MANIFEST_FIELDS``), and the shared fixtures
under ``tests/fixtures/manifests/`` hold both to the same verdicts.

The records (:class:`KernelEntry`, :class:`ArgLayout`, :class:`ArgSlot`) are also what the
kernel builder produces; :func:`manifest_document` turns them into the JSON it writes.

Pure Python (no TensorFlow, no Triton), Python 3.7 syntax.

Checks run in this order and the first failing class is reported:
io (the file cannot be read), syntax, version, outdated (a set of another entry naming: not
damaged, of another release), schema, layout, mismatch, checksum (layout checks that need the
op definition are left to ``mismatch`` when the op is unknown).
"""
import json
import os
import re
from typing import NamedTuple, Optional, Tuple

from . import _files as files, kernel_contract, op_def
from .errors import ManifestError
# The constants shared with the GE library's C++ core (generated into kernel_contract.h).
from .kernel_contract import (ATTR_ROLES, DIM_ROLES, INDEX_LIMIT, INDEXED_ROLES, INTEGER_ROLES,
                              MAGIC_BY_MIX_MODE, MANIFEST_FORMAT as FORMAT, MANIFEST_NAME,
                              MANIFEST_VERSION as VERSION, MAX_GRID, POINTER_ROLES, ROLES,
                              SINGLE_ROLES as _SINGLE_ROLES)

__all__ = [
    "FORMAT", "VERSION", "MANIFEST_NAME", "MAGIC_BY_MIX_MODE", "ManifestError",
    "KernelManifest", "KernelEntry", "ArgLayout", "ArgSlot",
    "load_manifest", "parse_manifest", "validate_document", "find_manifests",
    "find_manifests_in", "normalized", "manifest_document", "param_slot_key", "entry_naming_of",
    "combined_source_sha256",
]

# The C++ reader's limits (ge_ops/core/src/manifest.cc), so both give one verdict.
MAX_MANIFEST_BYTES = 16 << 20
MAX_BINARY_BYTES = 1 << 30
MAX_DEPTH = files.MAX_JSON_DEPTH
_INT64 = (-2 ** 63, 2 ** 63 - 1)  # both readers hold integers as int64
_SOC_RE = re.compile(r"^[A-Za-z0-9_]+$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")

# "dav-<NpuArch>" (kernels/socs.py): optional, since manifests written before it lack it.
_ARCH_RE = re.compile(r"^dav-[0-9a-z]+$")
# The JSON kind of each key, shared with the GE library (kernel_contract.MANIFEST_FIELDS).
_KIND = {"string": "str", "sha256": "sha256", "integer": "int", "boolean": "bool", "array": "list",
         "object": "dict"}

class ArgSlot(NamedTuple):
    name: str
    role: str
    index: Optional[int]  # input / output / input_stride: which kernel operand
    dim: Optional[int]  # dim / input_stride: which dimension of the launch's frame
    offset: int
    size: int

    def to_json(self):
        out = {"name": self.name, "role": self.role}
        if self.index is not None:
            out["index"] = self.index
        if self.dim is not None:
            out["dim"] = self.dim
        out.update(offset=self.offset, size=self.size)
        return out


class ArgLayout(NamedTuple):
    """The packed host-argument struct of one kernel, as the compiler emitted it."""

    size: int
    has_ffts: bool
    slots: Tuple[ArgSlot, ...]

    def slot(self, role, index=None, dim=None):
        for s in self.slots:
            if s.role == role and s.index == index and s.dim == dim:
                return s
        return None

    def to_json(self):
        return {"size": self.size, "has_ffts": self.has_ffts,
                "slots": [s.to_json() for s in self.slots]}


class KernelEntry(NamedTuple):
    """One npubin: an (op, kernel variant, dtype) compiled for the manifest's SoC."""

    op: str
    variant: str
    dtype: str
    entry: str
    binary: Optional[str]
    binary_size: Optional[int]
    sha256: Optional[str]
    mix_mode: str
    magic: str
    block: Tuple[int, ...]
    max_programs: int
    max_grid: int
    max_elements_per_launch: int
    workspace_size: int
    lock_num: int
    lock_init_val: int
    args: ArgLayout

    @property
    def block_elements(self):
        return kernel_contract.block_elements(self.block)

    def to_json(self):
        return {
            "op": self.op, "variant": self.variant, "dtype": self.dtype, "entry": self.entry,
            "binary": self.binary, "binary_size": self.binary_size, "sha256": self.sha256,
            "mix_mode": self.mix_mode, "magic": self.magic, "block": list(self.block),
            "grid": {"max_programs": self.max_programs, "max_grid": self.max_grid},
            "max_elements_per_launch": self.max_elements_per_launch,
            "workspace_size": self.workspace_size, "lock_num": self.lock_num,
            "lock_init_val": self.lock_init_val, "args": self.args.to_json(),
        }


def combined_source_sha256(kernel_sources):
    """The ``kernel_source_sha256`` of a set whose ops' kernels come from several source
    files: sha256 of one line ``<op type> <sha256 of its source>\n`` per op, in sorted op
    order (``kernel_sources``: {op type: sha256})."""
    import hashlib

    text = "".join("%s %s\n" % (op, kernel_sources[op]) for op in sorted(kernel_sources))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_document(soc, vector_core_count, toolchain, kernel_source_sha256, kernels,
                      architecture=None):
    """The manifest JSON object for ``kernels`` (a sequence of :class:`KernelEntry`);
    ``architecture`` (``"dav-2201"``) lets a board of that architecture take these kernels
    when none are built for its own SoC name (docs/kernels.md).

    ``kernel_source_sha256``: the sha256 of the one kernel source file every kernel comes
    from, or a dict {op type: sha256 of that op's source}: with one distinct digest it is
    written as the one source (the document of a single source file is unchanged); with
    several, as ``kernel_sources`` with their :func:`combined_source_sha256`."""
    kernel_sources = None
    if isinstance(kernel_source_sha256, dict):
        if len(set(kernel_source_sha256.values())) == 1:
            kernel_source_sha256 = next(iter(kernel_source_sha256.values()))
        else:
            kernel_sources = dict(sorted(kernel_source_sha256.items()))
            kernel_source_sha256 = combined_source_sha256(kernel_sources)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "entry_naming": kernel_contract.ENTRY_NAMING,
        "soc": soc,
    }
    if architecture is not None:
        document["architecture"] = architecture
    document.update({
        "vector_core_count": vector_core_count,
        "toolchain": dict(toolchain),
        "kernel_source_sha256": kernel_source_sha256,
    })
    if kernel_sources is not None:
        document["kernel_sources"] = kernel_sources
    document["kernels"] = [k.to_json() for k in kernels]
    return document


def param_slot_key(param, op=None):
    """The (role, index, dim) a kernel parameter of op_def (``input:1``, ``num_elements``,
    ``input_stride:0:2``, ``attr:alpha``) occupies in the host-argument layout; an ``attr``
    slot's index is the attribute's position in ``op``'s attributes (an op_def.OpDefinition,
    needed for those only)."""
    parts = param.split(":")
    role = parts[0]
    if role in ATTR_ROLES:
        names = [a.name for a in op.attrs] if op is not None else []
        if len(parts) != 2 or parts[1] not in names:
            raise ValueError("not a kernel parameter role: %r (%s)" % (
                param, "an attr:<name> parameter needs its op" if op is None else
                "%s's attributes are %s" % (op.type_name, ", ".join(names) or "none")))
        return role, names.index(parts[1]), None
    numbers = [int(p) for p in parts[1:]]
    index = numbers.pop(0) if role in INDEXED_ROLES else None
    dim = numbers.pop(0) if role in DIM_ROLES else None
    if role not in ROLES or numbers:
        raise ValueError("not a kernel parameter role: %r" % param)
    return role, index, dim


class KernelManifest(object):
    """A validated manifest. ``document`` is the parsed JSON object."""

    def __init__(self, document, kernels, path=None):
        self.document = document
        self.kernels = kernels
        self.path = path
        # where the binaries are (see load_manifest)
        self.directory = _locations(path)[1] if path else None

    @property
    def soc(self):
        return self.document["soc"]

    @property
    def vector_core_count(self):
        return self.document["vector_core_count"]

    @property
    def entry_naming(self):
        """The entry naming the set was written under (always this package's: another is
        refused as ``outdated``)."""
        return entry_naming_of(self.document)

    @property
    def architecture(self):
        """``"dav-2201"``, or None for a manifest that does not record it."""
        return self.document.get("architecture")

    @property
    def toolchain(self):
        return dict(self.document["toolchain"])

    @property
    def kernel_source_sha256(self):
        return self.document["kernel_source_sha256"]

    def source_sha256(self, op):
        """The sha256 of the kernel source file ``op``'s (a type name) kernels were built
        from: its ``kernel_sources`` entry, else the set's one source."""
        return self.document.get("kernel_sources", {}).get(op, self.kernel_source_sha256)

    @property
    def ir_only(self):
        """True when no kernel carries a binary (written by ``build-kernels --ir-only``)."""
        return all(k.binary is None for k in self.kernels)

    def kernel(self, op, variant, dtype):
        """The entry for (``op``, ``variant``, ``dtype``), or ``None``."""
        for k in self.kernels:
            if (k.op, k.variant, k.dtype) == (op, variant, dtype):
                return k
        return None

    def dtypes(self, op=None):
        """Dtypes with at least one kernel (with a binary unless the manifest is IR-only),
        in file order."""
        return list(dict.fromkeys(k.dtype for k in self.kernels if op is None or k.op == op))

    def missing_variants(self, op, dtype):
        """The variants of ``op`` (an op_def.OpDefinition) this manifest lacks for ``dtype``:
        the GE library refuses a call that needs one of them."""
        have = set(k.variant for k in self.kernels if (k.op, k.dtype) == (op.type_name, dtype))
        return [v.name for v in op.kernel.variants if v.name not in have]

    def binary_path(self, entry):
        if entry.binary is None or self.directory is None:
            return None
        return os.path.join(self.directory, entry.binary)

    def normalized(self):
        return normalized(self.document)

    def __repr__(self):
        return "KernelManifest(soc=%r, kernels=%r)" % (
            self.soc, [(k.op, k.dtype) for k in self.kernels])


def normalized(document):
    """The comparison form both readers print: sorted keys, no insignificant whitespace."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------------------------------
# entry points

def load_manifest(path, check_files=True, expected_soc=None, trust_rule=False):
    """Read, validate and return the manifest at ``path``.

    ``<dir>/manifest.json`` sits in its SoC folder: ``soc`` must equal the folder's name
    (``expected_soc`` overrides) and the binaries are beside it. Any other
    ``<dir>/<name>.json`` (the shared fixtures, a copy) gets no folder check and keeps its
    binaries in ``<dir>/<name>/``. Binaries are checked only when ``check_files`` is true.
    With ``trust_rule`` (a kernel set from the per-user cache or a kernel bundle, not the
    package's own) the manifest and each binary must pass :func:`tf_ge_custom._trust.check`
    first (kind ``trust``). Raises :class:`ManifestError`.
    """
    path = os.fspath(path)
    if trust_rule:
        _check_trusted(path)
    try:
        raw = files.read_bytes(path, MAX_MANIFEST_BYTES)
    except files.FileProblem as e:
        raise ManifestError("io", "cannot read the manifest: %s" % e, path)
    directory, binary_dir = _locations(path)
    if expected_soc is None and os.path.basename(path) == MANIFEST_NAME:
        expected_soc = os.path.basename(directory)
    manifest = parse_manifest(raw, path=path, expected_soc=expected_soc, directory=None)
    if check_files:
        _check_files(manifest.kernels, binary_dir, path, trust_rule)
    return manifest


def _check_trusted(file_path, manifest_path=None, what=""):
    from . import _trust as trust

    refusal = trust.check(file_path, trust.FILE)
    if refusal is not None:
        raise ManifestError("trust", "%snot trusted: %s" % (what, refusal), manifest_path or file_path)


def _locations(path):
    """(folder of the file, folder of its binaries) for a manifest path."""
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if name == MANIFEST_NAME:
        return directory, directory
    return directory, os.path.join(directory, os.path.splitext(name)[0])


def parse_manifest(text, path=None, expected_soc=None, directory=None):
    """Validate manifest ``text`` (str or bytes); binaries are checked when ``directory`` is given."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ManifestError("syntax", "not UTF-8 text: %s" % e, path)
    try:
        document = files.parse_json(text, "the manifest", MAX_DEPTH,
                                    object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as e:  # valid JSON text, but the schema allows each key once
        raise ManifestError("schema", str(e), path)
    except files.FileProblem as e:
        raise ManifestError("syntax", str(e), path)
    return validate_document(document, path=path, expected_soc=expected_soc,
                             directory=directory)


def validate_document(document, path=None, expected_soc=None, directory=None):
    """Validate a parsed manifest object; see :func:`load_manifest`."""
    if not isinstance(document, dict):
        raise ManifestError("syntax", "the top level must be a JSON object, found %s"
                            % _json_type(document), path)
    _check_version(document, path)
    _check_entry_naming(document, path)
    kernels = _check_schema(document, path)
    for k in kernels:
        _check_layout(k, path)
    _check_mismatch(document, kernels, expected_soc, path)
    manifest = KernelManifest(document, tuple(kernels), path)
    if directory is not None:
        _check_files(kernels, directory, path)
    return manifest


def find_manifests_in(kernels_dir):
    """``{soc: path}`` for each ``kernels_dir/<SoC>/manifest.json`` (sorted by SoC).

    Every ``manifest.json`` that exists in any form is listed, whatever it is (a folder, a
    FIFO, a symlink loop): :func:`load_manifest` then refuses it with the reason, rather
    than the SoC silently having no kernels. A SoC entry that is itself a symlink loop or
    dangling link is listed too. Regular files beside the SoC folders (notes) are not SoCs.
    """
    found = {}
    if not os.path.isdir(kernels_dir):
        return found
    for name in sorted(os.listdir(kernels_dir)):
        entry = os.path.join(kernels_dir, name)
        candidate = os.path.join(entry, MANIFEST_NAME)
        if os.path.lexists(candidate):
            found[name] = candidate
        elif os.path.islink(entry) and not os.path.exists(entry):
            found[name] = candidate  # a loop or a dangling link where a SoC folder was
    return found


def find_manifests(opp_root):
    """``{soc: path}`` for every ``<opp_root>/kernels/<SoC>/manifest.json``."""
    return find_manifests_in(os.path.join(opp_root, "kernels"))


# ---------------------------------------------------------------------------------------
# checks

class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs):
    # JSON libraries disagree on which duplicate wins; refusing them keeps readers equal.
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey("an object repeats the key %r; each key may appear once" % key)
        obj[key] = value
    return obj


def _json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction or exponent"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _check_version(doc, path):
    for key in ("format", "version"):  # absent is a schema error; present but other, version
        if key not in doc:
            raise ManifestError("schema", "manifest: missing key %r" % key, path)
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise ManifestError("version", "expected \"format\": %r, found %s; this is not a "
                            "tf-ge-custom kernel manifest" % (FORMAT, json.dumps(fmt)), path)
    version = doc.get("version")
    if isinstance(version, bool) or version != VERSION:
        raise ManifestError("version", "manifest format version %s, but this reader knows only "
                            "version %d; rebuild the kernels with this package's "
                            "tf-ge-custom build-kernels" % (json.dumps(version), VERSION), path)


def entry_naming_of(document):
    """The entry naming a manifest document was written under (kernel_contract.ENTRY_NAMING):
    its ``entry_naming``, or, for one written before the field, what its entries show: 1
    when every kernel of a known op and variant is named after the variant's @triton.jit
    function (the first naming), else the current one (the entries are then checked one by
    one). ``None`` when ``entry_naming`` is not a count (a schema error)."""
    if "entry_naming" in document:
        value = document["entry_naming"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _INT64[1]:
            return None  # as the GE library reads it: a count that fits in 64 bits
        return value
    items = document.get("kernels")
    if not isinstance(items, list) or not items:
        return kernel_contract.ENTRY_NAMING
    for item in items:
        if not isinstance(item, dict):
            return kernel_contract.ENTRY_NAMING
        variant = _variant_or_none(item.get("op"), item.get("variant"))
        if variant is None or item.get("entry") != variant.function:
            return kernel_contract.ENTRY_NAMING
    return 1


def _check_entry_naming(doc, path):
    """A set written under another entry naming is not damaged, it is of another release:
    kind ``outdated``, which the GE library treats as absent (falling through to the cache or
    a compile) and doctor reports with its fix."""
    naming = entry_naming_of(doc)
    if naming is None:
        raise ManifestError("schema", "manifest: 'entry_naming' must be an integer >= 1, found %s"
                            % json.dumps(doc.get("entry_naming")), path)
    if naming != kernel_contract.ENTRY_NAMING:
        raise ManifestError("outdated", "the kernel set was built under entry naming %d (%s), and "
                            "this package launches kernels under entry naming %d "
                            "(tf_ge_custom_<op>_<variant>_<dtype>); it is not used: rebuild it "
                            "with this package's tf-ge-custom build-kernels"
                            % (naming, "each dtype's kernel named after its @triton.jit function, "
                               "by an earlier tf-ge-custom" if naming < kernel_contract.ENTRY_NAMING
                               else "by a newer tf-ge-custom", kernel_contract.ENTRY_NAMING), path)


class _Schema(object):
    """Typed access to one JSON object; every failure is a ``schema`` ManifestError."""

    def __init__(self, obj, where, path, name):
        """``name``: the object's name in kernel_contract.MANIFEST_FIELDS, whose rules for
        it (the keys allowed, each key's kind and presence) are checked here, in their order,
        as the GE library checks them."""
        self.where, self.path = where, path
        if not isinstance(obj, dict):
            self.fail("expected an object, found %s" % _json_type(obj))
        keys = kernel_contract.manifest_keys(name)
        unknown = sorted(set(obj) - set(keys))
        if unknown:
            self.fail("unknown key(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(keys)))
        self.obj = obj
        ir_only = []
        for rule_object, key, kind, presence, _ in kernel_contract.MANIFEST_FIELDS:
            if rule_object != name:
                continue
            nullable = presence in ("nullable", "ir_only")
            if kind == "sha256":
                self.hex_digest(key, nullable=nullable, optional=presence == "optional")
            else:
                self.get(key, _KIND[kind], nullable=nullable, optional=presence == "optional")
            if presence == "ir_only":
                ir_only.append(key)
        if len(set(obj[key] is None for key in ir_only)) > 1:
            named = ["'%s'" % key for key in ir_only]
            self.fail("%s and %s must be all null (IR-only) or all set"
                      % (", ".join(named[:-1]), named[-1]))

    def fail(self, message):
        raise ManifestError("schema", "%s: %s" % (self.where, message), self.path)

    def get(self, key, kind, nullable=False, optional=False):
        if key not in self.obj:
            if optional:
                return None
            self.fail("missing key %r" % key)
        value = self.obj[key]
        if value is None and nullable:
            return None
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "str": isinstance(value, str),
            "bool": isinstance(value, bool),
            "list": isinstance(value, list),
            "dict": isinstance(value, dict),
        }[kind]
        if not ok:
            self.fail("%r must be %s%s, found %s" % (
                key, {"int": "an integer", "str": "a string", "bool": "a boolean",
                      "list": "an array", "dict": "an object"}[kind],
                " or null" if nullable else "", _json_type(value)))
        if kind == "int" and not _INT64[0] <= value <= _INT64[1]:
            self.fail("%r = %d does not fit in 64 bits" % (key, value))
        return value

    def int_at_least(self, key, low, nullable=False, high=None):
        value = self.get(key, "int", nullable=nullable)
        if value is not None and (value < low or (high is not None and value > high)):
            self.fail("%r must be %s, found %d" % (
                key, ">= %d" % low if high is None else "in [%d, %d]" % (low, high), value))
        return value

    def int_at_least_optional(self, key):
        """An optional key: absent is ``None`` (only input/output slots carry ``index``)."""
        if key not in self.obj:
            return None
        return self.int_at_least(key, 0)

    def hex_digest(self, key, nullable=False, optional=False):
        value = self.get(key, "str", nullable=nullable, optional=optional)
        if value is not None and not _SHA256_RE.match(value):
            self.fail("%r must be 64 lowercase hex digits (sha256), found %r" % (key, value))
        return value


def _check_schema(doc, path):
    top = _Schema(doc, "manifest", path, "manifest")
    soc = top.get("soc", "str")
    if not _SOC_RE.match(soc):
        top.fail("'soc' must match [A-Za-z0-9_]+ (as --soc_version spells it), found %r" % soc)
    arch = top.get("architecture", "str", optional=True)
    if arch is not None and not _ARCH_RE.match(arch):
        top.fail("'architecture' must be dav-<NpuArch> (e.g. dav-2201), found %r" % arch)
    top.int_at_least("vector_core_count", 1)
    tc = _Schema(top.get("toolchain", "dict"), "toolchain", path, "toolchain")
    tc.get("triton_ascend", "str")
    tc.get("bishengir", "str")
    tc.get("cann", "str", nullable=True)
    source = top.hex_digest("kernel_source_sha256")
    sources = top.get("kernel_sources", "dict", optional=True)
    if sources is not None:
        for op, digest in sources.items():
            if not isinstance(digest, str) or not _SHA256_RE.match(digest):
                top.fail("'kernel_sources' maps each op type to the 64 lowercase hex digits of its "
                         "kernel source's sha256; %r has %r" % (op, digest))
        if source != combined_source_sha256(sources):
            top.fail("'kernel_source_sha256' of a set with 'kernel_sources' must be their "
                     "combined digest %s, found %s" % (combined_source_sha256(sources), source))
    items = top.get("kernels", "list")
    if not items:
        top.fail("'kernels' must hold at least one entry")
    kernels, seen, names = [], set(), {}
    for i, item in enumerate(items):
        k = _kernel_schema(item, "kernels[%d]" % i, path)
        if len(k.entry) > kernel_contract.MAX_ENTRY_NAME:
            # triton-ascend cuts a kernel's name to this many characters for the profiler
            raise ManifestError("schema", "kernels[%d] (%s/%s/%s): entry %r has %d characters, "
                                "more than the %d a kernel name may have"
                                % (i, k.op, k.variant, k.dtype, k.entry, len(k.entry),
                                   kernel_contract.MAX_ENTRY_NAME), path)
        if (k.op, k.variant, k.dtype) in seen:
            raise ManifestError("schema", "kernels[%d]: a second entry for (%s, %s, %s)"
                                % (i, k.op, k.variant, k.dtype), path)
        seen.add((k.op, k.variant, k.dtype))
        if k.entry in names:
            # GE keeps one binary per kernel name in a model: one of the two would run the
            # other's code (docs/kernel-manifest.md, "Entry names").
            raise ManifestError("schema", "kernels[%d] (%s/%s/%s): entry name %r is also the entry "
                                "of kernels[%d]; every kernel of a set needs its own entry name"
                                % (i, k.op, k.variant, k.dtype, k.entry, names[k.entry]), path)
        names[k.entry] = i
        kernels.append(k)
    if sources is not None and set(sources) != set(k.op for k in kernels):
        top.fail("'kernel_sources' must name exactly the ops of 'kernels' (%s), found %s"
                 % (", ".join(sorted(set(k.op for k in kernels))), ", ".join(sorted(sources))))
    return kernels


def _kernel_schema(item, where, path):
    e = _Schema(item, where, path, "kernel")
    op, variant = e.get("op", "str"), e.get("variant", "str")
    dtype, entry = e.get("dtype", "str"), e.get("entry", "str")
    binary = e.get("binary", "str", nullable=True)
    binary_size = e.int_at_least("binary_size", 0, nullable=True)
    sha = e.hex_digest("sha256", nullable=True)
    mix_mode = e.get("mix_mode", "str")
    if mix_mode not in MAGIC_BY_MIX_MODE:
        e.fail("'mix_mode' must be one of %s, found %r" % (", ".join(sorted(MAGIC_BY_MIX_MODE)),
                                                           mix_mode))
    magic = e.get("magic", "str")
    if magic != MAGIC_BY_MIX_MODE[mix_mode]:
        e.fail("'magic' must be %r for mix_mode %r, found %r"
               % (MAGIC_BY_MIX_MODE[mix_mode], mix_mode, magic))
    block = e.get("block", "list")
    if not 1 <= len(block) <= 2 or any(isinstance(b, bool) or not isinstance(b, int)
                                       or not 1 <= b <= 2 ** 30 for b in block):
        e.fail("'block' must be a list of 1 or 2 integers in [1, 2^30] (elements, or rows and "
               "columns, per loop iteration), found %s" % json.dumps(block))
    block = tuple(block)
    block_elements = 1
    for b in block:
        block_elements *= b
    g = _Schema(e.get("grid", "dict"), where + ".grid", path, "grid")
    max_programs = g.int_at_least("max_programs", 1)
    max_grid = g.int_at_least("max_grid", 1, high=MAX_GRID)
    per_launch = e.int_at_least("max_elements_per_launch", block_elements)
    if per_launch % block_elements:
        e.fail("'max_elements_per_launch' (%d) must be a multiple of the block's %d elements"
               % (per_launch, block_elements))
    workspace = e.int_at_least("workspace_size", 0)
    lock_num = e.int_at_least("lock_num", 0)
    lock_init = e.get("lock_init_val", "int")
    a = _Schema(e.get("args", "dict"), where + ".args", path, "args")
    size = a.int_at_least("size", 0)
    has_ffts = a.get("has_ffts", "bool")
    slots = []
    for j, raw in enumerate(a.get("slots", "list")):
        s = _Schema(raw, "%s.args.slots[%d]" % (where, j), path, "slot")
        name = s.get("name", "str")
        if not name:
            s.fail("'name' must not be empty")
        slots.append(ArgSlot(name, s.get("role", "str"), s.int_at_least_optional("index"),
                             s.int_at_least_optional("dim"), s.int_at_least("offset", 0),
                             s.int_at_least("size", 1)))
    return KernelEntry(op, variant, dtype, entry, binary, binary_size, sha, mix_mode, magic,
                       block, max_programs, max_grid, per_launch, workspace, lock_num,
                       lock_init, ArgLayout(size, has_ffts, tuple(slots)))


def _check_layout(k, path):
    where = "%s/%s/%s args" % (k.op, k.variant, k.dtype)

    def fail(message):
        raise ManifestError("layout", "%s: %s" % (where, message), path)

    slots, layout = k.args.slots, k.args
    for s in slots:
        if s.role not in ROLES:
            fail("slot %r has role %r; roles are %s" % (s.name, s.role, ", ".join(ROLES)))
        if (s.index is not None) != (s.role in INDEXED_ROLES):
            fail("slot %r (%s): %s slots carry an 'index', no other slot does"
                 % (s.name, s.role, "/".join(INDEXED_ROLES)))
        if (s.dim is not None) != (s.role in DIM_ROLES):
            fail("slot %r (%s): %s slots carry a 'dim', no other slot does"
                 % (s.name, s.role, "/".join(DIM_ROLES)))
        want = ((8,) if s.role in POINTER_ROLES else (4, 8) if s.role in INTEGER_ROLES
                else _attr_sizes(k.op, s.index) if s.role in ATTR_ROLES else (4,))
        if s.size not in want:
            fail("slot %r (%s) has size %d; expected %s" % (
                s.name, s.role, s.size, " or ".join(str(w) for w in want)))
        if s.offset % s.size:
            fail("slot %r: offset %d is not a multiple of its size %d" % (s.name, s.offset, s.size))
    end = 0
    for s in slots:
        if s.offset < end:
            fail("slot %r at offset %d overlaps or precedes the previous slot (which ends at %d); "
                 "slots are listed by increasing offset" % (s.name, s.offset, end))
        end = s.offset + s.size
    if end > layout.size:
        fail("the last slot ends at %d, past the struct size %d" % (end, layout.size))
    if layout.size != (end + 7) // 8 * 8:
        fail("struct size %d, but the slots end at %d, which rounds up to %d"
             % (layout.size, end, (end + 7) // 8 * 8))
    ffts = [s for s in slots if s.role == "ffts"]
    if layout.has_ffts != bool(ffts):
        fail("has_ffts is %s but %s ffts slot" % (
            str(layout.has_ffts).lower(), "there is an" if ffts else "there is no"))
    if len(ffts) > 1 or (ffts and slots[0].role != "ffts"):
        fail("the ffts slot must appear once, first")
    for role in _SINGLE_ROLES:
        count = sum(1 for s in slots if s.role == role)
        if count != 1:
            fail("expected exactly one %s slot, found %d" % (role, count))
    variant = _variant_or_none(k.op, k.variant)
    if variant is not None:  # the kernel's own parameters: each exactly once, nothing else
        expected = [param_slot_key(p, _op_or_none(k.op)) for p in variant.params]
        params = [(s.role, s.index, s.dim) for s in slots
                  if s.role not in _SINGLE_ROLES and s.role != "ffts"]
        for key in expected:
            if params.count(key) != 1:
                fail("expected exactly one slot for the parameter %s, found %d"
                     % (_show_key(key), params.count(key)))
        extra = [key for key in params if key not in expected]
        if extra:
            fail("slots for %s, which variant %s has no parameter for; its parameters are %s"
                 % (", ".join(_show_key(key) for key in extra), variant.name,
                    ", ".join(variant.params)))
    narrow = [s for s in slots if s.role in INTEGER_ROLES and s.size == 4]
    if narrow and k.max_elements_per_launch + k.block_elements * k.max_programs >= INDEX_LIMIT:
        fail("32-bit %s slots need max_elements_per_launch + block elements * max_programs "
             "< 2^31 so that no index wraps; found %d + %d * %d"
             % (narrow[0].role, k.max_elements_per_launch, k.block_elements, k.max_programs))


def _attr_sizes(type_name, index):
    """The sizes an attr slot may have: its attribute type's word when the op is known."""
    op = _op_or_none(type_name)
    if op is not None and index is not None and 0 <= index < len(op.attrs):
        return (op.attrs[index].type_record().word_bytes,)
    return tuple(sorted(set(t.word_bytes for t in op_def.ATTR_TYPES.values())))


def _show_key(key):
    role, index, dim = key
    return ":".join([role] + [str(n) for n in (index, dim) if n is not None])


def _op_or_none(type_name):
    try:
        return op_def.get(type_name)
    except KeyError:
        return None


def _variant_or_none(type_name, variant):
    op = _op_or_none(type_name)
    try:
        return None if op is None else op.kernel.variant(variant)
    except KeyError:
        return None


def _check_mismatch(doc, kernels, expected_soc, path):
    def fail(message):
        raise ManifestError("mismatch", message, path)

    if expected_soc is not None and doc["soc"] != expected_soc:
        fail("the manifest is for SoC %r but sits in the folder for %r; each SoC's kernels "
             "live in kernels/<SoC>/" % (doc["soc"], expected_soc))
    for k in kernels:
        op = _op_or_none(k.op)
        if op is None:
            fail("unknown op %r; this package defines: %s"
                 % (k.op, ", ".join(o.type_name for o in op_def.OPS)))
        if k.dtype not in op.dtypes:
            fail("%s has no dtype %r; its dtypes are %s" % (op.type_name, k.dtype,
                                                            ", ".join(op.dtypes)))
        try:
            variant = op.kernel.variant(k.variant)
        except KeyError as e:
            fail("%s/%s: %s; rebuild the kernels" % (k.op, k.dtype, e.args[0]))
        what = "%s/%s/%s" % (k.op, k.variant, k.dtype)
        if k.entry != op.entry_name(k.variant, k.dtype):
            fail("%s: entry %r, but the op definition names this kernel %r (one entry name per "
                 "variant and dtype); rebuild the kernels with this package's build-kernels"
                 % (what, k.entry, op.entry_name(k.variant, k.dtype)))
        if k.block != variant.block:
            fail("%s: block %s, but the op definition says %s; rebuild the kernels"
                 % (what, list(k.block), list(variant.block)))
        if k.binary is not None and k.binary != op.binary_name(k.variant, k.dtype):
            fail("%s: binary %r, expected %r" % (what, k.binary,
                                                 op.binary_name(k.variant, k.dtype)))


def _check_files(kernels, directory, path, trust_rule=False):
    for k in kernels:
        if k.binary is None:
            continue
        what = "%s/%s/%s" % (k.op, k.variant, k.dtype)
        file_path = os.path.join(directory, k.binary)
        if trust_rule and os.path.lexists(file_path):
            _check_trusted(file_path, path, "%s: binary %s is " % (what, file_path))
        if not os.path.lexists(file_path):
            raise ManifestError("checksum", "%s: binary %s is missing" % (what, file_path), path)
        try:
            size = files.regular_file_size(file_path)
        except files.FileProblem as e:
            raise ManifestError("checksum", "%s: binary %s cannot be read (%s); rebuild or "
                                "reinstall the kernels" % (what, file_path, e), path)
        if size > MAX_BINARY_BYTES:
            raise ManifestError("checksum", "%s: %s has %d bytes, more than the %d a kernel "
                                "binary may have" % (what, file_path, size, MAX_BINARY_BYTES),
                                path)
        if size != k.binary_size:
            raise ManifestError("checksum", "%s: %s has %d bytes, the manifest says %d; the "
                                "file was changed or truncated after the build"
                                % (what, file_path, size, k.binary_size), path)
        try:
            digest = sha256_file(file_path)
        except files.FileProblem as e:
            raise ManifestError("checksum", "%s: binary %s cannot be read (%s)"
                                % (what, file_path, e), path)
        if digest != k.sha256:
            raise ManifestError("checksum", "%s: sha256 of %s is %s, the manifest says %s; the "
                                "file was changed after the build"
                                % (what, file_path, digest, k.sha256), path)


def sha256_file(file_path):
    """Hex sha256 of a file's bytes (the manifest's checksum)."""
    return files.sha256_file(file_path)
