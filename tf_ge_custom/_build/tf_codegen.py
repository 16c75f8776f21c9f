"""Write the TensorFlow registrations of every op from ``tf_ge_custom/op_def.py``.

The hand-written sources in ``tf_ops/`` hold only what no record can say (the shape
function, the kernel classes, the doc text); the op's name, inputs, outputs, type attr and
dtype set, and the list of kernels registered per dtype, come from here, so they cannot
drift from the definition. The op library build step (``op_library.py``) writes the header
into its build folder before compiling::

    python -m tf_ge_custom._build.tf_codegen OUT_DIR    # to look at it

``tf_ge_custom_op_registrations.h`` defines, for each op ``<Type>`` of ``op_def.OPS``:

  TF_GE_CUSTOM_REGISTER_OP_<Type>           REGISTER_OP("<Type>") with its .Input/.Output/
                                            .Attr lines; the source appends .SetShapeFn(...)
  TF_GE_CUSTOM_REGISTER_CPU_KERNELS_<Type>(KERNEL)
                                            REGISTER_KERNEL_BUILDER of KERNEL<CPUDevice, T>
                                            on DEVICE_CPU for each dtype T
  TF_GE_CUSTOM_REGISTER_XLA_KERNEL_<Type>(KERNEL)
                                            REGISTER_XLA_OP of KERNEL, constrained to the
                                            op's dtypes (only in the XLA kernel library)

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
    signature = (['REGISTER_OP("%s")' % t]
                 + ['.Input("%s: %s")' % (n, attr) for n in op.inputs]
                 + ['.Output("%s: %s")' % (n, attr) for n in op.outputs]
                 + ['.Attr("%s")' % op.tf_type_attr_spec()])
    cpu = ["REGISTER_KERNEL_BUILDER(Name(\"%s\").Device(::tensorflow::DEVICE_CPU)"
           ".TypeConstraint<%s>(\"%s\"), KERNEL<Eigen::ThreadPoolDevice, %s>);"
           % (t, cpp, attr, cpp) for cpp, _ in types]
    xla = ['REGISTER_XLA_OP(Name("%s").TypeConstraint("%s", {%s}), KERNEL);'
           % (t, attr, ", ".join("::tensorflow::" + enum for _, enum in types))]
    return "".join([
        "\n// %s: inputs %s, outputs %s, %s\n" % (
            t, ", ".join(op.inputs), ", ".join(op.outputs), op.tf_type_attr_spec()),
        _macro("TF_GE_CUSTOM_REGISTER_OP_%s" % t, signature),
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


def write(out_dir, ops=None):
    """Write the header into ``out_dir`` (only when its text changes); return its path."""
    path = os.path.join(out_dir, HEADER_NAME)
    atomic_files.write_text_if_changed(path, header(ops))
    return path


if __name__ == "__main__":
    sys.stdout.write(write(sys.argv[1] if len(sys.argv) > 1 else ".") + "\n")
