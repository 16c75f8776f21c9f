"""The npubins the package carries, the per-user kernel cache a graph build compiles into,
and the toolchain that built the npubins against the installed CANN, the Python a graph build
would run the kernel builder with, and the kernel sets a board takes (docs/kernels.md)."""
import importlib
import os
import sys

from .. import op_def, opp
from .._build import cann_toolkit
from . import remedies
from .results import FAIL, OK, WARN, Check, check, Instruction, worst

@check("npubins",
       "per SoC, a kernel for every op and dtype, manifest valid and checksums intact")
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
                         remedies.REBUILD)
        return Check(name, WARN, "no precompiled npubins under %s: a graph build must compile "
                     "each kernel it needs on this host (see 'kernel cache')"
                     % os.path.join(ctx.root, opp.KERNELS_DIR),
                     Instruction("build them on a CANN host (tf-ge-custom build-kernels --help), "
                                 "then rebuild with them: docs/kernels.md"))
    status, parts, socs, outdated = OK, [], {}, []
    for soc in sorted(manifests):
        try:
            manifest = reader.load_manifest(manifests[soc], check_files=True)
        except reader.ManifestError as e:
            if getattr(e, "kind", None) == "outdated":
                # Not damaged: a set of another release's entry naming, which the GE library
                # passes over (a graph build takes the cache's or compiles); say how to rebuild.
                status = worst([status, WARN])
                outdated.append(soc)
                parts.append("%s: %s" % (soc, outdated_phrase()))
                socs[soc] = {"error": "outdated"}
                continue
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
        fix = remedies.REBUILD
    elif outdated:
        fix = outdated_fix(outdated)
    elif status == WARN:
        fix = Instruction("build the missing dtypes on a CANN host (tf-ge-custom build-kernels "
                          "--help), then rebuild with them: docs/kernels.md")
    return Check(name, status, "checksums verified; " + "; ".join(parts) if status != FAIL
                 else "; ".join(parts), fix, {"socs": socs})


def outdated_phrase(error=None):
    """What a kernel set of another entry naming is, for a doctor line."""
    from .. import kernel_contract

    return ("built by another tf-ge-custom release under another entry naming than this "
            "package's %d, so the GE library passes over it: a graph build takes the kernel "
            "cache's or compiles its own instead" % kernel_contract.ENTRY_NAMING)


def outdated_fix(socs, bundle=None):
    """How to rebuild kernel sets of another entry naming (tf-ge-custom >= this version)."""
    from .. import __version__, kernel_contract

    target = ("--bundle %s" % bundle) if bundle else "--out kernels-out, then "\
        "TF_GE_CUSTOM_KERNELS_DIR=$PWD/kernels-out pip install --no-deps --force-reinstall ."
    return Instruction("rebuilt by tf-ge-custom >= %s (entry naming %d): rerun build-kernels "
                       "on a CANN host: tf-ge-custom build-kernels --soc %s %s (docs/kernels.md)"
                       % (__version__, kernel_contract.ENTRY_NAMING, ",".join(socs), target))


def _kernel_label(op, dtype):
    """A dtype, or ``<op type> <dtype>`` when the package defines more than one op."""
    return dtype if len(op_def.OPS) == 1 else "%s %s" % (op.type_name, dtype)


def _nearest_existing(path):
    probe = os.path.abspath(path)
    while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    return probe


