"""``tf-ge-custom doctor``: check the installation and the Ascend stack, one line per check.

Each check says OK, INFO, WARN or FAIL, what it found and, for WARN and FAIL, the fix: a
command that works as printed wherever one exists (``export`` lines hold the exact value,
``source`` lines name the ``set_env.sh`` found on this host), else an :class:`Instruction`
for a person, printed as ``fix (by hand):`` and marked ``"fix_is_command": false`` in the
JSON. The exit status is non-zero only when a check FAILs. On a host with no Ascend
component at all (no TF Adapter, no CANN, no ``ASCEND_*`` variable, no ``/usr/local/Ascend``)
the stack's checks fold into one short INFO line (CPU mode) unless one FAILs; WARN is for a
partial or inconsistent stack. What this package installs itself (TensorFlow against the
build record, the op library, the XLA kernels, the OPP root, ``ASCEND_CUSTOM_OPP_PATH``)
decides everywhere. ``--json`` prints the same checks for machines, folded ones included.
The command line: ``tf_ge_custom/_commands/doctor.py``.

doctor never imports TensorFlow nor loads the op library itself: the TensorFlow and op
library checks read what one child process found (TensorFlow's version, the library's
checks and load, the op it registered), so that a damaged library is a FAIL line rather
than a crash of doctor, and doctor pays TensorFlow's import once.

Whether TF Adapter (TF1 and TF2) and GE would find our JSON and libraries is answered by
replicating their search rules (:mod:`tf_ge_custom._path_rules`) on this process's
environment, which ``import tf_ge_custom`` has already completed; programs that do not
import the package (``atc``) see the shell's environment, checked separately.

The checks live by concern: :mod:`.op_library` (TensorFlow, the op library, the XLA kernels),
:mod:`.opp_paths` (the OPP root, the environment and the adapters' and GE's path rules),
:mod:`.cann` (TF Adapter, the CANN toolkit, the GE library, the sunk / eager path),
:mod:`.online_compile` (what GE's TF parser needs to compile the op protos it generates),
:mod:`.kernels` (npubins, the kernel cache, the kernel builder, the kernel sets a board takes);
:mod:`.reporting` runs them and prints the report; :mod:`.results`, :mod:`.context`,
:mod:`.remedies` and :mod:`.probe` are what they share.
"""
from . import (cann, context, kernels, online_compile, op_library, opp_paths, probe, remedies,
               reporting, results)
from .cann import (check_cann, check_ge_finds_library, check_ge_library, check_npu_bridge,
                   check_npu_device, check_static_graph_path)
from .context import Context
from .remedies import REBUILD
from .kernels import (check_board_kernels, check_kernel_builder, check_kernel_cache, check_kernels,
                      check_npubin_toolchain)
from .online_compile import (check_online_compiler, check_online_toolkit,
                             check_online_working_directory)
from .op_library import check_op_library, check_tensorflow, check_xla_library
from .opp_paths import (check_custom_opp_path, check_custom_opp_search_order, check_home_path,
                        check_npu_placement, check_opp_path, check_opp_root,
                        check_shell_environment, check_tf1_finds_json, check_tf2_finds_json)
from .probe import dlopen_in_child, probe_tensorflow
from .reporting import (CHECKS, CPU_MODE, OWN_CHECKS, diagnose, drop_pointers, exit_status, fold_cpu_mode,
                        format_text, markdown_table, report, run_checks)
from .results import FAIL, INFO, OK, STATUSES, WARN, Check, Instruction, is_command, worst

__all__ = [
    "CHECKS", "CPU_MODE", "FAIL", "INFO", "OK", "OWN_CHECKS", "REBUILD", "STATUSES", "WARN",
    "Check", "Context", "Instruction", "check_board_kernels", "check_cann",
    "check_custom_opp_path", "check_custom_opp_search_order", "check_ge_finds_library",
    "check_ge_library", "check_home_path", "check_kernel_builder", "check_kernel_cache",
    "check_kernels", "check_npu_bridge", "check_npu_device", "check_npu_placement",
    "check_npubin_toolchain", "check_online_compiler", "check_online_toolkit",
    "check_online_working_directory", "check_op_library", "check_opp_path",
    "check_opp_root", "check_shell_environment", "check_static_graph_path", "check_tensorflow",
    "check_tf1_finds_json", "check_tf2_finds_json", "check_xla_library", "diagnose", "dlopen_in_child",
    "drop_pointers", "exit_status", "fold_cpu_mode", "format_text", "is_command", "markdown_table",
    "probe_tensorflow", "report", "run_checks", "worst",
]
