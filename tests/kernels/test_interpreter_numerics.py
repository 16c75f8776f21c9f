"""The project's kernel source, launched through the project's geometry, in Triton's CPU
interpreter, against numpy.

triton-ascend 3.2.0's interpreter cannot run a loop whose bounds are tensors
(docs/ascend-stack.md, "The interpreters"), so the kernel runs under PyPI triton's
interpreter (make triton-interp) in a child process: both share the triton.language front end the source is written in. bfloat16 is left out
because both interpreters store it wrongly (NaN); test_lowering.py checks its lowering.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tf_ge_custom.kernels import geometry, socs
from tf_ge_custom.kernels.frontend import kernel_source_path
from tf_ge_custom.op_def import ADD_CUSTOM

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = ADD_CUSTOM.kernel.variant("flat").block[0]
CORES = socs.get("Ascend910B1").vector_cores
DTYPES = ("float32", "float16", "int32")
# name -> (elements, max_programs, elements per launch or None for the real limit)
SIZES = {
    "empty": (0, CORES, None),
    "one": (1, CORES, None),
    "odd": (777, CORES, None),
    "block_minus_one": (BLOCK - 1, CORES, None),
    "one_block": (BLOCK, CORES, None),
    "block_plus_one": (BLOCK + 1, CORES, None),
    "many_blocks": (7 * BLOCK + 5, CORES, None),
    # 11 blocks over 3 programs: each program must loop over 3 or 4 blocks
    "more_blocks_than_programs": (10 * BLOCK + 3, 3, None),
    # chunked: launches of 2 blocks, each over 2 programs, pointers advanced per launch
    "multi_chunk": (5 * BLOCK + 17, 2, 2 * BLOCK),
}


def _inputs(rng, dtype, n):
    if dtype == "int32":
        return [rng.integers(-2 ** 30, 2 ** 30, n, dtype=np.int32) for _ in range(2)]
    return [(rng.standard_normal(n) * 100).astype(dtype) for _ in range(2)]


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory, interp_env):
    tmp = tmp_path_factory.mktemp("interp")
    rng = np.random.default_rng(20261129)
    arrays, plan = {}, {"block_size": BLOCK, "cases": {}}
    for dtype in DTYPES:
        for size, (n, programs, per_launch) in SIZES.items():
            name = "%s/%s" % (dtype, size)
            arrays[name + "/x"], arrays[name + "/y"] = _inputs(rng, dtype, n)
            plan["cases"][name] = {"max_programs": programs, "per_launch": per_launch,
                                   "sentinel": -7 if dtype == "int32" else float("nan")}
    np.savez(str(tmp / "cases.npz"), **arrays)
    (tmp / "plan.json").write_text(json.dumps(plan))
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "interpreter_runner.py"),
         kernel_source_path(ADD_CUSTOM.kernel), geometry.__file__, str(tmp / "cases.npz"),
         str(tmp / "plan.json"), str(tmp / "out.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=interp_env,
        timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return arrays, dict(np.load(str(tmp / "out.npz"))), report


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_kernel_matches_numpy(interpreted, dtype, size):
    arrays, outputs, _ = interpreted
    name = "%s/%s" % (dtype, size)
    x, y, z = arrays[name + "/x"], arrays[name + "/y"], outputs[name]
    assert z.dtype == np.dtype(dtype) and z.shape == x.shape
    np.testing.assert_array_equal(z, x + y)  # same IEEE rounding, int32 wraps alike


def test_the_interpreter_was_pypi_triton(interpreted):
    assert interpreted[2]["triton"] == "3.9.0"


def test_loop_and_chunk_cases_really_looped_and_chunked(interpreted):
    launches = interpreted[2]["launches"]
    # [offset, count, grid] per launch, as geometry planned and the runner executed them
    assert launches["float32/more_blocks_than_programs"] == [[0, 10 * BLOCK + 3, 3]]
    assert launches["float32/multi_chunk"] == [
        [0, 2 * BLOCK, 2], [2 * BLOCK, 2 * BLOCK, 2], [4 * BLOCK, BLOCK + 17, 2]]
    assert launches["float32/empty"] == []
