"""The SoCs the kernel builder compiles for, with their vector-core counts.

Source of the counts: the compiler's own target table, ``NPUTargetSpec.td`` in the public
AscendNPU-IR repository (github.com/Ascend/AscendNPU-IR,
``bishengir/include/bishengir/Dialect/HACC/Targets/NPUTargetSpec.td``: ``VectorCoreCount``
per target), which agrees with CANN's ``<arch>-linux/data/platform_config/<SoC>.ini``
``[SoCInfo] vector_core_cnt`` (48 on Ascend910B1/B2). bishengir-compile writes the same
number into every HIVM IR it emits (``VECTOR_CORE_COUNT``); the builder checks it against
this table, so a stale entry fails the build instead of shipping a wrong grid cap.

The list is the intersection of triton-ascend 3.2.0's accepted A2/A3 targets
(``TRITON_ASCEND_ARCH``) and bishengir-compile's ``--target`` values.
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


def get(name):
    """The :class:`SoC` called ``name``; ``KeyError`` lists the supported ones."""
    try:
        return SOCS[name]
    except KeyError:
        raise KeyError("unsupported SoC %r; supported: %s" % (name, ", ".join(SOCS)))
