"""Child process of test_interpreter_numerics.py: run the project's kernel in Triton's CPU
interpreter (PyPI triton, put first on sys.path by the parent) through the project's launch
geometry, and save every output.

    python interpreter_runner.py KERNEL.py GEOMETRY.py CASES.npz PLAN.json OUT.npz
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


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton reads the kernel's source through its module
    spec.loader.exec_module(module)
    return module


def main(kernel_path, geometry_path, cases_path, plan_path, out_path):
    if hasattr(triton, "backends") and os.path.isdir(
            os.path.join(os.path.dirname(triton.__file__), "backends", "ascend")):
        sys.exit("expected PyPI triton first on sys.path, got triton-ascend at %s"
                 % triton.__file__)
    kernel = _load(kernel_path, "add_kernel_source").add_kernel
    # geometry.py imports its limits from tf_ge_custom.kernel_contract: the package's
    # pure-Python modules, without TensorFlow (the flag setup.py sets for the same reason).
    builtins.__TF_GE_CUSTOM_SETUP__ = True
    geometry = _load(geometry_path, "kernel_geometry")
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
