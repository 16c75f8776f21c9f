"""A user's traced program prints nothing of the package's: a ``tf.function``, a Keras ``fit``
and an XLA call with each op of ``op_def.OPS`` print, line for line, what the same program
with the op's TensorFlow equivalent (the record's ``equivalent``) prints. One fresh process
per scenario and per variant; the lines TensorFlow stamps with a time are left out and
addresses are masked, as they differ between any two runs."""
import inspect
import re

import pytest

import tf_ge_custom
from tf_ge_custom.op_def import OPS

_PROGRAM = r'''
import os, sys
import numpy as np
import tensorflow as tf
import tf_ge_custom
from tf_ge_custom import _op_meanings
from tf_ge_custom.op_def import OPS

def function_of(op):
    if os.environ["WHICH"] == "package":
        return getattr(tf_ge_custom, op.python_name)
    return _op_meanings.tensorflow_function(op.equivalent)

def user_call(op):
    f = function_of(op)
    attrs = dict((a.name, a.default) for a in op.attrs)
    return lambda t: f(*([t] * len(op.inputs)), **attrs)

x = np.linspace(-2, 2, 12).astype(np.float32).reshape(3, 4)
for op in OPS:
    call = user_call(op)
    scenario = os.environ["SCENARIO"]
    if scenario == "tf.function":
        @tf.function
        def user_function(t):
            if tf.reduce_sum(t) > 0:  # AutoGraph converts this one
                return call(t)
            return call(-t)
        print(op.python_name, user_function(tf.constant(x)).numpy().tolist())
    elif scenario == "xla":
        user_function = tf.function(lambda t: call(t) * 2.0, jit_compile=True)
        print(op.python_name, user_function(tf.constant(x)).numpy().tolist())
    else:
        tf.keras.utils.set_random_seed(0)
        inputs = tf.keras.Input((4,))
        hidden = tf.keras.layers.Lambda(call)(tf.keras.layers.Dense(4)(inputs))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, np.ones((3, 1), np.float32), epochs=2, verbose=0)
        print(op.python_name, "fitted")
sys.stdout.flush()
'''

_STAMPED = re.compile(r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _lines(text):
    return [_ADDRESS.sub("0x?", line) for line in text.splitlines() if not _STAMPED.match(line)]


@pytest.mark.parametrize("scenario", ["tf.function", "xla", "keras fit"])
def test_a_traced_program_prints_what_the_equivalent_prints(python_subprocess, tmp_path,
                                                           scenario):
    program = tmp_path / "user_program.py"  # a file: AutoGraph reads the user's source
    program.write_text(_PROGRAM)
    runner = "import runpy; runpy.run_path(%r, run_name='__main__')" % str(program)
    runs = {}
    for which in ("package", "tensorflow"):
        done = python_subprocess(runner, env={"WHICH": which, "SCENARIO": scenario,
                                                "TF_CPP_MIN_LOG_LEVEL": "0"})
        assert done.returncode == 0, done.stderr[-4000:]
        runs[which] = done
    ours, theirs = runs["package"], runs["tensorflow"]
    assert "AutoGraph" not in ours.stdout + ours.stderr, ours.stderr[-4000:]
    assert _lines(ours.stdout) == _lines(theirs.stdout)
    assert _lines(ours.stderr) == _lines(theirs.stderr)
    assert len(ours.stdout.splitlines()) == len(OPS)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.python_name)
def test_the_op_function_has_source(op):
    function = getattr(tf_ge_custom, op.python_name)
    source = inspect.getsource(function)
    assert source.startswith("def %s(" % op.python_name)
    params = list(inspect.signature(function).parameters)
    assert params == list(op.inputs) + [a.name for a in op.attrs] + ["name"]
    for name in params:
        assert name in source.splitlines()[0]
