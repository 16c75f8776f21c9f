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
    """Parse ``name:d,d;name:d`` into :class:`InputShape` records; ``ExportError`` if malformed.

    The refusal of a malformed string offers the whole string corrected, every input at once
    (:func:`corrected_input_shape`), when the mistake is one of spelling: ``8x2048``,
    ``[8, 2048]``, ``None`` or ``?`` for a dynamic dim, ``1-16`` for a range, ``=`` for ``:``
    or ``,`` between the inputs."""
    try:
        return _parse(text)
    except ExportError as e:
        fixed = corrected_input_shape(text)
        if fixed and fixed != text:
            raise ExportError('%s; did you mean --input-shape "%s"?' % (e, fixed))
        raise


def _parse(text):
    shapes = []
    for part in [p for p in text.strip().strip(";").split(";")]:
        name, sep, dims = part.rpartition(":")
        if not sep or not name.strip():
            raise ExportError("--input-shape %r: each input is NAME:DIMS (e.g. x:8,2048;y:8,2048), "
                              "got %r" % (text, part))
        name = name.strip()
        dims = tuple(d.strip() for d in dims.split(",")) if dims.strip() else ()
        for d in dims:
            if not _DIM.match(d):
                raise ExportError("--input-shape %r: dim %r of %s is not a size, -1 or a range "
                                  "LO~HI" % (text, d, name))
        if any(s.name == name for s in shapes):
            raise ExportError("--input-shape %r names %s twice" % (text, name))
        shapes.append(InputShape(name, dims))
    return shapes


# "x:8,2048,y:8,2048": a comma (or space) where the next input starts
_NEXT_INPUT = re.compile(r"[,\s]+(?=[A-Za-z_][\w./-]*\s*[:=])")
_NAME_SEP = re.compile(r"^\s*([A-Za-z_][\w./:-]*?)\s*[:=]\s*([^:=]*)$")
_TIMES = re.compile(r"(?<=\d)\s*[xX*\u00d7]\s*(?=\d)")  # 8x2048, 8*2048
_DIM_SPLIT = re.compile(r"\s*,\s*|\s+")


def _corrected_dim(dim):
    dim = dim.strip()
    if dim in ("None", "none", "?", "-1"):
        return "-1"
    m = re.match(r"^(\d+)\s*(?:~|-|\.\.)\s*(\d+)$", dim)
    if m:
        return "%s~%s" % m.groups()
    return dim


def corrected_input_shape(text):
    """``text`` respelled as ATC's ``name:d,d;name:d``, or None when the mistake is not one
    of spelling (a dim that is no number, a name missing). Every input is corrected, so the
    string offered works as a whole."""
    parts = []
    for part in _NEXT_INPUT.sub(";", text.strip()).strip(";").split(";"):
        if not part.strip():
            continue
        m = _NAME_SEP.match(part)
        if not m:
            return None
        name, dims = m.group(1), m.group(2).strip().strip("[]()").strip()
        dims = _TIMES.sub(",", dims)
        fixed = [_corrected_dim(d) for d in _DIM_SPLIT.split(dims) if d.strip()] if dims else []
        if not all(_DIM.match(d) for d in fixed):
            return None
        parts.append("%s:%s" % (name, ",".join(fixed)))
    fixed_text = ";".join(parts)
    try:
        _parse(fixed_text)
    except ExportError:
        return None
    return fixed_text


def dynamic_choice(options):
    """The one ATC dynamic option set in ``options`` (``{atc_name: value}``), or None."""
    chosen = [(flag, atc) for flag, atc in DYNAMIC_OPTIONS if options.get(atc)]
    if len(chosen) > 1:
        raise ExportError("%s are mutually exclusive (ATC takes one of them)"
                          % " and ".join(flag for flag, _ in chosen))
    return chosen[0][1] if chosen else None


def _recorded_dims(info):
    return tuple("-1" if d is None else str(d) for d in info.shape)


def _refuse_unknown(info, inputs, given, options):
    where = ("its rank is unknown" if info.shape is None
             else "shape %s has unknown dims" % info.shape_text())
    whole = _whole_string(inputs, given, options)
    example = ('every input\'s shape, e.g. --input-shape "%s" (unknown dims shown as 8)' % whole if whole
               else '--input-shape (e.g. "%s:%s")' % (info.name, "8,2048" if info.shape is None else
                                                     ",".join("8" if d is None else str(d) for d in info.shape)))
    return ExportError("input %s: %s; ATC needs them fixed or declared dynamic: pass %s, or -1 dims "
                       "with --dynamic-batch-size or --dynamic-dims" % (info.name, where, example))


def _whole_string(inputs, given, options):
    """An ``--input-shape`` naming every input, from ``given`` (``{name: InputShape}``) and the
    record, unknown dims as 8 (-1 where the dynamic option declares them), which
    :func:`resolve_input_shapes` accepts; None when there is none to offer (an input of
    unknown rank the user gave no shape for)."""
    dynamic = dynamic_choice(options)
    parts = []
    for info in inputs:
        shape = given.get(info.name)
        if info.shape is None:
            if shape is None:
                return None
            dims = list(shape.dims)
        elif shape is not None and len(shape.dims) == len(info.shape):
            dims = [g if r is None or g in ("-1", str(r)) else str(r) for g, r in zip(shape.dims, info.shape)]
        else:
            dims = ["-1" if d is None and (dynamic == "dynamic_dims" or (dynamic == "dynamic_batch_size" and i == 0))
                    else "8" if d is None else str(d) for i, d in enumerate(info.shape)]
        parts.append("%s:%s" % (info.name, ",".join(dims)))
    text = ";".join(parts)
    try:
        _resolve(inputs, text, options)
    except ExportError:
        return None
    return text


