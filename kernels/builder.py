"""Build the npubins and manifests for a list of SoCs and dtypes (Python API of build-kernels).

    from tf_ge_custom.kernels.builder import build_kernels
    build_kernels(["Ascend910B1", "Ascend910_9392"], "all", "out/")          # needs CANN
    build_kernels(["Ascend910B1"], ["float32"], "out/", ir_only=True)       # any host

For each (SoC, dtype) and each kernel variant of the op definition (``op_def.py``: the flat
kernel, the scalar one and the tiled broadcasting ones): the project's kernel source -> TTIR
-> linalg (triton-ascend's own stages, target = that SoC) -> HIVM IR (bishengir-compile) ->
npubin (hivmc, CANN only; its ELF symbol table must define the entry before a manifest names it,
:mod:`elf_symbols`), under the kernel's own entry symbol
(``tf_ge_custom_<op>_<variant>_<dtype>``, ``op_def.OpDefinition.entry_name``: a GE model
keeps one binary per kernel name, so every kernel of a set can sit in one model; a definition
whose names collide is refused before anything compiles). The host-argument layout,
workspace and lock needs are read from the HIVM IR that hivmc compiles, never assumed; each
becomes a typed
:class:`~tf_ge_custom.kernel_manifest.KernelEntry`, and the manifest is written from those
records. Output, per SoC::

    <out>/<SoC>/manifest.json
    <out>/<SoC>/<op>_<variant>_<dtype>.npubin          (not with ir_only)
    <out>/<SoC>/ir/<op>_<variant>_<dtype>.{ttir,linalg,hivm}.mlir

Each SoC folder is assembled aside (in a temporary sibling inside ``out``) and swapped into
place only when all of it is valid, so a failed build never leaves a half-written folder;
without hivmc (and without ``ir_only``) the build is refused before its first stage: one
:class:`ToolchainError` names what is missing and ``--ir-only``, and ``out`` is left as it was.

An existing ``<out>/<SoC>/`` is replaced whole, so the build first makes sure it holds only
files a build writes (``manifest.json``, ``<op>_<variant>_<dtype>.npubin``,
``ir/<op>_<variant>_<dtype>.<stage>.mlir``): anything else is refused, by name, before
compiling, unless ``force``. An
``out`` that is an existing file, or a place that cannot be written, is refused up front too.
"""
import ctypes
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from typing import NamedTuple, Optional, Tuple

from tf_ge_custom import _atomic_files as atomic_files, _owned_folders as owned_folders, kernel_contract, \
    kernel_manifest, op_def
from tf_ge_custom.errors import KernelBuildError, ManifestError, ToolchainError
from tf_ge_custom.kernel_manifest import ArgLayout, ArgSlot, KernelEntry

from . import bishengir, elf_symbols, frontend, geometry, hivm_ir, socs, toolchain

# MLIR element type of each triton signature type.
_MLIR_ELEMENT = {"fp32": "f32", "fp16": "f16", "bf16": "bf16", "i32": "i32", "i64": "i64"}
# hacc.arg_type of the leading entry parameters -> manifest role.
_HACC_ROLES = {"ffts_base_address": "ffts", "sync_block_lock": "sync_block_lock",
               "workspace": "workspace"}
# tt.tensor_kind that triton-ascend gives a pointer it only reads / only writes.
_TENSOR_KIND = {"input": 0, "output": 1}
_GRID_NAMES = (("gridX", "grid_x"), ("gridY", "grid_y"), ("gridZ", "grid_z"))
# hacc.host_func_type of the host callbacks -> (manifest key, libkernel.so symbol suffix)
_CALLBACKS = (
    ("infer_workspace_shape_function", "workspace_size"),
    ("infer_sync_block_lock_num_function", "lock_num"),
    ("infer_sync_block_lock_init_function", "lock_init_val"),
)


