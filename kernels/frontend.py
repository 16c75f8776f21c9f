"""Kernel source -> TTIR -> linalg, through triton-ascend's own stages, for a given SoC.

triton-ascend's last stage (linalg -> npubin) asks the local NPU for ``--target``
(``NPUUtils().get_arch()``), which a build host without an NPU cannot answer. So the
builder runs triton-ascend's first two stages itself, with the SoC as the target it hands
in, and replaces only that last stage with its own bishengir-compile run (bishengir.py).
Everything in this module imports triton lazily: call it only when building.
"""
import importlib.util
import os
import re
import sys
from typing import NamedTuple

from tf_ge_custom.errors import KernelBuildError


class Lowered(NamedTuple):
    ttir: str
    linalg: str  # ready for bishengir-compile (triton's own metadata attribute removed)
    mix_mode: str  # "aiv" / "aic" / "mix", read by triton-ascend from the linalg
    kernel_name: str
    options: object  # triton-ascend's NPUOptions the stages ran with


def kernel_source_path(spec):
    """The file under kernels/ that defines ``spec.entry``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), spec.source)


def load_kernel(spec, path=None):
    """Import the kernel source by path (not as a package module: importing
    tf_ge_custom would pull in TensorFlow) and return its ``@triton.jit`` function."""
    path = path or kernel_source_path(spec)
    module_name = "_tf_ge_custom_kernel_" + re.sub(r"\W", "_", spec.entry)
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__file__", None) != path:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(loader_spec)
        # triton reads the function's source through its module: keep it registered
        sys.modules[module_name] = module
        loader_spec.loader.exec_module(module)
    try:
        return getattr(module, spec.entry)
    except AttributeError:
        raise KernelBuildError("%s defines no %r, the kernel entry the op definition names"
                               % (path, spec.entry))


def signature(kernel, spec, dtype):
    """triton signature and constants for ``dtype``: op tensors are pointers to the
    element type, ``n_elements`` is a 32-bit count (the host chunks larger tensors)."""
    params = [p.name for p in kernel.params if not p.is_constexpr]
    if len(params) != len(spec.params):
        raise KernelBuildError(
            "%s takes %d runtime parameters (%s) but the op definition lists %d (%s)"
            % (spec.entry, len(params), ", ".join(params), len(spec.params),
               ", ".join(spec.params)))
    sig = {}
    for name, role in zip(params, spec.params):
        sig[name] = "i32" if role == "n_elements" else "*" + dtype.triton
    constexprs = [p.name for p in kernel.params if p.is_constexpr]
    if constexprs != ["BLOCK_SIZE"]:
        raise KernelBuildError("%s must take exactly one compile-time parameter, BLOCK_SIZE "
                               "(from the op definition); found %s" % (spec.entry, constexprs))
    return sig, {"BLOCK_SIZE": spec.block_size}


def lower(kernel, spec, dtype, soc):
    """TTIR and linalg of ``kernel`` for ``dtype`` (an op_def.DType) on ``soc``."""
    from triton._C.libtriton import ir
    from triton.backends.ascend import compiler as ascend
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource

    target = GPUTarget("npu", soc, 0)
    backend = ascend.AscendBackend(target)
    options = backend.parse_options({})
    stages = {}
    backend.add_stages(stages, options)
    sig, constants = signature(kernel, spec, dtype)
    source = ASTSource(kernel, sig, constants=constants)
    metadata = dict(options.__dict__)
    metadata.update(target=target, hash="tf-ge-custom-%s-%s-%s" % (spec.entry, dtype.name, soc))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        module = source.make_ir(options, backend.get_codegen_implementation(),
                                backend.get_module_map(), context)
        module = stages["ttir"](module, metadata)
        ttir = str(module)
        linalg = stages["ttadapter"](module, metadata)
    except Exception as e:  # triton's CompilationError, CalledProcessError of the adapter
        detail = getattr(e, "stderr", None)
        detail = detail.decode("utf-8", "replace")[-4000:] if isinstance(detail, bytes) else ""
        raise KernelBuildError("lowering %s (%s) for %s to linalg failed: %s\n%s"
                               % (spec.entry, dtype.name, soc, e, detail))
    # triton-ascend's own npubin stage starts with this: it reads mix_mode/kernel_name
    # from the linalg and strips the attribute bishengir-compile does not accept.
    linalg, metadata = ascend._parse_linalg_metadata(linalg, metadata)
    return Lowered(ttir, linalg, metadata["mix_mode"], metadata["kernel_name"], options)
