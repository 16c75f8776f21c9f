"""The broadcasting kernel variants in Triton's CPU interpreter, launched exactly as the GE
library's core plans them, against numpy broadcasting.

For each pair of input shapes the GE library's own planner (tests/native/core/plan_tool.cc over
the core's ChooseKernel and LaunchPlan, the code Execute runs) picks the kernel variant,
orders the operands and splits the work into launches with their extents, strides, byte
offsets and grids; broadcast_runner.py runs those launches in PyPI triton's interpreter (as
test_interpreter_numerics.py does, docs/ascend-stack.md "The interpreters") and the output
must equal ``x + y`` in numpy, every element written. bfloat16 is left to the lowering tests
(both interpreters store it wrongly).

Two sets of shapes: the fixed regression table CASES (the same every run), and shape pairs
drawn by hypothesis, new ones each run: seeded by the run's fuzz seed (tests/conftest.py
sets TF_GE_CUSTOM_FUZZ_SEED when it is unset and prints it in the header and the summary;
set it to draw a run's cases again).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tf_ge_custom.kernels.frontend import kernel_source_path
from tf_ge_custom.op_def import ADD_CUSTOM

pytestmark = pytest.mark.kind("oracle")

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ_SEED = int(os.environ.get("TF_GE_CUSTOM_FUZZ_SEED", "0"))
VARIANTS = {v.name: v for v in ADD_CUSTOM.kernel.variants}
INT_SENTINEL = -2 ** 31 + 12345  # no sum of the test's int32 inputs

# name -> (x shape, y shape, dtype, limits for the planner, the variant it must choose)
CASES = {
    "equal": ((37, 50), (37, 50), "float32", {}, "flat"),
    "scalar_y": ((5000,), (), "float32", {}, "scalar"),
    "scalar_x_goes_second": ((), (3, 7), "int32", {}, "scalar"),
    "bias_wide_rows": ((20, 300), (300,), "float16", {"max_programs": 2}, "row_16x256"),
    "bias_narrow_rows": ((300, 70), (70,), "float32", {"max_programs": 3}, "row_128x32"),
    "bias_x_is_the_row": ((70,), (300, 70), "int32", {}, "row_128x32"),
    "bias_few_long_rows": ((3, 5000), (5000,), "float32", {}, "row_1x4096"),
    "column": ((40, 300), (40, 1), "float32", {"max_programs": 2}, "col_16x256"),
    "column_narrow": ((200, 33), (200, 1), "int32", {}, "col_128x32"),
    "column_long_rows": ((3, 5000), (3, 1), "float16", {}, "col_1x4096"),
    "outer_x_is_the_column": ((17, 1), (1, 300), "float32", {}, "outer_16x256"),
    "outer": ((1, 4500), (3, 1), "float32", {}, "outer_1x4096"),
    "nchw_bias": ((2, 16, 8, 8), (1, 16, 1, 1), "float32", {}, "col_16x256"),
    "nhwc_bias": ((2, 5, 5, 16), (16,), "float16", {}, "row_128x32"),
    # five dimensions that broadcast alternately: every outer stride of the frame is used
    "rank_5_alternating": ((2, 1, 3, 1, 5), (1, 4, 1, 6, 1), "float32", {}, "outer_16x256"),
    # launches chunked at 4096 elements: along an outer dimension, the rows, the columns
    "chunked_outer": ((3, 4, 2000), (1, 4, 1), "float32", {"max_elements_per_launch": 4096},
                      "col_1x4096"),
    "chunked_rows": ((10, 1000), (1000,), "int32", {"max_elements_per_launch": 4096},
                     "row_16x256"),
    "chunked_columns": ((3, 5000), (3, 1), "float32", {"max_elements_per_launch": 4096},
                        "col_1x4096"),
    "chunked_flat": ((9000,), (9000,), "float16", {"max_elements_per_launch": 4096}, "flat"),
    "chunked_scalar": ((9000,), (1,), "float32", {"max_elements_per_launch": 4096}, "scalar"),
    "zero_rows": ((0, 5), (5,), "float32", {}, None),
    "zero_in_y": ((3, 1), (3, 0), "float32", {}, None),
}
LAUNCHES = {"chunked_outer": 6, "chunked_rows": 3, "chunked_columns": 6, "chunked_flat": 3,
            "chunked_scalar": 3, "zero_rows": 0, "zero_in_y": 0}


def _inputs(rng, dtype, shape):
    if dtype == "int32":
        return rng.integers(-2 ** 20, 2 ** 20, shape, dtype=np.int32)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def run_cases(plan_calls, interp_env, tmp_path, cases, seed):
    """{name: (x, y, plan, z)} for {name: (x shape, y shape, dtype, limits)}."""
    rng = np.random.default_rng(seed)
    names = sorted(cases)
    plans = plan_calls([dict(x=list(cases[n][0]), y=list(cases[n][1]), dtype=cases[n][2],
                             **cases[n][3]) for n in names])
    arrays, runnable = {}, {}
    for name, plan in zip(names, plans):
        xs, ys, dtype = cases[name][:3]
        arrays[name + "/x"], arrays[name + "/y"] = _inputs(rng, dtype, xs), _inputs(rng, dtype, ys)
        if "error" in plan:
            continue
        variant = VARIANTS[plan["variant"]] if "variant" in plan else None
        runnable[name] = dict(plan, sentinel=INT_SENTINEL if dtype == "int32" else float("nan"),
                              variant=variant and {"function": variant.function,
                                                   "params": list(variant.params),
                                                   "constants": list(variant.constants)})
    np.savez(str(tmp_path / "cases.npz"), **arrays)
    (tmp_path / "plans.json").write_text(json.dumps({"cases": runnable}))
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "broadcast_runner.py"), kernel_source_path(
            ADD_CUSTOM.kernel), str(tmp_path / "cases.npz"), str(tmp_path / "plans.json"),
         str(tmp_path / "out.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        env=interp_env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    outputs = dict(np.load(str(tmp_path / "out.npz")))
    return {name: (arrays[name + "/x"], arrays[name + "/y"], plan, outputs.get(name))
            for name, plan in zip(names, plans)}


@pytest.fixture(scope="module")
def pinned(plan_calls, interp_env, tmp_path_factory):
    return run_cases(plan_calls, interp_env, tmp_path_factory.mktemp("pinned"),
                     {n: c[:4] for n, c in CASES.items()}, seed=20261201)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_pattern_matches_numpy(pinned, name):
    x, y, plan, z = pinned[name]
    assert plan.get("variant") == CASES[name][4]
    if name in LAUNCHES:
        assert len(plan["launches"]) == LAUNCHES[name]
    assert z.dtype == x.dtype and z.shape == np.broadcast_shapes(x.shape, y.shape)
    np.testing.assert_array_equal(z, x + y)  # same IEEE rounding, int32 alike


def test_more_tiles_than_programs_loop(pinned):
    # 20 x 300 in 16 x 256 tiles is 2 x 2 tiles on 2 programs: each program loops twice
    plan = pinned["bias_wide_rows"][2]
    assert [launch["grid"] for launch in plan["launches"]] == [2]


def test_a_pattern_beyond_the_rank_bound_is_refused_naming_both_shapes(plan_calls):
    plan, = plan_calls([{"x": [2, 1, 2, 1, 2, 1], "y": [1, 2, 1, 2, 1, 2], "dtype": "float32"}])
    assert plan["error"] == "unsupported"
    assert "[2, 1, 2, 1, 2, 1]" in plan["message"] and "[1, 2, 1, 2, 1, 2]" in plan["message"]


# --- many shape pairs -------------------------------------------------------------------

# Sizes around the blocks (16, 32, 256 and their neighbours).
SIZES = (2, 3, 5, 16, 17, 33, 130, 300)
# How the two inputs relate along one output dimension.
ALONG = ("x_broadcasts", "y_broadcasts", "both_vary", "both_one")


@st.composite
def shape_pairs(draw, budget=6000):
    """Two broadcast-compatible shapes of rank <= 6 under ``budget`` output elements: along
    each output dimension x or y broadcasts, or both vary, or both are 1 (and now and then a
    dimension is 0); an input's leading 1s are sometimes left out, as numpy allows."""
    rank = draw(st.integers(1, 6))
    x, y, room = [], [], budget
    for _ in range(rank):
        along = draw(st.sampled_from(ALONG))
        d = 1 if along == "both_one" else draw(st.sampled_from([s for s in SIZES if s <= room] or [1]))
        room //= d
        x.append(1 if along == "x_broadcasts" else d)
        y.append(1 if along == "y_broadcasts" else d)
    if draw(st.integers(0, 11)) == 11:
        k = draw(st.integers(0, rank - 1))
        x[k] = 0 if x[k] != 1 else x[k]
        y[k] = 0 if y[k] != 1 else y[k]

    def trimmed(shape):
        lead = 0
        while lead < len(shape) and shape[lead] == 1:
            lead += 1
        return tuple(shape[draw(st.integers(0, lead)):])

    return trimmed(x), trimmed(y)


