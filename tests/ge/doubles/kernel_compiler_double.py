"""A TEST DOUBLE for the kernel compiler, to test the process handling around it only.

It proves nothing about triton-ascend, bishengir-compile or hivmc. The GE library runs
``<python> -c <bootstrap> <package parent> <arguments>``; this double receives exactly that
(through the ``kernel_compiler_double`` wrapper) and, as TF_GE_CUSTOM_DOUBLE_MODE says:

  build    runs the GE library's bootstrap for real, so the real entry point
           (tf_ge_custom.kernels.compile_kernel), the real cache protocol (lock, build aside,
           rename) and the real manifest validation run; only the build step itself is
           replaced by :func:`fake_build`, which writes a valid manifest and a made-up npubin
           per kernel variant, slowly (half, a pause, the rest) after TF_GE_CUSTOM_DOUBLE_SLEEP
           seconds
  fail     compiles: prints builder-like lines and a failed result naming hivmc, exits 1
  fail_long  as fail, with five builder-like lines of 300 characters (the last ending
           "LAST-LINE-END") and an error of 700 characters: a failure whose message and log
           tail are as long as the GE library's messages get
  hang     compiles: starts a grandchild ``sleep`` (its pid into TF_GE_CUSTOM_DOUBLE_PIDFILE),
           prints a line, then sleeps until killed
  crash    compiles: prints a line and kills itself with SIGKILL (no result line)

``--describe`` always runs the real entry point. Every build of ``fake_build`` appends one
line "<pid> <SoC> <dtype>" to TF_GE_CUSTOM_DOUBLE_COUNT (when set).
"""
import builtins
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures",
                        "manifests")


def _elf_object():
    """tests/fixtures/elf_object.py: the made-up npubins are ELF objects that define their
    kernel's entry, as the GE library requires of any binary it loads."""
    return _fixture("elf_object")


def _templates():
    """A kernel entry of the shared fixtures per kind of variant: the flat layout (flat,
    scalar) and the tiled one (row/col/outer tiles)."""
    with open(os.path.join(FIXTURES, "valid_binaries.json")) as f:
        kernels = json.load(f)["kernels"]
    flat = [k for k in kernels if k["variant"] == "flat"][0]
    tiled = [k for k in kernels if k["variant"] != "flat"][0]
    return flat, tiled


def _fixture(name):
    """tests/fixtures/<name>.py, loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_" + name, os.path.join(os.path.dirname(FIXTURES), name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _leaky_relu_template(flat):
    """LeakyReluCustom's flat kernel entry: the layout of tests/fixtures/leaky_relu_layout.py
    (x, y, the count, alpha), the rest as the shared fixtures' flat entry."""
    layout = _fixture("leaky_relu_layout")
    return dict(flat, args=dict(flat["args"], size=layout.SIZE, slots=layout.slots()))


