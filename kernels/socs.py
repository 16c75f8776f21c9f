"""The SoCs the kernel builder compiles for, with their vector-core counts.

Source of the counts: the compiler's own target table, ``NPUTargetSpec.td`` in the public
AscendNPU-IR repository (github.com/Ascend/AscendNPU-IR,
``bishengir/include/bishengir/Dialect/HACC/Targets/NPUTargetSpec.td``: ``VectorCoreCount``
per target), which agrees with CANN's ``<arch>-linux/data/platform_config/<SoC>.ini``
``[SoCInfo] vector_core_cnt`` (48 on Ascend910B1/B2). bishengir-compile writes the same
number into every HIVM IR it emits (``VECTOR_CORE_COUNT``); the builder checks it against
this table, so a stale entry fails the build instead of shipping a wrong grid cap.

The list holds every A2 and A3 SoC that bishengir-compile accepts as ``--target`` and whose
name a kernel manifest can carry (``[A-Za-z0-9_]+``, docs/kernel-manifest.md). The builder
hands the target to triton-ascend itself, so triton-ascend 3.2.0's ``TRITON_ASCEND_ARCH`` list
(which lacks Ascend910B2C) does not limit it. Two known variants are left out, and
:func:`get` says why (``NOT_BUILDABLE``; docs/cann.md has the sources).
"""
from typing import NamedTuple


class SoC(NamedTuple):
    name: str  # as --soc_version / --target spell it
    family: str  # "A2" (Atlas A2, 910B) or "A3" (Atlas A3, 910_93)
    vector_cores: int  # AIV cores: the default cap on programs per launch


SOCS = {
    s.name: s
    for s in (
        SoC("Ascend910B1", "A2", 48),
        SoC("Ascend910B2", "A2", 48),
        SoC("Ascend910B2C", "A2", 48),
        SoC("Ascend910B3", "A2", 40),
        SoC("Ascend910B4", "A2", 40),
        SoC("Ascend910_9362", "A3", 40),
        SoC("Ascend910_9372", "A3", 40),
        SoC("Ascend910_9381", "A3", 48),
        SoC("Ascend910_9382", "A3", 48),
        SoC("Ascend910_9391", "A3", 48),
        SoC("Ascend910_9392", "A3", 48),
    )
}


# A2/A3 devices report these names too, but no npubin can be built for them here.
NOT_BUILDABLE = {
    "Ascend910B4-1": "an A2 SoC (40 vector cores) that bishengir-compile accepts as a target, but "
                     "a kernel manifest's SoC name cannot contain '-' (docs/kernel-manifest.md)",
    "Ascend910_9361": "an A3 SoC that neither bishengir-compile (AscendNPU-IR's target table) nor "
                      "triton-ascend knows as a target",
}


def get(name):
    """The :class:`SoC` called ``name``; ``KeyError`` lists the supported ones."""
    try:
        return SOCS[name]
    except KeyError:
        why = NOT_BUILDABLE.get(name)
        raise KeyError("unsupported SoC %r%s; supported: %s" % (
            name, " (%s)" % why if why else "", ", ".join(SOCS)))
