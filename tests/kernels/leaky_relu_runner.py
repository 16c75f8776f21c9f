"""Child process of test_interpreter_leaky_relu.py: run LeakyReluCustom's kernel in Triton's
CPU interpreter (PyPI triton, put first on sys.path by the parent) through the project's
launch geometry, with the attribute as the kernel's fp32 scalar, and save every output.

    python leaky_relu_runner.py KERNEL.py FUNCTION GEOMETRY.py CASES.npz PLAN.json OUT.npz

bfloat16 cases arrive as their uint16 bit patterns (numpy has no bfloat16) and are handed to
the kernel as torch.bfloat16 tensors of those bits; the outputs go back as bits.
"""
import builtins
import json
import sys

import interp_support  # first: it switches on the interpreter before triton is imported
import numpy as np
import torch
import triton


def main(kernel_path, function, geometry_path, cases_path, plan_path, out_path):
    interp_support.require_pypi_triton(triton)
    kernel = getattr(interp_support.load_module(kernel_path, "leaky_relu_kernel_source"), function)
    builtins.__TF_GE_CUSTOM_SETUP__ = True  # geometry.py: the package's pure-Python modules
    geometry = interp_support.load_module(geometry_path, "kernel_geometry")
    with open(plan_path) as f:
        plan = json.load(f)
    cases = np.load(cases_path)
    outputs, launches = {}, {}
    for name, case in plan["cases"].items():
        x = torch.from_numpy(cases[name + "/x"])
        if case["dtype"] == "bfloat16":
            x = x.view(torch.bfloat16)  # the same bits, as bfloat16
        y = torch.full_like(x, float("nan"))  # anything not written keeps this value
        done = []
        for launch in geometry.plan_launches(x.numel(), plan["block_size"], case["max_programs"],
                                             per_launch=case.get("per_launch")):
            part = slice(launch.offset, launch.offset + launch.count)
            # a slice is the pointer advanced by `offset` elements, as the GE library does
            kernel[(launch.grid,)](x[part], y[part], launch.count, case["alpha"],
                                   BLOCK_SIZE=plan["block_size"])
            done.append(list(launch))
        outputs[name] = (y.view(torch.int16) if case["dtype"] == "bfloat16" else y).numpy()
        launches[name] = done
    np.savez(out_path, **outputs)
    print(json.dumps({"triton": triton.__version__, "launches": launches}))


if __name__ == "__main__":
    main(*sys.argv[1:])
