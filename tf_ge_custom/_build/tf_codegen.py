"""Write the TensorFlow registrations of every op from ``tf_ge_custom/op_def.py``.

The hand-written sources in ``tf_ops/`` hold only what no record can say (the shape
function, the kernel classes, the doc text); the op's name, inputs, outputs, type attr and
dtype set, and the list of kernels registered per dtype, come from here, so they cannot
drift from the definition. The op library build step (``op_library.py``) writes the header
into its build folder before compiling::

    python -m tf_ge_custom._build.tf_codegen OUT_DIR    # to look at it

``<python name>_registrations.h`` defines, for its op ``<Type>`` of ``op_def.OPS`` (and
``tf_ge_custom_op_registrations.h`` for every op, to look at; the sources include their own
op's header, so that a new op's leaves every other op's objects as they were):

  TF_GE_CUSTOM_REGISTER_OP_<Type>           REGISTER_OP("<Type>") with its .Input/.Output/
                                            .Attr lines (the type attr, then each OpAttr
                                            with its default); the source appends
                                            .SetShapeFn(...)
  TF_GE_CUSTOM_SHAPE_FN_<Type>              the shape function the record implies, for
                                            .SetShapeFn: TensorFlow's UnchangedShape for one
                                            input that does not broadcast, every input merged
                                            into one shape for several, TensorFlow's
                                            BroadcastBinaryOpShapeFn for two that broadcast
                                            (none for more that broadcast: the source brings
                                            its own)
  TF_GE_CUSTOM_DEFINE_ATTRS_<Type>          struct <Type>Attrs: one member per OpAttr, read
                                            with GetAttr by its constructor (from a kernel's
                                            OpKernelConstruction), which refuses a value
                                            outside the record's range with InvalidArgument
  TF_GE_CUSTOM_REGISTER_CPU_KERNELS_<Type>(KERNEL)
                                            REGISTER_KERNEL_BUILDER of KERNEL<CPUDevice, T>
                                            on DEVICE_CPU for each dtype T
  TF_GE_CUSTOM_REGISTER_XLA_KERNEL_<Type>(KERNEL)
                                            REGISTER_XLA_OP of KERNEL, constrained to the
                                            op's dtypes (only in the XLA kernel library)

An op whose ``tf_ops/`` holds only ``<python name>_functor.h`` (no ``_ops.cc``, no
``_kernels.cc``) gets the rest generated as ``<python name>_generated.cc``: its registration
with the shape function above, and a CPU kernel class that checks that every input has the
first's shape, forwards an input's buffer or allocates the output, and calls
``functor::<Type>Functor<Device, T>()(device, attrs, <input>.flat<T>()..., <output>.flat<T>())``
(ops that do not broadcast, with one output; docs/adding-an-op.md).

Pure Python, Python 3.7 syntax; no TensorFlow import.
"""
import os
import sys

from .. import _atomic_files as atomic_files, op_def

HEADER_NAME = "tf_ge_custom_op_registrations.h"
_BANNER = ("// Generated from tf_ge_custom/op_def.py by tf_ge_custom/_build/tf_codegen.py. "
           "Do not edit.\n")

# TensorFlow's spelling of a dtype inside a REGISTER_OP type list -> (the C++ type its
# kernels are templated on, the DataType enumerator). TensorFlow fixes both: see
# tensorflow/core/framework/types.h (DataTypeToEnum) and types.proto.
CPP_TYPES = {
    "float": ("float", "DT_FLOAT"),
    "half": ("Eigen::half", "DT_HALF"),
    "bfloat16": ("::tensorflow::bfloat16", "DT_BFLOAT16"),
    "double": ("double", "DT_DOUBLE"),
    "int8": ("::tensorflow::int8", "DT_INT8"),
    "int16": ("::tensorflow::int16", "DT_INT16"),
    "int32": ("::tensorflow::int32", "DT_INT32"),
    "int64": ("::tensorflow::int64", "DT_INT64"),
    "uint8": ("::tensorflow::uint8", "DT_UINT8"),
}


# The C++ type of each OpAttr type, as OpKernelConstruction::GetAttr reads it (TensorFlow's
# attr_value_util.h: a "float" attr is a float, an "int" attr an int64).
ATTR_CPP_TYPES = {
    "float": "float",
    "int": "::tensorflow::int64",
}


class CodegenError(ValueError):
    """The op definition holds something this generator cannot write as C++."""


def _identifier(name):
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(
            c.isalnum() or c == "_" for c in name) or not name.isascii():
        raise CodegenError("%r is not usable as a C++ identifier / TF op or arg name" % name)
    return name