class Progress(NamedTuple):
    done: int  # (SoC, dtype) pairs finished, this one included
    total: int
    soc: str
    dtype: str
    variants: Tuple[str, ...]  # the kernel variants compiled for this (SoC, dtype)
    stages: str  # what ran: "TTIR, linalg, HIVM IR, npubin"
    binary_size: Optional[int]  # bytes of all its npubins; None: none (IR only or no hivmc)
    seconds: float
    op: str = ""  # the op's type (named in the line when the package has more than one op)


class BuildResult(NamedTuple):
    manifests: dict  # {soc: path of the manifest written}
    ir_only: bool
    kernels: dict  # {soc: tuple of the KernelEntry records its manifest was written from}


def parse_socs(value):
    """``"Ascend910B1,Ascend910_9392"`` (or a list) -> validated SoC names to build, in order.

    A board name (``socs.ALIASES``, e.g. ``Ascend910B4-1``) stands for the buildable SoC whose
    kernels serve it (Ascend910B4): that SoC is built, once."""
    names = [s.strip() for s in (value.split(",") if isinstance(value, str) else value)]
    names = [n for n in names if n]
    if not names:
        raise ValueError("no SoC given; supported: %s" % ", ".join(socs.board_names()))
    resolved = []
    for name in names:
        try:
            resolved.append(socs.resolve(name))
        except KeyError as e:  # lists what can be built, and the board names served
            raise ValueError(e.args[0])
    return list(dict.fromkeys(resolved))


def op_list(ops=None):
    """The op definitions to build: ``ops`` (one definition or several), else every op of
    ``op_def.OPS``, read when called."""
    if ops is None:
        return tuple(op_def.OPS)
    return (ops,) if hasattr(ops, "type_name") else tuple(ops)  # one record, or several


def parse_dtypes(value, ops=None):
    """``"all"``, ``"float32,int32"`` or a list -> dtypes of the ops, in definition order.

    Each name must be a dtype of at least one of the ops; an op is built for the names it has.
    """
    known = list(dict.fromkeys(d for op in op_list(ops) for d in op.dtypes))
    if value in (None, "all") or value == ["all"]:
        return known
    names = [d.strip() for d in (value.split(",") if isinstance(value, str) else value)]
    types = [op.type_name for op in op_list(ops)]
    for name in names:
        if name not in known:
            raise ValueError("%s dtype %r; choose from %s or 'all'" % (
                "%s has no" % types[0] if len(types) == 1 else "none of %s has" % ", ".join(types),
                name, ", ".join(known)))
    return [d for d in known if d in names]


_IR_STAGES = ("ttir", "linalg", "hivm")


def _stem(op, variant, dtype):
    return "%s_%s_%s" % (op.python_name, variant, dtype)


def written_by_build(relative, ops=None):
    """Whether ``relative`` (a path inside a SoC folder, '/'-separated) is a name this
    builder writes there for one of the ops."""
    ours = {kernel_manifest.MANIFEST_NAME, "ir"}
    for op in op_list(ops):
        pairs = [(v.name, d) for v in op.kernel.variants for d in op.dtypes]
        ours.update(op.binary_name(v, d) for v, d in pairs)
        ours.update("ir/%s.%s.mlir" % (_stem(op, v, d), stage) for v, d in pairs
                    for stage in _IR_STAGES)
    return relative in ours


def foreign_files(soc_dir, ops=None):
    """Paths under an existing SoC folder that a build did not write (sorted, relative)."""
    foreign = []
    for folder, dirs, names in os.walk(soc_dir):
        rel_folder = os.path.relpath(folder, soc_dir)
        for name in sorted(dirs) + sorted(names):
            relative = name if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/" + name
            path = os.path.join(folder, name)
            is_dir = os.path.isdir(path) and not os.path.islink(path)
            if not written_by_build(relative, ops) or (is_dir != (relative == "ir")):
                foreign.append(relative + ("/" if is_dir else ""))
        dirs[:] = [d for d in dirs if d == "ir" and rel_folder == "."]
    return sorted(foreign)


