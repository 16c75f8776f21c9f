"""``tf-ge-custom build-kernels``: compile the Triton kernel to npubins for a list of SoCs.

    tf-ge-custom build-kernels --soc Ascend910B1,Ascend910_9392 --dtype all --out DIR
    tf-ge-custom build-kernels --ir-only          # any host: IR + argument layout only
    tf-ge-custom build-kernels --soc Ascend910B1 --cache   # pre-warm the per-user cache
    tf-ge-custom build-kernels --bundle DIR        # every SoC x dtype of an architecture

A board name the runtime reports (``Ascend910B4-1``, ``Ascend910_9361``: kernels/socs.py)
builds the SoC whose kernels serve it. ``--bundle DIR`` writes a kernel bundle: every variant
and dtype of the SoCs given (default: the first SoC of each architecture), plus
``bundle.json``; since an npubin targets an architecture, built once on a CANN host it serves
every board of that architecture (``TF_GE_CUSTOM_KERNELS=DIR``, or
``TF_GE_CUSTOM_KERNELS_DIR=DIR pip install``), docs/kernels.md.

The Python API is :func:`tf_ge_custom.kernels.builder.build_kernels`. Nothing heavy is
imported until the command runs (no TensorFlow at all).
"""
import contextlib
import os
import sys
import tempfile

from ..errors import UsageError

DEFAULT_OUT = "tf-ge-custom-kernels"
BUNDLE_FORMAT = "tf-ge-custom-kernel-bundle"
BUNDLE_FILE = "bundle.json"


def comma_list(value):
    """The argparse type of ``--soc``/``--dtype``: ``"a, b"`` -> ``["a", "b"]``."""
    return [item.strip() for item in value.split(",") if item.strip()]


