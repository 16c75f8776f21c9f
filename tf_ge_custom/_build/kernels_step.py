"""Build step: put the precompiled npubins and their manifests into the OPP root.

Source: ``$TF_GE_CUSTOM_KERNELS_DIR`` when set, else ``kernels/prebuilt/`` of the source
tree; each holds ``<SoC>/manifest.json`` plus the npubins it names (what
``tf-ge-custom build-kernels --out DIR`` writes). Every manifest is validated and every
binary checksummed before anything is copied; a bad one fails the build, naming the SoC
and the defect. Only the manifest and the binaries it names are copied (not the IR).
Records ``build_info["kernels"] = {"source": dir or None, "socs": {SoC: [dtypes]},
"python": <this interpreter>}``: the GE library runs that Python's builder when a graph
needs a kernel the package lacks (docs/kernels.md, "Compiled on first graph build").
"""
import os
import shutil
import sys

from . import BuildError
from .. import _atomic_files as atomic_files, kernel_manifest
from ..errors import ManifestError

ENV = "TF_GE_CUSTOM_KERNELS_DIR"
KERNELS = "kernels"  # folder under the OPP root


def source_dir(ctx):
    explicit = os.environ.get(ENV)
    if explicit:
        if not os.path.isdir(explicit):
            raise BuildError("%s=%s is not a folder; point it at the output of "
                             "tf-ge-custom build-kernels --out DIR" % (ENV, explicit))
        return os.path.abspath(explicit)
    return os.path.join(ctx.source_root, "kernels", "prebuilt")


def _load_all(src):
    """{SoC: KernelManifest} for every SoC folder under ``src``; refuses any defect."""
    manifests = {}
    for soc, path in kernel_manifest.find_manifests_in(src).items():
        try:
            m = kernel_manifest.load_manifest(path, check_files=True)
        except ManifestError as e:
            raise BuildError("refusing the precompiled kernels for %s: %s\nRebuild them with "
                             "tf-ge-custom build-kernels, or remove %s" % (soc, e,
                                                                            os.path.dirname(path)))
        if m.ir_only:
            raise BuildError("refusing %s: it is an IR-only manifest (build-kernels --ir-only) "
                             "and carries no npubins; build them on a host with CANN"
                             % path)
        manifests[soc] = m
    try:
        strays = [name for name in sorted(os.listdir(src))
                  if os.path.isdir(os.path.join(src, name)) and name not in manifests
                  and any(f.endswith(".npubin") for f in os.listdir(os.path.join(src, name)))]
    except OSError as e:
        raise BuildError("cannot list the precompiled kernels in %s: %s" % (src, e))
    if strays:
        raise BuildError("npubins without a manifest.json in %s: %s; the GE library cannot "
                         "launch a binary without its manifest. Rebuild with "
                         "tf-ge-custom build-kernels" % (src, ", ".join(strays)))
    return manifests


def _copy(m, dest_dir):
    os.makedirs(dest_dir, exist_ok=True)
    names = [k.binary for k in m.kernels] + [kernel_manifest.MANIFEST_NAME]
    for name in names:  # the manifest last: a reader never sees it before its binaries
        atomic_files.copy_file(os.path.join(m.directory, name), os.path.join(dest_dir, name))
    # verify the copy too: a short write must not ship
    kernel_manifest.load_manifest(os.path.join(dest_dir, kernel_manifest.MANIFEST_NAME))


def run(ctx):
    src = source_dir(ctx)
    manifests = _load_all(src) if os.path.isdir(src) else {}
    dest_root = os.path.join(ctx.opp_root, KERNELS)
    if os.path.isdir(dest_root):  # this step owns the SoC folders: no stale SoC survives
        for name in os.listdir(dest_root):  # (files, like the skeleton's note, stay)
            if os.path.isdir(os.path.join(dest_root, name)):
                shutil.rmtree(os.path.join(dest_root, name))
    os.makedirs(dest_root, exist_ok=True)
    for soc, m in manifests.items():
        try:
            _copy(m, os.path.join(dest_root, soc))
        except (OSError, ManifestError) as e:
            raise BuildError("copying the kernels for %s into %s failed: %s" % (soc, dest_root, e))
    ctx.build_info["kernels"] = {
        "source": src if manifests else None,
        "socs": {soc: m.dtypes() for soc, m in manifests.items()},
        "python": sys.executable,
    }
    if manifests:
        ctx.log("kernels: %s from %s" % (", ".join("%s (%s)" % (s, ",".join(m.dtypes()))
                                                   for s, m in manifests.items()), src))
    else:
        ctx.log("kernels: none precompiled in %s; the package carries no npubins (build them "
                "with tf-ge-custom build-kernels on a CANN host, see docs/kernels.md)" % src)
