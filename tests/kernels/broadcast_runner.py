"""Child process of test_interpreter_broadcast.py: run the project's kernel variants in
Triton's CPU interpreter (PyPI triton, put first on sys.path by the parent), launch by launch
as the GE library's planner said, and save every output.

    python broadcast_runner.py KERNEL.py CASES.npz PLANS.json OUT.npz

PLANS.json: {"cases": {name: {"sentinel", "variant": {"function", "params", "constants"},
"operands", "output", "launches": [...]}}}. A parameter ``input:i`` gets kernel operand i
(op input ``operands[i]``) as a flat tensor starting at the launch's byte offset, as the GE
library advances the pointer; ``output:0`` the output likewise; ``num_elements``,
``dim:k`` and ``input_stride:i:k`` the launch's values.
"""
import json
import sys

import interp_support  # first: it switches on the interpreter before triton is imported
import numpy as np
import torch
import triton


def _argument(param, launch, operands, output, itemsize):
    parts = param.split(":")
    role, numbers = parts[0], [int(p) for p in parts[1:]]
    if role == "input":
        return operands[numbers[0]][launch["input_offsets"][numbers[0]] // itemsize:]
    if role == "output":
        return output[launch["output_offset"] // itemsize:]
    if role == "num_elements":
        return launch["num_elements"]
    if role == "dim":
        return launch["dims"][numbers[0]]
    if role == "input_stride":
        return launch["input_strides"][numbers[0]][numbers[1]]
    raise ValueError("unknown parameter role %r" % param)


def main(kernel_path, cases_path, plans_path, out_path):
    interp_support.require_pypi_triton(triton)
    module = interp_support.load_module(kernel_path, "add_kernel_source")
    with open(plans_path) as f:
        plans = json.load(f)["cases"]
    arrays = np.load(cases_path)
    outputs, launched = {}, {}
    for name, plan in plans.items():
        inputs = [torch.from_numpy(np.ascontiguousarray(arrays[name + "/" + i]).reshape(-1))
                  for i in ("x", "y")]
        count = int(np.prod(plan["output"], dtype=np.int64))
        output = torch.full((count,), plan["sentinel"], dtype=inputs[0].dtype)
        operands = [inputs[i] for i in plan.get("operands", [0, 1])]
        itemsize = inputs[0].element_size()
        variant = plan.get("variant")
        for launch in plan["launches"]:
            kernel = getattr(module, variant["function"])
            args = [_argument(p, launch, operands, output, itemsize) for p in variant["params"]]
            kernel[(launch["grid"],)](*args, **dict(variant["constants"]))
        outputs[name] = output.numpy().reshape(plan["output"])
        launched[name] = len(plan["launches"])
    np.savez(out_path, **outputs)
    print(json.dumps({"triton": triton.__version__, "launched": launched}))


if __name__ == "__main__":
    main(*sys.argv[1:])
