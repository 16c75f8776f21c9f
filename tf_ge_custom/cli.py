"""``tf-ge-custom`` (also ``python -m tf_ge_custom``): the package's command line.

Each sub-command lives in its own module, which defines ``add_arguments(parser)`` and
``run(args) -> int`` (the exit status).

Start-up stays cheap: the package is imported without TensorFlow here (see
``tf_ge_custom/__init__.py``) and each command's module is imported only when it runs; no
command imports TensorFlow in this process (``doctor`` asks a child process).
"""
import argparse
import importlib
import sys

# (name, module, one-line help). Modules are imported only when their command runs.
COMMANDS = (
    ("doctor", "tf_ge_custom.doctor",
     "check the installation and the Ascend stack: OK / WARN / FAIL, each with its fix"),
    ("build-kernels", "tf_ge_custom.kernels.cli",
     "compile the Triton kernel to npubins + manifest for a list of SoCs"),
    ("list-kernels", "tf_ge_custom.kernels.list_cli",
     "list and verify the precompiled kernels a package or wheel carries"),
    ("export", "tf_ge_custom.export.cli.export_command",
     "export a TensorFlow model to a frozen graph (.pb), AIR or OM (offline inference)"),
    ("run-om", "tf_ge_custom.export.cli.run_om_command",
     "run an OM through ACL on the NPU and compare it with TensorFlow on the CPU"),
    ("setup-builder", "tf_ge_custom.builder_venv",
     "make the Python >= 3.9 venv the kernel builder runs in on a Python 3.7 host"),
    ("selftest", "tf_ge_custom.selftest.cli",
     "run every stage this host can run (CPU, NPU, kernels, OM): one PASS / FAIL / SKIP line each"),
)


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
    from . import op_def

    parser = argparse.ArgumentParser(
        prog="tf-ge-custom",
        description="Tools of the tf-ge-custom package (%s for TensorFlow on Ascend)."
        % ", ".join(op.type_name for op in op_def.OPS))
    parser.add_argument("--version", action="version", version=version_text(),
                        help="print the package version and the TensorFlow its op library "
                             "was built for, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in COMMANDS:
        sub.add_parser(name, help=help_text, add_help=False).set_defaults(_module=module)
    return parser


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if not getattr(args, "_module", None):
        if rest:
            parser.error("unrecognized arguments: %s" % " ".join(rest))  # exits with 2
        parser.print_help()
        return 2
    module = importlib.import_module(args._module)
    command = argparse.ArgumentParser(prog="tf-ge-custom " + args.command)
    module.add_arguments(command)
    return int(module.run(command.parse_args(rest)) or 0)


if __name__ == "__main__":
    sys.exit(main())
