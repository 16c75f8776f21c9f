"""The SoCs the kernel builder compiles for, their vector-core counts and architecture, and
the board names a device may report for them.

Vector-core counts: the compiler's own target table, ``NPUTargetSpec.td`` in the public
AscendNPU-IR repository (github.com/Ascend/AscendNPU-IR,
``bishengir/include/bishengir/Dialect/HACC/Targets/NPUTargetSpec.td``: ``VectorCoreCount``
per target), which agrees with CANN's ``<arch>-linux/data/platform_config/<SoC>.ini``
``[SoCInfo] vector_core_cnt`` (48 on Ascend910B1/B2). bishengir-compile writes the same
number into every HIVM IR it emits (``VECTOR_CORE_COUNT``); the builder checks it against
this table, so a stale entry fails the build instead of shipping a wrong grid cap.

Architecture: every A2 (910B) and A3 (910_93) target of that table has the same memory
sizes and alignments (``Ascend910B_BaseSpec`` and ``Ascend910_93_BaseSpec`` are identical)
and differs only in its core counts; GE's platform resource ``version/NpuArch`` is ``2201``
for them (hicann/ge, ``runtime/v1/graph/load/model_manager/davinci_model.cc`` and its tests
pair ``2201`` with Ascend910B1), and GE's ``compilable_add_custom`` sample builds its kernel
for ``--npu-arch=dav-<NpuArch>``, not for a SoC name. The HIVM IR the builder produces for
two SoCs of one architecture differs only in the target name and the core counts
(docs/kernels.md, "Which kernels a board takes", has the diff). A kernel manifest records
``architecture``; the GE library takes an exact SoC match first, then a kernel set of the
same architecture, its program cap always from the running device's own vector-core count.

The list holds every A2 and A3 SoC that bishengir-compile accepts as ``--target`` and whose
name a kernel manifest can carry (``[A-Za-z0-9_]+``, docs/kernel-manifest.md). ``ALIASES``
holds the names devices report that are no build target of their own (``Ascend910B4-1``
has a '-'; ``Ascend910_9361`` is in no compiler's target table): each is served by the
kernels of a buildable SoC of the same architecture and vector-core count, and
build-kernels, list-kernels, doctor and selftest accept it.
"""
from typing import NamedTuple

# GE's NpuArch of every A2 and A3 part, spelled as the compilable_add_custom sample passes
# it to the compiler (dav-<NpuArch>).
ARCH_A2_A3 = "dav-2201"


class SoC(NamedTuple):
    name: str  # as --soc_version / --target spell it
    family: str  # "A2" (Atlas A2, 910B) or "A3" (Atlas A3, 910_93)
    vector_cores: int  # AIV cores: the default cap on programs per launch
    architecture: str = ARCH_A2_A3  # what an npubin targets (GE's NpuArch, "dav-" prefixed)


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


class Alias(NamedTuple):
    name: str  # as the runtime (aclrtGetSocName) and --soc_version spell it
    served_by: str  # the buildable SoC whose kernels it takes
    vector_cores: int
    source: str  # where the name and its core count come from


ALIASES = {
    a.name: a
    for a in (
        Alias("Ascend910B4-1", "Ascend910B4", 40,
              "hicann/ge HEAD compiler/engines/hccl_engine/.../device_capability.cc lists it as "
              "a 910B device; AscendNPU-IR's NPUTargetSpec.td has Ascend910B4_1 with the "
              "Ascend910B4 core counts (20 AI cores, 40 vector cores)"),
        Alias("Ascend910_9361", "Ascend910_9362", 40,
              "SoC tables of public Ascend software (found by code search) list it in the "
              "ascend910_93 family with 20 AI cores / 40 vector cores; no compiler target "
              "table (AscendNPU-IR, triton-ascend) knows it"),
    )
}


def board_names():
    """Every name accepted as a board: the buildable SoCs, then the aliases."""
    return list(SOCS) + list(ALIASES)


def resolve(name):
    """The buildable SoC name serving board ``name`` (itself for a buildable SoC);
    ``KeyError`` lists the accepted names."""
    if name in SOCS:
        return name
    alias = ALIASES.get(name)
    if alias is not None:
        return alias.served_by
    raise KeyError("unsupported SoC %r; supported: %s; board names served by one of them: %s" % (
        name, ", ".join(SOCS), ", ".join("%s (by %s)" % (a.name, a.served_by)
                                         for a in ALIASES.values())))


def get(name):
    """The :class:`SoC` whose kernels board ``name`` takes (an alias gives the SoC serving
    it); ``KeyError`` lists the supported ones."""
    return SOCS[resolve(name)]


def vector_cores_of(name):
    """The board's own vector-core count (an alias's, not its serving SoC's)."""
    if name in ALIASES:
        return ALIASES[name].vector_cores
    return get(name).vector_cores


def describe(name):
    """One phrase: ``"Ascend910B4-1 (served by Ascend910B4's kernels, architecture dav-2201)"``."""
    soc = get(name)
    if soc.name == name:
        return name
    return "%s (served by %s's kernels, architecture %s)" % (name, soc.name, soc.architecture)
