"""The GE library's run-time planner for the kernel tests: tf_ge_custom_plan (built from
tests/native/core/plan_tool.cc into the same folder as tests/ge's native build, with the same
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
OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS_DIR=" + str(SOURCE_ROOT / "tests" / "native"))


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
    import importlib.util

    # tests/ge builds into the same folder, maybe at the same time in another part of the suite
    # (tests/run_suite.py): one CMake build of it at a time (tests/build_lock.py)
    spec = importlib.util.spec_from_file_location("_tests_build_lock", str(SOURCE_ROOT / "tests" / "build_lock.py"))
    build_lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_lock)
    with build_lock.held(BUILD_DIR):
        ge_step.configure_and_build(str(SOURCE_ROOT), str(BUILD_DIR), ("tf_ge_custom_plan",),
                                    max(1, min(2, os.cpu_count() or 1)), OPTIONS)
    exe = str(BUILD_DIR / "tests" / "tf_ge_custom_plan")  # tests/native's targets: the build's tests/

    def plan(cases):
        proc = subprocess.run([exe], input=json.dumps({"cases": cases}), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        plans = json.loads(proc.stdout)["plans"]
        assert len(plans) == len(cases)
        return plans

    return plan


def _load_fixture(relative):
    """tests/fixtures/<relative>, loaded by path."""
    import importlib.util

    path = SOURCE_ROOT / "tests" / "fixtures" / relative
    name = "_fixture_" + relative.replace("/", "_").replace(".py", "")
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_fixture_generator():
    return _load_fixture("manifests/generate.py")


def layout_leaky_relu():
    """LeakyReluCustom's flat kernel, hand-computed: 5 pointers (40 bytes), n_elements (40..44),
    alpha's fp32 word (44..48), the grid (48..60) -> 64 bytes (docs/kernel-manifest.md)."""
    names = (("ffts_base_address", "ffts", None), ("sync_block_lock", "sync_block_lock", None),
             ("workspace", "workspace", None), ("x_ptr", "input", 0), ("y_ptr", "output", 0))
    slots = [dict({"name": n, "role": r, "offset": 8 * i, "size": 8}, **({} if x is None else {"index": x}))
             for i, (n, r, x) in enumerate(names)]
    slots += [{"name": "n_elements", "role": "num_elements", "offset": 40, "size": 4},
              {"name": "alpha", "role": "attr", "index": 0, "offset": 44, "size": 4},
              {"name": "gridX", "role": "grid_x", "offset": 48, "size": 4},
              {"name": "gridY", "role": "grid_y", "offset": 52, "size": 4},
              {"name": "gridZ", "role": "grid_z", "offset": 56, "size": 4}]
    return {"size": 64, "has_ffts": True, "slots": slots}


@pytest.fixture
def complete_soc_folder():
    """complete_soc_folder(dst, dtypes) -> dst: a SoC folder as build-kernels lays it out
    (manifest.json + npubins of filler bytes) with EVERY kernel variant of every op of
    op_def.OPS for each dtype the op has, built with hand-computed layouts (the fixture
    generator's flat and tiled ones for AddCustom's 1-D and 2-D blocks, layout_leaky_relu
    for LeakyReluCustom's, tests/fixtures/record_layout.py's for any other op)."""
    from tf_ge_custom import op_def

    generate = _load_fixture_generator()
    record_layout = _load_fixture("record_layout.py")
    hand_computed = {"LeakyReluCustom": lambda variant: layout_leaky_relu(),
                     "AddCustom": lambda variant: generate.layout_tiled() if len(variant.block) == 2
                     else generate.layout_with_ffts()}

    def layout(op, variant):
        if op.type_name in hand_computed:
            return hand_computed[op.type_name](variant)
        return record_layout.layout_of(op, variant)  # any other op: from its record

    def make(dst, dtypes):
        dst = pathlib.Path(str(dst))
        dst.mkdir(parents=True)
        kernels = []
        for dtype in dtypes:
            for op in op_def.OPS:
                if dtype not in op.dtypes:
                    continue
                for variant in op.kernel.variants:
                    entry = op.entry_name(variant.name, dtype)
                    binary = generate.binary_bytes(dtype, variant.name) if op is op_def.ADD_CUSTOM \
                        else generate.elf_object.elf_object([entry], b"fixture filler for %s\n" % entry.encode())
                    k = generate.kernel(dtype, binary)
                    name = op.binary_name(variant.name, dtype)
                    k.update(op=op.type_name, variant=variant.name, entry=entry,
                             block=list(variant.block), binary=name, args=layout(op, variant))
                    (dst / name).write_bytes(binary)
                    kernels.append(k)
        (dst / "manifest.json").write_text(json.dumps(generate.manifest(kernels, cann="8.5.0"), indent=2))
        return dst

    return make