def add_arguments(parser):
    from tf_ge_custom import op_def

    dtypes = list(dict.fromkeys(d for op in op_def.OPS for d in op.dtypes))
    parser.description = ("Compile the Triton kernels of %s ahead of time: one npubin per "
                          "(SoC, op, kernel variant, dtype) plus one manifest.json per SoC. Needs triton-ascend "
                          "and bishengir-compile; the npubins also need CANN's hivmc."
                          % ", ".join(op.type_name for op in op_def.OPS))
    parser.add_argument("--soc", type=comma_list, default="all",
                        help="comma-separated SoCs as --soc_version spells them, or 'all' "
                             "(default: all)")
    parser.add_argument("--dtype", type=comma_list, default="all",
                        help="comma-separated dtypes (%s) or 'all'" % ",".join(dtypes))
    parser.add_argument("--out", default=None,
                        help="output folder; gets <out>/<SoC>/ (default: %s)" % DEFAULT_OUT)
    parser.add_argument("--cache", action="store_true",
                        help="build into the per-user kernel cache the GE library compiles into "
                             "on first graph build ($TF_GE_CUSTOM_CACHE_DIR, else "
                             "$XDG_CACHE_HOME/tf-ge-custom/kernels, else ~/.cache/...); entries "
                             "already there are kept (docs/kernels.md)")
    parser.add_argument("--ir-only", action="store_true",
                        help="stop at HIVM IR: write the IR and a manifest with the argument "
                             "layout but no npubins (no CANN needed)")
    parser.add_argument("--max-programs", type=int, default=None,
                        help="cap on programs per launch (default: the SoC's vector cores)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing <out>/<SoC>/ even when it holds files "
                             "build-kernels did not write (they are deleted)")
    parser.add_argument("--bundle", metavar="DIR", default=None,
                        help="write a kernel bundle into DIR: every variant and dtype of --soc "
                             "(default: the first SoC of each architecture), serving every board "
                             "of its architecture, and bundle.json; install it with "
                             "TF_GE_CUSTOM_KERNELS=DIR (or TF_GE_CUSTOM_KERNELS_DIR=DIR pip install)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


@contextlib.contextmanager
def _private_temporary_folder():
    """TMPDIR for this process and the compilers it runs (bishengir-compile writes
    ``$TMPDIR/bishengir-*``): a folder of its own, removed on the way out whatever happens,
    so that an interrupted build leaves no temporary behind, not even the compilers'; one a
    killed build left is swept by the next (:mod:`tf_ge_custom._owned_folders`)."""
    from tf_ge_custom import _owned_folders as owned_folders

    owned = owned_folders.make(tempfile.gettempdir(), "tf-ge-custom-build-kernels-")
    folder = owned.path
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # asked again: the new TMPDIR
    try:
        yield folder
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
        owned.close()


def run(args):
    if sys.version_info < (3, 9):  # triton-ascend has no build for it: the builder venv runs it
        return _run_in_builder_venv()
    from tf_ge_custom import _heartbeat, _lifecycle

    # a line on every silence (importing triton, the stages of one SoC and dtype): on stderr,
    # with the progress lines, unless --quiet
    beat = _heartbeat.Heartbeat(_heartbeat.stream_writer(sys.stderr), "building kernels",
                                period=0 if args.quiet else None)
    with _private_temporary_folder(), _lifecycle.doing("building kernels"), beat:
        args.progress = None if args.quiet else _heard_by(beat)
        return _run(args)


def _heard_by(beat):
    """The builder's progress callback: its line, which restarts the heartbeat's silence."""
    from tf_ge_custom.kernels import builder

    def progress(event):
        builder.print_progress(event)
        beat.heard()
    return progress


def _run(args):
    from tf_ge_custom import _lifecycle
    from tf_ge_custom.kernels import builder, socs

    soc_names = list(socs.SOCS) if args.soc == ["all"] else args.soc
    if args.cache:
        if args.bundle:
            raise UsageError("--bundle cannot be combined with --cache")
        return _run_cache(args, soc_names)
    if args.bundle:
        return _run_bundle(args, soc_names)
    out = _lifecycle.absolute(args.out or DEFAULT_OUT, "--out")
    try:
        result = builder.build_kernels(
            soc_names, args.dtype, out, ir_only=args.ir_only,
            max_programs=args.max_programs, force=args.force,
            progress=args.progress)
    except ValueError as e:  # an unknown SoC or dtype, a folder in the way
        raise UsageError(str(e))
    for soc, path in result.manifests.items():
        sys.stdout.write("%s: %s%s\n" % (soc, path, " (IR only, no npubins)"
                                         if result.ir_only else ""))
    for name in soc_names:
        if name in socs.ALIASES:  # a board name: say whose kernels it takes
            sys.stdout.write("%s: a board name, served by the %s kernels (architecture %s)\n"
                             % (name, socs.resolve(name), socs.get(name).architecture))
    return 0


def _run_cache(args, soc_names):
    """``--cache``: each (SoC, dtype) into the per-user cache, as a graph build would."""
    from tf_ge_custom.errors import KernelBuildError, KernelCacheError
    from tf_ge_custom._files import shown
    from tf_ge_custom.kernels import builder, cache

    conflicts = [flag for flag, used in (("--out", args.out is not None),
                                         ("--ir-only", args.ir_only),
                                         ("--max-programs", args.max_programs is not None),
                                         ("--force", args.force)) if used]
    if conflicts:
        raise UsageError("--cache cannot be combined with %s (the cache holds what a graph build "
                         "would compile, where it would look)" % ", ".join(conflicts))
    try:
        soc_names = builder.parse_socs(soc_names)
        dtype_names = builder.parse_dtypes(args.dtype)
        location = cache.cache_dir()
    except (ValueError, KernelCacheError) as e:
        raise UsageError(str(e))
    progress = args.progress

    def on_wait(pid):
        sys.stderr.write("waiting for %s, which is building the same kernel into the cache\n"
                         % ("process %d" % pid if pid else "another process"))

    if not args.quiet:
        sys.stderr.write("kernel cache: %s (from %s)\n" % (shown(location.path), location.source))
    ops = builder.op_list()
    for soc in soc_names:
        for op in ops:  # each op's entries of its own dtypes (<SoC>/<key>/<op>/<dtype>)
            for dtype in [d for d in dtype_names if d in op.dtypes]:
                # the op's type only when the package has more than one
                what = dtype if len(ops) == 1 else "%s %s" % (op.type_name, dtype)
                try:
                    done = cache.ensure(soc, dtype, cache=location.path, op=op,
                                        progress=progress, on_wait=on_wait)
                except ValueError as e:
                    raise UsageError(str(e))
                except (KernelBuildError, KernelCacheError) as e:
                    e.args = ("%s %s: %s" % (soc, what, e),)  # which kernel, in the one line
                    raise
                except OSError as e:
                    raise KernelCacheError("%s %s: %s" % (soc, what, e))
                sys.stdout.write("%s %s: %s (%s)\n" % (soc, what, done.path, "built" if done.built
                                                       else "already in the cache"))
    return 0


def bundle_socs(soc_names, dtypes, all_given):
    """(the SoCs a bundle builds, their architectures). An npubin targets an architecture
    (docs/kernels.md), so one SoC's kernel set serves every board of its architecture: the
    bundle builds the SoCs named (a board name builds the SoC serving it), by default the first
    SoC of each architecture. Raises ValueError for an unknown name or a dtype subset (a
    bundle holds every dtype)."""
    from tf_ge_custom.kernels import builder, socs

    if dtypes != ["all"]:
        raise ValueError("a bundle holds every dtype: leave --dtype out (got %s)" % ",".join(dtypes))
    if all_given:
        firsts = {}
        for s in socs.SOCS.values():
            firsts.setdefault(s.architecture, s.name)
        names = list(firsts.values())
    else:
        names = builder.parse_socs(soc_names)
    return names, list(dict.fromkeys(socs.get(s).architecture for s in names))


BUNDLE_KIND = "kernel-bundle"  # its made-record in a folder it made: .tf-ge-custom-kernel-bundle


def _run_bundle(args, soc_names):
    import json

    from tf_ge_custom import _lifecycle, _atomic_files as atomic_files
    from tf_ge_custom._version import __version__
    from tf_ge_custom.kernels import builder, socs

    conflicts = [flag for flag, used in (("--out", args.out is not None),
                                         ("--max-programs", args.max_programs is not None))
                 if used]
    if conflicts:
        raise UsageError("--bundle cannot be combined with %s (a bundle is every SoC of an "
                         "architecture, each capped at launch by the device's own vector cores)"
                         % ", ".join(conflicts))
    from tf_ge_custom import _given_folders as given_folders

    folder = _lifecycle.absolute(args.bundle, "--bundle")
    if not args.force:  # bundle.json would replace a file of the user's
        given_folders.refuse(folder, "--bundle", "build-kernels --bundle", BUNDLE_KIND)
    try:
        names, archs = bundle_socs(soc_names, args.dtype, args.soc == ["all"])
        given_folders.take(folder, "--bundle", "build-kernels --bundle", BUNDLE_KIND, check=not args.force)
    except ValueError as e:
        raise UsageError(str(e))
    try:
        result = builder.build_kernels(
            names, "all", folder, ir_only=args.ir_only, force=args.force,
            progress=args.progress)
    except ValueError as e:
        raise UsageError(str(e))
    finally:
        given_folders.record(folder, BUNDLE_KIND)
    # every board of those architectures takes one of these sets (exact name, else architecture)
    boards = {b: (b if b in names else names[0]) for b in socs.board_names()
              if socs.get(b).architecture in archs}
    document = {
        "format": BUNDLE_FORMAT, "version": 1, "tf_ge_custom": __version__,
        "architectures": archs, "socs": sorted(result.manifests), "boards": boards,
        "ir_only": result.ir_only,
    }
    atomic_files.write_text(os.path.join(folder, BUNDLE_FILE),
                            json.dumps(document, indent=2, sort_keys=True) + "\n")
    given_folders.record(folder, BUNDLE_KIND)
    sys.stdout.write("kernel bundle %s: the kernels of %s (architecture %s)%s; they serve every "
                     "board of that architecture: %s\n" % (
                         args.bundle, ", ".join(sorted(result.manifests)), ", ".join(archs),
                         " (IR only, no npubins)" if result.ir_only else "", ", ".join(sorted(boards))))
    if not result.ir_only:
        sys.stdout.write("install on each host of that architecture: export "
                         "TF_GE_CUSTOM_KERNELS=%s (or TF_GE_CUSTOM_KERNELS_DIR=%s pip install "
                         "--no-deps --force-reinstall tf-ge-custom)\n" % (folder, folder))
    return 0


def _run_in_builder_venv(argv=None):
    """On Python < 3.9 (TF Adapter's hosts): run this command in the venv ``tf-ge-custom
    setup-builder`` made, which the GE library's Compile uses too."""
    from tf_ge_custom import _processes, _builder_venv as builder_venv
    from tf_ge_custom.errors import BuilderSetupError

    venv = builder_venv.default_venv()
    python = builder_venv.venv_python(venv) if venv else None
    # The trust rule (docs/kernels.md): a relative TF_GE_CUSTOM_BUILDER, or a venv Python another
    # user could have written, is not run.
    problem = builder_venv.venv_problem() or (
        python and os.path.isfile(python) and builder_venv.python_problem(python, "the builder venv's Python"))
    if problem:
        raise BuilderSetupError(problem, fix="see the trust rule in docs/kernels.md")
    if not python or not os.path.isfile(python):
        raise BuilderSetupError(
            "this is Python %d.%d, and triton-ascend has no build for Python < 3.9 (pip on 3.7 "
            "finds none)" % sys.version_info[:2],
            fix="run `tf-ge-custom setup-builder` once (it makes a Python >= 3.9 venv with "
                "triton-ascend and this package's builder at %s); build-kernels and the graph "
                "build's compile then run there (docs/kernels.md)" % (venv or "$TF_GE_CUSTOM_BUILDER"))
    if argv is None:
        argv = sys.argv[sys.argv.index("build-kernels") + 1:] if "build-kernels" in sys.argv else []
    code = ("import builtins, sys\n"
            "builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True\n"
            "del sys.path[0]\n"
            "from tf_ge_custom import cli\n"
            "sys.exit(cli.main(['build-kernels'] + sys.argv[1:]))\n")
    sys.stderr.write("build-kernels runs in the builder venv (%s)\n" % python)
    sys.stderr.flush()
    # its output straight to ours (a terminal's progress lines as they come): not captured
    return _processes.run_attached([python, "-c", code] + list(argv))