def check_out_dir(out_dir, soc_names, ops=None, force=False):
    """Refuse, before any compiling, an ``out_dir`` the build could not or should not write.

    Raises ValueError: ``out_dir`` is an existing non-folder or cannot be created or written,
    or (unless ``force``) a ``<out_dir>/<SoC>`` to be replaced holds files a build did not
    write, or is not a folder.
    """
    out_dir = os.fspath(out_dir)
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError("the output folder (--out) %s exists and is not a folder; name a "
                         "folder (it gets one subfolder per SoC)" % out_dir)
    probe = os.path.abspath(out_dir)
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise ValueError("the output folder (--out) %s cannot be created: %s is not a folder"
                         % (out_dir, probe))
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError("the output folder (--out) %s cannot be written: %s is not writable "
                         "by this user" % (out_dir, probe))
    for soc in soc_names:
        target = os.path.join(out_dir, soc)
        if not os.path.lexists(target):
            continue
        if not os.path.isdir(target) or os.path.islink(target):
            if force:
                continue
            raise ValueError("%s exists and is not a folder this build wrote; the build would "
                             "replace it. Move it away, or pass --force to replace it"
                             % target)
        foreign = [] if force else foreign_files(target, ops)
        if foreign:
            shown = ", ".join(foreign[:10]) + (" and %d more" % (len(foreign) - 10)
                                                 if len(foreign) > 10 else "")
            raise ValueError("%s holds files build-kernels did not write: %s. The build "
                             "replaces the folder whole; move them away, or pass --force to "
                             "delete them" % (target, shown))


