"""The kernel compile the GE library runs when a graph needs a kernel the package lacks.

    python -m tf_ge_custom.kernels.compile_kernel --describe
    python -m tf_ge_custom.kernels.compile_kernel --soc Ascend910B1 --dtype float32 [--op AddCustom] [--key KEY]

The GE library (``CompilableOp::Compile``, docs/ge-library.md) runs this module in a child
process of the Python recorded at install time (or ``$TF_GE_CUSTOM_PYTHON``), first with
``--describe`` (where the cache is and the key of this toolchain, once per process), then,
when the cache has no entry for (SoC, op, dtype), to build it into the cache
(:func:`tf_ge_custom.kernels.cache.ensure`: lock, build aside, rename into place). The
GE library starts it through a ``-c`` bootstrap that puts the package it belongs to first
on ``sys.path`` and keeps TensorFlow out of the import (ge_ops/core kernel_compiler.cc).

Progress goes to stderr; the last line on stdout is the result the GE library reads::

    TF_GE_CUSTOM_COMPILE {"ok": true, "entry": "<cache>/<SoC>/<key>/<op>/<dtype>", "built": true, ...}
    TF_GE_CUSTOM_COMPILE {"ok": false, "missing": ["hivmc"], "error": "...", ...}

Exit status: 0 done, 1 the compile failed (the result line says why), 2 usage error.
"""
import argparse
import json
import os
import sys
import time

RESULT_MARK = "TF_GE_CUSTOM_COMPILE "
PROTOCOL = 1

# What to do about each missing tool, in one phrase (the GE library prints it as is).
_HINTS = {
    "triton-ascend": "install it into %s: pip install triton-ascend==3.2.0 pybind11",
    "bishengir-compile": "install it into %s (pip install ascendnpu-ir==1.2.0) or source "
                         "the CANN toolkit's set_env.sh",
    "hivmc": "hivmc comes with the CANN toolkit (8.5.0 pairs with triton-ascend 3.2.0): "
             "source its set_env.sh, or set BISHENG_INSTALL_PATH to the folder holding it",
}


def hint(tool, python=None):
    text = _HINTS.get(tool, "install %s" % tool)
    return text % (python or sys.executable) if "%s" in text else text


def _result(**fields):
    fields.setdefault("protocol", PROTOCOL)
    sys.stdout.write("\n" + RESULT_MARK + json.dumps(fields, sort_keys=True) + "\n")
    sys.stdout.flush()


def _default_op():
    from tf_ge_custom import op_def

    return op_def.OPS[0]


def _op(type_name):
    """The op definition of ``--op``; ValueError names the known ones."""
    from tf_ge_custom import op_def

    if type_name is None:
        return _default_op()
    try:
        return op_def.get(type_name)
    except KeyError as e:
        raise ValueError(e.args[0])


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tf_ge_custom.kernels.compile_kernel",
        description="Compile an op's kernels of one SoC and dtype (every variant) into the "
                    "per-user kernel cache (run by the "
                    "GE library; tf-ge-custom build-kernels --cache is the command for people).")
    parser.add_argument("--describe", action="store_true",
                        help="print where the cache is and the key of this toolchain, then exit")
    parser.add_argument("--soc", help="the SoC, as --soc_version spells it")
    parser.add_argument("--dtype", help="one dtype of the op")
    parser.add_argument("--op", help="the op type (default: the package's first op, %s)"
                        % _default_op().type_name)
    parser.add_argument("--cache", help="the cache folder (default: as build-kernels --cache)")
    parser.add_argument("--key", help="the key the caller expects (refused if this toolchain's "
                                      "differs)")
    return parser


def _triton_error():
    """Why ``import triton`` fails in this Python, or "" when it imports. triton-ascend has no
    build for Python < 3.9, so on TF Adapter's 3.7 hosts this says what to do."""
    try:
        import triton  # noqa: F401
    except Exception as e:  # ImportError, or anything its import raises
        text = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        if sys.version_info < (3, 9):
            text += ("; this is Python %d.%d, for which triton-ascend has no build: run "
                     "`tf-ge-custom setup-builder` (a Python >= 3.9 builder venv)"
                     % sys.version_info[:2])
        return text
    return ""


def describe(env=None):
    """The ``--describe`` result: cache folder, key, its inputs, what a compile would miss."""
    import tf_ge_custom

    from . import cache

    location = cache.cache_dir(env)
    ident = cache.identity(env)
    return {"ok": True, "cache_dir": location.path, "cache_dir_from": location.source,
            # the GE library takes this Python only when it imports triton (kernel_compiler.cc)
            "python_version": "%d.%d.%d" % sys.version_info[:3],
            "triton_error": _triton_error(),
            "key": ident.key, "kernel_source_sha256": ident.kernel_source_sha256,
            "toolchain": ident.toolchain, "missing": list(ident.missing),
            "python": sys.executable,
            "package": os.path.dirname(os.path.abspath(tf_ge_custom.__file__)),
            # diagnostic: the GE library's bootstrap keeps TensorFlow out of this process
            "tensorflow_imported": "tensorflow" in sys.modules}


def main(argv=None, build=None):
    """Run the command; ``build`` replaces the builder (tests' doubles only)."""
    from tf_ge_custom.errors import KernelBuildError, KernelCacheError, ToolchainError

    from . import cache

    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse has printed the usage error
        _result(ok=False, kind="usage", error="bad arguments (see the log)", missing=[])
        return int(e.code or 2)
    if args.describe:
        try:
            _result(**describe())
        except KernelCacheError as e:
            _result(ok=False, kind="cache", error=str(e), missing=[])
            return 1
        return 0
    if not args.soc or not args.dtype:
        sys.stderr.write("%s: error: --soc and --dtype are required (or --describe)\n"
                         % parser.prog)
        _result(ok=False, kind="usage", error="--soc and --dtype are required", missing=[])
        return 2
    started = time.time()

    def progress(event):
        from .builder import print_progress

        print_progress(event, sys.stderr)

    def on_wait(pid):
        sys.stderr.write("waiting for %s, which is building %s %s into the cache\n"
                         % ("process %d" % pid if pid else "another process", args.soc,
                            args.dtype))
        sys.stderr.flush()

    try:
        done = cache.ensure(args.soc, args.dtype, cache=args.cache, key=args.key, build=build,
                            op=_op(args.op), progress=progress, on_wait=on_wait)
    except ValueError as e:
        sys.stderr.write("error: %s\n" % e)
        _result(ok=False, kind="usage", error=str(e), missing=[])
        return 2
    except ToolchainError as e:
        sys.stderr.write("error: %s\n" % e)
        missing = list(e.missing)
        _result(ok=False, kind="toolchain", missing=missing, error="; ".join(
            "%s is missing (%s)" % (tool, hint(tool)) for tool in missing) or str(e))
        return 1
    except (KernelBuildError, KernelCacheError, OSError) as e:
        sys.stderr.write("error: %s\n" % e)
        _result(ok=False, kind="build", error=str(e).splitlines()[0] if str(e) else repr(e),
                missing=[])
        return 1
    sys.stderr.write("%s %s: %s %s\n" % (args.soc, args.dtype, "built into" if done.built
                                         else "already in", done.path))
    _result(ok=True, entry=done.path, built=done.built, key=done.key,
            seconds=round(time.time() - started, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
