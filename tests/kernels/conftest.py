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
def interp_env():
    """The environment of an interpreter child (broadcast_runner.py, interpreter_runner.py):
    PyPI triton for the CPU interpreter first on PYTHONPATH (``make triton-interp``)."""
    path = os.environ.get("TF_GE_CUSTOM_TRITON_INTERP") or str(SOURCE_ROOT / ".cache" / "triton-interp")
    if not os.path.isdir(os.path.join(path, "triton")):
        pytest.fail("PyPI triton for the interpreter is not installed at %s; run "
                    "`make triton-interp` (make test does)" % path)
    return dict(os.environ, PYTHONPATH=path)


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


def _load_fixture_generator():
    import importlib.util

    path = SOURCE_ROOT / "tests" / "fixtures" / "manifests" / "generate.py"
    spec = importlib.util.spec_from_file_location("_manifest_fixture_generator", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def complete_soc_folder():
    """complete_soc_folder(dst, dtypes) -> dst: a SoC folder as build-kernels lays it out
    (manifest.json + npubins of filler bytes) with EVERY kernel variant of op_def.ADD_CUSTOM
    for each dtype, built with the fixture generator's hand-computed layouts (the flat layout
    for the 1-D blocks, the tiled one for the 2-D blocks)."""
    from tf_ge_custom import op_def

    generate = _load_fixture_generator()

    def make(dst, dtypes):
        dst = pathlib.Path(str(dst))
        dst.mkdir(parents=True)
        kernels = []
        for dtype in dtypes:
            for variant in op_def.ADD_CUSTOM.kernel.variants:
                binary = generate.binary_bytes(dtype, variant.name)
                k = generate.kernel(dtype, binary)
                name = op_def.ADD_CUSTOM.binary_name(variant.name, dtype)
                k.update(variant=variant.name,
                         entry=op_def.ADD_CUSTOM.entry_name(variant.name, dtype), block=list(variant.block),
                         binary=name,
                         args=generate.layout_tiled() if len(variant.block) == 2
                         else generate.layout_with_ffts())
                (dst / name).write_bytes(binary)
                kernels.append(k)
        (dst / "manifest.json").write_text(json.dumps(generate.manifest(kernels, cann="8.5.0"), indent=2))
        return dst

    return make