def _cpp_types(op):
    out = []
    for d in op.dtype_records():
        if d.tf_attr not in CPP_TYPES:
            raise CodegenError(
                "op %s: dtype %s (TensorFlow attr spelling %r) has no C++ type here; known: %s"
                % (op.type_name, d.name, d.tf_attr, ", ".join(sorted(CPP_TYPES))))
        out.append(CPP_TYPES[d.tf_attr])
    return out


def _attr_records(op):
    """The op's OpAttrs, each checked to be writable as C++ and as a REGISTER_OP attr."""
    names = {op.type_attr}
    for a in op.attrs:
        _identifier(a.name)
        if a.name in names:
            raise CodegenError("op %s: attribute name %r is used twice (the type attr is %r)"
                               % (op.type_name, a.name, op.type_attr))
        names.add(a.name)
        if a.type not in ATTR_CPP_TYPES:
            raise CodegenError("op %s: attribute %s has type %r; the types an attribute may "
                               "have: %s" % (op.type_name, a.name, a.type,
                                             ", ".join(sorted(ATTR_CPP_TYPES))))
        for what, value in (("default", a.default), ("minimum", a.minimum),
                            ("maximum", a.maximum)):
            if value is None and what != "default":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    value != value or value in (float("inf"), float("-inf")) or \
                    (a.type == "int" and not isinstance(value, int)):
                raise CodegenError("op %s: attribute %s has the %s %r; it must be a finite "
                                   "%s" % (op.type_name, a.name, what, value, a.type))
        if a.minimum is not None and a.maximum is not None and a.minimum > a.maximum:
            raise CodegenError("op %s: attribute %s has the minimum %r above its maximum %r"
                               % (op.type_name, a.name, a.minimum, a.maximum))
        if (a.minimum is not None and a.default < a.minimum) or (
                a.maximum is not None and a.default > a.maximum):
            raise CodegenError("op %s: attribute %s has the default %r; it must be %s"
                               % (op.type_name, a.name, a.default, range_text(a)))
    return op.attrs


def range_text(attr):
    """The range of ``attr`` in words, as the kernel's and the Python function's refusals
    say it: ``in [0.0, 1.0]``, ``>= 0``, ``<= 1.0``; None when unbounded."""
    if attr.minimum is not None and attr.maximum is not None:
        return "in [%r, %r]" % (attr.minimum, attr.maximum)
    if attr.minimum is not None:
        return ">= %r" % (attr.minimum,)
    if attr.maximum is not None:
        return "<= %r" % (attr.maximum,)
    return None


def _cpp_literal(attr, value):
    # an exact C++ spelling of the record's value in the attribute's type
    if attr.type == "float":
        return "static_cast<float>(%r)" % float(value)
    return "static_cast<%s>(%dLL)" % (ATTR_CPP_TYPES[attr.type], value)


