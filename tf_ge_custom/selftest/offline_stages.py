"""The stages about kernels and the offline route: packaged npubins, the kernel cache, OM.

KERNELS reads the package's own files (the manifest reader, no device). COMPILE_AT_BUILD,
EXPORT_OM and RUN_OM call CANN's tools and the NPU through ``ctx.device``
(:mod:`.device`) and judge what comes back.
"""
import os
import sys
import time

from .. import op_def
from .child import failed, passed, skipped

EXPORT_SHAPE = (4, 8)  # static shapes: atc needs them (docs/export.md)
MODEL_FOLDER = "saved_model"
OM_PREFIX = "model"


def _judge_manifest(path, soc):
    """(problem or "", manifest) for the manifest at ``path``, its binaries checked."""
    from .. import kernel_manifest
    from ..errors import ManifestError

    try:
        manifest = kernel_manifest.load_manifest(path, check_files=True, expected_soc=soc)
    except ManifestError as e:
        return "%s is refused (%s): %s" % (path, getattr(e, "kind", "invalid"), e), None
    problems = []
    for op in op_def.OPS:  # AddCustom's as they always read; another op's named
        problems += ["%s %s" % (op.type_name, p) if op is not op_def.ADD_CUSTOM else p
                     for p in missing_kernels(manifest, op)]
    if problems:
        return "%s has no npubin for %s%s" % (path, "; ".join(problems),
                                              " (built IR only, without CANN)" if manifest.ir_only else ""), manifest
    return "", manifest


def missing_kernels(manifest, op=op_def.ADD_CUSTOM, shown=6):
    """What ``manifest`` lacks of ``op``'s npubins, as phrases: the dtypes with none at all,
    then the kernel variants missing for the other dtypes (Execute picks a variant per call
    from the inputs' shapes, so every one of them must be there: docs/kernels.md)."""
    have = set((k.variant, k.dtype) for k in manifest.kernels if k.op == op.type_name and k.binary)
    have_dtypes = set(d for _, d in have)
    problems = []
    dtypes = [d for d in op.dtypes if d not in have_dtypes]
    if dtypes:
        problems.append(", ".join(dtypes))
    pairs = ["%s/%s" % (v.name, d) for d in op.dtypes if d in have_dtypes
             for v in op.kernel.variants if (v.name, d) not in have]
    if pairs:
        more = " and %d more" % (len(pairs) - shown) if len(pairs) > shown else ""
        problems.append("the kernel variant%s %s%s" % ("s" if len(pairs) > 1 else "", ", ".join(pairs[:shown]), more))
    return problems


def _kernel_sets_for(board, root):
    """``({soc: manifest path}, soc, note)``: the kernel sets the GE library sees (the package's,
    then the bundles of $TF_GE_CUSTOM_KERNELS) and the SoC whose set serves ``board`` (itself,
    or one of its architecture: docs/kernels.md), with a phrase saying which and from where."""
    from .. import opp
    from ..kernels import kernel_sources

    sets = kernel_sources.kernel_sets(os.path.join(root, opp.KERNELS_DIR))
    manifests = {s.soc: s.manifest_path for s in sets}
    try:
        served = kernel_sources.serving(board, sets)
    except KeyError:
        return manifests, board, ""
    if served.kernel_set is None:
        return manifests, board, ""
    return manifests, served.kernel_set.soc, kernel_sources.describe(served)


def kernels(ctx):
    from .. import opp

    root = opp.opp_root()
    manifests, soc, note = _kernel_sets_for(ctx.soc, root)
    if soc != ctx.soc:  # a board served by another SoC's kernels of its architecture
        problem, manifest = _judge_manifest(manifests[soc], soc)
        if problem:
            return failed(problem)
        return passed("%s; manifest valid, sizes and sha256 verified; built with triton-ascend %s, CANN %s" % (
            note, manifest.toolchain.get("triton_ascend"), manifest.toolchain.get("cann")),
            manifest=manifests[soc], toolchain=manifest.toolchain)
    if ctx.soc not in manifests and ctx.host.build_kernels_cache:
        return skipped("no packaged npubins for %s: kernels for it are compiled at graph build (COMPILE_AT_BUILD "
                       "checks that)" % ctx.soc, available=sorted(manifests))
    if ctx.soc not in manifests:
        return failed("no npubins for %s in %s (the package has them for: %s); build them on a CANN host "
                      "(tf-ge-custom build-kernels --soc %s) and reinstall the package (docs/kernels.md)" % (
                          ctx.soc, os.path.join(root, opp.KERNELS_DIR), ", ".join(manifests) or "no SoC", ctx.soc),
                      available=sorted(manifests))
    problem, manifest = _judge_manifest(manifests[ctx.soc], ctx.soc)
    if problem:
        return failed(problem)
    toolchain = manifest.toolchain
    return passed("%d npubins for %s (%s), manifest valid, sizes and sha256 verified; built "
                  "with triton-ascend %s, CANN %s" % (
                      sum(len(op.kernel.variants) * len(op.dtypes) for op in op_def.OPS), ctx.soc,
                      "; ".join("%s: %d kernel variant%s x %s" % (
                          op.type_name, len(op.kernel.variants), "s" if len(op.kernel.variants) > 1 else "",
                          ", ".join(op.dtypes)) for op in op_def.OPS),
                      toolchain.get("triton_ascend"), toolchain.get("cann")),
                  manifest=manifests[ctx.soc], toolchain=toolchain)


