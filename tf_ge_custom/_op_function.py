"""The Python function of an op, made from its record (``op_def.OpDefinition``).

What the record says, the function follows: its signature (the inputs in order, then each
attribute as a keyword with the record's default, then ``name``), the conversion of the
arguments to tensors (every input after the first with the first's dtype as a hint, as
``tf.math.add`` converts its ``y``), the refusal of a dtype the op has no kernel for, of
inputs whose dtypes differ, of equal-shape inputs whose static shapes differ, and of an
attribute of the wrong type or outside the record's range, each naming what is accepted; the
name scope; the gradient registration. What the record cannot say is the op's meaning, written
by hand (:class:`OpMeaning`, in ``_op_meanings.py``): the TensorFlow computation with the same
result, put in place of the node inside an XLA cluster that has no kernel for it, and the
gradient. Every op's function, ``add_custom``'s included, is made here.

The function has real source: the factory writes it as TensorFlow writes its ``gen_*_ops.py``
and keeps it in ``linecache`` under :func:`source_file_name`, so ``inspect.getsource`` shows
it; AutoGraph calls it as it is (:func:`as_op_function`), so a user's traced program prints
nothing of the package's.
"""
import inspect
import keyword
import linecache
import numbers
import reprlib
import textwrap
from typing import Callable, NamedTuple

import numpy as np
import tensorflow as tf

from . import _xla
from .errors import AttrError, DTypeError, InputError, OpLibraryError, ShapeError
from .op_def import in_words

try:  # the concrete class of eager tensors, for the per-call fast path (TF 1.15 and 2.x)
    from tensorflow.python.framework.ops import EagerTensor as _EagerTensor
except ImportError:  # pragma: no cover - a TensorFlow without it just skips the fast path
    _EagerTensor = None
try:  # SparseTensor, IndexedSlices, RaggedTensor, ExtensionTypes... (TF 1.15 and 2.x)
    from tensorflow.python.framework.composite_tensor import CompositeTensor as _Composite
except ImportError:  # pragma: no cover
    _Composite = (tf.SparseTensor, tf.IndexedSlices)


class OpMeaning(NamedTuple):
    """What an op means, beyond its record: written by hand in ``_op_meanings.MEANINGS``, or
    derived from the record's ``equivalent`` (``_op_meanings.meaning_of``)."""

    summary: str  # the first line of the function's docstring
    # The TensorFlow computation with the op's result: equivalent(*inputs, name=..., **attrs).
    # Inside an XLA cluster the op has no XLA kernel for, the function puts it in the graph.
    equivalent: Callable
    # The gradient function TensorFlow calls for the op's node: gradient(op, *output_grads).
    gradient: Callable


def _attr_python_types(attr):
    # what TensorFlow's own attr conversion takes (tensorflow/python/eager/execute.py,
    # make_float / make_int): Python numbers and NumPy scalars of the kind
    if attr.type == "float":
        return (numbers.Real, np.integer, np.floating)
    return (numbers.Integral, np.integer)


