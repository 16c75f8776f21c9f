"""Where the kernel build's tools are, and which versions they are.

The stages and what they need (docs/ascend-stack.md, "The Triton toolchain"):
  TTIR and linalg  triton-ascend (module ``triton`` with ``triton.backends.ascend``; needs
                   pybind11); its wheel ships ``triton-adapter-opt``
  HIVM IR          ``bishengir-compile`` (PyPI ``ascendnpu-ir`` or a CANN toolkit)
  npubin           ``hivmc`` (CANN toolkit only), which bishengir-compile runs itself,
                   looking in ``$BISHENG_INSTALL_PATH`` and then ``$PATH``

Nothing here imports triton at module import: the CLI must start without it.
"""
import os
import re
import shutil

from tf_ge_custom import _processes
from tf_ge_custom.errors import CommandError, ToolchainError

BISHENGIR_ENV = "TF_GE_CUSTOM_BISHENGIR_COMPILE"  # explicit bishengir-compile to use
TRITON_ASCEND_VERSION = "3.2.0"  # the version whose stages and metadata this builder reads


def _executable(path):
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def find_bishengir_compile(env=None):
    """bishengir-compile: ``$TF_GE_CUSTOM_BISHENGIR_COMPILE``, then ``$PATH`` (a sourced CANN
    puts its own there, paired with its hivmc), then the one in the ``ascendnpu-ir`` wheel."""
    env = os.environ if env is None else env
    explicit = env.get(BISHENGIR_ENV)
    if explicit:
        found = _executable(explicit)
        if not found:
            raise ToolchainError("%s=%s is not an executable file" % (BISHENGIR_ENV, explicit),
                                 missing=("bishengir-compile",))
        return found
    on_path = shutil.which("bishengir-compile", path=env.get("PATH", os.defpath))
    if on_path:
        return on_path
    try:
        import ascendnpuir  # PyPI ascendnpu-ir: ships the binary, no Python API needed
    except ImportError:
        return None
    return _executable(os.path.join(os.path.dirname(ascendnpuir.__file__), "bin",
                                    "bishengir-compile"))


def find_hivmc(env=None):
    """The hivmc that bishengir-compile will run, found the way it looks for it, or None."""
    env = os.environ if env is None else env
    install = env.get("BISHENG_INSTALL_PATH")
    if install:
        found = _executable(os.path.join(install, "hivmc"))
        if found:
            return found
    return shutil.which("hivmc", path=env.get("PATH", os.defpath))


def check_triton_ascend():
    """Import triton and make sure it is triton-ascend; return its version."""
    try:
        import triton
        import triton.backends.ascend.compiler  # noqa: F401
    except ImportError as e:
        raise ToolchainError(
            "the kernel builder needs triton-ascend %s (and pybind11) in this Python "
            "environment, but importing it failed: %s. Install it: pip install "
            "triton-ascend==%s pybind11 ascendnpu-ir (PyPI triton, the CUDA one, cannot "
            "compile for Ascend)" % (TRITON_ASCEND_VERSION, e, TRITON_ASCEND_VERSION),
            missing=("triton-ascend",))
    return distribution_version("triton-ascend") or getattr(triton, "__version__", "unknown")


def distribution_version(name):
    """The installed version of distribution ``name``, or None."""
    try:
        from importlib import metadata  # novermin (guarded: 3.7 falls back below)
    except ImportError:  # Python 3.7: the backport, else setuptools' pkg_resources
        try:
            import importlib_metadata as metadata
        except ImportError:
            return _pkg_resources_version(name)
    try:
        return metadata.version(name)
    except Exception:  # PackageNotFoundError
        return None


def _pkg_resources_version(name):
    try:
        import pkg_resources
    except ImportError:
        return None
    try:
        return pkg_resources.get_distribution(name).version
    except Exception:  # DistributionNotFound, or a damaged record
        return None


def tool_version(path, name):
    """``X.Y.Z`` from ``<tool> --version`` (its first line if it has no version number)."""
    try:
        text = _processes.run([path, "--version"], timeout=60, check=False).output.strip()
    except CommandError as e:
        raise ToolchainError("cannot run %s --version: %s" % (path, e), missing=(name,))
    match = re.search(r"%s\s+v?(\d+\.\d+\.\d+\S*)" % re.escape(name), text)
    if match:
        return match.group(1)
    return text.splitlines()[0] if text else "unknown"


def cann_version(env=None):
    """The CANN toolkit version under ``$ASCEND_HOME_PATH`` (or ``$ASCEND_TOOLKIT_HOME``), read
    the way the build and ``doctor`` read it (tf_ge_custom/_build/cann_toolkit.py)."""
    from tf_ge_custom._build.cann_toolkit import toolkit_version

    env = os.environ if env is None else env
    return toolkit_version(env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME"))[0]
