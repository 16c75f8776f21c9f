"""``tf-ge-custom`` (also ``python -m tf_ge_custom``): the package's command line.

The commands are the registry of :mod:`tf_ge_custom._commands`: one module each, with
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status). :func:`main` parses the
command line, runs the command, and catches the package's errors in one place: an error
prints ``tf-ge-custom COMMAND: error: <message>`` and, when it carries one, ``fix: <what to
do>``, and the command exits with the error's status (:mod:`tf_ge_custom.errors`).

Start-up stays cheap: the package is imported without TensorFlow here (see
``tf_ge_custom/__init__.py``) and each command's module is imported only when it runs; no
command imports TensorFlow in this process except those that need the op (``export``,
``run-om``); ``doctor`` and ``selftest`` ask child processes.
"""
import argparse
import importlib
import sys

PROG = "tf-ge-custom"


def version_text():
    """``tf-ge-custom X.Y.Z`` plus what the build recorded (no TensorFlow import)."""
    from . import _library
    from ._version import __version__
    from .errors import OpLibraryError

    try:
        built = (_library.build_info().get("tensorflow") or {}).get("version")
    except OpLibraryError as e:
        return "tf-ge-custom %s (build record unusable: %s)" % (__version__, e)
    return "tf-ge-custom %s (%s)" % (
        __version__, "op library built for TensorFlow %s" % built if built
        else "op library not built")


def _parser():
    from . import _commands, op_def

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Tools of the tf-ge-custom package (%s for TensorFlow on Ascend)."
        % ", ".join(op.type_name for op in op_def.OPS))
    parser.add_argument("--version", action="version", version=version_text(),
                        help="print the package version and the TensorFlow its op library "
                             "was built for, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _commands.COMMANDS:
        sub.add_parser(command.name, help=command.summary, add_help=False)
    return parser


def error_lines(prog, error):
    """What the command line prints for one of the package's errors: the ``error:`` line (the
    message, whole) and, when the error carries a fix its message does not already hold, a
    ``fix:`` line."""
    message = str(error).strip() or type(error).__name__
    lines = ["%s: error: %s" % (prog, message)]
    fix = str(getattr(error, "fix", "") or "").strip()
    if fix and fix not in message:
        lines.append("fix: %s" % fix)
    return "\n".join(lines) + "\n"


def _os_error_text(error):
    what = error.strerror or str(error)
    return "%s%s" % (what, ": %s" % error.filename if getattr(error, "filename", None) else "")


def run_command(name, argv):
    """Parse ``argv`` for the command ``name`` and run it; returns its exit status, or raises
    what it raised (argparse's own usage errors exit 2 through SystemExit)."""
    from . import _commands

    command = _commands.get(name)
    module = importlib.import_module(command.module)
    parser = argparse.ArgumentParser(prog="%s %s" % (PROG, name))
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(argv)) or 0)


def main(argv=None):
    from . import _quiet
    from .errors import TfGeCustomError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if not args.command:
        if rest:
            parser.error("unrecognized arguments: %s" % " ".join(rest))  # exits with 2
        parser.print_help()
        return 2
    prog = "%s %s" % (PROG, args.command)
    try:
        return run_command(args.command, rest)
    except TfGeCustomError as e:
        sys.stdout.flush()
        sys.stderr.write(error_lines(prog, e))
        return e.exit_status
    except OSError as e:  # the file system refused what no check could foresee (disk full...)
        sys.stdout.flush()
        sys.stderr.write("%s: error: %s\n" % (prog, _os_error_text(e)))
        return 1
    finally:
        _quiet.restore()


if __name__ == "__main__":
    sys.exit(main())
