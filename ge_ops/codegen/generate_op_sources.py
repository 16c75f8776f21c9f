"""Write the C++ sources that restate tf_ge_custom/op_def.py, so nothing in ge_ops/ repeats it.

    generate_op_sources.py --op-def tf_ge_custom/op_def.py --out DIR

writes into DIR:
  op_proto/<python_name>.h  the GE ``REG_OP`` proto of each op (installed into
                            opp/op_graph/include/, compiled into the GE library)
  op_definitions.inc        the CANN-free core's table of ops (names, dtypes, kernel facts)
  ge_ops.inc                X-macros over op types and GE dtype enumerators for the CANN side

Each file is replaced only when its text changes (write to a temp file, then os.replace), so
CMake does not rebuild on every configure. Python 3.7 syntax: setup.py runs this on any host.
"""
import argparse
import importlib.util
import os
import sys


def load_op_def(path):
    # op_def.py is pure Python with no package-relative import: load it by path so that the
    # generator never imports the tf_ge_custom package (and so never TensorFlow).
    spec = importlib.util.spec_from_file_location("_tf_ge_custom_op_def", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def c_string(text):
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            raise ValueError("unexpected character %r in an op definition name" % ch)
    return '"%s"' % "".join(out)


HEADER = "// Generated from tf_ge_custom/op_def.py by ge_ops/codegen/generate_op_sources.py. Do not edit.\n"


def op_proto_header(op):
    guard = "TF_GE_CUSTOM_OP_PROTO_%s_H_" % op.python_name.upper()
    types = "TensorType({%s})" % ", ".join(d.ge for d in op.dtype_records())
    lines = [HEADER.rstrip("\n"),
             "// The GE operator prototype of %s, for the file-based TensorFlow parse (atc --framework=3,"
             % op.type_name,
             "// aclgrphParseTensorFlow), which does not generate one from the TF OpDef.",
             "#ifndef %s" % guard, "#define %s" % guard, "",
             '#include "graph/operator_reg.h"', "", "namespace ge {",
             "REG_OP(%s)" % op.type_name]
    for name in op.inputs:
        lines.append("    .INPUT(%s, %s)" % (name, types))
    for name in op.outputs:
        lines.append("    .OUTPUT(%s, %s)" % (name, types))
    lines += ["    .OP_END_FACTORY_REG(%s);" % op.type_name, "}  // namespace ge", "",
              "#endif  // %s" % guard, ""]
    return "\n".join(lines)


def op_definitions_inc(module):
    lines = [HEADER, "// One initializer per op: see core/include/tf_ge_custom_core/op_definition.h.\n"]
    for op in module.OPS:
        dtypes = ", ".join(
            "{%s, %s, %d, %s}" % (c_string(d.name), c_string(d.ge), d.itemsize,
                                   c_string(op.kernel.binary_name(d.name)))
            for d in op.dtype_records())
        lines.append("{%s, {%s}, {%s}, {%s}, %s, %d},\n" % (
            c_string(op.type_name),
            ", ".join(c_string(n) for n in op.inputs),
            ", ".join(c_string(n) for n in op.outputs),
            dtypes, c_string(op.kernel.entry), op.kernel.block_size))
    return "".join(lines)


def ge_ops_inc(module):
    ops = " ".join("X(%s)" % op.type_name for op in module.OPS)
    dtypes = " ".join("X(%s, %s)" % (d.ge, c_string(d.name)) for d in module.DTYPES.values())
    return "".join([
        HEADER,
        "// X(OpType) for every op the package ships.\n",
        "#define TF_GE_CUSTOM_FOR_EACH_OP(X) %s\n" % ops,
        "// X(ge::DataType enumerator, dtype name) for every dtype the op definition knows.\n",
        "#define TF_GE_CUSTOM_FOR_EACH_GE_DTYPE(X) %s\n" % dtypes,
    ])


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except (IOError, OSError):
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def generate(op_def_path, out_dir):
    module = load_op_def(op_def_path)
    files = {os.path.join(out_dir, "op_definitions.inc"): op_definitions_inc(module),
             os.path.join(out_dir, "ge_ops.inc"): ge_ops_inc(module)}
    for op in module.OPS:
        files[os.path.join(out_dir, "op_proto", op.python_name + ".h")] = op_proto_header(op)
    for path, text in sorted(files.items()):
        write_if_changed(path, text)
    return sorted(files)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op-def", required=True, help="path of tf_ge_custom/op_def.py")
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args(argv)
    for path in generate(args.op_def, args.out):
        sys.stdout.write(path + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
