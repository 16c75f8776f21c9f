"""The selftest's stages, in the order they run, and what each needs from the host.

A stage names the function that runs it in a child process (``module:function``, called with
a :class:`tf_ge_custom.selftest.child.StageContext`), the host facts it needs (keys of
:data:`REQUIREMENTS`, judged by :mod:`.host` before any child starts: a stage whose needs are
not met SKIPs naming the first missing piece), the stages that must PASS before it, and its
timeout. Adding a stage is one entry here plus its function.
"""
from typing import NamedTuple, Tuple

from .. import op_def

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
STATUSES = (PASS, FAIL, SKIP)


class Stage(NamedTuple):
    name: str
    summary: str  # what it checks, one line (``selftest --list``)
    function: str  # "module:function", run in a child process
    needs: Tuple[str, ...] = ()  # keys of REQUIREMENTS
    after: Tuple[str, ...] = ()  # stages that must PASS first
    timeout: int = 600  # seconds; the child is killed after it
    cpu: bool = False  # a CPU stage: runs on every host


# Each host fact a stage may need, with the words used when it is missing. Host.missing()
# (host.py) decides each one.
REQUIREMENTS = (
    "tf_adapter",  # npu_bridge or npu_device importable
    "npu_bridge",  # TF Adapter for TF1
    "npu_device",  # TF Adapter for TF2
    "npu",  # an Ascend NPU: /dev/davinci<N>
    "soc",  # the SoC name: --soc, or asked of the device
    "cann",  # ASCEND_HOME_PATH names a toolkit folder
    "atc",  # CANN's model converter
    "ge_library",  # the package's GE library was built
    "om_runner",  # the package's OM runner was built
    "build_kernels_cache",  # `tf-ge-custom build-kernels --cache` exists (compile at graph build)
)

_CPU = "tf_ge_custom.selftest.cpu_stages:"
_NPU = "tf_ge_custom.selftest.npu_stages:"
_OFF = "tf_ge_custom.selftest.offline_stages:"

STAGES = (
    Stage("DOCTOR", "the installation and the Ascend stack (tf-ge-custom doctor): no check FAILs",
          _CPU + "doctor", timeout=600, cpu=True),
    Stage("CPU_ADD", "add_custom on the CPU kernel equals tf.math.add for every dtype, equal and "
          "broadcasting shapes, in a graph, eagerly and in tf.function", _CPU + "cpu_add", timeout=600, cpu=True),
    Stage("CPU_OPS", "every other op (%s) on the CPU kernel equals its TensorFlow equivalent "
          % op_def.python_names([op for op in op_def.OPS if op is not op_def.ADD_CUSTOM]) +
          "bit for bit, every dtype, its attributes' edge values, in a graph, eagerly and in tf.function",
          _CPU + "cpu_ops", timeout=600, cpu=True),
    Stage("TF1_SESSION", "a TF1 session built with npu.session_config runs add_custom on the NPU "
          "(npu_bridge), float32 [8, 2048] against numpy", _NPU + "tf1_session", ("npu_bridge", "npu"),
          timeout=1200),
    Stage("TF2_DEVICE", "tf.function with add_custom on the device npu.open_device opens (npu_device), "
          "float32 [8, 2048] against numpy", _NPU + "tf2_device", ("npu_device", "npu"), timeout=1200),
    Stage("KERNELS", "the package's npubins for this SoC: a kernel per op, variant and dtype, manifest valid, checksums "
          "intact",
          _OFF + "kernels", ("soc",), timeout=300),
    Stage("NPU_ADD_STATIC", "add_custom on the NPU against tf.math.add on the CPU for every dtype, static shapes",
          _NPU + "npu_add_static", ("tf_adapter", "npu", "ge_library"), timeout=1800),
    Stage("NPU_ADD_DYNAMIC", "the same with compile_dynamic_mode (unknown dims, shapes changing between runs)",
          _NPU + "npu_add_dynamic", ("tf_adapter", "npu", "ge_library"), timeout=1800),
    Stage("NPU_OPS_STATIC", "every other op (%s) on the NPU against its TensorFlow equivalent on the CPU, every "
          % op_def.python_names([op for op in op_def.OPS if op is not op_def.ADD_CUSTOM]) +
          "dtype and attribute case of CPU_OPS, static shapes", _NPU + "npu_ops_static",
          ("tf_adapter", "npu", "ge_library"), timeout=1800),
    Stage("NPU_LARGE", "a tensor needing more blocks than the grid holds (each program loops), float32",
          _NPU + "npu_large", ("tf_adapter", "npu", "ge_library"), timeout=1200),
    Stage("NPU_BROADCAST", "broadcasting shapes through the NPU kernel against tf.math.add on the CPU",
          _NPU + "npu_broadcast", ("tf_adapter", "npu", "ge_library"), timeout=1800),
    Stage("COMPILE_AT_BUILD", "a kernel for this SoC compiled into the kernel cache when none is packaged "
          "(tf-ge-custom build-kernels --soc SOC --cache)", _OFF + "compile_at_build",
          ("soc", "cann", "build_kernels_cache"), timeout=3600),
    Stage("SINK", "a static graph GE sinks (npu.session_config(static_sink=True)): float32 results against "
          "tf.math.add on the CPU, no copy node next to AddCustom in GE's dumped graph", _NPU + "sink",
          ("npu_bridge", "npu", "ge_library"), timeout=1800),
    Stage("GE_LOAD_ONCE", "the GE library is mapped once per process over two sessions of three runs "
          "(counted in /proc/self/maps)", _NPU + "ge_load_once", ("tf_adapter", "npu", "ge_library"), timeout=1800),
    Stage("EXPORT_OM", "a SavedModel with add_custom and every other op exported to OM for this SoC (freeze, "
          "AIR, atc)",
          _OFF + "export_om", ("soc", "cann", "atc", "ge_library"), timeout=2400),
    Stage("RUN_OM", "that OM run through ACL without the Python package (ASCEND_CUSTOM_OPP_PATH cleared), "
          "against TensorFlow on the CPU", _OFF + "run_om", ("npu", "om_runner"), ("EXPORT_OM",), timeout=900),
)

NAMES = tuple(s.name for s in STAGES)


def get(name):
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise KeyError("no stage %r; the stages are: %s" % (name, ", ".join(NAMES)))
