"""``tf-ge-custom`` (also ``python -m tf_ge_custom``): the package's command line.

The commands are the registry of :mod:`tf_ge_custom._commands`: one module each, with
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status). :func:`main` parses the
command line, runs the command, and catches the package's errors in one place: an error
prints ``tf-ge-custom COMMAND: error: <message>`` and, when it carries one, ``fix: <what to
do>``, and the command exits with the error's status (:mod:`tf_ge_custom.errors`).

Usage errors are one line (``tf-ge-custom export: error: unknown option --ouput (did you mean
--output?); see tf-ge-custom export --help``, exit status 2): :mod:`tf_ge_custom._usage`.

Start-up stays cheap: the package is imported without TensorFlow here (see
``tf_ge_custom/__init__.py``) and each command's module is imported only when it runs; no
command imports TensorFlow in this process except those that need the op (``export``,
``run-om``); ``doctor`` and ``selftest`` ask child processes.
"""
import importlib
import signal
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
    from . import _commands, _usage, op_def

    parser = _usage.CommandParser(
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
    from . import _commands, _usage

    command = _commands.get(name)
    module = importlib.import_module(command.module)
    parser = _usage.CommandParser(prog="%s %s" % (PROG, name))
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    check = getattr(module, "check_arguments", None)
    if check is not None:  # the options by syntax alone, before the command imports anything heavy
        check(args)
    return int(module.run(args) or 0)


def _run(argv):
    """Parse ``argv``, run the command, print what an error or a signal says; the exit status."""
    from . import _lifecycle, _quiet
    from .errors import TfGeCustomError

    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if not args.command:
        if rest:
            parser.refuse_extras(rest)  # one line, exits with 2
        parser.print_help()
        return 2
    prog = "%s %s" % (PROG, args.command)
    try:
        try:
            status = run_command(args.command, rest)
        finally:
            _quiet.restore()
        sys.stdout.flush()  # a reader gone away is noticed here, not at the interpreter's exit
        return status
    except _lifecycle.Interrupted as e:
        try:
            sys.stderr.write(_lifecycle.interrupted_line(prog, e))
        except _lifecycle.OutputClosed:  # SIGHUP: the terminal is gone, and no one to tell
            pass
        return e.exit_status
    except TfGeCustomError as e:
        sys.stdout.flush()
        sys.stderr.write(error_lines(prog, e))
        return e.exit_status
    except OSError as e:  # the file system refused what no check could foresee (disk full...)
        try:
            sys.stdout.flush()
        except OSError:
            pass
        sys.stderr.write("%s: error: %s\n" % (prog, _os_error_text(e)))
        return 1
    except MemoryError:  # a memory limit (ulimit -v) or a model too large for this machine
        sys.stderr.write("%s: error: out of memory (MemoryError): a memory limit such as ulimit -v, or a model "
                         "too large for this machine\n" % prog)
        return 1
    except Exception as e:
        if _lifecycle.working_directory() is not None:
            raise  # a bug: its traceback is what a report needs
        # a deleted working directory makes many a library call fail: name it, not them
        sys.stderr.write("%s: error: %s: %s: %s\n" % (prog, _lifecycle.vanished_directory_words(),
                                                      type(e).__name__, e))
        sys.stderr.write("fix: cd to an existing folder and run it again\n")
        return 1


def main(argv=None):
    """The command line; returns the exit status. SIGINT, SIGTERM, SIGHUP and SIGQUIT end the
    command cleanly (130, 143, 129, 131, one line saying what was interrupted), and a reader that goes away
    (``| head -1``) ends it quietly (141): :mod:`tf_ge_custom._lifecycle`."""
    from . import _lifecycle

    argv = list(sys.argv[1:] if argv is None else argv)
    _lifecycle.ensure_standard_streams()
    _lifecycle.install()
    try:
        with _lifecycle.guarded_output():
            try:
                return _run(argv)
            except SystemExit as e:  # argparse's --help and usage errors: their output, checked here
                try:
                    sys.stdout.flush()
                except OSError:
                    pass  # remembered as the output's error
                failed = _lifecycle.output_error()
                if failed is None:
                    raise
                # argparse swallowed it: say it, as `cat --help >/dev/full` does, and fail
                sys.stderr.write("%s: error: cannot write to standard output: %s\n" % (
                    PROG, _os_error_text(failed)))
                return 1 if not e.code else e.code
    except _lifecycle.OutputClosed:
        _lifecycle.discard_output()
        return 128 + signal.SIGPIPE
    except _lifecycle.Interrupted as e:  # before the command started, or after it ended
        try:
            sys.stderr.write(_lifecycle.interrupted_line(PROG, e))
        except (OSError, ValueError):
            pass
        return e.exit_status
    finally:
        _lifecycle.uninstall()


if __name__ == "__main__":
    sys.exit(main())
