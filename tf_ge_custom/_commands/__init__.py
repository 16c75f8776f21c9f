"""The commands of ``tf-ge-custom``: one module each, one registry.

Every command is a module here with ``add_arguments(parser)`` (its options, on an argparse
parser) and ``run(args)`` (its work; returns the exit status), and, where its options can be
checked by what they say alone, ``check_arguments(args)``, which the command line runs before
``run`` imports anything heavy (TensorFlow, the kernel compiler). The parser is
:class:`tf_ge_custom._usage.CommandParser`: usage errors are one line with a "did you mean". A command reports a refusal or
a failure by raising one of the package's errors (:mod:`tf_ge_custom.errors`), which carry
their exit status and fix; ``tf_ge_custom/cli.py`` catches them in one place and prints
``error:`` and ``fix:`` lines. The modules import nothing heavy at the top: a command's
module is imported only when it runs, and ``--help``, ``--version``, ``list-kernels`` and
``build-kernels`` never import TensorFlow.

Adding a command is one module here and one entry in :data:`COMMANDS`.
"""
from typing import NamedTuple


class Command(NamedTuple):
    name: str  # as typed: tf-ge-custom <name>
    module: str  # the module defining add_arguments(parser) and run(args)
    summary: str  # one line for tf-ge-custom --help


COMMANDS = (
    Command("doctor", "tf_ge_custom._commands.doctor",
            "check the installation and the Ascend stack: OK / WARN / FAIL, each with its fix"),
    Command("build-kernels", "tf_ge_custom._commands.build_kernels",
            "compile the Triton kernel to npubins + manifest for a list of SoCs"),
    Command("list-kernels", "tf_ge_custom._commands.list_kernels",
            "list and verify the precompiled kernels a package or wheel carries"),
    Command("export", "tf_ge_custom._commands.export",
            "export a TensorFlow model to a frozen graph (.pb), AIR or OM (offline inference)"),
    Command("run-om", "tf_ge_custom._commands.run_om",
            "run an OM through ACL on the NPU and compare it with TensorFlow on the CPU"),
    Command("setup-builder", "tf_ge_custom._commands.setup_builder",
            "make the Python >= 3.9 venv the kernel builder runs in on a Python 3.7 host"),
    Command("selftest", "tf_ge_custom._commands.selftest",
            "run every stage this host can run (CPU, NPU, kernels, OM): one PASS / FAIL / SKIP line each"),
    Command("clean", "tf_ge_custom._commands.clean",
            "list (--dry-run) and remove this user's kernel cache and builder venv, which pip uninstall leaves"),
)

NAMES = tuple(c.name for c in COMMANDS)


def get(name):
    """The :class:`Command` called ``name`` (KeyError naming the commands otherwise)."""
    for command in COMMANDS:
        if command.name == name:
            return command
    raise KeyError("no command %r; the commands are: %s" % (name, ", ".join(NAMES)))