@check("kernel cache",
       "where a graph build compiles a kernel the package lacks (`TF_GE_CUSTOM_CACHE_DIR`, "
       "`XDG_CACHE_HOME`, `HOME`), whether that folder is writable, whether the Python it "
       "runs exists and which tool (triton-ascend, `bishengir-compile`, `hivmc`) a compile "
       "would lack, and what it holds (docs/kernels.md)")
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
    from .. import _builder_venv as builder_venv, _trust as trust

    problems, fixes = [], []
    # The trust rule (docs/kernels.md, "What the package trusts"): the GE library neither
    # reads nor compiles into a cache that fails it.
    refusal = cache.cache_refusal(location.path)
    if refusal is not None:
        problems.append(cache.untrusted_message(location.path, refusal))
        fixes.append("export %s=<a new folder of your own>" % cache.CACHE_DIR_ENV)
    probe = _nearest_existing(location.path)
    if not os.path.isdir(probe) or not os.access(probe, os.W_OK | os.X_OK):
        problems.append("%s is not writable by this user (%s)" % (trust.shown(location.path),
                                                                 trust.shown(probe)))
        fixes.append("export %s=<a writable folder>" % cache.CACHE_DIR_ENV)
    explicit = ctx.environ.get(builder_venv.PYTHON_ENV)
    python = explicit or (ctx.build_info.get("kernels") or {}).get("python")
    problem = builder_venv.python_problem(explicit) if explicit else ""
    if problem:
        problems.append(problem)
        fixes.append("export TF_GE_CUSTOM_PYTHON=<the absolute path of the Python with "
                     "tf-ge-custom and triton-ascend>")
    elif python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        problems.append("the Python it would run, %s, is not an executable file" % trust.shown(python))
        fixes.append("export TF_GE_CUSTOM_PYTHON=<the Python with tf-ge-custom and "
                     "triton-ascend>")
    ident = cache.identity(ctx.environ)
    for tool in ident.missing:
        problems.append("%s is missing" % tool)
        fixes.append(compile_kernel.hint(tool, python))
    entries = cache.list_entries(location.path) \
        if refusal is None and os.path.isdir(location.path) else []
    current = [e for e in entries if e.key == ident.key and e.manifest is not None]
    refused = [e for e in entries if e.kind == "trust"]
    invalid = [e for e in entries if e.manifest is None and e.kind != "trust"]
    data = {"path": location.path, "from": location.source, "key": ident.key,
            "missing": list(ident.missing), "python": python,
            "trusted": refusal is None, "refusal": str(refusal) if refusal else None,
            "entries": ["/".join([e.soc, e.key] + ([e.op] if e.op else []) + [e.dtype])
                        for e in entries],
            "invalid": [e.path for e in invalid],
            "refused": {e.path: e.error for e in refused}}
    held = "%d kernel set(s) of this toolchain (%s)" % (len(current), ", ".join(
        sorted("%s %s" % (e.soc, e.dtype) for e in current))) if current else \
        "not read" if refusal is not None else "empty"
    if refused:
        problems.append("%d entr%s refused by the trust rule (%s); the next compile replaces them"
                        % (len(refused), "y" if len(refused) == 1 else "ies",
                           "; ".join(trust.shown(e.error) for e in refused)))
    if invalid:
        problems.append("%d entr%s fail verification (%s); the next compile replaces them"
                        % (len(invalid), "y" if len(invalid) == 1 else "ies",
                           ", ".join(trust.shown(e.path) for e in invalid)))
    detail = "%s (from %s), key %s: %s" % (trust.shown(location.path), location.source, ident.key,
                                           held)
    if problems:
        return Check(name, WARN, "%s; a graph build for a SoC or dtype without a packaged "
                     "npubin could not compile it: %s" % (detail, "; ".join(problems)),
                     Instruction("; ".join(dict.fromkeys(fixes))), data)
    return Check(name, OK, detail + "; kernels the package lacks are compiled here on first "
                 "graph build (pre-warm: tf-ge-custom build-kernels --soc <SoC> --cache)", data=data)


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


@check("npubin toolchain",
       "the CANN recorded in each kernel manifest against the installed toolkit (WARN with "
       "both versions when they differ)")
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
            "version" % home), remedies.source_cann(ctx), data)
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
    from .. import _builder_venv as builder_venv

    key = (python, package_parent, environ.get("TF_GE_CUSTOM_CACHE_DIR"))
    if key not in _DESCRIBED:
        _DESCRIBED[key] = builder_venv.describe(python, package_parent, environ=dict(environ))
    return _DESCRIBED[key]


@check("kernel builder",
       "which Python a graph build would run the kernel builder with (`TF_GE_CUSTOM_PYTHON`,"
       " this package's Python, the `setup-builder` venv), each only when it imports "
       "`tf_ge_custom` and triton (docs/kernels.md)")