def build_kernels(soc_list, dtypes, out_dir, ir_only=False, ops=None,
                  max_programs=None, progress=None, env=None, force=False, variants=None):
    """Compile every kernel variant of each op for every (SoC, dtype) and write one manifest
    per SoC.

    ``variants`` (names) limits the build to some variants, for tools and tests that need
    only those: each op is built with those of them it has, an op with none is left out, and
    a name no op has is refused. The GE library needs them all (a call whose shapes need a
    missing variant is refused), so the default, and the CLI, build every one.

    ``ops``: one op definition or several (default: every op of ``op_def.OPS``); each is
    built for the dtypes of ``dtypes`` it has. ``max_programs`` caps gridX (default: the
    SoC's vector cores); ``progress`` is called once per (op, SoC, dtype); ``force`` replaces
    SoC folders holding files a build did not write. Raises ValueError for a bad SoC, dtype or ``out_dir`` (see
    :func:`check_out_dir`), :class:`ToolchainError` naming a missing tool,
    :class:`KernelBuildError` when a stage fails or emits something unexpected.
    """
    ops = op_list(ops)
    soc_names, dtype_names = parse_socs(soc_list), parse_dtypes(dtypes, ops)
    # (op, the variants built, the dtypes it is built for) in definition order
    if variants:
        known = [v.name for op in ops for v in op.kernel.variants]
        unknown = [v for v in variants if v not in known]
        if unknown:
            raise ValueError("no kernel variant %r; the variants are %s"
                             % (unknown[0], ", ".join(dict.fromkeys(known))))
    plan = [(op, [v for v in op.kernel.variants if v.name in variants] if variants
             else list(op.kernel.variants), [d for d in op.dtypes if d in dtype_names])
            for op in ops]
    # an op with none of the variants or none of the dtypes asked for has no kernel in the set
    plan = [(op, chosen, op_dtypes) for op, chosen, op_dtypes in plan if chosen and op_dtypes]
    problems = op_def.entry_name_problems(ops)
    if problems:
        # A GE model keeps one binary per kernel name: such a set could never be used whole.
        raise KernelBuildError("the op definitions name their kernels ambiguously: %s; give every "
                         "(op, variant, dtype) its own entry name (tf_ge_custom/op_def.py, "
                         "OpDefinition.entry_name)" % op_def.describe_problems(problems))
    # each op's kernels come from its own source file (KernelSpec.source); the manifest
    # records the sha256 of each (docs/kernel-manifest.md, "kernel_sources")
    sources = [frontend.kernel_source_path(op.kernel) for op in ops]
    source_sha = {}
    for op, source in zip(ops, sources):
        try:
            with open(source, "rb") as f:
                source_sha[op.type_name] = hashlib.sha256(f.read()).hexdigest()
        except OSError as e:
            raise ValueError("cannot read the kernel source %s of %s (KernelSpec.source): %s"
                             % (source, op.type_name, e))
    if max_programs is not None and (isinstance(max_programs, bool) or not isinstance(
            max_programs, int) or not 1 <= max_programs <= kernel_contract.MAX_GRID):
        raise ValueError("max_programs must be an integer in [1, %d], got %r"
                         % (kernel_contract.MAX_GRID, max_programs))
    check_out_dir(out_dir, soc_names, ops, force)
    env = dict(os.environ if env is None else env)
    # the tools, before the first step and before triton is imported: a build that cannot end
    # in npubins is refused now, not after every IR stage
    compiler, hivmc = _find_tools(ir_only, env)
    triton_version = toolchain.check_triton_ascend()
    toolchain_record = {
        "triton_ascend": triton_version,
        "bishengir": toolchain.tool_version(compiler, "bishengir-compile"),
        "cann": None,  # an IR-only manifest names no CANN: nothing of it was used
    }
    if hivmc is not None and not ir_only:
        toolchain_record["cann"] = toolchain.cann_version(env) or "unknown"
    kernels = [{v.name: frontend.load_kernel(op.kernel, v, frontend.kernel_source_path(op.kernel))
                for v in chosen} for op, chosen, _ in plan]

    try:
        os.makedirs(out_dir, exist_ok=True)
        # staged inside out_dir (same file system) so each SoC folder moves in with one rename;
        # claimed, so that one a killed build left there is swept by the next
        staging = owned_folders.make(out_dir, ".tf-ge-custom-kernels-")
        staging_root = staging.path
    except OSError as e:
        raise KernelBuildError("cannot write the output folder %s: %s" % (out_dir, e))
    try:
        total = len(soc_names) * sum(len(names) for _, _, names in plan)
        done, staged = 0, {}
        for soc in soc_names:
            soc_dir = os.path.join(staging_root, soc)
            os.makedirs(os.path.join(soc_dir, "ir"))
            entries, vector_cores = [], socs.get(soc).vector_cores
            for loaded, (op, chosen, op_dtypes) in zip(kernels, plan):
                for dtype in op_dtypes:
                    started, sizes = time.time(), []
                    for variant in chosen:
                        entry = _build_one(loaded[variant.name], op, variant,
                                           op_def.DTYPES[dtype], soc, soc_dir, compiler,
                                           max_programs, want_binary=not ir_only, env=env)
                        entries.append(entry)
                        sizes.append(entry.binary_size)
                    done += 1
                    if progress:
                        built = all(sizes)
                        stages = "TTIR, linalg, HIVM IR" + (", npubin" if built else "")
                        progress(Progress(done, total, soc, dtype,
                                          tuple(v.name for v in chosen), stages,
                                          sum(sizes) if built else None,
                                          time.time() - started, op.type_name))
            # the sources of the ops the set holds kernels of (a set of one op's kernels
            # records that op's source alone, as a set of AddCustom's always has)
            held = dict((op.type_name, source_sha[op.type_name]) for op, _, _ in plan)
            document = kernel_manifest.manifest_document(soc, vector_cores, toolchain_record,
                                                         held, entries,
                                                         architecture=socs.get(soc).architecture)
            staged[soc] = (soc_dir, document, tuple(entries))
        check_out_dir(out_dir, soc_names, ops, force)  # again: the folder may have changed
        written = {}
        for soc, (soc_dir, document, _) in staged.items():
            try:
                written[soc] = _finish_soc(soc_dir, document, out_dir)
            except OSError as e:
                raise KernelBuildError("cannot move the kernels for %s into %s: %s"
                                       % (soc, out_dir, e))
        return BuildResult(written, ir_only, {soc: staged[soc][2] for soc in written})
    finally:
        staging.close()


