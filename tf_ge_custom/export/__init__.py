"""Offline export: a TensorFlow model -> frozen graph (``.pb``) -> AIR -> OM, and running an OM.

Python API (the command line is ``tf-ge-custom export`` / ``tf-ge-custom run-om``)::

    from tf_ge_custom import export
    frozen = export.freeze("saved_model_dir")            # checked, nothing written
    result = export.export("model.keras", to="om", soc="Ascend910B1", output="out/model")
    export.run_om("out/model.om", ["x.npy", "y.npy"], compare_with="model.keras")

Freezing and verification run anywhere TensorFlow does; AIR and OM need a CANN toolkit and
running an OM an Ascend NPU (docs/export.md). Importing this package does not import
TensorFlow: each part loads on first use.
"""
import importlib

_LAZY = {
    "freeze": ("tf_ge_custom.export.freezing", "freeze"),
    "export": ("tf_ge_custom.export.pipeline", "export"),
    "ExportResult": ("tf_ge_custom.export.pipeline", "ExportResult"),
    "run_om": ("tf_ge_custom.export.om_runner", "run_om"),
    "FrozenGraph": ("tf_ge_custom.export.frozen_graph", "FrozenGraph"),
    "GraphRecord": ("tf_ge_custom.export.graph_record", "GraphRecord"),
}

__all__ = sorted(_LAZY)


def __getattr__(name):  # PEP 562: TensorFlow is imported only by the parts that need it
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    return getattr(importlib.import_module(module), attr)
