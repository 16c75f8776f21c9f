"""The TensorFlow registrations are generated from tf_ge_custom/op_def.py
(tf_ge_custom/_build/tf_codegen.py): the REGISTER_OP signature, a CPU kernel per dtype and
the XLA kernel's dtype constraint. Parsed back here and compared with the definition; the
library built from them is compared with it in test_op_registration.py."""
import re

import pytest

from tf_ge_custom import op_def
from tf_ge_custom._build import tf_codegen


def _macro_body(text, name):
    m = re.search(r"^#define %s(?:\(KERNEL\))? \\\n((?:  .*\\\n)*  .*)$" % re.escape(name), text, re.M)
    assert m, name
    return [line.strip().rstrip("\\").strip() for line in m.group(1).splitlines()]


def _check(text, op):
    t = op.type_name
    signature = _macro_body(text, "TF_GE_CUSTOM_REGISTER_OP_" + t)
    assert signature == (['REGISTER_OP("%s")' % t]
                         + ['.Input("%s: %s")' % (n, op.type_attr) for n in op.inputs]
                         + ['.Output("%s: %s")' % (n, op.type_attr) for n in op.outputs]
                         + ['.Attr("%s: {%s}")' % (op.type_attr, ", ".join(
                             op_def.DTYPES[d].tf_attr for d in op.dtypes))])
    cpu = _macro_body(text, "TF_GE_CUSTOM_REGISTER_CPU_KERNELS_" + t)
    pattern = (r'REGISTER_KERNEL_BUILDER\(Name\("%s"\)\.Device\(::tensorflow::DEVICE_CPU\)'
               r'\.TypeConstraint<(.+)>\("%s"\), KERNEL<Eigen::ThreadPoolDevice, (.+)>\);'
               % (t, op.type_attr))
    types = [re.fullmatch(pattern, line).groups() for line in cpu]
    assert [a for a, b in types] == [b for a, b in types]
    assert [a for a, _ in types] == [tf_codegen.CPP_TYPES[op_def.DTYPES[d].tf_attr][0]
                                     for d in op.dtypes]
    (xla,) = _macro_body(text, "TF_GE_CUSTOM_REGISTER_XLA_KERNEL_" + t)
    assert xla == 'REGISTER_XLA_OP(Name("%s").TypeConstraint("%s", {%s}), KERNEL);' % (
        t, op.type_attr, ", ".join("::tensorflow::" + tf_codegen.CPP_TYPES[op_def.DTYPES[d].tf_attr][1]
                                   for d in op.dtypes))


def test_the_header_restates_every_op_of_the_definition():
    text = tf_codegen.header()
    for op in op_def.OPS:
        _check(text, op)
    assert text.count("#define TF_GE_CUSTOM_REGISTER_OP_") == len(op_def.OPS)


def test_a_second_op_with_its_own_signature_and_dtypes():
    other = op_def.ADD_CUSTOM._replace(type_name="FusedThing", python_name="fused_thing",
                                       inputs=("a", "b", "c"), outputs=("out", "aux"),
                                       type_attr="U", dtypes=("int32", "float16"))
    text = tf_codegen.header(op_def.OPS + (other,))
    _check(text, op_def.ADD_CUSTOM)
    _check(text, other)


def test_each_dtype_maps_to_the_enumerator_tensorflow_gives_it():
    # the C++ types are checked by the build: a kernel per dtype is registered under the
    # dtype TensorFlow derives from that type (test_op_registration.py)
    import tensorflow as tf
    from tensorflow.core.framework import types_pb2

    for d in op_def.DTYPES.values():
        _, enum = tf_codegen.CPP_TYPES[d.tf_attr]
        assert types_pb2.DataType.Value(enum) == tf.as_dtype(d.name).as_datatype_enum


def test_a_dtype_without_a_cpp_type_is_refused_by_name(monkeypatch):
    monkeypatch.setitem(op_def.DTYPES, "complex64",
                        op_def.DType("complex64", "complex64", "DT_COMPLEX64", "c64", 8))
    op = op_def.ADD_CUSTOM._replace(dtypes=("float32", "complex64"))
    with pytest.raises(tf_codegen.CodegenError, match="dtype complex64.*'complex64'"):
        tf_codegen.header((op,))


@pytest.mark.parametrize("field,value", [("type_name", "Add Custom"), ("inputs", ("x", "y-1")),
                                         ("type_attr", "T\""), ("outputs", ("ζ",))])
def test_names_that_are_not_identifiers_are_refused(field, value):
    with pytest.raises(tf_codegen.CodegenError, match="C\\+\\+ identifier"):
        tf_codegen.header((op_def.ADD_CUSTOM._replace(**{field: value}),))


def test_write_replaces_the_file_only_when_its_text_changes(tmp_path):
    path = tf_codegen.write(str(tmp_path))
    stamp = (tmp_path / tf_codegen.HEADER_NAME).stat().st_mtime_ns
    assert tf_codegen.write(str(tmp_path)) == path
    assert (tmp_path / tf_codegen.HEADER_NAME).stat().st_mtime_ns == stamp
    assert open(path).read() == tf_codegen.header()