def attr_value(op, attr, value):
    """``value`` as the attribute ``attr`` of ``op`` holds it (a float or an int), or an
    :class:`InputError` / :class:`AttrError` naming what the attribute accepts."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # tf.nn.leaky_relu takes a 0-d array's item too
    kind = attr.type_record().name
    if isinstance(value, bool) and kind == "int" or not isinstance(value, _attr_python_types(attr)):
        tensor = isinstance(value, (tf.Tensor, tf.Variable))
        raise InputError(
            "%s: attribute %s must be a Python or NumPy %s scalar, got %s" % (
                op.python_name, attr.name, "real" if kind == "float" else "integer",
                "a tensor of shape %s (an attribute is fixed when the graph is built; a tensor "
                "cannot be one)" % (tuple(value.shape),) if tensor else
                "a %s (%s)" % (type(value).__name__, reprlib.repr(value))))
    value = float(value) if kind == "float" else int(value)
    low, high = attr.minimum, attr.maximum
    if (low is not None or high is not None) and not (
            (low is None or value >= low) and (high is None or value <= high)):
        raise AttrError("%s: attribute %s is %r; it must be %s" % (
            op.python_name, attr.name, value, _range_text(low, high)))
    return value


def _range_text(low, high):
    if low is not None and high is not None:
        return "in [%r, %r]" % (low, high)
    return ">= %r" % (low,) if low is not None else "<= %r" % (high,)


def _convert(op, value, arg, dtype_hint=None):
    if isinstance(value, _Composite) and not isinstance(value, (tf.Variable, tf.RaggedTensor)):
        raise InputError(
            "%s: argument %s is a %s; %s takes tensors, numpy arrays, Python scalars and "
            "lists (and RaggedTensors, through their flat values). Convert it to a dense "
            "tensor first (a SparseTensor: tf.sparse.to_dense; an IndexedSlices: "
            "tf.convert_to_tensor)." % (op.python_name, arg, type(value).__name__,
                                         op.python_name))
    try:
        return tf.convert_to_tensor(value, dtype_hint=dtype_hint, name=arg)
    except (TypeError, ValueError) as e:
        raise InputError(
            "%s: argument %s (a %s) cannot be converted to a tensor: %s. %s accepts tensors, "
            "numpy arrays, Python scalars and lists whose dtype is one of: %s"
            % (op.python_name, arg, type(value).__name__, e, op.python_name,
               ", ".join(op.dtypes)))


def check_dtypes(op, tensors):
    """DTypeError unless every input has one dtype, and one the op has kernels for."""
    names = ", ".join(op.dtypes)
    first = tensors[0].dtype.base_dtype
    for arg, t in zip(op.inputs[1:], tensors[1:]):
        if t.dtype.base_dtype != first:
            raise DTypeError(
                "%s: %s is %s but %s is %s; every input must have the same dtype, one of: %s "
                "(cast with tf.cast)" % (op.python_name, op.inputs[0], first.name, arg,
                                         t.dtype.base_dtype.name, names))
    if first.name not in op.dtypes:
        raise DTypeError("%s: dtype %s is not supported; supported dtypes: %s%s" % (
            op.python_name, first.name, names,
            " (cast with tf.cast)" if first.is_floating or first.is_integer else ""))


def check_shapes(op, tensors):
    """ShapeError when the inputs' static shapes cannot broadcast together (an op that
    broadcasts) or cannot be one shape (an op that does not)."""
    if len(tensors) < 2:
        return
    if op.broadcasts:
        shape = tensors[0].shape
        try:
            for t in tensors[1:]:
                shape = tf.broadcast_static_shape(shape, t.shape)
        except ValueError:
            raise ShapeError("%s: shapes %s are not broadcast-compatible (each dimension "
                             "must be equal, or 1 in one of them)" % (
                                 op.python_name, in_words(str(t.shape) for t in tensors)))
        return
    shape = tensors[0].shape
    for arg, t in zip(op.inputs[1:], tensors[1:]):
        if not shape.is_compatible_with(t.shape):
            raise ShapeError("%s: %s has shape %s but %s has %s; %s does not broadcast, every "
                             "input must have one shape" % (op.python_name, op.inputs[0], shape,
                                                             arg, t.shape, op.python_name))
        shape = shape.merge_with(t.shape)


def register_gradient(op, gradient):
    try:
        tf.RegisterGradient(op.type_name)(gradient)
    except KeyError:  # registered already (module reloaded)
        pass


def make_function(op, raw, meaning, load_error=None):
    """The package's function of ``op``: ``<python_name>(<inputs>, <attr>=<default>...,
    name=None)``, computed by ``raw`` (the op library's generated function), or raising
    ``load_error`` when there is no library. Registers ``meaning.gradient`` for the op."""
    for n in tuple(op.inputs) + tuple(a.name for a in op.attrs) + (op.python_name,):
        if not n.isidentifier() or keyword.iskeyword(n) or n == "name":
            raise ValueError("%s: %r cannot name a Python argument" % (op.type_name, n))

    supported = frozenset(tf.as_dtype(d) for d in op.dtypes)
    # attributes a plain Python value of the kind passes as it is (no range to check)
    plain = {a.name: float if a.type == "float" else int for a in op.attrs
             if a.minimum is None and a.maximum is None}

    def call(inputs, attrs, name):
        if raw is None:
            raise load_error
        # Fast path, eager only: tensors of one supported dtype and plain attribute values
        # go straight to the op (names are meaningless in eager mode, so no name scope).
        if type(inputs[0]) is _EagerTensor and all(type(v) is plain.get(k) for k, v in attrs.items()):
            dtype = inputs[0].dtype
            if dtype in supported and all(type(v) is _EagerTensor and v.dtype == dtype
                                          for v in inputs[1:]):
                if not op.broadcasts and len(inputs) > 1:
                    check_shapes(op, inputs)
                try:
                    return raw(*inputs, **attrs)
                except tf.errors.InvalidArgumentError:
                    check_shapes(op, inputs)  # the usual cause: name the shapes, a ShapeError
                    raise
        values = {a.name: attr_value(op, a, attrs[a.name]) for a in op.attrs}
        if any(isinstance(v, tf.RaggedTensor) for v in inputs):
            return _ragged(inputs, values, name)
        with tf.compat.v1.name_scope(name, op.type_name, list(inputs)) as scope:
            tensors = [_convert(op, inputs[0], op.inputs[0])]
            hint = tensors[0].dtype.base_dtype
            tensors += [_convert(op, v, arg, dtype_hint=hint)
                        for v, arg in zip(inputs[1:], op.inputs[1:])]
            check_dtypes(op, tensors)
            check_shapes(op, tensors)
            if _xla.must_lower(op.type_name):
                if meaning.equivalent is None:
                    raise OpLibraryError(
                        "%s: this build has no XLA kernel for %s (tf_ops/%s_xla.cc) and its record "
                        "names no TensorFlow equivalent to compute under XLA (op_def.py, "
                        "equivalent); call it outside jit_compile" % (
                            op.python_name, op.type_name, op.python_name))
                return meaning.equivalent(*tensors, name=scope, **values)
            return raw(*tensors, name=scope, **values)

    def _ragged(inputs, values, name):
        if op.broadcasts:
            return _ragged_broadcasting(inputs, values, name)
        with tf.compat.v1.name_scope(name, op.type_name, list(inputs)):
            try:  # every ragged input must have the same row partitions (checked at run time)
                return tf.ragged.map_flat_values(lambda *flat: function(*flat, **values),
                                                 *inputs)
            except ValueError as e:
                raise ShapeError("%s: RaggedTensor inputs need the same row partitions: %s"
                                 % (op.python_name, e))

    def _ragged_broadcasting(inputs, values, name):
        # RaggedTensor inputs with the same row partitions, and dense inputs that broadcast
        # over their uniform inner dimensions, go through the flat values.
        with tf.compat.v1.name_scope(name, op.type_name, list(inputs)):
            ragged = [v for v in inputs if isinstance(v, tf.RaggedTensor)]
            tensors = [v if isinstance(v, tf.RaggedTensor) else
                       _convert(op, v, arg, dtype_hint=ragged[0].dtype)
                       for v, arg in zip(inputs, op.inputs)]
            check_dtypes(op, tensors)
            inner = ragged[0].flat_values.shape.rank - 1  # the uniform dimensions
            for t in tensors:
                if not isinstance(t, tf.RaggedTensor) and (
                        t.shape.rank is None or t.shape.rank > inner):
                    raise ShapeError(
                        "%s: a dense input given with a RaggedTensor may broadcast over its "
                        "uniform inner dimensions only (rank <= %d here), got shape %s for a "
                        "RaggedTensor of shape %s. Use %s to broadcast across ragged or batch "
                        "dimensions." % (op.python_name, inner, t.shape, ragged[0].shape,
                                         op.equivalent or "the dense op"))
            try:  # checks that the ragged inputs have one row partition (at run time if need be)
                return tf.ragged.map_flat_values(lambda *flat: function(*flat, **values),
                                                 *tensors)
            except ValueError as e:
                raise ShapeError(
                    "%s: RaggedTensor inputs need the same row partitions (and ragged rank, "
                    "and row_splits dtype); got shapes %s, ragged ranks %s: %s" % (
                        op.python_name, in_words(str(r.shape) for r in ragged),
                        in_words(str(r.ragged_rank) for r in ragged), e))

    function = _function_with_source(op, call, _docstring(op, meaning))
    if meaning.gradient is not None:  # else TensorFlow says the op has no gradient
        register_gradient(op, meaning.gradient)
    return as_op_function(function)


def function_source(op, docstring):
    """The Python source of ``op``'s function, as TensorFlow writes its ``gen_*_ops.py``: the
    record's signature, the docstring, one call of ``_call`` with the inputs and attributes."""
    args = ", ".join(tuple(op.inputs) + tuple("%s=%r" % (a.name, a.default) for a in op.attrs)
                     + ("name=None",))
    # prose lines wrapped to the project's width; the indented Args/Raises lines kept as made
    doc = "\n".join(textwrap.fill(line, 96, initial_indent="    ", subsequent_indent="    ")
                    if line and not line[0].isspace() else
                    ("    " + (line[4:] if line.startswith("    ") else line)).rstrip()
                    for line in docstring.splitlines())
    return 'def %s(%s):\n    """%s\n    """\n    return _call((%s,), {%s}, name)\n' % (
        op.python_name, args, doc.strip(), ", ".join(op.inputs),
        ", ".join("%r: %s" % (a.name, a.name) for a in op.attrs))


def source_file_name(op):
    """The name the source of ``op``'s function is kept under (``linecache``)."""
    return "<tf_ge_custom.ops.%s, made from its record by tf_ge_custom._op_function>" % (
        op.python_name)


def _function_with_source(op, call, docstring):
    """``op``'s function, compiled from :func:`function_source` under a file name that
    ``linecache`` holds its source for: ``inspect.getsource``, ``help`` and tracebacks show it.
    """
    if '"""' in docstring or "\\" in docstring:
        raise ValueError("%s: its docstring cannot hold triple quotes or backslashes"
                         % op.type_name)
    source = function_source(op, docstring)
    filename = source_file_name(op)
    # (size, mtime, lines, name): an mtime of None keeps linecache.checkcache from dropping it
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"_call": call}
    exec(compile(source, filename, "exec"), scope)
    function = scope[op.python_name]
    function.__module__ = "tf_ge_custom.ops"
    function.__qualname__ = op.python_name
    function.__doc__ = docstring
    return function


