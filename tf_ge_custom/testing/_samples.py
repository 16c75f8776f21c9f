"""The samples ``opcheck`` runs an op on, derived from its record when the caller gives none:
each dtype of the record, at shapes that cover what the op's kernels handle (a vector length
that is no multiple of a vector register, a scalar, an empty tensor; broadcasting pairs of
every kind when the record says the op broadcasts), values with the special ones first (signed
zeros, infinities, NaN, the extremes), and each attribute at its default, then at other values
within its bounds."""
import math
from typing import Dict, NamedTuple, Tuple

import numpy as np
import tensorflow as tf

# shapes of a unary op, or of an op whose inputs have one shape
SHAPES = ((2, 3, 517), (), (0, 4))
# shapes of a broadcasting binary op: equal, one scalar, a row, a column, an outer product
BROADCAST_SHAPES = (((2, 3, 517), (2, 3, 517)), ((), (3, 7)), ((6, 40), (40,)),
                    ((5, 1), (5, 33)), ((4, 1, 33), (5, 1)))


class Sample(NamedTuple):
    """One call of the op: its inputs (numpy arrays, in the record's order) and attributes."""

    name: str
    inputs: Tuple[np.ndarray, ...]
    attrs: Dict[str, object]

    @property
    def dtype(self):
        return tf.as_dtype(self.inputs[0].dtype).name


def numpy_dtype(dtype):
    return tf.as_dtype(dtype).as_numpy_dtype


def values(dtype, shape, rng, specials=True):
    """Random values of ``dtype`` (a name) and ``shape``, the special ones first."""
    size = int(np.prod(shape)) if shape else 1
    if tf.as_dtype(dtype).is_floating:
        flat = (rng.standard_normal(size) * 3).astype(np.float32)
        if specials:
            info = np.finfo(np.float16) if dtype == "float16" else np.finfo(np.float32)
            special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, float(info.tiny),
                                float(info.max), -float(info.max), 0.5, -2.5], np.float32)
            k = min(size, len(special))
            flat[:k] = special[:k]
        return flat.astype(numpy_dtype(dtype)).reshape(shape)
    info = np.iinfo(numpy_dtype(dtype))
    flat = rng.randint(-1000, 1000, size).astype(numpy_dtype(dtype))
    if specials:
        special = np.array([0, 1, -1, info.max, info.min], numpy_dtype(dtype))
        k = min(size, len(special))
        flat[:k] = special[:k]
    return flat.reshape(shape)


def attr_values(attr):
    """Values of ``attr`` (an op_def.OpAttr) to call the op with: its default first, then others
    within its bounds (its bounds themselves included)."""
    out = [attr.default]
    low, high = attr.minimum, attr.maximum
    if attr.type == "float":
        candidates = [0.0, 0.5, -0.75, 1.5, 3.0]
    else:
        candidates = [0, 1, 3, -2, 7]
    candidates = [v for v in ([low, high] + candidates) if v is not None]
    for v in candidates:
        if isinstance(v, float) and not math.isfinite(v):
            continue
        if (low is None or v >= low) and (high is None or v <= high) and v not in out:
            out.append(v)
    return out[:4]


def default_samples(op, seed=0):
    """The samples of ``op`` (an op_def.OpDefinition), from its record alone."""
    rng = np.random.RandomState(seed)
    defaults = dict((a.name, a.default) for a in op.attrs)
    if op.broadcasts and len(op.inputs) > 1:
        shape_sets = [tuple(pair[i % 2] for i in range(len(op.inputs))) for pair in BROADCAST_SHAPES]
    else:
        shape_sets = [tuple(s for _ in op.inputs) for s in SHAPES]
    samples = []
    for dtype in op.dtypes:
        for shapes in shape_sets:
            inputs = tuple(values(dtype, s, rng) for s in shapes)
            samples.append(Sample("%s %s" % (dtype, " and ".join(str(s) for s in shapes)),
                                  inputs, dict(defaults)))
        first = samples[-len(shape_sets)]
        for attr in op.attrs:  # each other value of each attribute, on the first shapes
            for value in attr_values(attr)[1:]:
                attrs = dict(defaults, **{attr.name: value})
                samples.append(Sample("%s %s=%r" % (first.name, attr.name, value), first.inputs, attrs))
    return samples


def as_samples(op, samples):
    """``samples`` as :class:`Sample` objects: Samples as they are, or tuples of inputs (with
    the record's default attributes), or ``(inputs, attrs)`` pairs."""
    out = []
    defaults = dict((a.name, a.default) for a in op.attrs)
    for i, s in enumerate(samples):
        if isinstance(s, Sample):
            out.append(s)
            continue
        if isinstance(s, tuple) and len(s) == 2 and isinstance(s[1], dict):
            inputs, attrs = s
        else:
            inputs, attrs = s, {}
        inputs = tuple(np.asarray(x) for x in (inputs if isinstance(inputs, (tuple, list)) else (inputs,)))
        if len(inputs) != len(op.inputs):
            raise ValueError("sample %d has %d inputs; %s takes %d (%s)" % (
                i, len(inputs), op.type_name, len(op.inputs), ", ".join(op.inputs)))
        out.append(Sample("sample %d (%s %s)" % (i, tf.as_dtype(inputs[0].dtype).name,
                                                   " and ".join(str(x.shape) for x in inputs)),
                          inputs, dict(defaults, **attrs)))
    return out
