"""Child process of test_interpreter_broadcast.py: run the project's kernel variants in
Triton's CPU interpreter (PyPI triton, put first on sys.path by the parent), launch by launch
as the GE library's planner said, and save every output.

    python broadcast_runner.py KERNEL.py CASES.npz PLANS.json OUT.npz

PLANS.json: {"cases": {name: {"sentinel", "variant": {"entry", "params", "constants"},
"operands", "output", "launches": [...]}}}. A parameter ``input:i`` gets kernel operand i
(op input ``operands[i]``) as a flat tensor starting at the launch's byte offset, as the GE
library advances the pointer; ``output:0`` the output likewise; ``num_elements``,
``dim:k`` and ``input_stride:i:k`` the launch's values.
"""
import importlib.util
import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton reads the kernel's source through its module
    spec.loader.exec_module(module)
    return module


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
    if os.path.isdir(os.path.join(os.path.dirname(triton.__file__), "backends", "ascend")):
        sys.exit("expected PyPI triton first on sys.path, got triton-ascend at %s"
                 % triton.__file__)
    module = _load(kernel_path, "add_kernel_source")
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
            kernel = getattr(module, variant["entry"])
            args = [_argument(p, launch, operands, output, itemsize) for p in variant["params"]]
            kernel[(launch["grid"],)](*args, **dict(variant["constants"]))
        outputs[name] = output.numpy().reshape(plan["output"])
        launched[name] = len(plan["launches"])
    np.savez(out_path, **outputs)
    print(json.dumps({"triton": triton.__version__, "launched": launched}))


if __name__ == "__main__":
    main(*sys.argv[1:])
