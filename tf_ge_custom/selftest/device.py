"""The selftest's device steps: the only selftest code that calls TF Adapter, ACL or CANN's tools.

Everything here needs an Ascend host (TF Adapter, an NPU, a CANN toolkit) and has not run on
one (docs/selftest.md says what was checked and how). The stages (:mod:`.npu_stages`,
:mod:`.offline_stages`) build the inputs, compute the references on the CPU and judge the
results; these functions only run things where the stack runs them and report what came
back. The selftest's tests replace this module with a double of the same functions
(``tests/selftest/doubles/``), which exercises the stages' judging and the runner's process
handling, never the stack.

Each call runs in a stage's own child process, so the NPU device is opened at most once per
stage (TF2's ``npu_device.open`` reads its options once per process).
"""
import os
import sys
from collections import Counter
from typing import NamedTuple, Optional

# The options every NPU run uses: float32 stays float32 (inference defaults to fp16;
# docs/npu.md). The dynamic runs add compile_dynamic_mode.
OPTIONS = {"precision_mode_v2": "origin"}
ADAPTERS = ("npu_bridge", "npu_device")


class DeviceRun(NamedTuple):
    outputs: list  # one numpy array per input pair, in order
    on_npu: Optional[bool]  # True: the op ran on the NPU; False: on the host; None: no evidence
    evidence: str  # what was looked at, in words
    adapter: str  # "npu_bridge" (TF1 session) or "npu_device" (TF2 device)


def adapter(prefer=None):
    """The TF Adapter this process uses: ``prefer`` when given, else npu_bridge, else npu_device."""
    from .child import StageSkip
    from .host import ADAPTER_HINT, _importable

    for name in ((prefer,) if prefer else ADAPTERS):
        if _importable(name):
            return name
    raise StageSkip("%s is not importable; %s" % (prefer or "TF Adapter (npu_bridge / npu_device)", ADAPTER_HINT))


def run_add(pairs, dtype, dynamic=False, runs=1, prefer=None):
    """``add_custom(x, y)`` for each ``(x, y)`` of ``pairs`` (numpy arrays of ``dtype``) on the NPU.

    TF1 (npu_bridge): one graph, one session configured by ``npu.session_config``; static:
    placeholders of the pairs' shapes, all run together; dynamic: ``compile_dynamic_mode`` and
    placeholders of unknown dims, one ``session.run`` per pair. TF2 (npu_device): the device
    ``npu.open_device`` opens, one ``tf.function`` per pair (``input_signature`` of unknown dims
    when dynamic). ``runs``: how many times each is run (the last result is returned).
    """
    name = adapter(prefer)
    return (_run_tf1 if name == "npu_bridge" else _run_tf2)(pairs, dtype, dynamic, runs)


def _tf1_placement(op_counts, op_type="AddCustom"):
    """Where the op ``op_type`` ran, from the op types in the partition graphs TF executed."""
    geops, left = op_counts.get("GeOp", 0), op_counts.get(op_type, 0)
    if left:
        return False, ("%d %s node(s) in the partition graphs: TF Adapter left %s on the host "
                       "(its CPU kernel ran; tf-ge-custom doctor checks npu_supported_ops.json and "
                       "ASCEND_CUSTOM_OPP_PATH)" % (left, op_type, op_type))
    if geops:
        return True, "%s inside %d GeOp node(s), none left on the host" % (op_type, geops)
    return None, "neither a GeOp nor an %s node in the partition graphs" % op_type


def _run_tf1(pairs, dtype, dynamic, runs):
    import tensorflow as tf

    import tf_ge_custom
    from tf_ge_custom import npu

    options = dict(OPTIONS, compile_dynamic_mode=True) if dynamic else dict(OPTIONS)
    config = npu.session_config(**options)  # imports npu_bridge, which registers NpuOptimizer
    graph = tf.Graph()
    with graph.as_default():
        nodes = []
        by_rank = {}
        for i, (x, y) in enumerate(pairs):
            if dynamic:
                key = (x.ndim, y.ndim)
                if key not in by_rank:
                    px = tf.compat.v1.placeholder(dtype, [None] * x.ndim, name="x_rank%d_%d" % key)
                    py = tf.compat.v1.placeholder(dtype, [None] * y.ndim, name="y_rank%d_%d" % key)
                    by_rank[key] = (px, py, tf_ge_custom.add_custom(px, py))
                nodes.append(by_rank[key])
            else:
                px = tf.compat.v1.placeholder(dtype, x.shape, name="x_%d" % i)
                py = tf.compat.v1.placeholder(dtype, y.shape, name="y_%d" % i)
                nodes.append((px, py, tf_ge_custom.add_custom(px, py)))
    run_options = tf.compat.v1.RunOptions(output_partition_graphs=True)
    op_counts = Counter()
    outputs = [None] * len(pairs)

    def record(metadata):
        for partition in metadata.partition_graphs:
            op_counts.update(node.op for node in partition.node)

    with tf.compat.v1.Session(graph=graph, config=config) as session:
        for _ in range(runs):
            if dynamic:
                for i, ((x, y), (px, py, z)) in enumerate(zip(pairs, nodes)):
                    metadata = tf.compat.v1.RunMetadata()
                    outputs[i] = session.run(z, {px: x, py: y}, options=run_options, run_metadata=metadata)
                    record(metadata)
            else:
                metadata = tf.compat.v1.RunMetadata()
                feeds = {}
                for (x, y), (px, py, _) in zip(pairs, nodes):
                    feeds[px], feeds[py] = x, y
                outputs = list(session.run([z for _, _, z in nodes], feeds, options=run_options,
                                           run_metadata=metadata))
                record(metadata)
    on_npu, evidence = _tf1_placement(op_counts)
    return DeviceRun(outputs, on_npu, evidence, "npu_bridge")


