"""Child process of test_interpreter_numerics.py: run the project's kernel in Triton's CPU
interpreter (PyPI triton, put first on sys.path by the parent) through the project's launch
geometry, and save every output.

    python interpreter_runner.py KERNEL.py GEOMETRY.py CASES.npz PLAN.json OUT.npz
"""
import builtins
import json
import sys

import interp_support  # first: it switches on the interpreter before triton is imported
import numpy as np
import torch
import triton


def main(kernel_path, geometry_path, cases_path, plan_path, out_path):
    interp_support.require_pypi_triton(triton)
    kernel = interp_support.load_module(kernel_path, "add_kernel_source").add_kernel
    # geometry.py imports its limits from tf_ge_custom.kernel_contract: the package's
    # pure-Python modules, without TensorFlow (the flag setup.py sets for the same reason).
    builtins.__TF_GE_CUSTOM_SETUP__ = True
    geometry = interp_support.load_module(geometry_path, "kernel_geometry")
    with open(plan_path) as f:
        plan = json.load(f)
    cases = np.load(cases_path)
    outputs, launches = {}, {}
    for name, case in plan["cases"].items():
        x = torch.from_numpy(cases[name + "/x"])
        y = torch.from_numpy(cases[name + "/y"])
        z = torch.full_like(x, case["sentinel"])  # anything not written keeps this value
        done = []
        for launch in geometry.plan_launches(x.numel(), plan["block_size"], case["max_programs"],
                                             per_launch=case.get("per_launch")):
            part = slice(launch.offset, launch.offset + launch.count)
            # a slice is the pointer advanced by `offset` elements, as the GE library does
            kernel[(launch.grid,)](x[part], y[part], z[part], launch.count,
                                   BLOCK_SIZE=plan["block_size"])
            done.append(list(launch))
        outputs[name] = z.numpy()
        launches[name] = done
    np.savez(out_path, **outputs)
    print(json.dumps({"triton": triton.__version__, "launches": launches}))


if __name__ == "__main__":
    main(*sys.argv[1:])
