"""Kernel source -> TTIR -> linalg, through triton-ascend's own stages, for a given SoC.

triton-ascend's last stage (linalg -> npubin) asks the local NPU for ``--target``
(``NPUUtils().get_arch()``), which a build host without an NPU cannot answer. So the
builder runs triton-ascend's first two stages itself, with the SoC as the target it hands
in, and replaces only that last stage with its own bishengir-compile run (bishengir.py).

Each kernel is compiled under its own entry symbol (``op_def.OpDefinition.entry_name``:
one per variant and dtype), not under the name of the ``@triton.jit`` function that
computes it: triton names the device function after the JIT function's ``repr`` (the
``repr=`` option of ``triton.jit``, by default the function's name), so :func:`lower` hands
triton the same function under that name, and checks the name the compiler then reports.
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
    """The file under kernels/ that defines every variant of ``spec`` (an op_def.KernelSpec)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), spec.source)


def load_kernel(spec, variant, path=None):
    """Import the kernel source by path (not as a package module: importing
    tf_ge_custom would pull in TensorFlow) and return ``variant``'s ``@triton.jit``
    function (``variant.function``)."""
    path = path or kernel_source_path(spec)
    module_name = "_tf_ge_custom_kernels_" + re.sub(r"\W", "_", spec.source)
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__file__", None) != path:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(loader_spec)
        # triton reads the function's source through its module: keep it registered
        sys.modules[module_name] = module
        loader_spec.loader.exec_module(module)
    try:
        return getattr(module, variant.function)
    except AttributeError:
        raise KernelBuildError("%s defines no %r, the kernel function of variant %s in the op "
                               "definition" % (path, variant.function, variant.name))


def named(kernel, entry):
    """``kernel`` (a ``@triton.jit`` function) as a JIT function that triton compiles into a
    device function named ``entry``: the same Python function, with triton's ``repr``
    option naming it."""
    import triton

    return triton.jit(kernel.fn, repr=lambda _specialization: entry)


def is_pointer_param(role):
    """Whether a parameter role of op_def (``input:0``, ``dim:3``, ...) is a tensor pointer."""
    return role.split(":")[0] in ("input", "output")


def signature(kernel, variant, dtype, op=None):
    """triton signature and constants of ``variant`` for ``dtype``: operands are pointers to
    the element type, every integer parameter is 32-bit (the host chunks larger tensors), an
    ``attr:<name>`` parameter is a scalar of the attribute's type (``op``'s OpAttr: fp32 for
    a float)."""
    params = [p.name for p in kernel.params if not p.is_constexpr]
    if len(params) != len(variant.params):
        raise KernelBuildError(
            "%s takes %d runtime parameters (%s) but the op definition's variant %s lists %d "
            "(%s)" % (variant.function, len(params), ", ".join(params), variant.name,
                      len(variant.params), ", ".join(variant.params)))
    sig = {}
    for name, role in zip(params, variant.params):
        if role.startswith("attr:"):
            if op is None:
                raise KernelBuildError("%s: the parameter %s (%s) is an attribute; its op is needed "
                                       "to type it" % (variant.function, name, role))
            try:
                sig[name] = op.attr(role.split(":", 1)[1]).type_record().triton
            except KeyError as e:
                raise KernelBuildError("%s: %s" % (variant.function, e.args[0]))
        else:
            sig[name] = "*" + dtype.triton if is_pointer_param(role) else "i32"
    constexprs = [p.name for p in kernel.params if p.is_constexpr]
    wanted = [name for name, _ in variant.constants]
    if constexprs != wanted:
        raise KernelBuildError("%s takes the compile-time parameters %s; the op definition's "
                               "variant %s gives %s" % (variant.function, constexprs, variant.name,
                                                        wanted))
    return sig, dict(variant.constants)


def lower(kernel, variant, dtype, soc, entry, op=None):
    """TTIR and linalg of ``kernel`` (``variant``'s function) for ``dtype`` (an op_def.DType)
    on ``soc``, its device function named ``entry`` (``op``: the op definition, for the types
    of its attribute parameters)."""
    from triton._C.libtriton import ir
    from triton.backends.ascend import compiler as ascend
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource

    target = GPUTarget("npu", soc, 0)
    backend = ascend.AscendBackend(target)
    options = backend.parse_options({})
    stages = {}
    backend.add_stages(stages, options)
    sig, constants = signature(kernel, variant, dtype, op)
    source = ASTSource(named(kernel, entry), sig, constants=constants)
    metadata = dict(options.__dict__)
    metadata.update(target=target, hash="tf-ge-custom-%s-%s-%s" % (variant.name, dtype.name, soc))
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
        raise KernelBuildError("lowering %s (variant %s, %s) for %s to linalg failed: %s\n%s"
                               % (entry, variant.name, dtype.name, soc, e, detail))
    # triton-ascend's own npubin stage starts with this: it reads mix_mode/kernel_name
    # from the linalg and strips the attribute bishengir-compile does not accept.
    linalg, metadata = ascend._parse_linalg_metadata(linalg, metadata)
    if metadata["kernel_name"] != entry:
        raise KernelBuildError("triton-ascend named the kernel of %s (variant %s, %s) %r, not its "
                               "entry name %r; the npubin would not hold the symbol GE launches"
                               % (variant.function, variant.name, dtype.name,
                                  metadata["kernel_name"], entry))
    return Lowered(ttir, linalg, metadata["mix_mode"], metadata["kernel_name"], options)
