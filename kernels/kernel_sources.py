"""Where the GE library finds kernel sets, and which one serves a board: the same rule as the
core's (ge_ops/core kernel_supply.cc, docs/kernels.md "Which kernels a board takes"), for
``list-kernels``, ``doctor`` and ``selftest``.

Kernel sets are searched in this order: the package's own ``opp/kernels/<SoC>/`` (what the
wheel shipped, or ``TF_GE_CUSTOM_KERNELS_DIR`` at install time), then each folder of
``$TF_GE_CUSTOM_KERNELS`` (``:``-separated kernel bundles, ``build-kernels --bundle``); a SoC
is taken from the first folder holding it. A graph build for a board takes, in order: a
kernel set of its own SoC name, the per-user cache's entry of its own name, a kernel set of
another SoC of the same architecture (the manifest's ``architecture``), a compile.

A bundle folder is used only when it passes the trust rule (:mod:`tf_ge_custom._trust`), and
so is every manifest and npubin read from it; an entry of ``TF_GE_CUSTOM_KERNELS`` that is
relative, missing, not a folder (a file, a FIFO, a device) or not trusted is refused by name
(:func:`refused_bundles`), without opening it, as the GE library refuses it.
"""
import os
from typing import NamedTuple

ENV = "TF_GE_CUSTOM_KERNELS"


class KernelSet(NamedTuple):
    soc: str
    manifest_path: str
    source: str  # "package" or "bundle"
    folder: str  # the folder holding <SoC>/


def bundle_dirs(environ=None):
    """The folders of ``$TF_GE_CUSTOM_KERNELS``, in order, empties dropped."""
    value = (os.environ if environ is None else environ).get(ENV, "")
    return [d for d in value.split(":") if d]


class RefusedBundle(NamedTuple):
    folder: str  # the entry as written
    refusal: object  # tf_ge_custom._trust.Refusal

    def __str__(self):
        from tf_ge_custom import _trust as trust

        return "%s entry %s is refused: %s" % (ENV, trust.shown(self.folder), self.refusal)


def refused_bundles(environ=None):
    """The entries of ``$TF_GE_CUSTOM_KERNELS`` the GE library refuses: ``[RefusedBundle]``."""
    from tf_ge_custom import _trust as trust

    refused = []
    for folder in bundle_dirs(environ):
        refusal = trust.check(folder, trust.FOLDER)
        if refusal is not None:
            refused.append(RefusedBundle(folder, refusal))
    return refused


def load_set(kernel_set):
    """The validated manifest of ``kernel_set`` (npubins checksummed; a bundle's files must
    pass the trust rule too); raises ManifestError."""
    from tf_ge_custom import kernel_manifest

    return kernel_manifest.load_manifest(kernel_set.manifest_path, check_files=True,
                                         trust_rule=kernel_set.source == "bundle")


def kernel_sets(package_kernels_dir, environ=None):
    """Every kernel set the GE library would see, first folder first: ``[KernelSet]`` (the
    refused bundle folders contribute none: :func:`refused_bundles`)."""
    from tf_ge_custom import _trust as trust, kernel_manifest

    found, seen = [], set()
    refused = set(r.folder for r in refused_bundles(environ))
    # A trusted entry is read where the system resolves it ("..": up from a link's target).
    folders = [(package_kernels_dir, "package")] + [
        (trust.resolve(d), "bundle") for d in bundle_dirs(environ) if d not in refused]
    for folder, source in folders:
        for soc, path in kernel_manifest.find_manifests_in(folder).items():
            if soc in seen:
                continue
            seen.add(soc)
            found.append(KernelSet(soc, path, source, folder))
    return found


class Serving(NamedTuple):
    board: str
    kernel_set: KernelSet  # None when nothing serves it without a compile
    how: str  # "exact", "same architecture", or why none does


def serving(board, sets, dtype=None, op=None):
    """Which of ``sets`` (:func:`kernel_sets`) a graph build for ``board`` takes without a
    compile: its own SoC name first, then a set whose manifest records the board's
    architecture (and holds ``dtype``'s npubins when given)."""
    from tf_ge_custom.errors import ManifestError

    from . import socs

    arch = socs.get(board).architecture  # KeyError for an unknown board

    def holds(manifest):
        if dtype is None:
            return not manifest.ir_only
        return any(k.dtype == dtype and k.binary and (op is None or k.op == op)
                   for k in manifest.kernels)

    loaded = {}
    for s in sets:
        try:
            loaded[s.soc] = load_set(s)
        except ManifestError:
            continue
    for s in sets:
        if s.soc == board and s.soc in loaded and holds(loaded[s.soc]):
            return Serving(board, s, "exact")
    for s in sorted(sets, key=lambda s: s.soc):
        m = loaded.get(s.soc)
        if m is not None and s.soc != board and m.architecture == arch and holds(m):
            return Serving(board, s, "same architecture")
    return Serving(board, None, "no kernel set of %s or of architecture %s%s" % (
        board, arch, " with %s npubins" % dtype if dtype else " with npubins"))


def describe(serving_result):
    """One phrase for a :class:`Serving`."""
    s = serving_result.kernel_set
    if s is None:
        return "%s: %s; a graph build compiles them on this host" % (
            serving_result.board, serving_result.how)
    where = "the package" if s.source == "package" else "the kernel bundle %s" % s.folder
    if serving_result.how == "exact":
        return "%s: its own kernels from %s" % (serving_result.board, where)
    return "%s: the %s kernels (same architecture) from %s" % (serving_result.board, s.soc, where)
