"""Each kernel's host-argument layout against the record: the layout the record gives
(``_layout.py``, the rule of docs/kernel-manifest.md) against the kernel's own ``@triton.jit``
signature (one runtime parameter per slot, a pointer where the slot is an operand, the
attribute's own name where the slot is an attribute, the compile-time parameters the record's
constants name, in order), and against every shipped manifest entry of the op (offsets, sizes
and roles, slot by slot)."""
import ast
import os

from ._layout import layout_of
from ._report import CheckFailure


def kernel_dir(ctx):
    if ctx.kernel_dir:
        return ctx.kernel_dir
    from .. import kernels

    return os.path.dirname(os.path.abspath(kernels.__file__))


def _is_constexpr(arg):
    return arg.annotation is not None and "constexpr" in ast.dump(arg.annotation)


def jit_signatures(path):
    """``{function name: (runtime parameter names, constexpr names)}`` of the source's
    functions (read, not imported: no Triton needed)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = node.args.args
            out[node.name] = ([a.arg for a in args if not _is_constexpr(a)],
                              [a.arg for a in args if _is_constexpr(a)])
    return out


def _unnamed(slots):
    return [dict((k, v) for k, v in s.items() if k != "name") for s in slots]


def host_arg_layout(ctx):
    op = ctx.op
    path = os.path.join(kernel_dir(ctx), op.kernel.source)
    if not os.path.isfile(path):
        raise CheckFailure("no kernel source %s (the record's kernel.source)" % path)
    functions = jit_signatures(path)
    for v in op.kernel.variants:
        where = "%s variant %s (%s in %s)" % (op.type_name, v.name, v.function, op.kernel.source)
        try:
            layout = layout_of(op, v)
        except ValueError as e:
            raise CheckFailure("%s: %s" % (where, e))
        if v.function not in functions:
            raise CheckFailure("%s: the source has no function %s" % (where, v.function))
        runtime, constexprs = functions[v.function]
        if len(runtime) != len(v.params):
            raise CheckFailure("%s: the record lays out %d parameters (%s), the kernel takes %d (%s)" % (
                where, len(v.params), ", ".join(v.params), len(runtime), ", ".join(runtime)))
        for param, name in zip(v.params, runtime):
            operand = param.split(":")[0] in ("input", "output")
            if operand != name.endswith("_ptr"):
                raise CheckFailure("%s: the record's slot %s falls on the kernel's parameter %s, %s" % (
                    where, param, name, "not a pointer" if operand else "a pointer"))
            if param.startswith("attr:") and name != param[len("attr:"):]:
                raise CheckFailure("%s: the record's slot %s falls on the kernel's parameter %s; an "
                                   "attribute's parameter has the attribute's name" % (where, param, name))
        for param in v.params:
            kind, _, rest = param.partition(":")
            count = len(op.inputs) if kind == "input" else len(op.outputs) if kind == "output" else None
            if count is not None and not 0 <= int(rest) < count:
                raise CheckFailure("%s: slot %s, but the op has %d %ss" % (where, param, count, kind))
        if constexprs != [name for name, _ in v.constants]:
            raise CheckFailure("%s: the kernel's compile-time parameters are %s, the record's %s" % (
                where, constexprs, [name for name, _ in v.constants]))
        for slot in layout["slots"]:
            if slot["offset"] % slot["size"]:
                raise CheckFailure("%s: slot %s at offset %d is not aligned to its %d bytes" % (
                    where, slot["name"], slot["offset"], slot["size"]))
    shipped = _manifest_entries(op)
    for entry in shipped:
        want = _unnamed(layout_of(op, op.kernel.variant(entry.variant))["slots"])
        got = _unnamed(entry.args.to_json()["slots"]) if hasattr(entry.args, "to_json") else None
        if got is not None and got != want:
            raise CheckFailure("shipped kernel %s: its host-argument slots %s differ from the record's %s" % (
                entry.entry, got, want))
    return "%d variants: the record's layout matches each kernel's signature%s" % (
        len(op.kernel.variants), "; %d shipped manifest entries match it" % len(shipped) if shipped
        else "; no shipped kernel manifest holds %s here (a build without CANN)" % op.type_name)


def _manifest_entries(op):
    """The kernel entries of ``op`` in the manifests the package ships (none without CANN)."""
    try:
        from .. import kernel_manifest
        from ..opp import opp_root
    except ImportError:  # pragma: no cover
        return []
    entries = []
    root = opp_root()
    if not root or not os.path.isdir(root):
        return []
    for path in kernel_manifest.find_manifests(root).values():
        try:
            manifest = kernel_manifest.load_manifest(path, check_files=False)
        except Exception:
            continue
        entries += [k for k in manifest.kernels if k.op == op.type_name]
    return entries
