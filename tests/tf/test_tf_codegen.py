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
                             op_def.DTYPES[d].tf_attr for d in op.dtypes))]
                         + ['.Attr("%s")' % a.tf_attr_spec() for a in op.attrs])
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


def test_an_op_with_one_input_and_an_attribute():
    # LeakyReluCustom's record, given explicitly (op_def.OPS ships it only when every layer
    # carries it): its alpha reaches REGISTER_OP with the record's default, the kernels read
    # it, and the shape function is the unary one
    op = op_def.LEAKY_RELU_CUSTOM
    text = tf_codegen.header((op_def.ADD_CUSTOM, op))
    _check(text, op)
    assert '.Attr("alpha: float = 0.2")' in _macro_body(text, "TF_GE_CUSTOM_REGISTER_OP_" + op.type_name)
    assert _macro_body(text, "TF_GE_CUSTOM_SHAPE_FN_LeakyReluCustom") == [
        "::tensorflow::shape_inference::UnchangedShape"]
    assert _macro_body(text, "TF_GE_CUSTOM_DEFINE_ATTRS_LeakyReluCustom") == [
        "struct LeakyReluCustomAttrs {", "float alpha = static_cast<float>(0.2);",
        "explicit LeakyReluCustomAttrs(::tensorflow::OpKernelConstruction* ctx) {",
        'OP_REQUIRES_OK(ctx, ctx->GetAttr("alpha", &alpha));', "}", "};"]
    # AddCustom's macros are those it had, whatever op follows it
    _check(text, op_def.ADD_CUSTOM)
    assert _macro_body(text, "TF_GE_CUSTOM_SHAPE_FN_AddCustom") == [
        "::tensorflow::shape_inference::BroadcastBinaryOpShapeFn"]


def test_a_ranged_attribute_is_checked_in_the_kernel_constructor():
    op = op_def.LEAKY_RELU_CUSTOM._replace(
        type_name="Clipped", attrs=(op_def.OpAttr("alpha", "float", 0.25, 0.0, 1.0),
                                    op_def.OpAttr("steps", "int", 3, 1)))
    text = tf_codegen.header((op,))
    body = _macro_body(text, "TF_GE_CUSTOM_DEFINE_ATTRS_Clipped")
    assert ('.Attr("alpha: float = 0.25")' in text and '.Attr("steps: int = 3")' in text)
    assert "::tensorflow::int64 steps = static_cast<::tensorflow::int64>(3LL);" in body
    # written so that NaN fails the check: both comparisons are false for it
    assert ("OP_REQUIRES(ctx, alpha >= static_cast<float>(0.0) && alpha <= static_cast<float>(1.0), "
            "::tensorflow::errors::InvalidArgument(") in body
    assert ('"Clipped: attribute alpha is ", alpha, "; it must be in [0.0, 1.0] (op_def.py\'s '
            'range for it), in node ", ctx->def().name()));') in body
    assert ('"Clipped: attribute steps is ", steps, "; it must be >= 1 (op_def.py\'s range for '
            'it), in node ", ctx->def().name()));') in body


@pytest.mark.parametrize("inputs,broadcasts,expected", [
    (("a", "b"), True, ["::tensorflow::shape_inference::BroadcastBinaryOpShapeFn"]),
    (("a",), False, ["::tensorflow::shape_inference::UnchangedShape"]),
    (("a", "b", "c"), True, None),  # the source brings its own
])
def test_the_shape_function_follows_inputs_and_broadcasting(inputs, broadcasts, expected):
    op = op_def.ADD_CUSTOM._replace(type_name="Other", inputs=inputs, broadcasts=broadcasts)
    text = tf_codegen.header((op,))
    if expected is None:
        assert "TF_GE_CUSTOM_SHAPE_FN_Other" not in text
    else:
        assert _macro_body(text, "TF_GE_CUSTOM_SHAPE_FN_Other") == expected


def test_inputs_that_share_one_shape_are_merged():
    op = op_def.ADD_CUSTOM._replace(type_name="Fma", inputs=("a", "b", "c"), broadcasts=False)
    body = _macro_body(tf_codegen.header((op,)), "TF_GE_CUSTOM_SHAPE_FN_Fma")
    assert "TF_RETURN_IF_ERROR(c->Merge(shape, c->input(i), &shape));" in body
    assert "for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shape);" in body


@pytest.mark.parametrize("attr,match", [
    (op_def.OpAttr("alpha", "string", "x"), "type 'string'; the types an attribute may have: float, int"),
    (op_def.OpAttr("alpha", "float", float("nan")), "default nan; it must be a finite float"),
    (op_def.OpAttr("alpha", "float", 0.2, 1.0, 0.0), "minimum 1.0 above its maximum 0.0"),
    (op_def.OpAttr("alpha", "float", 2.0, 0.0, 1.0), r"default 2.0; it must be in \[0.0, 1.0\]"),
    (op_def.OpAttr("n", "int", 1.5), "default 1.5; it must be a finite int"),
    (op_def.OpAttr("T", "float", 0.2), "attribute name 'T' is used twice"),
    (op_def.OpAttr("al pha", "float", 0.2), "C\\+\\+ identifier"),
])
def test_attributes_the_generator_cannot_write_are_refused_by_name(attr, match):
    with pytest.raises(tf_codegen.CodegenError, match=match):
        tf_codegen.header((op_def.LEAKY_RELU_CUSTOM._replace(attrs=(attr,)),))


