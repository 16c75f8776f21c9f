"""The OPP root inside the installed package, and ``npu_supported_ops.json`` for it.

An "OPP root" is the folder layout that TF Adapter, GE and ATC search for custom-op
deliverables when it is listed in ``ASCEND_CUSTOM_OPP_PATH``::

    opp/
      op_graph/include/                  REG_OP header (GE step)
      op_graph/lib/linux/<arch>/*.so     GE custom-op library (GE step, CANN only)
      framework/tensorflow/npu_supported_ops.json   (this module generates it; lists
                                         the ops only where the GE library was built)
      kernels/<SoC>/                     npubins + manifest.json (kernels step)

``npu_supported_ops.json`` is generated here from :mod:`tf_ge_custom.op_def`, in Python,
so that a second op only needs a second definition. Pure Python (no TensorFlow): setup.py
and ``tf-ge-custom doctor`` use it.

The copy shipped in the source tree is the full document, what a build with the GE library
installs; regenerate it (a test fails when it drifts)::

    python -m tf_ge_custom.opp framework/tensorflow/npu_supported_ops.json
"""
import os
import sys

from . import op_def

# json, platform and tempfile are imported where used: this module runs on every
# ``import tf_ge_custom`` (through the environment activation), so it stays cheap.

OPP_DIRNAME = "opp"
# Paths relative to the OPP root, as the stack spells them (docs/ascend-stack.md).
SUPPORTED_OPS_JSON = "framework/tensorflow/npu_supported_ops.json"
GE_INCLUDE_DIR = "op_graph/include"
KERNELS_DIR = "kernels"
FRAMEWORK_DIR = "framework"
# GE only knows these two host folders under op_graph/lib/linux/.
KNOWN_ARCHES = ("x86_64", "aarch64")
_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "armv8": "aarch64"}

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def opp_root():
    """Absolute path of the OPP root inside the installed package (``.../tf_ge_custom/opp``).

    ``import tf_ge_custom`` puts it first in ``ASCEND_CUSTOM_OPP_PATH``. The folder exists
    once the package is built (``pip install .``); ``tf-ge-custom doctor`` checks it.
    """
    return os.path.join(_PACKAGE_DIR, OPP_DIRNAME)


def host_arch(machine=None):
    """The ``<arch>`` folder name GE uses for this host: ``x86_64`` or ``aarch64``.

    GE reads it from CANN's ``scene.info`` (``arch=``); Python's ``platform.machine()``
    spells the same two hosts ``x86_64``/``AMD64`` and ``aarch64``/``arm64``.
    """
    if machine is None:
        import platform

        machine = platform.machine()
    machine = machine.strip()
    lowered = machine.lower()
    return _ARCH_ALIASES.get(lowered, lowered)


def ge_library_dir(arch=None):
    """``op_graph/lib/linux/<arch>``: where GE dlopens every ``*.so`` of an OPP root."""
    return "op_graph/lib/linux/" + (arch or host_arch())


def supported_ops_document(ops=None):
    """The ``npu_supported_ops.json`` document: ``{type: {"isGray": b, "isHeavy": b}}``.

    TF Adapter places an op on the NPU when its type is a key whose value is a JSON object
    (tf_adapter/util/npu_ops_identifier.cc, ``IsNpuSupported``); ``isGray`` keeps it on
    the CPU in mix-compile mode and ``isHeavy`` turns unknown output dims into errors, so
    both come from the op definition (which keeps them false).
    """
    ops = op_def.OPS if ops is None else ops
    document = {}
    for op in ops:
        if op.type_name in document:
            raise ValueError("op type %r is defined twice" % op.type_name)
        document[op.type_name] = {"isGray": bool(op.is_gray), "isHeavy": bool(op.is_heavy)}
    return document


def npu_ops(build_info):
    """``(ops, why_none)``: the ops the installed ``npu_supported_ops.json`` lists for the
    build recorded in ``build_info``, and, when it lists none, why.

    An op listed there is handed to GE by TF Adapter, and GE can run it only through the GE
    library: without that library (no CANN toolkit at build time, or one too old to host
    it) the graph would fail, where the op's CPU kernel would have run it. So the ops are
    listed only when the GE step recorded that it built the library.
    """
    ge = (build_info or {}).get("ge")
    if ge and ge.get("built") is True:
        return tuple(op_def.OPS), None
    if ge is None:
        return (), "this build has no GE step record"
    return (), "the GE library was not built: %s" % (ge.get("reason") or "no reason recorded")


def supported_ops_json(ops=None):
    """The file's exact text (two-space indent, definition order, trailing newline)."""
    import json

    return json.dumps(supported_ops_document(ops), indent=2) + "\n"


def write_supported_ops(path, ops=None):
    """Write ``npu_supported_ops.json`` for ``ops`` to ``path`` (whole or not at all);
    returns ``path``."""
    from . import _atomic_files as atomic_files

    return atomic_files.write_text(path, supported_ops_json(ops))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        sys.stderr.write("usage: python -m tf_ge_custom.opp PATH   (writes npu_supported_ops.json)\n")
        return 2
    write_supported_ops(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
