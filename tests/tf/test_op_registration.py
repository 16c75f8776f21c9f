"""The op the loaded library registered is exactly the one tf_ge_custom/op_def.py defines."""
import pytest
import tensorflow as tf
from tensorflow.python.framework import kernels, op_def_registry

import tf_ge_custom
from tf_ge_custom.op_def import ADD_CUSTOM


@pytest.fixture(scope="module")
def registered():
    tf_ge_custom.add_custom  # importing the package loaded the library
    op = op_def_registry.get(ADD_CUSTOM.type_name)
    assert op is not None, "AddCustom is not registered after import tf_ge_custom"
    return op


def test_inputs_outputs_and_type_attr_match_definition(registered):
    assert [a.name for a in registered.input_arg] == list(ADD_CUSTOM.inputs)
    assert [a.name for a in registered.output_arg] == list(ADD_CUSTOM.outputs)
    for arg in list(registered.input_arg) + list(registered.output_arg):
        assert arg.type_attr == ADD_CUSTOM.type_attr
    assert [a.name for a in registered.attr] == [ADD_CUSTOM.type_attr]


def test_dtype_set_matches_definition(registered):
    (attr,) = registered.attr
    allowed = sorted(tf.as_dtype(t).name for t in attr.allowed_values.list.type)
    assert allowed == sorted(ADD_CUSTOM.dtypes)


def test_a_cpu_kernel_is_registered_for_every_dtype():
    kdefs = kernels.get_registered_kernels_for_op(ADD_CUSTOM.type_name).kernel
    cpu = set()
    for k in kdefs:
        if k.device_type != "CPU":
            continue
        (constraint,) = [c for c in k.constraint if c.name == ADD_CUSTOM.type_attr]
        cpu.update(tf.as_dtype(t).name for t in constraint.allowed_values.list.type)
    assert cpu == set(ADD_CUSTOM.dtypes)


def test_python_function_name_matches_definition():
    lib = tf.load_op_library(tf_ge_custom.library_path())
    assert callable(getattr(lib, ADD_CUSTOM.python_name))
    assert getattr(tf_ge_custom, ADD_CUSTOM.python_name) is tf_ge_custom.add_custom


def test_build_records_the_running_tensorflow():
    info = tf_ge_custom._library.build_info()
    assert info["tensorflow"]["version"] == tf.__version__