# --- one header per op, and the sources of an op whose tf_ops/ is its functor alone ---------


def test_each_op_has_a_header_of_its_own_macros(tmp_path):
    tf_codegen.write(str(tmp_path))
    for op in op_def.OPS:
        text = (tmp_path / tf_codegen.op_header_name(op)).read_text()
        _check(text, op)  # the op's macros, parsed back
        others = [o.type_name for o in op_def.OPS if o is not op]
        assert not any("TF_GE_CUSTOM_REGISTER_OP_%s " % t in text for t in others)
    assert tf_codegen.op_header_name(op_def.LEAKY_RELU_CUSTOM) == "leaky_relu_custom_registrations.h"


def _tf_ops(tmp_path, *names):
    folder = tmp_path / "tf_ops"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text("// %s\n" % name)
    return str(folder)


def test_which_ops_get_a_generated_kernel(tmp_path):
    op = op_def.LEAKY_RELU_CUSTOM
    both = _tf_ops(tmp_path / "a", "leaky_relu_custom_ops.cc", "leaky_relu_custom_kernels.cc")
    assert tf_codegen.needs_generated_kernel(op, both) is False
    functor = _tf_ops(tmp_path / "b", "leaky_relu_custom_functor.h")
    assert tf_codegen.needs_generated_kernel(op, functor) is True
    half = _tf_ops(tmp_path / "c", "leaky_relu_custom_ops.cc", "leaky_relu_custom_functor.h")
    with pytest.raises(tf_codegen.CodegenError, match=r"^op LeakyReluCustom: tf_ops/ has leaky_relu_custom_ops\.cc; "
                                                      r"an op needs either its functor alone"):
        tf_codegen.needs_generated_kernel(op, half)
    with pytest.raises(tf_codegen.CodegenError, match="has none of its sources"):
        tf_codegen.needs_generated_kernel(op, _tf_ops(tmp_path / "d"))
    broadcasting = op_def.ADD_CUSTOM
    with pytest.raises(tf_codegen.CodegenError, match="for ops that do not broadcast, with one output; write "
                                                      "tf_ops/add_custom_ops.cc and tf_ops/add_custom_kernels.cc"):
        tf_codegen.needs_generated_kernel(broadcasting, _tf_ops(tmp_path / "e", "add_custom_functor.h"))


def test_the_generated_kernel_checks_shapes_and_calls_the_functor_with_every_input():
    two = op_def.LEAKY_RELU_CUSTOM._replace(type_name="BlendCustom", python_name="blend_custom",
                                            inputs=("a", "b"), outputs=("out",))
    text = tf_codegen.generated_source(two)
    assert '#include "blend_custom_registrations.h"' in text and '#include "blend_custom_functor.h"' in text
    assert text.index("TF_GE_CUSTOM_DEFINE_ATTRS_BlendCustom") < text.index('#include "blend_custom_functor.h"')
    assert "TF_GE_CUSTOM_REGISTER_OP_BlendCustom\n    .SetShapeFn(TF_GE_CUSTOM_SHAPE_FN_BlendCustom);" in text
    assert 'OP_REQUIRES(ctx, in_1.shape() == in_0.shape()' in text and '"BlendCustom: input b has shape "' in text
    assert "forward_input_or_allocate_output({0, 1}, 0, in_0.shape(), &out)" in text
    assert ("functor::BlendCustomFunctor<Device, T>()(ctx->eigen_device<Device>(), attrs_, in_0.flat<T>(), "
            "in_1.flat<T>(), out->flat<T>());") in text
    assert "TF_GE_CUSTOM_REGISTER_CPU_KERNELS_BlendCustom(BlendCustomOp)" in text


def test_the_library_compiles_the_sources_of_the_ops_it_holds(tmp_path, monkeypatch):
    from tf_ge_custom._build import op_library

    tf_ops = _tf_ops(tmp_path, "add_custom_ops.cc", "add_custom_xla.cc", "leaky_relu_custom_kernels.cc",
                     "shared_helpers.cc")
    names = lambda ops: [p.rsplit("/", 1)[1] for p in op_library.sources_of_ops(tf_ops, ops)]
    assert names(op_def.OPS) == ["add_custom_ops.cc", "add_custom_xla.cc", "leaky_relu_custom_kernels.cc",
                                 "shared_helpers.cc"]
    # an op the definition does not hold: its sources are left out, a source of no op is kept
    assert names((op_def.ADD_CUSTOM,)) == ["add_custom_ops.cc", "add_custom_xla.cc", "shared_helpers.cc"]