def compile_at_build(ctx):
    """``build-kernels --soc SOC --cache`` into a fresh cache: the compile GE's graph build runs
    for a SoC without a packaged npubin; every kernel variant of every dtype must come out, checked by
    the manifest reader."""
    cache = os.path.join(ctx.workdir, "kernel-cache")
    started = time.time()
    status, output = ctx.device.build_kernels_cache(ctx.soc, cache, None)
    seconds = time.time() - started
    sys.stdout.write(output)
    tail = " | ".join([l.strip() for l in output.splitlines() if l.strip()][-3:])
    if status != 0:
        return failed("tf-ge-custom build-kernels --soc %s --cache exited with status %d: %s" % (
            ctx.soc, status, tail or "no output"), seconds=seconds)
    found = sorted(os.path.join(d, "manifest.json") for d, _, names in os.walk(cache) if "manifest.json" in names)
    if not found:
        return failed("build-kernels --cache exited 0 but wrote no manifest.json under %s" % cache)
    problems = []
    from ..kernels import socs

    try:
        built_soc = socs.resolve(ctx.soc)  # a board name's entry holds the SoC built for it
    except KeyError:
        built_soc = ctx.soc
    for path in found:
        problem, _ = _judge_manifest(path, built_soc)
        if not problem:
            return passed("kernels for %s compiled into the cache in %.1f s (%s)" % (ctx.soc, seconds, path),
                          seconds=seconds, manifest=path)
        problems.append(problem)
    return failed("; ".join(problems), seconds=seconds)


def model_ops():
    """The ops of the EXPORT_OM model in the order it applies them: add_custom(x, y), then each
    other op of the package with a float32 kernel, on the result so far (every input), with
    its attributes' defaults."""
    return [op_def.ADD_CUSTOM] + [op for op in op_def.OPS
                                  if op is not op_def.ADD_CUSTOM and "float32" in op.dtypes]


def _save_model(folder, shape):
    """A TF1-style SavedModel (graph, serving signature) with z = add_custom(x, y) fed through
    every other op of the package (:func:`model_ops`): it builds on TensorFlow 1.15 and 2.x
    alike."""
    import tensorflow as tf

    import tf_ge_custom

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape, name="x")
        y = tf.compat.v1.placeholder(tf.float32, shape, name="y")
        z = tf_ge_custom.add_custom(x, y)
        for op in model_ops()[1:]:
            z = getattr(tf_ge_custom, op.python_name)(*[z] * len(op.inputs))
        z = tf.identity(z, name="z")
        with tf.compat.v1.Session(graph=graph) as session:
            tf.compat.v1.saved_model.simple_save(session, folder, inputs={"x": x, "y": y}, outputs={"z": z})


def export_om(ctx):
    import numpy as np

    model = os.path.join(ctx.workdir, MODEL_FOLDER)
    prefix = os.path.join(ctx.workdir, OM_PREFIX)
    _save_model(model, EXPORT_SHAPE)
    rng = np.random.RandomState(3)
    for name in ("x", "y"):
        np.save(os.path.join(ctx.workdir, name + ".npy"), rng.standard_normal(EXPORT_SHAPE).astype(np.float32))
    started = time.time()
    files = ctx.device.export_om(model, ctx.soc, prefix, log=sys.stdout)
    seconds = time.time() - started
    om = files.get("om")
    if not om or not os.path.isfile(om) or os.path.getsize(om) == 0:
        return failed("the export finished without an OM (files: %s)" % (", ".join(sorted(files)) or "none"))
    return passed("%s (%d KB) for %s in %.1f s, from a SavedModel with add_custom %s + %s%s" % (
        om, os.path.getsize(om) // 1024, ctx.soc, seconds, list(EXPORT_SHAPE), list(EXPORT_SHAPE),
        "".join(" then %s" % op.python_name for op in model_ops()[1:])), files=files, seconds=seconds)


def run_om(ctx):
    folder = ctx.folder_of("EXPORT_OM")
    om = os.path.join(folder, OM_PREFIX + ".om")
    inputs = [os.path.join(folder, name + ".npy") for name in ("x", "y")]
    result = ctx.device.run_om(om, inputs, log=sys.stdout)
    lines = [c.line() for c in result.comparisons]
    if result.status == "PASS":
        return passed("%s ran without the Python package (ASCEND_CUSTOM_OPP_PATH cleared): %s" % (
            os.path.basename(om), "; ".join(lines)), comparisons=lines)
    if result.status == "UNCHECKED":
        return failed("%s ran, but there was nothing to compare it with" % om)
    return failed("%s differs from TensorFlow on the CPU: %s" % (os.path.basename(om), "; ".join(lines)),
                  comparisons=lines)
