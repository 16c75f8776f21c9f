"""The options of ``export`` and ``run-om``, checked by what they say alone: no TensorFlow.

Everything here is decided from the option values, the model path's kind
(:func:`.freezing.sources.classify`) and the SoC table, so a mistake is refused in a
fraction of a second (``benchmarks/bench_cli_refusals.py`` measures it), before the command
pays for importing TensorFlow, and before any tool runs:

- ``--to``, ``--via``, ``--soc`` and what applies to ``--to pb``;
- ``--input-shape``'s syntax (a misspelt one is offered whole, every input respelled);
- ``--dynamic-batch-size`` and ``--dynamic-dims``: whole numbers in ATC's layout, one of them;
- ``--signature``/``--tag``/``--outputs``/``--checkpoint`` against the model's kind, and a TF1
  checkpoint's required ``--outputs``;
- ``--rtol``/``--atol`` (a finite number >= 0), ``--device`` and ``--dynamic-batch``.

What needs the graph (do the names in ``--input-shape`` exist, does a ``--dynamic-dims`` set
have one size per -1 dim) is checked once the model is read, still before any tool runs.
:func:`tf_ge_custom.export.pipeline.export` runs :func:`check_export` first, and the command
line runs it (``check_arguments`` of ``tf_ge_custom/_commands/export.py``) before it imports
the pipeline.
"""
import math

from tf_ge_custom.errors import ExportError
from tf_ge_custom.export.cann_tools import input_shapes as shapes

TARGETS = ("pb", "air", "om")
ROUTES = ("air", "pb")


def known_soc(soc):
    from tf_ge_custom.kernels.socs import SOCS

    if soc not in SOCS:
        raise ExportError("unsupported SoC %r; supported: %s (the SoCs this package builds "
                          "kernels for)" % (soc, ", ".join(SOCS)))
    return soc


def refuse_for_pb(**given):
    flags = {"soc": "--soc", "via": "--via", "input_shape": "--input-shape",
             "dynamic_batch_size": "--dynamic-batch-size", "dynamic_dims": "--dynamic-dims",
             "atc_options": "--atc-option"}
    used = [flags[k] for k, v in sorted(given.items()) if v]
    if used:
        raise ExportError("%s appl%s to --to air/om, not to --to pb"
                          % (", ".join(used), "ies" if len(used) == 1 else "y"))


def check_tolerances(rtol, atol):
    for flag, value in (("--rtol", rtol), ("--atol", atol)):
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)
                                  or not math.isfinite(value) or value < 0):
            raise ExportError("%s %r: give a tolerance, a finite number >= 0 (e.g. 1e-5)" % (flag, value))


def check_model_options(model, signature=None, tags=None, outputs=None, checkpoint=None, inputs=None):
    """The model's kind, from its path, and the options that go with that kind (a missing
    model, ``--signature`` for a ``.pb``, a ``.meta`` without ``--outputs``...). Returns the
    :class:`~.freezing.sources.ModelSource`."""
    from tf_ge_custom.export.freezing import refuse_unused, sources

    source = sources.classify(model, checkpoint)
    refuse_unused(source.kind, signature=signature, tags=tags, outputs=outputs, inputs=inputs,
                  checkpoint=checkpoint)
    if source.kind == sources.CHECKPOINT and not outputs:
        raise ExportError(sources.NEEDS_OUTPUTS)
    return source


def check_export(model, to="pb", soc=None, via=None, input_shape=None, signature=None, tags=None,
                 outputs=None, checkpoint=None, dynamic_batch_size=None, dynamic_dims=None,
                 atc_options=(), rtol=None, atol=None):
    """Refuse, with ``ExportError``, what ``export`` would refuse of these options whatever the
    graph holds; no TensorFlow, nothing written."""
    if to not in TARGETS:
        raise ExportError("--to %r: choose one of %s" % (to, ", ".join(TARGETS)))
    if via is not None and via not in ROUTES:
        raise ExportError("--via %r: choose air or pb" % via)
    if to == "pb":
        refuse_for_pb(soc=soc, via=via, input_shape=input_shape, dynamic_batch_size=dynamic_batch_size,
                      dynamic_dims=dynamic_dims, atc_options=atc_options)
    if to == "air" and via == "pb":
        raise ExportError("--to air always goes through the AIR tool; --via pb applies to --to om")
    if to == "om":
        if not soc:
            raise ExportError("--to om needs the target SoC: --soc (e.g. Ascend910B1)")
        known_soc(soc)
    elif soc and to == "air":
        known_soc(soc)
    if to == "air" and (dynamic_batch_size or dynamic_dims or atc_options):
        raise ExportError("dynamic and extra ATC options apply to --to om")
    if input_shape:
        shapes.parse_input_shape(input_shape)
    if dynamic_batch_size and dynamic_dims:
        shapes.dynamic_choice({"dynamic_batch_size": dynamic_batch_size, "dynamic_dims": dynamic_dims})
    shapes.check_dynamic_syntax("dynamic_batch_size", dynamic_batch_size)
    shapes.check_dynamic_syntax("dynamic_dims", dynamic_dims)
    check_tolerances(rtol, atol)
    check_model_options(model, signature=signature, tags=tags, outputs=outputs, checkpoint=checkpoint)


def check_run_om(device=0, dynamic_batch=None, rtol=None, atol=None):
    """Refuse what ``run-om`` would refuse of these options after running the OM."""
    if device is not None and (isinstance(device, bool) or not isinstance(device, int) or device < 0):
        raise ExportError("--device %r: give an NPU device id, a whole number >= 0" % (device,))
    if dynamic_batch is not None and (isinstance(dynamic_batch, bool) or not isinstance(dynamic_batch, int)
                                      or dynamic_batch < 1):
        raise ExportError("--dynamic-batch %r: give a batch size the OM was built with, a whole "
                          "number >= 1" % (dynamic_batch,))
    check_tolerances(rtol, atol)
