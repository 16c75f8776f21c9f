"""Input shapes for ATC and the AIR tool: derived from the recorded inputs, or the user's.

ATC's ``--input_shape`` (and the parser option ``input_shape`` of ``aclgrphParseTensorFlow``)
is ``name:d0,d1;name2:d0`` with ``-1`` for a dynamic dim, ``lo~hi`` for a range and nothing
after the colon for a scalar. ATC accepts at most one of ``--dynamic_batch_size``,
``--dynamic_image_size``, ``--dynamic_dims`` and ``--input_shape_range``; a dynamic batch
needs ``-1`` as the first dim of some input and nowhere else, and every ``--dynamic_dims``
set needs one value per ``-1`` (docs/export.md names the ATC sources of these rules). Those
rules are checked here, before ATC spends minutes to reach the same verdict.

Pure Python: no TensorFlow.
"""
import re
from typing import NamedTuple, Tuple

from tf_ge_custom.errors import ExportError

# ATC's dynamic options, as our command line and ATC spell them.
DYNAMIC_OPTIONS = (
    ("--dynamic-batch-size", "dynamic_batch_size"),
    ("--dynamic-dims", "dynamic_dims"),
    ("--dynamic-image-size", "dynamic_image_size"),
    ("--input-shape-range", "input_shape_range"),
)
_DIM = re.compile(r"^(-1|\d+|\d+~\d+|-1~-1)$")


class InputShape(NamedTuple):
    name: str
    dims: Tuple[str, ...]  # each "8", "-1" or "1~16" (ATC's spelling)


def format_shapes(shapes):
    """``x:8,3;y:3`` (a scalar is ``name:``)."""
    return ";".join("%s:%s" % (s.name, ",".join(s.dims)) for s in shapes)


def parse_input_shape(text):
    """Parse ``name:d,d;name:d`` into :class:`InputShape` records; ``ExportError`` if malformed."""
    shapes = []
    for part in [p for p in text.strip().strip(";").split(";")]:
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise ExportError("--input-shape %r: each input is NAME:DIMS (e.g. x:8,2048;y:8,2048), "
                              "got %r" % (text, part))
        dims = tuple(d.strip() for d in dims.split(",")) if dims.strip() else ()
        for d in dims:
            if not _DIM.match(d):
                raise ExportError("--input-shape %r: dim %r of %s is not a size, -1 or a range "
                                  "LO~HI" % (text, d, name))
        if any(s.name == name for s in shapes):
            raise ExportError("--input-shape %r names %s twice" % (text, name))
        shapes.append(InputShape(name.strip(), dims))
    return shapes


def dynamic_choice(options):
    """The one ATC dynamic option set in ``options`` (``{atc_name: value}``), or None."""
    chosen = [(flag, atc) for flag, atc in DYNAMIC_OPTIONS if options.get(atc)]
    if len(chosen) > 1:
        raise ExportError("%s are mutually exclusive (ATC takes one of them)"
                          % " and ".join(flag for flag, _ in chosen))
    return chosen[0][1] if chosen else None


def _recorded_dims(info):
    return tuple("-1" if d is None else str(d) for d in info.shape)


def _refuse_unknown(info):
    where = ("its rank is unknown" if info.shape is None
             else "shape %s has unknown dims" % info.shape_text())
    return ExportError(
        "input %s: %s; ATC needs them fixed or declared dynamic: pass --input-shape "
        "(e.g. \"%s:%s\"), or -1 dims with --dynamic-batch-size or --dynamic-dims"
        % (info.name, where, info.name,
           "8,2048" if info.shape is None else ",".join("8" if d is None else str(d) for d in info.shape)))


def resolve_input_shapes(inputs, user_text=None, options=None):
    """The ``--input_shape`` for ATC, as :class:`InputShape` records in input order.

    ``inputs``: the recorded :class:`~.graph_record.TensorInfo` inputs. ``user_text``: the
    user's ``--input-shape`` (used as given, after checking it names known inputs with their
    rank and known dims). ``options``: ``{atc_name: value}`` of the dynamic options. Without
    a user shape or a dynamic option, an input with an unknown dim is refused here, naming
    it and the options that fix it.
    """
    options = options or {}
    dynamic = dynamic_choice(options)
    by_name = {t.name: t for t in inputs}
    if user_text:
        given = {s.name: s for s in parse_input_shape(user_text)}
        unknown = [n for n in given if n not in by_name]
        if unknown:
            raise ExportError("--input-shape names %s, which %s not an input of the graph; its "
                              "inputs are: %s" % (", ".join(unknown), "is" if len(unknown) == 1 else "are",
                                                  ", ".join(by_name) or "(none)"))
        shapes = []
        for info in inputs:
            shape = given.get(info.name)
            if shape is None:
                if dynamic is None and not info.fully_defined:
                    raise _refuse_unknown(info)
                if info.shape is not None:
                    shapes.append(InputShape(info.name, _recorded_dims(info)))
                continue
            _check_against_record(shape, info)
            shapes.append(shape)
    else:
        shapes = []
        for info in inputs:
            if info.shape is None or (dynamic is None and not info.fully_defined):
                raise _refuse_unknown(info)
            shapes.append(InputShape(info.name, _recorded_dims(info)))
    _check_dynamic(shapes, dynamic, options.get(dynamic) if dynamic else None)
    return shapes


def _check_against_record(shape, info):
    if info.shape is None:
        return
    if len(shape.dims) != len(info.shape):
        raise ExportError("--input-shape gives %s %d dims, but the graph's %s has rank %d %s"
                          % (info.name, len(shape.dims), info.name, len(info.shape), info.shape_text()))
    for i, (given, recorded) in enumerate(zip(shape.dims, info.shape)):
        if recorded is not None and given not in ("-1", str(recorded)):
            raise ExportError("--input-shape gives %s dim %d = %s, but the graph fixes it to %d %s"
                              % (info.name, i, given, recorded, info.shape_text()))


def _check_dynamic(shapes, dynamic, value):
    minus_ones = [(s.name, i) for s in shapes for i, d in enumerate(s.dims) if d == "-1"]
    if dynamic == "dynamic_batch_size":
        if not re.match(r"^\d+(,\d+)*$", value):
            raise ExportError("--dynamic-batch-size %r: expected batch sizes like 1,2,4,8" % value)
        if not any(i == 0 for _, i in minus_ones):
            raise ExportError("--dynamic-batch-size needs an input whose first dim is -1 (the "
                              "batch); the input shapes are %s" % format_shapes(shapes))
        others = ["%s dim %d" % (n, i) for n, i in minus_ones if i != 0]
        if others:
            raise ExportError("--dynamic-batch-size makes only the first dim dynamic, but %s "
                              "is unknown too; fix it with --input-shape" % ", ".join(others))
    elif dynamic == "dynamic_dims":
        sets = [s for s in value.strip().strip(";").split(";")]
        if not minus_ones:
            raise ExportError("--dynamic-dims needs -1 dims in the input shapes; they are %s"
                              % format_shapes(shapes))
        for s in sets:
            values = s.split(",")
            if len(values) != len(minus_ones) or not all(v.strip().isdigit() for v in values):
                raise ExportError("--dynamic-dims %r: each ;-separated set needs %d sizes, one "
                                  "per -1 dim (%s)" % (value, len(minus_ones),
                                                      ", ".join("%s dim %d" % m for m in minus_ones)))
