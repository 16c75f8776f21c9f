"""The package's errors keep their builtin types wherever a user calls an op: a user's
``except TypeError`` / ``except ValueError`` catches a bad argument in eager mode, inside
``tf.function``, under XLA (``jit_compile=True``) and in a Keras layer's ``call``, with the
one-line message eager mode gives. Every op of ``op_def.OPS``; the bad arguments are made
from each op's record."""
import re

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.errors import AttrError, DTypeError, InputError, ShapeError
from tf_ge_custom.op_def import OPS

# dtypes no op of the package may support, one of which each case below uses
_FOREIGN_DTYPES = ("float64", "int64", "uint8", "complex64")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _good_inputs(op, shape=(2, 3)):
    dtype = op.dtypes[0]
    return [np.ones(shape, dtype) for _ in op.inputs]


def _good_attrs(op):
    return {a.name: a.default for a in op.attrs}


def _cases(op):
    """(case name, inputs, attrs, the package's class, the builtin a user catches)."""
    foreign = next(d for d in _FOREIGN_DTYPES if d not in op.dtypes)
    cases = [("dtype", [np.ones((2, 3), foreign) for _ in op.inputs], _good_attrs(op),
              DTypeError, TypeError),
             ("unconvertible", [object()] + _good_inputs(op)[1:], _good_attrs(op),
              InputError, TypeError)]
    if len(op.inputs) > 1:
        cases.append(("shape", [np.ones((2, 3), op.dtypes[0])] +
                      [np.ones((4,), op.dtypes[0]) for _ in op.inputs[1:]], _good_attrs(op),
                      ShapeError, ValueError))
    for a in op.attrs:
        cases.append(("attr %s type" % a.name, _good_inputs(op),
                      dict(_good_attrs(op), **{a.name: "0.1"}), InputError, TypeError))
        if a.minimum is not None or a.maximum is not None:
            outside = a.minimum - 1 if a.minimum is not None else a.maximum + 1
            cases.append(("attr %s range" % a.name, _good_inputs(op),
                          dict(_good_attrs(op), **{a.name: outside}), AttrError, ValueError))
    return [pytest.param(op, *c[1:], id="%s-%s" % (op.python_name, c[0])) for c in cases]


CASES = [c for op in OPS for c in _cases(op)]


def _eager(function, inputs, attrs):
    return function(*[tf.constant(v) if isinstance(v, np.ndarray) else v for v in inputs],
                    **attrs)


def _traced(jit_compile):
    def run(function, inputs, attrs):
        tensors = [tf.constant(v) for v in inputs if isinstance(v, np.ndarray)]

        @tf.function(jit_compile=jit_compile)
        def user_function(*args):
            it = iter(args)
            values = [next(it) if isinstance(v, np.ndarray) else v for v in inputs]
            return function(*values, **attrs)
        return user_function(*tensors)
    return run


def _keras_layer(function, inputs, attrs):
    class UserLayer(tf.keras.layers.Layer):
        def call(self, x):
            return _eager(function, inputs, attrs) + tf.cast(x, op_dtype(inputs))
    return UserLayer()(tf.zeros([1]))


def op_dtype(inputs):
    return next((v.dtype for v in inputs if isinstance(v, np.ndarray)), np.float32)


PATHS = {"tf.function": _traced(False), "xla": _traced(True), "keras call": _keras_layer}


def _caught(builtin, path, function, inputs, attrs):
    try:
        path(function, inputs, attrs)
    except builtin as e:  # what a user writes
        return e
    raise AssertionError("no %s raised" % builtin.__name__)


@pytest.mark.parametrize("op,inputs,attrs,error,builtin", CASES)
def test_a_bad_argument_keeps_its_type_on_every_path(op, inputs, attrs, error, builtin):
    function = getattr(tf_ge_custom, op.python_name)
    eager = _caught(builtin, _eager, function, inputs, attrs)
    assert type(eager) is error and isinstance(eager, builtin)
    message = str(eager)
    assert "\n" not in message and message.startswith(op.python_name + ": ")
    # In a graph, the message is the one a plain graph gives: where it quotes TensorFlow's
    # own conversion error, TensorFlow words that one differently in a graph.
    with tf.Graph().as_default():
        in_graph = str(_caught(builtin, _eager, function, inputs, attrs))
    assert "\n" not in in_graph and in_graph.startswith(op.python_name + ": ")
    for name, path in PATHS.items():
        e = _caught(builtin, path, function, inputs, attrs)
        assert type(e) is error, (name, type(e), str(e))
        if name == "keras call":  # Keras puts the layer's name and arguments around it
            assert message in _ANSI.sub("", str(e)).splitlines(), (name, str(e))
        else:
            assert str(e) == in_graph, (name, str(e))


def test_the_equivalent_is_caught_the_same_way_inside_tf_function():
    """The oracle of the rule: tf.nn.leaky_relu's own TypeError reaches ``except TypeError``
    inside a tf.function too."""
    @tf.function
    def user_function(x):
        return tf.nn.leaky_relu(x, alpha="0.1")
    with pytest.raises(TypeError):
        user_function(tf.constant([1.0]))