def _reduced_rank(x, y):
    """The rank left after dropping size-1 output dimensions and merging neighbours that
    broadcast alike (the refusal's condition), computed here independently."""
    rank = max(len(x), len(y))
    x, y = (1,) * (rank - len(x)) + tuple(x), (1,) * (rank - len(y)) + tuple(y)
    states = [(a != 1, b != 1) for a, b in zip(x, y) if max(a, b) != 1]
    return sum(1 for i, s in enumerate(states) if i == 0 or s != states[i - 1])


@pytest.mark.slow
@seed(FUZZ_SEED)
@settings(max_examples=4, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(batch=st.lists(st.tuples(shape_pairs(), st.sampled_from(["float32", "float16", "int32"]),
                                st.sampled_from([1, 2, 3, 48])), min_size=30, max_size=30))
def test_many_shape_pairs_match_numpy(plan_calls, interp_env, tmp_path_factory, batch):
    cases = {"case%02d" % i: (x, y, dtype, {"max_programs": programs})
             for i, ((x, y), dtype, programs) in enumerate(batch)}
    results = run_cases(plan_calls, interp_env, tmp_path_factory.mktemp("many"), cases,
                        seed=FUZZ_SEED)
    for name, (x, y, plan, z) in sorted(results.items()):
        what = "%s: %s + %s (%s; TF_GE_CUSTOM_FUZZ_SEED=%d)" % (name, x.shape, y.shape, x.dtype, FUZZ_SEED)
        if "error" in plan:  # refused, never computed wrong: only above the rank bound
            assert plan["error"] == "unsupported" and _reduced_rank(x.shape, y.shape) > 5, what
            continue
        assert _reduced_rank(x.shape, y.shape) <= 5, what
        assert z.shape == np.broadcast_shapes(x.shape, y.shape), what
        np.testing.assert_array_equal(z, x + y, err_msg=what)