def resolve_input_shapes(inputs, user_text=None, options=None):
    """The ``--input_shape`` for ATC, as :class:`InputShape` records in input order.

    ``inputs``: the recorded :class:`~.graph_record.TensorInfo` inputs. ``user_text``: the
    user's ``--input-shape`` (used as given, after checking it names known inputs with their
    rank and known dims). ``options``: ``{atc_name: value}`` of the dynamic options. Without
    a user shape or a dynamic option, an input with an unknown dim is refused here, naming
    it and the options that fix it; a refusal offers, where it can, one ``--input-shape``
    naming every input that this function accepts (not one input at a time).
    """
    return _resolve(inputs, user_text, options or {})


def _resolve(inputs, user_text, options):
    dynamic = dynamic_choice(options)
    by_name = {t.name: t for t in inputs}
    if user_text:
        given = {s.name: s for s in parse_input_shape(user_text)}
        unknown = [n for n in given if n not in by_name]
        if unknown:
            raise ExportError("--input-shape names %s, which %s not an input of the graph; its "
                              "inputs are: %s%s" % (", ".join(unknown), "is" if len(unknown) == 1 else "are",
                                                    ", ".join(by_name) or "(none)",
                                                    _renamed_hint(inputs, given, unknown, options)))
        shapes = []
        for info in inputs:
            shape = given.get(info.name)
            if shape is None:
                if dynamic is None and not info.fully_defined:
                    raise _refuse_unknown(info, inputs, given, options)
                if info.shape is not None:
                    shapes.append(InputShape(info.name, _recorded_dims(info)))
                continue
            _check_against_record(shape, info)
            shapes.append(shape)
    else:
        shapes = []
        for info in inputs:
            if info.shape is None or (dynamic is None and not info.fully_defined):
                raise _refuse_unknown(info, inputs, {}, options)
            shapes.append(InputShape(info.name, _recorded_dims(info)))
    _check_dynamic(shapes, dynamic, options.get(dynamic) if dynamic else None)
    return shapes


def _renamed_hint(inputs, given, unknown, options):
    """``; did you mean --input-shape "..."?`` when each unknown name is close to one input."""
    import difflib

    names = [t.name for t in inputs]
    renamed = dict(given)
    for name in unknown:
        close = difflib.get_close_matches(name, [n for n in names if n not in renamed], n=1, cutoff=0.6)
        if not close:
            return ""
        shape = renamed.pop(name)
        renamed[close[0]] = InputShape(close[0], shape.dims)
    whole = _whole_string(inputs, renamed, options)
    return '; did you mean --input-shape "%s"?' % whole if whole else ""


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


_SIZES = re.compile(r"^\d+(,\d+)*$")


def check_dynamic_syntax(dynamic, value):
    """Refuse a ``--dynamic-batch-size`` / ``--dynamic-dims`` value that is not whole numbers
    in ATC's layout, whatever the graph (before TensorFlow: ``tf_ge_custom/export/options.py``);
    a value spelled with other separators is offered respelled."""
    if not value or dynamic not in ("dynamic_batch_size", "dynamic_dims"):
        return
    text = value.strip()
    if dynamic == "dynamic_batch_size":
        if _SIZES.match(text) and all(int(v) > 0 for v in text.split(",")):
            return
        words = [w for w in re.split(r"[\s,;]+", text) if w]
        bad = [w for w in words if not w.isdigit() or int(w) == 0]
        hint = ("; did you mean --dynamic-batch-size %s?" % ",".join(words)) if words and not bad else ""
        raise ExportError("--dynamic-batch-size %r: %sexpected batch sizes like 1,2,4,8 (whole "
                          "numbers from 1, separated by commas)%s" % (
                              value, "%s is not a batch size; " % ", ".join(repr(b) for b in bad) if bad else "",
                              hint))
    sets = [s.strip() for s in text.strip(";").split(";")]
    bad = [v.strip() for s in sets for v in s.split(",") if not v.strip().isdigit() or int(v) == 0]
    if bad or not text.strip(";"):
        raise ExportError("--dynamic-dims %r: %sexpected ;-separated sets of sizes (whole numbers "
                          "from 1), one per -1 dim, like \"1,64;4,128\"" % (
                              value, "%s is not a size; " % ", ".join(repr(b) for b in bad) if bad else ""))


def _check_dynamic(shapes, dynamic, value):
    minus_ones = [(s.name, i) for s in shapes for i, d in enumerate(s.dims) if d == "-1"]
    check_dynamic_syntax(dynamic, value)
    if dynamic == "dynamic_batch_size":
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
            if len(values) != len(minus_ones):
                raise ExportError("--dynamic-dims %r: each ;-separated set needs %d sizes, one "
                                  "per -1 dim (%s)" % (value, len(minus_ones),
                                                      ", ".join("%s dim %d" % m for m in minus_ones)))