def as_op_function(function):
    """``function`` as the package hands its op functions out: AutoGraph calls it as it is
    (it holds no control flow of the user's to convert), so a user's tf.function neither
    converts the package's code nor warns about it. ``functools.wraps`` keeps its name,
    docstring, signature and source (``__wrapped__``). A TensorFlow whose ``do_not_convert``
    does not take the function (an older form of the API) leaves it unmarked."""
    mark = getattr(getattr(getattr(tf, "autograph", None), "experimental", None),
                   "do_not_convert", None)
    try:
        takes_function = mark is not None and "func" in inspect.signature(mark).parameters
    except (TypeError, ValueError):  # pragma: no cover - a signature Python cannot read
        takes_function = False
    return mark(function) if takes_function else function


def _docstring(op, meaning):
    attrs = "".join("\n      %s: a %s, default %r%s." % (
        a.name, a.type, a.default,
        "" if a.minimum is None and a.maximum is None else
        ", " + _range_text(a.minimum, a.maximum)) for a in op.attrs)
    return ("%s\n\nComputed by the ``%s`` op (docs/adding-an-op.md). Inputs may be tensors, "
            "numpy arrays, Python scalars or lists (converted as tf.convert_to_tensor does); "
            "%s. Supported dtypes: %s.\n\n    Args:\n      %s: the input%s.%s\n      name: "
            "the node's name (optional).\n\n    Raises:\n      DTypeError: a dtype is not "
            "supported, or the inputs' differ (a ``TypeError``).\n      InputError: an "
            "argument cannot be converted, or an attribute has the wrong type (a "
            "``TypeError``).\n      ShapeError: the inputs' static shapes cannot be "
            "combined (a ``ValueError``).\n      AttrError: an attribute is outside its range "
            "(a ``ValueError``).\n      OpLibraryError: the op library could not be loaded (an "
            "``ImportError``).\n" % (
                meaning.summary, op.type_name,
                "RaggedTensors go through their flat values" if not op.broadcasts else
                "the inputs broadcast in the op itself (one node, whatever their shapes), "
                "RaggedTensors with the same row partitions, or with a dense input over their "
                "uniform inner dimensions, through their flat values", ", ".join(op.dtypes),
                ", ".join(op.inputs), "s" if len(op.inputs) > 1 else "", attrs))
