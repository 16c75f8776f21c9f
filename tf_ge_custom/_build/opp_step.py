"""Build step: the OPP root inside the package (``tf_ge_custom/opp/``) and its
``npu_supported_ops.json``. It runs after the GE step, whose record it reads.

Makes sure the folders of the layout exist (``op_graph/include``, ``op_graph/lib/linux/<arch>``,
``kernels``), and writes ``framework/tensorflow/npu_supported_ops.json``: it lists the ops
of the op definition only when the GE step built the GE library (``opp.npu_ops``). Without
that library TF Adapter must not hand the ops to GE, which could not run them; the JSON is
then ``{}`` and every op stays on its CPU kernel. Records ``build_info["opp"] = {"root",
"arch", "json", "npu_ops", "npu_ops_missing_because"}``.

Nothing TensorFlow-side goes under ``framework/``: GE dlopens every ``*.so`` found there,
recursively (parser/parser/common/tbe_plugin_loader.cc, ``FindParserSo``). Any library there
that the GE step did not record (left by an earlier build in a reused folder) is removed.
"""
import os

from .. import _atomic_files as atomic_files, op_def, opp


def _stray_libraries(framework_dir, keep):
    stray = []
    for folder, _dirs, files in os.walk(framework_dir):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".so") and os.path.abspath(path) not in keep:
                stray.append(path)
    return sorted(stray)


# A wheel cannot hold an empty folder: each skeleton folder carries a note saying what
# fills it. None of the stack's readers looks at a .txt file.
PLACEHOLDER = "README.txt"
_NOTES = {
    opp.GE_INCLUDE_DIR: "REG_OP header of each op (written by the GE build step).",
    "GE_LIBRARY_DIR": "GE custom-op libraries for this host: GE dlopens every *.so here "
                      "(built by the GE build step when a CANN toolkit is present).",
    opp.KERNELS_DIR: "Precompiled Triton kernels: <SoC>/manifest.json + *.npubin "
                     "(copied by the kernels build step).",
}


def _skeleton(arch):
    """(folder relative to the OPP root, note) for every folder of the layout."""
    return [(opp.GE_INCLUDE_DIR, _NOTES[opp.GE_INCLUDE_DIR]),
            (opp.ge_library_dir(arch), _NOTES["GE_LIBRARY_DIR"]),
            (opp.KERNELS_DIR, _NOTES[opp.KERNELS_DIR])]


def run(ctx):
    root = ctx.opp_root
    arch = opp.host_arch()
    if arch not in opp.KNOWN_ARCHES:
        ctx.log("note: host architecture %r is neither of GE's %s; the GE library folder "
                "is named after it anyway" % (arch, ", ".join(opp.KNOWN_ARCHES)))
    for relative, note in _skeleton(arch):
        folder = os.path.join(root, relative)
        os.makedirs(folder, exist_ok=True)
        atomic_files.write_text(os.path.join(folder, PLACEHOLDER), note + "\n")

    ops, why_none = opp.npu_ops(ctx.build_info)
    opp.write_supported_ops(os.path.join(root, opp.SUPPORTED_OPS_JSON), ops)
    if why_none:
        ctx.log("npu_supported_ops.json lists no op, so TF Adapter keeps %s on the CPU kernel: "
                "%s" % (op_def.type_names(), why_none))

    # The copy shipped in the source tree is the full document (tests/opp enforces it too);
    # a drifted copy only misleads readers, so the build warns instead of failing users.
    shipped = os.path.join(ctx.source_root, opp.SUPPORTED_OPS_JSON)
    if os.path.isfile(shipped):
        with open(shipped) as f:
            if f.read() != opp.supported_ops_json():
                ctx.log("warning: %s differs from the op definition; regenerate it: "
                        "python -m tf_ge_custom.opp %s" % (shipped, opp.SUPPORTED_OPS_JSON))

    # A build folder reused from an earlier build (with CANN, say) may still hold a parser
    # plugin that this build did not make; GE would load it all the same.
    keep = set(os.path.abspath(os.path.join(root, p))
               for p in (ctx.build_info.get("ge") or {}).get("libraries") or ())
    for path in _stray_libraries(os.path.join(root, opp.FRAMEWORK_DIR), keep):
        ctx.log("removing %s, left by an earlier build" % path)
        os.unlink(path)

    ctx.build_info["opp"] = {"root": opp.OPP_DIRNAME, "arch": arch, "json": opp.SUPPORTED_OPS_JSON,
                             "npu_ops": [op.type_name for op in ops],
                             "npu_ops_missing_because": why_none}
    ctx.log("OPP root: %s" % root)