_OPENED = {}


def _open_device(dynamic):
    """Open TF2's NPU device once per process (npu_device reads its options at open)."""
    from tf_ge_custom import npu

    if "handle" not in _OPENED:
        options = dict(OPTIONS, compile_dynamic_mode=True) if dynamic else dict(OPTIONS)
        _OPENED["handle"] = npu.open_device(**options)  # NpuStackError when it cannot open
    return _OPENED["handle"]


def _run_tf2(pairs, dtype, dynamic, runs):
    import tensorflow as tf

    import tf_ge_custom

    _open_device(dynamic)
    outputs, devices = [], []
    for x, y in pairs:
        signature = [tf.TensorSpec([None] * a.ndim if dynamic else a.shape, dtype) for a in (x, y)]
        step = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), input_signature=signature)
        for _ in range(runs):
            z = step(tf.constant(x, dtype), tf.constant(y, dtype))
        outputs.append(z.numpy())
        devices.append(z.device)
    kinds = set("NPU" if ":NPU:" in d.upper() else "CPU" if ":CPU:" in d.upper() else d for d in devices)
    if kinds == {"NPU"}:
        return DeviceRun(outputs, True, "every result on %s" % devices[0], "npu_device")
    if "CPU" in kinds:
        return DeviceRun(outputs, False, "results on %s: AddCustom did not run on the NPU (tf-ge-custom doctor "
                         "checks npu_supported_ops.json and ASCEND_CUSTOM_OPP_PATH)" % ", ".join(sorted(set(devices))),
                         "npu_device")
    return DeviceRun(outputs, None, "results on %s" % ", ".join(sorted(set(devices))), "npu_device")


def run_op(op_type, cases, dtype, prefer=None):
    """The op ``op_type`` (a type of ``op_def.OPS``) for each ``(inputs, attrs)`` of ``cases``
    (a tuple of numpy arrays of ``dtype``, and a dict of attribute values) on the NPU, static
    shapes.

    TF1 (npu_bridge): one graph of placeholders of the cases' shapes, run together in one
    session configured by ``npu.session_config``. TF2 (npu_device): one ``tf.function`` per
    case on the device ``npu.open_device`` opens.
    """
    name = adapter(prefer)
    return (_run_op_tf1 if name == "npu_bridge" else _run_op_tf2)(op_type, cases, dtype)


def _op_function(op_type):
    import tf_ge_custom
    from tf_ge_custom import op_def

    return getattr(tf_ge_custom, op_def.get(op_type).python_name)


def _run_op_tf1(op_type, cases, dtype):
    import tensorflow as tf

    from tf_ge_custom import npu

    function = _op_function(op_type)
    config = npu.session_config(**OPTIONS)
    graph = tf.Graph()
    feeds, outputs = {}, []
    with graph.as_default():
        for i, (inputs, attrs) in enumerate(cases):
            places = [tf.compat.v1.placeholder(dtype, a.shape, name="in%d_%d" % (k, i)) for k, a in enumerate(inputs)]
            feeds.update(zip(places, inputs))
            outputs.append(function(*places, **attrs))
    run_options = tf.compat.v1.RunOptions(output_partition_graphs=True)
    metadata = tf.compat.v1.RunMetadata()
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        results = list(session.run(outputs, feeds, options=run_options, run_metadata=metadata))
    op_counts = Counter(node.op for partition in metadata.partition_graphs for node in partition.node)
    on_npu, evidence = _tf1_placement(op_counts, op_type)
    return DeviceRun(results, on_npu, evidence, "npu_bridge")


