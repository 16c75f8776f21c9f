"""Child process of opcheck's triton_interpreter check: run an op's Triton kernel in Triton's
CPU interpreter (PyPI triton, first on PYTHONPATH) through the package's launch geometry, the
arguments in the order of the record's parameter slots, and save every output.

    python _triton_child.py KERNEL.py PLAN.json INPUTS.npz OUT.npz

bfloat16 operands arrive as uint16 bit patterns and go back as such. Where this interpreter's
bfloat16 arithmetic is wrong (its probe), a bfloat16 case also runs on its inputs widened to
float32 (exact; saved as ``K/J/float32``): what the parent falls back on. No TensorFlow here.
"""
import builtins
import importlib.util
import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton reads the kernel's source through its module
    spec.loader.exec_module(module)
    return module


@triton.jit
def _bfloat16_probe(x_ptr, y_ptr, z_ptr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


def bfloat16_arithmetic_works():
    """Whether this interpreter adds two bfloat16 tensors right (PyPI triton's stores bfloat16
    arithmetic wrongly; a kernel that computes in fp32 and stores bits is not affected)."""
    x = torch.tensor([1.0, 2.0, -0.5, 3.0], dtype=torch.bfloat16)
    y = torch.tensor([2.0, 0.25, -0.5, -1.0], dtype=torch.bfloat16)
    z = torch.full_like(x, float("nan"))
    _bfloat16_probe[(1,)](x, y, z, BLOCK_SIZE=4)
    return bool(torch.equal(z, x + y))


def _tensor(array, dtype):
    t = torch.from_numpy(np.ascontiguousarray(array))
    return t.view(torch.bfloat16) if dtype == "bfloat16" else t


def _run(geometry, kernel, case, inputs):
    """The kernel's outputs on ``inputs`` through the package's launch geometry, and the
    number of launches."""
    n = inputs[0].numel()
    outs = [torch.full_like(inputs[0], float("nan") if inputs[0].is_floating_point() else -7)
            for _ in range(case["outputs"])]
    launches = 0
    for launch in geometry.plan_launches(n, case["block"], case["max_programs"],
                                         per_launch=case.get("per_launch")):
        part = slice(launch.offset, launch.offset + launch.count)
        args = []
        for param in case["params"]:
            kind, _, rest = param.partition(":")
            if kind == "input":
                t = inputs[int(rest)]
                args.append(t if t.numel() == 1 and case["pattern"] == "scalar" else t[part])
            elif kind == "output":
                args.append(outs[int(rest)][part])
            elif kind == "num_elements":
                args.append(launch.count)
            elif kind == "attr":
                args.append(case["attrs"][rest])
            else:
                sys.exit("parameter %s: only flat kernels run here" % param)
        kernel[(launch.grid,)](*args, **case["constants"])
        launches += 1
    return outs, launches


def main(kernel_path, plan_path, inputs_path, out_path):
    if os.path.isdir(os.path.join(os.path.dirname(triton.__file__), "backends", "ascend")):
        sys.exit("expected PyPI triton first on sys.path, got triton-ascend at %s" % triton.__file__)
    builtins.__TF_GE_CUSTOM_SETUP__ = True  # the package's pure-Python modules, no TensorFlow
    from tf_ge_custom.kernels import geometry

    source = _load(kernel_path, "opcheck_kernel_source")
    with open(plan_path) as f:
        plan = json.load(f)
    data = np.load(inputs_path)
    bfloat16_works = bfloat16_arithmetic_works()
    outputs, launches = {}, 0
    for k, case in enumerate(plan["cases"]):
        kernel = getattr(source, case["function"])
        dtype = case["dtype"]
        inputs = [_tensor(data["%d/%d" % (k, i)], dtype) for i in range(case["inputs"])]
        outs, count = _run(geometry, kernel, case, inputs)
        launches += count
        for j, o in enumerate(outs):
            outputs["%d/%d" % (k, j)] = (o.view(torch.int16) if dtype == "bfloat16" else o).numpy()
        if dtype == "bfloat16" and not bfloat16_works and plan["float32_fallback"]:  # the kernel on the inputs widened to float32
            outs, count = _run(geometry, kernel, case, [x.to(torch.float32) for x in inputs])
            launches += count
            for j, o in enumerate(outs):
                outputs["%d/%d/float32" % (k, j)] = o.numpy()
    np.savez(out_path, **outputs)
    print(json.dumps({"triton": triton.__version__, "launches": launches,
                      "bfloat16_arithmetic_works": bfloat16_works}))


if __name__ == "__main__":
    main(*sys.argv[1:])
