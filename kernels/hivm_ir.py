"""Read what the builder needs from the HIVM IR that bishengir-compile emitted.

* the device entry (``func.func @<entry>`` with ``hacc.entry``): its parameters, in order,
  are the packed host-argument struct the runtime passes to the kernel;
* the module's target spec (``VECTOR_CORE_COUNT``), checked against socs.py;
* the host callbacks (``hacc.host_func_type``) for workspace size and sync-block locks,
  which hivmc compiles into libkernel.so and triton-ascend reads from there.

Pure text parsing (no MLIR bindings): the parts read here are the printed forms of the
``func`` and ``dlti`` dialects, which are stable.
"""
import re
from typing import List, NamedTuple, Optional

from tf_ge_custom.errors import KernelBuildError


class IRArg(NamedTuple):
    name: str  # "%arg3"
    type: str  # "i64", "i32", "memref<?xf32, #hivm.address_space<gm>>"
    attrs: str  # the attribute dictionary text, "" when none
    arg_type: Optional[str]  # hacc.arg_type: "ffts_base_address", "sync_block_lock", ...
    tensor_kind: Optional[int]  # tt.tensor_kind: 0 input, 1 output, 2 both

    @property
    def is_pointer(self):
        return self.type.startswith("memref<") or self.type.startswith("!llvm.ptr")

    @property
    def element_type(self):
        match = re.match(r"memref<\?x([a-z0-9]+)", self.type)
        return match.group(1) if match else None

    @property
    def size(self):
        """Bytes of this parameter in the packed host struct."""
        if self.is_pointer or self.type in ("i64", "f64", "index"):
            return 8
        if self.type in ("i32", "f32"):
            return 4
        raise KernelBuildError("the kernel entry has a parameter of type %s; the host-argument "
                               "layout knows pointers and 32/64-bit scalars only" % self.type)


class Entry(NamedTuple):
    name: str
    args: List[IRArg]
    attrs: str

    @property
    def core_type(self):
        match = re.search(r"hivm\.func_core_type\s*=\s*#hivm\.func_core_type<(\w+)>", self.attrs)
        return match.group(1) if match else None


def _split_top_level(text, sep=","):
    """Split on ``sep`` outside (), <>, {}, [] and string literals."""
    parts, depth, start, in_str = [], 0, 0, False
    for i, ch in enumerate(text):
        if in_str:
            if ch == '"' and text[i - 1] != "\\":
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _balanced(text, start, open_ch, close_ch):
    """Index just past the bracket that closes ``text[start] == open_ch``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    raise KernelBuildError("unbalanced %s%s in the HIVM IR" % (open_ch, close_ch))


def _func_headers(text):
    """(name, params text, attributes text, index after the attributes) per ``func.func``."""
    for match in re.finditer(r"func\.func\s+(?:public\s+|private\s+)?@([\w$.]+)\s*\(", text):
        params_end = _balanced(text, match.end() - 1, "(", ")")
        attrs, pos = "", params_end
        brace = text.find("{", params_end)
        # "-> type attributes {...}" may sit between the parameters and the body
        if brace >= 0 and re.search(r"\battributes\s*$", text[params_end:brace]):
            pos = _balanced(text, brace, "{", "}")
            attrs = text[brace:pos]
        yield match.group(1), text[match.end():params_end - 1], attrs, pos


def find_entry(text, name):
    """The device entry ``name`` (the function carrying ``hacc.entry``)."""
    for func, params, attrs, _ in _func_headers(text):
        if func == name and re.search(r"\bhacc\.entry\b", attrs):
            return Entry(func, [_parse_arg(p) for p in _split_top_level(params)], attrs)
    entries = [f for f, _, a, _ in _func_headers(text) if re.search(r"\bhacc\.entry\b", a)]
    raise KernelBuildError("the HIVM IR has no device entry @%s (entries found: %s)"
                           % (name, ", ".join(entries) or "none"))


def _parse_arg(text):
    match = re.match(r"(%[\w]+)\s*:\s*(.*)$", text, re.DOTALL)
    if not match:
        raise KernelBuildError("cannot read the entry parameter %r in the HIVM IR" % text)
    rest = match.group(2).strip()
    attrs = ""
    brace = _find_top_level_brace(rest)
    if brace is not None:
        attrs = rest[brace:]
        rest = rest[:brace].strip()
    arg_type = re.search(r"hacc\.arg_type\s*=\s*#hacc\.arg_type<(\w+)>", attrs)
    kind = re.search(r"tt\.tensor_kind\s*=\s*(-?\d+)", attrs)
    return IRArg(match.group(1), rest, attrs, arg_type.group(1) if arg_type else None,
                 int(kind.group(1)) if kind else None)


def _find_top_level_brace(text):
    depth = 0
    for i, ch in enumerate(text):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == "{" and depth == 0:
            return i
    return None


def target_spec(text):
    """The module's ``#hacc.target_device_spec`` entries, e.g. {"VECTOR_CORE_COUNT": 48}."""
    spec = {}
    for key, value in re.findall(r'#dlti\.dl_entry<"(\w+)",\s*(-?\d+)\s*:\s*i\d+>', text):
        spec[key] = int(value)
    return spec


def host_constant(text, func_type):
    """The constant a host callback (``hacc.host_func_type<func_type>``) returns, or None
    when the IR has no such callback (triton-ascend then takes 0)."""
    for func, _, attrs, pos in _func_headers(text):
        if "hacc.host_func_type<%s>" % func_type not in attrs:
            continue
        body_start = text.index("{", pos)
        body = text[body_start + 1:_balanced(text, body_start, "{", "}") - 1]
        match = re.match(r"\s*(%[\w]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*i\d+\s*"
                         r"return\s+(%[\w]+)\s*:\s*i\d+\s*$", body)
        if not match or match.group(1) != match.group(3):
            raise KernelBuildError("the host callback @%s (%s) does not return a constant; the "
                                   "builder cannot record it in the manifest:\n%s"
                                   % (func, func_type, body.strip()[:400]))
        return int(match.group(2))
    return None
