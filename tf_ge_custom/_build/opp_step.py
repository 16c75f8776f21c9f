"""Build step: the OPP root skeleton inside the package (``tf_ge_custom/opp/``).

Creates the folders the later steps fill (``op_graph/include``,
``op_graph/lib/linux/<arch>``, ``kernels``) and writes
``framework/tensorflow/npu_supported_ops.json`` generated from the op definition.
Records ``build_info["opp"] = {"root", "arch", "json"}``.

Nothing TensorFlow-side goes under ``framework/``: GE dlopens every ``*.so`` found there,
recursively (parser/parser/common/tbe_plugin_loader.cc, ``FindParserSo``). Libraries an
earlier build left there are removed; the GE step, which runs next, puts its parser plugin
back when a CANN toolkit is present.
"""
import os

from .. import opp


def _stray_libraries(framework_dir):
    stray = []
    for folder, _dirs, files in os.walk(framework_dir):
        for name in files:
            if name.endswith(".so"):
                stray.append(os.path.join(folder, name))
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
    """(folder relative to the OPP root, note) for every folder the later steps fill."""
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
        opp.write_text_atomically(os.path.join(folder, PLACEHOLDER), note + "\n")

    json_path = os.path.join(root, opp.SUPPORTED_OPS_JSON)
    opp.write_supported_ops(json_path)

    # The copy shipped in the source tree must say the same (tests/opp enforces it too);
    # a drifted copy only misleads readers, so the build warns instead of failing users.
    shipped = os.path.join(ctx.source_root, opp.SUPPORTED_OPS_JSON)
    if os.path.isfile(shipped):
        with open(shipped) as f:
            if f.read() != opp.supported_ops_json():
                ctx.log("warning: %s differs from the op definition; regenerate it: "
                        "python -m tf_ge_custom.opp %s" % (shipped, opp.SUPPORTED_OPS_JSON))

    # A build folder reused from an earlier build (with CANN, say) may still hold a parser
    # plugin that this build would not make; GE would load it all the same.
    for path in _stray_libraries(os.path.join(root, opp.FRAMEWORK_DIR)):
        ctx.log("removing %s, left by an earlier build" % path)
        os.unlink(path)

    ctx.build_info["opp"] = {"root": opp.OPP_DIRNAME, "arch": arch, "json": opp.SUPPORTED_OPS_JSON}
    ctx.log("OPP root: %s" % root)
