"""The GE library's run-time planner for the kernel tests: tf_ge_custom_plan (built from
ge_ops/tests/plan_tool.cc into the same folder as tests/ge's native build, with the same
options, so that a session builds the core once)."""
import json
import os
import pathlib
import subprocess

import pytest

from tf_ge_custom._build import ge_step

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = SOURCE_ROOT / "build" / "ge-tests" / ge_step.BUILD_SUBDIR
# tests/ge/conftest.py's NATIVE_OPTIONS: the same cache values, so neither reconfigures.
OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS=ON")


@pytest.fixture(scope="session")
def plan_calls():
    """plan_calls(cases) -> the planner's answer for each case (see plan_tool.cc)."""
    ge_step.configure_and_build(str(SOURCE_ROOT), str(BUILD_DIR), ("tf_ge_custom_plan",),
                                max(1, min(2, os.cpu_count() or 1)), OPTIONS)
    exe = str(BUILD_DIR / "tf_ge_custom_plan")

    def plan(cases):
        proc = subprocess.run([exe], input=json.dumps({"cases": cases}), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        plans = json.loads(proc.stdout)["plans"]
        assert len(plans) == len(cases)
        return plans

    return plan