def check_kernel_builder(ctx):
    """Which Python the GE library's Compile would run the kernel builder with (the rule of
    ge_ops/core kernel_compiler.cc): TF_GE_CUSTOM_PYTHON, else this package's own Python, else
    the setup-builder venv; each only when its --describe imports tf_ge_custom and triton."""
    from .. import _builder_venv as builder_venv

    name = "kernel builder"
    describe = getattr(ctx, "builder_describe", None) or _describe_builder
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctx.root)))
    explicit = ctx.environ.get(builder_venv.PYTHON_ENV)
    refusals, old = [], sys.version_info < builder_venv.MIN_PYTHON
    if explicit:
        # Refused as the GE library refuses it (relative, not trusted), before anything runs it.
        problem = builder_venv.python_problem(explicit)
        if problem:
            return Check(name, WARN, "a graph build cannot compile missing kernels: %s" % problem,
                         Instruction("export %s=<the absolute path of the Python with tf-ge-custom "
                                     "and triton-ascend>, this user's or root's and writable by "
                                     "nobody else (docs/kernels.md)" % builder_venv.PYTHON_ENV),
                         {"candidates": [explicit], "refused": problem})
        candidates = [(explicit, builder_venv.PYTHON_ENV, package_parent)]
    else:
        candidates = [(sys.executable, "this package's Python", package_parent)]
        venv = builder_venv.default_venv(ctx.environ)
        venv_problem = builder_venv.venv_problem(ctx.environ)
        if venv_problem:
            refusals.append(venv_problem)
        elif venv and os.path.isfile(builder_venv.venv_python(venv)):
            problem = builder_venv.python_problem(builder_venv.venv_python(venv), "the builder venv's Python")
            if problem:
                refusals.append(problem)
            else:
                candidates.append((builder_venv.venv_python(venv), "the setup-builder venv", ""))
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


@check("kernel sets",
       "every kernel set the GE library sees (the package's, the bundles of "
       "`TF_GE_CUSTOM_KERNELS`) and where it came from; with `--soc BOARD`, a line `kernels "
       "for BOARD` naming the set a graph build for that board takes")
def check_board_kernels(ctx):
    """Every kernel set the GE library sees (the package's, the bundles of TF_GE_CUSTOM_KERNELS)
    with where it came from; with --soc, which one a graph build for that board takes."""
    from ..kernels import kernel_sources

    board = getattr(ctx, "board", None)
    sets = kernel_sources.kernel_sets(os.path.join(ctx.root, opp.KERNELS_DIR), ctx.environ)
    listing = ", ".join("%s (%s%s)" % (s.soc, s.source, "" if s.source == "package" else " " + s.folder)
                        for s in sets) or "none"
    # Entries of TF_GE_CUSTOM_KERNELS the GE library refuses (relative, missing, a file or FIFO,
    # not trusted): it refuses every kernel lookup while one is there.
    refused = kernel_sources.refused_bundles(ctx.environ)
    data = {"sets": [s._asdict() for s in sets], "refused": [str(r) for r in refused]}
    # Sets of another release's entry naming: the GE library passes over them (to the next
    # bundle, the cache or a compile), which is no failure, but they are rebuilt to be used.
    stale = []
    for s in sets:
        try:
            kernel_sources.load_set(s)
        except Exception as e:  # ManifestError; any other verdict is the 'npubins' check's
            if getattr(e, "kind", None) == "outdated":
                stale.append(s)
    data["outdated"] = [s.soc for s in stale]
    if refused:
        return Check("kernel sets", FAIL, "%s; the GE library refuses every kernel lookup while "
                     "the variable names it (kernel sets otherwise: %s)" % (
                         "; ".join(str(r) for r in refused), listing),
                     Instruction("fix or drop those entries of %s (each an absolute folder of "
                                 "yours or root's, writable by nobody else: docs/kernels.md)"
                                 % kernel_sources.ENV), data)
    if stale and not board:
        where = "; ".join("%s (%s%s) was %s" % (s.soc, s.source, "" if s.source == "package" else " " + s.folder,
                                                outdated_phrase()) for s in stale)
        bundles = sorted(set(s.folder for s in stale if s.source == "bundle"))
        return Check("kernel sets", WARN, "kernel sets the GE library sees: %s; %s" % (listing, where),
                     outdated_fix([s.soc for s in stale], bundles[0] if len(bundles) == 1 and
                                  all(s.source == "bundle" for s in stale) else None), data)
    if not board:
        return Check("kernel sets", OK, "kernel sets the GE library sees: %s%s" % (
            listing, "" if sets else " (a graph build compiles what it needs: see 'kernel builder')"), data=data)
    served = kernel_sources.serving(board, sets)
    data["board"] = board
    data["asked_for"] = True  # the user asked (--soc): shown even where the stack is folded
    data["served_by"] = served.kernel_set.soc if served.kernel_set else None
    name = "kernels for %s" % board
    if served.kernel_set is None:
        return Check(name, WARN, "%s (kernel sets: %s)" % (kernel_sources.describe(served), listing),
                     Instruction("build a bundle of its architecture on a CANN host (tf-ge-custom "
                                 "build-kernels --bundle DIR --soc %s) and set TF_GE_CUSTOM_KERNELS=DIR "
                                 "here, or let the graph build compile them (see 'kernel builder')" % board),
                     data)
    return Check(name, OK, kernel_sources.describe(served), data=data)