def _cpp_string(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def _shape_fn(op):
    """The body of TF_GE_CUSTOM_SHAPE_FN_<Type>, or None where the source brings its own."""
    if op.broadcasts:
        if len(op.inputs) == 2:
            return ["::tensorflow::shape_inference::BroadcastBinaryOpShapeFn"]
        return None
    if len(op.inputs) == 1 and len(op.outputs) == 1:
        return ["::tensorflow::shape_inference::UnchangedShape"]
    # every input has the output's shape: merge what each one knows
    return ["[](::tensorflow::shape_inference::InferenceContext* c) {",
            "  ::tensorflow::shape_inference::ShapeHandle shape = c->input(0);",
            "  for (int i = 1; i < c->num_inputs(); ++i) {",
            "    TF_RETURN_IF_ERROR(c->Merge(shape, c->input(i), &shape));",
            "  }",
            "  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shape);",
            "  return ::tensorflow::Status();",
            "}"]


def _attrs_struct(op):
    """The body of TF_GE_CUSTOM_DEFINE_ATTRS_<Type>."""
    t = op.type_name
    lines = ["struct %sAttrs {" % t]
    for a in op.attrs:
        lines.append("  %s %s = %s;" % (ATTR_CPP_TYPES[a.type], a.name, _cpp_literal(a, a.default)))
    lines.append("  explicit %sAttrs(::tensorflow::OpKernelConstruction* ctx) {" % t)
    for a in op.attrs:
        lines.append("    OP_REQUIRES_OK(ctx, ctx->GetAttr(%s, &%s));" % (_cpp_string(a.name), a.name))
        bounds = []
        if a.minimum is not None:
            bounds.append("%s >= %s" % (a.name, _cpp_literal(a, a.minimum)))
        if a.maximum is not None:
            bounds.append("%s <= %s" % (a.name, _cpp_literal(a, a.maximum)))
        if bounds:  # written so that a NaN is outside any range
            lines.append("    OP_REQUIRES(ctx, %s, ::tensorflow::errors::InvalidArgument(" % (
                " && ".join(bounds)))
            lines.append("        %s, %s, %s, ctx->def().name()));" % (
                _cpp_string("%s: attribute %s is " % (t, a.name)), a.name,
                _cpp_string("; it must be %s (op_def.py's range for it), in node "
                            % range_text(a))))
    lines.append("  }")
    lines.append("};")
    return lines


def _macro(name, lines):
    """A #define whose body is ``lines`` joined by line continuations."""
    return "#define %s \\\n  %s\n" % (name, " \\\n  ".join(lines))


def op_registrations(op):
    """The three macros of one op (see the module docstring)."""
    t = _identifier(op.type_name)
    attr = _identifier(op.type_attr)
    for arg in tuple(op.inputs) + tuple(op.outputs):
        _identifier(arg)
    types = _cpp_types(op)
    attrs = _attr_records(op)
    signature = (['REGISTER_OP("%s")' % t]
                 + ['.Input("%s: %s")' % (n, attr) for n in op.inputs]
                 + ['.Output("%s: %s")' % (n, attr) for n in op.outputs]
                 + ['.Attr("%s")' % op.tf_type_attr_spec()]
                 + ['.Attr("%s")' % a.tf_attr_spec() for a in attrs])
    cpu = ["REGISTER_KERNEL_BUILDER(Name(\"%s\").Device(::tensorflow::DEVICE_CPU)"
           ".TypeConstraint<%s>(\"%s\"), KERNEL<Eigen::ThreadPoolDevice, %s>);"
           % (t, cpp, attr, cpp) for cpp, _ in types]
    xla = ['REGISTER_XLA_OP(Name("%s").TypeConstraint("%s", {%s}), KERNEL);'
           % (t, attr, ", ".join("::tensorflow::" + enum for _, enum in types))]
    shape = _shape_fn(op)
    return "".join([
        "\n// %s: inputs %s, outputs %s, %s%s\n" % (
            t, ", ".join(op.inputs), ", ".join(op.outputs), op.tf_type_attr_spec(),
            "".join(", " + a.tf_attr_spec() for a in attrs)),
        _macro("TF_GE_CUSTOM_REGISTER_OP_%s" % t, signature),
        _macro("TF_GE_CUSTOM_SHAPE_FN_%s" % t, shape) if shape else "",
        _macro("TF_GE_CUSTOM_DEFINE_ATTRS_%s" % t, _attrs_struct(op)),
        _macro("TF_GE_CUSTOM_REGISTER_CPU_KERNELS_%s(KERNEL)" % t, cpu),
        _macro("TF_GE_CUSTOM_REGISTER_XLA_KERNEL_%s(KERNEL)" % t, xla),
    ])


def header(ops=None):
    """The text of ``tf_ge_custom_op_registrations.h`` for ``ops`` (default: op_def.OPS)."""
    ops = op_def.OPS if ops is None else ops
    guard = "TF_GE_CUSTOM_OP_REGISTRATIONS_H_"
    return "".join([_BANNER, "#ifndef %s\n#define %s\n" % (guard, guard)]
                   + [op_registrations(op) for op in ops]
                   + ["\n#endif  // %s\n" % guard])


def op_header_name(op):
    """The header of one op's registrations: ``<python name>_registrations.h``."""
    return "%s_registrations.h" % op.python_name


def op_header(op):
    """The text of ``<python name>_registrations.h``: ``op``'s macros alone."""
    guard = "TF_GE_CUSTOM_%s_REGISTRATIONS_H_" % _identifier(op.python_name).upper()
    return "".join([_BANNER, "#ifndef %s\n#define %s\n" % (guard, guard), op_registrations(op),
                    "\n#endif  // %s\n" % guard])


def write(out_dir, ops=None):
    """Write the header of every op and each op's own into ``out_dir`` (each only when its
    text changes); return the path of the one of every op."""
    ops = op_def.OPS if ops is None else ops
    for op in ops:
        atomic_files.write_text_if_changed(os.path.join(out_dir, op_header_name(op)), op_header(op))
    path = os.path.join(out_dir, HEADER_NAME)
    atomic_files.write_text_if_changed(path, header(ops))
    return path


FUNCTOR_SUFFIX = "_functor.h"
GENERATED_SUFFIX = "_generated.cc"
_HAND_WRITTEN = ("_ops.cc", "_kernels.cc")


def needs_generated_kernel(op, tf_ops):
    """Whether ``op``'s TensorFlow side is its functor alone (``tf_ops/<python
    name>_functor.h``, neither ``_ops.cc`` nor ``_kernels.cc``); a CodegenError when it is
    neither that nor both hand-written sources, naming what is missing."""
    name = op.python_name
    written = [s for s in _HAND_WRITTEN if os.path.isfile(os.path.join(tf_ops, name + s))]
    if len(written) == len(_HAND_WRITTEN):
        return False
    functor = os.path.isfile(os.path.join(tf_ops, name + FUNCTOR_SUFFIX))
    if written or not functor:
        raise CodegenError(
            "op %s: tf_ops/ has %s; an op needs either its functor alone (tf_ops/%s%s, the rest is "
            "generated) or both tf_ops/%s_ops.cc and tf_ops/%s_kernels.cc (docs/adding-an-op.md)"
            % (op.type_name, " and ".join("%s%s" % (name, s) for s in written) or "none of its sources",
               name, FUNCTOR_SUFFIX, name, name))
    if op.broadcasts or len(op.outputs) != 1:
        raise CodegenError(
            "op %s: the generated kernel class is for ops that do not broadcast, with one output; "
            "write tf_ops/%s_ops.cc and tf_ops/%s_kernels.cc for it" % (op.type_name, name, name))
    return True


def generated_source(op):
    """The text of ``<python name>_generated.cc`` for ``op`` (see the module docstring)."""
    t = _identifier(op.type_name)
    n = len(op.inputs)
    inputs = ["in_%d" % i for i in range(n)]
    lines = [
        _BANNER.rstrip("\n"),
        "// %s: its registration (shape function from op_def.py) and its CPU kernel class around"
        % t,
        "// tf_ops/%s%s." % (op.python_name, FUNCTOR_SUFFIX),
        "#define EIGEN_USE_THREADS",
        '#include "%s"' % op_header_name(op),
        '#include "tensorflow/core/framework/common_shape_fns.h"',
        '#include "tensorflow/core/framework/op.h"',
        '#include "tensorflow/core/framework/op_kernel.h"',
        '#include "tensorflow/core/framework/register_types.h"',
        '#include "tensorflow/core/framework/shape_inference.h"',
        '#include "tensorflow/core/framework/tensor.h"',
        "",
        "namespace tf_ge_custom {",
        "TF_GE_CUSTOM_DEFINE_ATTRS_%s" % t,
        "}  // namespace tf_ge_custom",
        "",
        '#include "%s%s"' % (op.python_name, FUNCTOR_SUFFIX),
        "",
        "namespace tf_ge_custom {",
        "",
        "TF_GE_CUSTOM_REGISTER_OP_%s" % t,
        "    .SetShapeFn(TF_GE_CUSTOM_SHAPE_FN_%s);" % t,
        "",
        "template <typename Device, typename T>",
        "class %sOp : public ::tensorflow::OpKernel {" % t,
        " public:",
        "  explicit %sOp(::tensorflow::OpKernelConstruction* ctx) : OpKernel(ctx), attrs_(ctx) {}" % t,
        "",
        "  void Compute(::tensorflow::OpKernelContext* ctx) override {",
    ]
    for i, name in enumerate(inputs):
        lines.append("    const ::tensorflow::Tensor& %s = ctx->input(%d);" % (name, i))
    for i in range(1, n):
        lines += ["    OP_REQUIRES(ctx, in_%d.shape() == in_0.shape(), ::tensorflow::errors::InvalidArgument("
                  % i,
                  "        %s, in_%d.shape().DebugString(), %s, in_0.shape().DebugString()));"
                  % (_cpp_string("%s: input %s has shape " % (t, op.inputs[i])), i,
                     _cpp_string(" but %s has " % op.inputs[0]))]
    lines += [
        "    ::tensorflow::Tensor* out = nullptr;",
        "    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({%s}, 0, in_0.shape(), &out));"
        % ", ".join(str(i) for i in range(n)),
        "    if (out->NumElements() == 0) return;",
        "    functor::%sFunctor<Device, T>()(ctx->eigen_device<Device>(), attrs_, %s, out->flat<T>());"
        % (t, ", ".join("%s.flat<T>()" % name for name in inputs)),
        "  }",
        "",
        " private:",
        "  const %sAttrs attrs_;" % t,
        "};",
        "",
        "TF_GE_CUSTOM_REGISTER_CPU_KERNELS_%s(%sOp)" % (t, t),
        "",
        "}  // namespace tf_ge_custom",
        "",
    ]
    return "\n".join(lines)


def write_generated_sources(out_dir, tf_ops, ops=None):
    """``<python name>_generated.cc`` in ``out_dir`` for each op of ``ops`` whose
    ``tf_ops/`` is its functor alone (each only when its text changes); their paths."""
    ops = op_def.OPS if ops is None else ops
    paths = []
    for op in ops:
        if needs_generated_kernel(op, tf_ops):
            path = os.path.join(out_dir, op.python_name + GENERATED_SUFFIX)
            atomic_files.write_text_if_changed(path, generated_source(op))
            paths.append(path)
    return paths


if __name__ == "__main__":
    sys.stdout.write(write(sys.argv[1] if len(sys.argv) > 1 else ".") + "\n")