def _find_tools(ir_only, env):
    """(bishengir-compile, hivmc or None) for this build; :class:`ToolchainError` naming every
    tool it needs and lacks: bishengir-compile always, hivmc unless ``ir_only`` (then the
    error names ``--ir-only``, the build that needs no CANN)."""
    compiler = toolchain.find_bishengir_compile(env)
    hivmc = toolchain.find_hivmc(env)
    missing = [name for name, found in (("bishengir-compile", compiler),
                                        ("hivmc", hivmc if not ir_only else True)) if not found]
    if not missing:
        return compiler, hivmc
    where = {
        "bishengir-compile": "bishengir-compile lowers linalg to HIVM IR: install ascendnpu-ir (pip "
                             "install ascendnpu-ir==1.2.0) or source a CANN toolkit's set_env.sh",
        "hivmc": "hivmc turns HIVM IR into npubins and comes with the CANN toolkit (8.5.0 pairs "
                 "with triton-ascend 3.2.0): source its set_env.sh, or set BISHENG_INSTALL_PATH "
                 "to the folder holding hivmc",
    }
    message = "%s %s missing, so nothing was compiled: %s" % (
        " and ".join(missing), "is" if len(missing) == 1 else "are", "; ".join(where[m] for m in missing))
    if "hivmc" in missing:
        message += ". To write the IR and the manifest's argument layout without npubins (no CANN " \
                   "needed), pass --ir-only"
    raise ToolchainError(message, missing=tuple(missing))


def _build_one(kernel, op, variant, dtype, soc, soc_dir, compiler, max_programs, want_binary,
               env):
    """One (variant, dtype) for ``soc``: IR files written into ``soc_dir``, and the npubin
    when hivmc made one; returns its :class:`KernelEntry`."""
    entry_name = op.entry_name(variant.name, dtype.name)
    lowered = frontend.lower(kernel, variant, dtype, soc, entry_name, op)
    stem = os.path.join(soc_dir, "ir", _stem(op, variant.name, dtype.name))
    atomic_files.write_text(stem + ".ttir.mlir", lowered.ttir)
    atomic_files.write_text(stem + ".linalg.mlir", lowered.linalg)
    with tempfile.TemporaryDirectory(prefix="bishengir-") as work:
        compiled = bishengir.compile_linalg(compiler, lowered.linalg, soc, work,
                                            lowered.options, env=env)
        atomic_files.write_text(stem + ".hivm.mlir", compiled.hivm_ir)
        ir_values = {key: hivm_ir.host_constant(compiled.hivm_ir, func)
                     for func, key in _CALLBACKS}
        if compiled.callbacks:
            _check_callbacks(compiled.callbacks, lowered.kernel_name, ir_values, soc)
    entry = hivm_ir.find_entry(compiled.hivm_ir, entry_name)  # the symbol GE launches
    programs = max_programs or _vector_cores(compiled.hivm_ir, soc)  # checked every time
    if max_programs:
        _vector_cores(compiled.hivm_ir, soc)
    _check_mix_mode(lowered.mix_mode, entry, soc)
    args = host_arg_layout(entry, kernel, variant, dtype, op)
    index_bits = 8 * min(s.size for s in args.slots if s.role in kernel_contract.INTEGER_ROLES)
    binary = binary_size = sha = None
    if want_binary and compiled.binary is not None:
        # The runtime launches the entry by name from this file: it must define it (or its
        # _mix_aiv / _mix_aic form), or the manifest would promise a kernel it does not hold.
        elf_symbols.require_entry(compiled.binary, entry.name, lowered.mix_mode,
                                  "%s: the npubin hivmc wrote for %s %s %s" % (
                                      soc, op.type_name, variant.name, dtype.name))
        binary = op.binary_name(variant.name, dtype.name)
        with open(os.path.join(soc_dir, binary), "wb") as f:
            f.write(compiled.binary)
        binary_size, sha = len(compiled.binary), hashlib.sha256(compiled.binary).hexdigest()
    return KernelEntry(
        op=op.type_name, variant=variant.name, dtype=dtype.name, entry=entry.name,
        binary=binary, binary_size=binary_size, sha256=sha, mix_mode=lowered.mix_mode,
        magic=kernel_contract.MAGIC_BY_MIX_MODE[lowered.mix_mode], block=variant.block,
        max_programs=programs, max_grid=kernel_contract.MAX_GRID,
        max_elements_per_launch=geometry.max_elements_per_launch(
            variant.block_elements, programs, index_bits=index_bits),
        workspace_size=ir_values["workspace_size"] or 0, lock_num=ir_values["lock_num"] or 0,
        lock_init_val=ir_values["lock_init_val"] or 0, args=args)


