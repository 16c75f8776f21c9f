"""The one place that runs bishengir-compile: linalg -> HIVM IR (-> npubin through hivmc).

bishengir-compile lowers the linalg to HIVM IR, writes it to ``module.hivm.opt.mlir``
(kept with ``--save-temps``) and then runs hivmc on it; without hivmc it stops there with
"Cannot find hivmc". The builder reads the host-argument layout from that HIVM IR in
both cases, so the layout in the manifest is the one hivmc compiled.

With ``-o <dir>/kernel``, hivmc writes ``kernel.o`` (the npubin; ``kernel_reloc.o`` with
older bishengir) and ``libkernel.so`` (host callbacks) beside it, as triton-ascend's own
npubin stage expects.
"""
import os
from typing import NamedTuple, Optional

from tf_ge_custom import _processes
from tf_ge_custom.errors import CommandError, KernelBuildError

HIVM_IR_NAME = "module.hivm.opt.mlir"
OUTPUT_STEM = "kernel"
_BINARY_NAMES = ("kernel.o", "kernel_reloc.o")
_CALLBACKS_NAME = "libkernel.so"
_HIVMC_MISSING = "Cannot find hivmc"

# The flags triton-ascend 3.2.0's A2/A3 npubin stage derives from its NPUOptions, in its
# order; None-valued options are left to bishengir-compile's defaults, as triton does.
_OPTION_FLAGS = (
    ("multibuffer", "--enable-auto-multi-buffer"),
    ("enable_auto_bind_sub_block", "--enable-auto-bind-sub-block"),
    ("enable_hivm_auto_cv_balance", "--enable-hivm-auto-cv-balance"),
    ("sync_solver", "--enable-hivm-graph-sync-solver"),
    ("unit_flag", "--enable-hivm-unit-flag-sync"),
    ("inject_barrier_all", "--enable-hivm-inject-barrier-all-sync"),
    ("inject_block_all", "--enable-hivm-inject-block-all-sync"),
    ("limit_auto_multi_buffer_only_for_local_buffer",
     "--limit-auto-multi-buffer-only-for-local-buffer"),
    ("set_workspace_multibuffer", "--set-workspace-multibuffer"),
    ("tile_mix_vector_loop", "--tile-mix-vector-loop"),
    ("tile_mix_cube_loop", "--tile-mix-cube-loop"),
    ("limit_auto_multi_buffer_of_local_buffer", "--limit-auto-multi-buffer-of-local-buffer"),
    ("disable_auto_inject_block_sync", "--disable-auto-inject-block-sync"),
)


class Compiled(NamedTuple):
    hivm_ir: str
    binary: Optional[bytes]  # None when hivmc is missing
    callbacks: Optional[str]  # path of libkernel.so when hivmc wrote one
    hivmc_missing: bool
    command: tuple


def _flag_value(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


def command(bishengir, linalg_path, soc, workdir, options=None):
    """The bishengir-compile command line for one kernel (``options``: triton's NPUOptions)."""
    cmd = [bishengir, linalg_path, "--target=%s" % soc]
    for field, flag in _OPTION_FLAGS:
        value = getattr(options, field, None)
        if value is not None:
            cmd.append("%s=%s" % (flag, _flag_value(value)))
    cmd += ["--enable-hfusion-compile=true", "--enable-hivm-compile=true",
            "--enable-triton-kernel-compile=true",
            "--save-temps=%s" % workdir, "-o", os.path.join(workdir, OUTPUT_STEM)]
    return cmd


def compile_linalg(bishengir, linalg, soc, workdir, options=None, env=None, timeout=1800):
    """Run bishengir-compile on ``linalg`` text in ``workdir`` (created empty)."""
    os.makedirs(workdir, exist_ok=True)
    linalg_path = os.path.join(workdir, "kernel.linalg.mlir")
    with open(linalg_path, "w") as f:
        f.write(linalg)
    cmd = command(bishengir, linalg_path, soc, workdir, options)
    try:
        proc = _processes.run(cmd, timeout=timeout, env=env, check=False)
    except CommandError as e:
        raise KernelBuildError("cannot run bishengir-compile: %s" % e)
    hivm_path = os.path.join(workdir, HIVM_IR_NAME)
    hivm_ir = None
    if os.path.isfile(hivm_path):
        with open(hivm_path) as f:
            hivm_ir = f.read()
    if proc.returncode != 0:
        if hivm_ir and _HIVMC_MISSING in proc.output:
            return Compiled(hivm_ir, None, None, True, tuple(cmd))
        raise KernelBuildError("bishengir-compile failed for %s (exit %d)\ncommand: %s\n%s"
                               % (soc, proc.returncode, _quote(cmd), proc.output[-6000:]))
    if hivm_ir is None:
        raise KernelBuildError("bishengir-compile succeeded but left no %s in %s; cannot read "
                               "the host-argument layout\ncommand: %s" % (HIVM_IR_NAME, workdir,
                                                                          _quote(cmd)))
    for name in _BINARY_NAMES:
        path = os.path.join(workdir, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                binary = f.read()
            break
    else:
        raise KernelBuildError("bishengir-compile (with hivmc) succeeded but wrote none of %s "
                               "in %s (found: %s)\ncommand: %s"
                               % (", ".join(_BINARY_NAMES), workdir,
                                  ", ".join(sorted(os.listdir(workdir))), _quote(cmd)))
    if not binary:
        raise KernelBuildError("hivmc wrote an empty %s for %s" % (path, soc))
    callbacks = os.path.join(workdir, _CALLBACKS_NAME)
    return Compiled(hivm_ir, binary, callbacks if os.path.isfile(callbacks) else None, False,
                    tuple(cmd))


_quote = _processes.command_line