def _run_op_tf2(op_type, cases, dtype):
    import tensorflow as tf

    function = _op_function(op_type)
    _open_device(False)
    outputs, devices = [], []
    for inputs, attrs in cases:
        step = tf.function(lambda *a: function(*a, **attrs),
                           input_signature=[tf.TensorSpec(a.shape, dtype) for a in inputs])
        result = step(*[tf.constant(a, dtype) for a in inputs])
        outputs.append(result.numpy())
        devices.append(result.device)
    kinds = set("NPU" if ":NPU:" in d.upper() else "CPU" if ":CPU:" in d.upper() else d for d in devices)
    if kinds == {"NPU"}:
        return DeviceRun(outputs, True, "every result on %s" % devices[0], "npu_device")
    if "CPU" in kinds:
        return DeviceRun(outputs, False, "results on %s: %s did not run on the NPU (tf-ge-custom doctor "
                         "checks npu_supported_ops.json and ASCEND_CUSTOM_OPP_PATH)" % (
                             ", ".join(sorted(set(devices))), op_type), "npu_device")
    return DeviceRun(outputs, None, "results on %s" % ", ".join(sorted(set(devices))), "npu_device")


def process_maps():
    """This process's memory map (``/proc/self/maps``): which files are mapped, by inode."""
    with open("/proc/self/maps") as f:
        return f.read()


def detect_soc():
    """The SoC name of the NPU, asked of ACL through pyACL (CANN's Python binding)."""
    from .child import StageSkip

    try:
        import acl  # on PYTHONPATH after CANN's set_env.sh
    except ImportError as e:
        raise StageSkip("pyACL (module acl, from CANN's set_env.sh) is not importable (%s); pass --soc" % e)
    acl.init()
    try:
        name = acl.get_soc_name()
    finally:
        acl.finalize()
    if not name:
        raise StageSkip("acl.get_soc_name() returned no name; pass --soc")
    return name


def export_om(model_dir, soc, prefix, log=None):
    """``tf_ge_custom.export.export(model_dir, to="om")`` for ``soc``: freeze, verify, AIR, atc.
    Returns the files written ({"pb": ..., "om": ...})."""
    from tf_ge_custom.export import export

    return dict(export(model_dir, to="om", soc=soc, output=prefix, out=log).files)


def run_om(om, inputs, log=None):
    """``tf_ge_custom.export.run_om``: the OM through ACL with ASCEND_CUSTOM_OPP_PATH cleared,
    compared with the source model run by TensorFlow on the CPU. Returns its RunOmResult."""
    from tf_ge_custom.export import run_om as run

    return run(om, inputs, out=log)


def build_kernels_cache(soc, cache_dir, timeout):
    """``tf-ge-custom build-kernels --soc SOC --cache`` with the kernel cache at ``cache_dir``
    (``TF_GE_CUSTOM_CACHE_DIR``). Returns (exit status, its output)."""
    env = dict(os.environ, TF_GE_CUSTOM_CACHE_DIR=cache_dir)
    command = ("import builtins, sys; builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True; "
               "from tf_ge_custom.cli import main; sys.exit(main())")
    from tf_ge_custom import _processes

    proc = _processes.run([sys.executable, "-c", command, "build-kernels", "--soc", soc, "--cache"],
                          timeout=timeout, env=env, check=False)
    return proc.returncode, proc.output


class SunkRun(NamedTuple):
    run: DeviceRun
    graph_files: list  # GE's dumped graphs (ge_onnx_*.pbtxt), in the order GE numbered them


def run_sunk(pairs, dtype, dump_dir, runs=1):
    """``add_custom(x, y)`` for each pair in one static TF1 graph, in a session configured by
    ``npu.session_config(static_sink=True)``, with GE's graph dump on (``DUMP_GE_GRAPH=2``
    into ``dump_dir``; set before TF Adapter starts GE, which reads it once). Returns the
    results and the dumped graph files."""
    import glob

    name = adapter("npu_bridge")  # StageSkip without npu_bridge
    os.environ["DUMP_GE_GRAPH"] = "2"
    os.environ["DUMP_GRAPH_PATH"] = dump_dir
    import tensorflow as tf

    import tf_ge_custom
    from tf_ge_custom import npu

    config = npu.session_config(static_sink=True, **OPTIONS)
    graph = tf.Graph()
    with graph.as_default():
        nodes = []
        for i, (x, y) in enumerate(pairs):
            px = tf.compat.v1.placeholder(dtype, x.shape, name="x_%d" % i)
            py = tf.compat.v1.placeholder(dtype, y.shape, name="y_%d" % i)
            nodes.append((px, py, tf_ge_custom.add_custom(px, py)))
    run_options = tf.compat.v1.RunOptions(output_partition_graphs=True)
    op_counts = Counter()
    outputs = []
    with tf.compat.v1.Session(graph=graph, config=config) as session:
        feeds = {}
        for (x, y), (px, py, _) in zip(pairs, nodes):
            feeds[px], feeds[py] = x, y
        for _ in range(runs):
            metadata = tf.compat.v1.RunMetadata()
            outputs = list(session.run([z for _, _, z in nodes], feeds, options=run_options, run_metadata=metadata))
            for partition in metadata.partition_graphs:
                op_counts.update(node.op for node in partition.node)
    on_npu, evidence = _tf1_placement(op_counts)
    files = sorted(glob.glob(os.path.join(dump_dir, "**", "ge_onnx_*.pbtxt"), recursive=True))
    return SunkRun(DeviceRun(outputs, on_npu, evidence, name), files)