def host_arg_layout(entry, kernel, variant, dtype, op=None):
    """The :class:`ArgLayout` of a device entry read from HIVM IR.

    The entry's parameters, in order, are the packed host struct: the ``hacc.arg_type``
    ones (ffts, sync-block lock, workspace) first, then the kernel's runtime parameters as
    written in the source (each becomes the slot ``variant.params`` names), then gridX/Y/Z.
    Pointers and 64-bit scalars take 8 bytes at 8-byte alignment, 32-bit scalars (an fp32
    attribute's included) 4 bytes at 4-byte alignment. ``op`` (the op definition) types the
    ``attr:<name>`` parameters.
    """
    params = [p.name for p in kernel.params if not p.is_constexpr]
    leading, rest = [], []
    for arg in entry.args:
        if arg.arg_type is not None:
            if rest:
                raise KernelBuildError("entry @%s: %s (%s) follows the kernel's own parameters"
                                       % (entry.name, arg.name, arg.arg_type))
            if arg.arg_type not in _HACC_ROLES:
                raise KernelBuildError("entry @%s: unknown hacc.arg_type %s on %s; this builder "
                                       "knows %s" % (entry.name, arg.arg_type, arg.name,
                                                     ", ".join(_HACC_ROLES)))
            leading.append((arg.arg_type, (_HACC_ROLES[arg.arg_type], None, None), arg))
        else:
            rest.append(arg)
    if len(rest) != len(params) + len(_GRID_NAMES):
        raise KernelBuildError(
            "entry @%s has %d parameters after the hacc ones; expected the kernel's %d (%s) "
            "plus gridX, gridY, gridZ" % (entry.name, len(rest), len(params), ", ".join(params)))
    slots = list(leading)
    element = _MLIR_ELEMENT[dtype.triton]
    for name, param, arg in zip(params, variant.params, rest):
        role, index, dim = kernel_manifest.param_slot_key(param, op)
        if role in kernel_contract.ATTR_ROLES:
            want = _MLIR_ELEMENT[op.attrs[index].type_record().triton]
            if arg.is_pointer or arg.type != want:
                raise KernelBuildError("entry @%s: %s (%s) should be the attribute's %s, found %s"
                                       % (entry.name, name, param, want, arg.type))
        elif role in kernel_contract.POINTER_ROLES:
            if not arg.is_pointer or arg.element_type != element:
                raise KernelBuildError("entry @%s: %s should be a pointer to %s, found %s"
                                       % (entry.name, name, element, arg.type))
            if arg.tensor_kind is not None and arg.tensor_kind != _TENSOR_KIND[role]:
                raise KernelBuildError("entry @%s: the compiler marks %s (%s) with "
                                       "tt.tensor_kind %d" % (entry.name, name, param,
                                                              arg.tensor_kind))
        elif arg.is_pointer or arg.type not in ("i32", "i64"):
            raise KernelBuildError("entry @%s: %s (%s) should be a 32/64-bit integer, found %s"
                                   % (entry.name, name, param, arg.type))
        slots.append((name, (role, index, dim), arg))
    for (name, role), arg in zip(_GRID_NAMES, rest[len(params):]):
        if arg.type != "i32":
            raise KernelBuildError("entry @%s: %s should be i32, found %s"
                                   % (entry.name, name, arg.type))
        slots.append((name, (role, None, None), arg))
    out, offset = [], 0
    for name, (role, index, dim), arg in slots:
        size = arg.size
        offset = (offset + size - 1) // size * size
        out.append(ArgSlot(name, role, index, dim, offset, size))
        offset += size
    return ArgLayout((offset + 7) // 8 * 8, any(s.role == "ffts" for s in out), tuple(out))


def _vector_cores(text, soc):
    count = hivm_ir.target_spec(text).get("VECTOR_CORE_COUNT")
    known = socs.get(soc).vector_cores
    if count is not None and count != known:
        raise KernelBuildError("bishengir-compile says %s has %d vector cores, but socs.py says "
                               "%d; correct the table (and its source) before building"
                               % (soc, count, known))
    return known


def _check_mix_mode(mix_mode, entry, soc):
    core = {"aiv": "AIV", "aic": "AIC", "mix": "MIX"}.get(mix_mode)
    if core is None or (entry.core_type is not None and entry.core_type != core):
        raise KernelBuildError("%s: triton-ascend says mix_mode %r but the HIVM IR entry is %s"
                               % (soc, mix_mode, entry.core_type))


def _check_callbacks(library, kernel_name, ir_values, soc):
    """Compare libkernel.so's callbacks (what triton-ascend reads) with the HIVM IR."""
    try:
        lib = ctypes.CDLL(library)
    except OSError as e:
        raise KernelBuildError("cannot load %s written by hivmc for %s: %s" % (library, soc, e))
    for func, key in _CALLBACKS:
        symbol = "%s_%s" % (kernel_name, func)
        if not hasattr(lib, symbol):
            value = None
        else:
            fn = getattr(lib, symbol)
            fn.restype, fn.argtypes = ctypes.c_int64, []
            value = fn()
        if (value or 0) != (ir_values[key] or 0):
            raise KernelBuildError("%s: %s returns %s but the HIVM IR says %s"
                                   % (soc, symbol, value, ir_values[key]))


def _finish_soc(soc_dir, document, out_dir):
    try:
        kernel_manifest.validate_document(document, expected_soc=document["soc"],
                                          directory=soc_dir)
    except ManifestError as e:  # the builder broke the contract: never ship that
        raise KernelBuildError("the manifest built for %s does not pass the reader: %s"
                               % (document["soc"], e))
    atomic_files.write_text(os.path.join(soc_dir, kernel_contract.MANIFEST_NAME),
                json.dumps(document, indent=2) + "\n")
    target = os.path.join(out_dir, document["soc"])
    old = None
    if os.path.lexists(target):  # swap: the old folder steps aside, the new one moves in
        old = tempfile.mkdtemp(prefix=".old-", dir=out_dir)
        os.replace(target, os.path.join(old, "soc"))
    try:
        os.replace(soc_dir, target)
    except OSError:
        if old:  # put the old folder back rather than leave none
            os.replace(os.path.join(old, "soc"), target)
            shutil.rmtree(old, ignore_errors=True)
        raise
    if old:
        shutil.rmtree(old, ignore_errors=True)
    return os.path.join(target, kernel_contract.MANIFEST_NAME)


def print_progress(event, stream=None):
    """The CLI's progress line for one (SoC, op, dtype); the op is named when the package has
    more than one."""
    stream = stream or sys.stderr
    width = len(str(event.total))
    what = ("npubins %d bytes" % event.binary_size if event.binary_size
            else "no npubins")
    named = event.op and len(op_def.OPS) > 1
    stream.write("[%*d/%d] %-15s %s%-8s %d variants (%s): %s; %s (%.2f s)\n" % (
        width, event.done, event.total, event.soc, event.op + " " if named else "", event.dtype,
        len(event.variants),
        " ".join(event.variants), event.stages, what, event.seconds))
    stream.flush()