def fake_build(socs, dtypes, out_dir, ops=None, env=None, progress=None, variants=None, **_):
    """Stands in for tf_ge_custom.kernels.builder.build_kernels: writes <out>/<SoC>/ with a
    manifest the real reader accepts (every kernel variant of the op, or ``variants``) and
    whose key fields are what the cache expects; the npubins are made-up bytes in minimal ELF
    objects defining each kernel's entry. AddCustom's and LeakyReluCustom's layouts are the
    shared fixtures' hand-computed ones; any other op's come from its record
    (tests/fixtures/record_layout.py)."""
    from tf_ge_custom import kernel_manifest, op_def
    from tf_ge_custom.kernels import cache, socs as soc_table

    op = ops if ops is not None and hasattr(ops, "type_name") else op_def.ADD_CUSTOM
    chosen = [op.kernel.variant(v) for v in variants] if variants else list(op.kernel.variants)
    env = dict(os.environ if env is None else env)
    ident = cache.identity(env, op)
    counter = env.get("TF_GE_CUSTOM_DOUBLE_COUNT")
    delay = float(env.get("TF_GE_CUSTOM_DOUBLE_SLEEP") or 0)
    flat, tiled = _templates()
    if op.type_name == "LeakyReluCustom":  # one input, an attribute word after the count
        flat = _leaky_relu_template(flat)
    elif op.type_name != "AddCustom":
        flat = tiled = None  # any other op: each variant's layout from its record
    record_layout = _fixture("record_layout")
    elf = _elf_object()
    for soc in socs:
        folder = os.path.join(out_dir, soc)
        os.makedirs(folder)
        kernels = []
        for dtype in dtypes:
            if counter:
                with open(counter, "a") as f:
                    f.write("%d %s %s\n" % (os.getpid(), soc, dtype))
            time.sleep(delay)
            for variant in chosen:
                binary = elf.elf_object([op.entry_name(variant.name, dtype)],
                                        ("double npubin %s %s %s\n" % (soc, variant.name, dtype)).encode() * 64)
                name = op.binary_name(variant.name, dtype)
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(binary[:len(binary) // 2])
                    f.flush()
                    time.sleep(delay / (2 * len(chosen)))
                    f.write(binary[len(binary) // 2:])
                template = flat if len(variant.block) == 1 else tiled
                if template is None:
                    template = dict(_templates()[0], args=record_layout.layout_of(op, variant))
                entry = dict(template, op=op.type_name, variant=variant.name, dtype=dtype,
                             entry=op.entry_name(variant.name, dtype), block=list(variant.block),
                             binary=name,
                             binary_size=len(binary), sha256=hashlib.sha256(binary).hexdigest())
                entry["grid"] = dict(template["grid"],
                                     max_programs=soc_table.get(soc).vector_cores)
                kernels.append(entry)
        document = {"format": kernel_manifest.FORMAT, "version": kernel_manifest.VERSION,
                    "entry_naming": kernel_manifest.kernel_contract.ENTRY_NAMING, "soc": soc, "vector_core_count": soc_table.get(soc).vector_cores,
                    "toolchain": ident.toolchain,
                    "kernel_source_sha256": (ident.sources or {}).get(
                        op.type_name, ident.kernel_source_sha256), "kernels": kernels}
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump(document, f, indent=2)


def _result(**fields):
    print("TF_GE_CUSTOM_COMPILE " + json.dumps(fields), flush=True)


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "-c":
        sys.stderr.write("kernel compiler double: expected -c <bootstrap> <package parent> ...\n")
        return 2
    bootstrap, args = sys.argv[2], sys.argv[4:]
    mode = os.environ.get("TF_GE_CUSTOM_DOUBLE_MODE", "build")
    if "--describe" not in args and mode != "build":
        print("[1/1] (double) compiling %s" % " ".join(args), flush=True)
        if mode == "fail":
            print("error: hivmc is missing, so no npubin could be built (double)", flush=True)
            _result(ok=False, kind="toolchain", missing=["hivmc"],
                    error="hivmc is missing (double: source the CANN toolkit's set_env.sh)")
            return 1
        if mode == "fail_long":
            for i in range(5):
                line = "bishengir-compile (double) line %d: %s" % (i, "x" * 300)
                print(line[:292] + ("LAST-LINE-END" if i == 4 else ""), flush=True)
            _result(ok=False, kind="runtime",
                    error="the double failed on purpose: " + "a long explanation, " * 33)
            return 1
        if mode == "hang":
            child = subprocess.Popen(["sleep", "600"])
            with open(os.environ["TF_GE_CUSTOM_DOUBLE_PIDFILE"], "w") as f:
                f.write("%d\n" % child.pid)
            print("compiling (double: hanging until killed)", flush=True)
            time.sleep(600)
            return 0
        if mode == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        sys.stderr.write("kernel compiler double: unknown mode %r\n" % mode)
        return 2
    # Real: the bootstrap as the GE library wrote it, with the build step replaced.
    builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True
    sys.path[0] = sys.argv[3]
    from tf_ge_custom.kernels import builder

    builder.build_kernels = fake_build
    sys.argv = ["-c"] + sys.argv[3:]
    exec(compile(bootstrap, "<the GE library's bootstrap>", "exec"), {"__name__": "__main__"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
