"""The NPU stages: inputs, references on the CPU, and the verdicts.

Each stage runs ``add_custom`` on the NPU through ``ctx.device`` (:mod:`.device`), then
compares with TensorFlow's ``tf.math.add`` run on the CPU in a plain session (or with numpy
for the single float32 runs of the sample's scenario), and checks where ``AddCustom`` ran: a
correct result from the host's CPU kernel is a FAIL here, since the point is the NPU.
NPU_OPS_STATIC does the same for every other op of the package against its TensorFlow
equivalent (``_op_meanings.py``) on the CPU.

Tolerance: an add is one correctly rounded operation, so the NPU's result may differ from
the CPU's by at most one unit in the last place of the result's dtype (int32: exactly);
so is each other op of the package (LeakyReluCustom: one multiply where x <= 0), held to the
same bound.
"""
import math

from .. import op_def
from .._build.ge_step import GE_LIBRARY
from .child import failed, passed

SAMPLE_SHAPE = (8, 2048)  # the official sample's scenario
STATIC_CASES = (((8, 2048), (8, 2048)), ((1,), (1,)), ((3, 5, 7), (3, 5, 7)), ((0, 4), (0, 4)))
# one rank, shapes changing between runs of the same graph / function
DYNAMIC_CASES = (((8, 2048), (8, 2048)), ((3, 1000), (3, 1000)), ((1, 1), (1, 1)), ((0, 7), (0, 7)))
BROADCAST_CASES = (((8, 2048), (2048,)), ((64, 1), (1, 128)), ((4096,), ()), ((2, 16, 8, 8), (1, 16, 1, 1)),
                   ((8, 2048), (8, 1)), ((3, 1, 5), (1, 4, 5)))
# relative spacing of one ulp, and the smallest normal number, per float dtype
_EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
_TINY = {"float32": 2.0 ** -126, "float16": 2.0 ** -14, "bfloat16": 2.0 ** -126}
SESSIONS, RUNS = 2, 3  # GE_LOAD_ONCE


def numpy_dtype(dtype):
    import tensorflow as tf

    return tf.as_dtype(dtype).as_numpy_dtype


def make_pair(dtype, x_shape, y_shape, seed):
    """Random operands of ``dtype``: normal values (scaled) for floats, [-1000, 1000) for int32."""
    import numpy as np

    rng = np.random.RandomState(seed)
    if dtype == "int32":
        return (rng.randint(-1000, 1000, x_shape).astype(np.int32), rng.randint(-1000, 1000, y_shape).astype(np.int32))
    t = numpy_dtype(dtype)
    return (np.asarray(rng.standard_normal(x_shape) * 8, np.float32).astype(t),
            np.asarray(rng.standard_normal(y_shape) * 8, np.float32).astype(t))


def cpu_reference(pairs, dtype):
    """``tf.math.add`` of each pair on the CPU, in a plain graph session (no NPU options)."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default(), tf.device("/cpu:0"):
        feeds, outputs = {}, []
        for x, y in pairs:
            px = tf.compat.v1.placeholder(dtype, x.shape)
            py = tf.compat.v1.placeholder(dtype, y.shape)
            feeds[px], feeds[py] = x, y
            outputs.append(tf.math.add(px, py))
    with tf.compat.v1.Session(graph=graph) as session:
        return list(session.run(outputs, feeds))


def ulps(got, want, dtype):
    """The largest error of ``got`` against ``want`` in units of the result's last place
    (int32: the largest absolute difference). Raises ValueError on a shape or dtype mismatch."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise ValueError("shape %s, expected %s" % (list(got.shape), list(want.shape)))
    if got.dtype != want.dtype:
        raise ValueError("dtype %s, expected %s" % (got.dtype, want.dtype))
    if got.size == 0:
        return 0.0
    g, w = got.astype(np.float64), want.astype(np.float64)
    if dtype not in _EPS:
        return float(np.max(np.abs(g - w)))
    if np.any(np.isnan(g) != np.isnan(w)):
        return float("inf")
    both = ~np.isnan(w)
    g, w = g[both], w[both]
    unit = _EPS[dtype] * np.maximum(np.abs(w), _TINY[dtype])
    with np.errstate(invalid="ignore"):  # an infinity equal to the reference is no error
        error = np.where(g == w, 0.0, np.abs(g - w) / unit)
    return float(np.max(error)) if both.any() else 0.0


def judge(run, wants, dtype, labels, against="tf.math.add"):
    """(problem or "", worst error) of a DeviceRun against the references (``against``'s)."""
    if len(run.outputs) != len(wants):
        return "%d results for %d inputs" % (len(run.outputs), len(wants)), float("inf")
    worst = 0.0
    for got, want, label in zip(run.outputs, wants, labels):
        try:
            err = ulps(got, want, dtype)
        except ValueError as e:
            return "%s %s: %s" % (dtype, label, e), float("inf")
        worst = max(worst, err)
        if err > (0 if dtype == "int32" else 1):
            return "%s %s: result differs from %s on the CPU by %s %s" % (
                dtype, label, against, "%g" % err, "ulp" if dtype in _EPS else "(int32 must be exact)"), err
    return "", worst


def _placement_problem(run, op_type=op_def.ADD_CUSTOM.type_name):
    if run.on_npu is True:
        return ""
    return ("no evidence that %s ran on the NPU: %s" % (op_type, run.evidence) if run.on_npu is None
            else run.evidence)


def _shapes(cases):
    return ["%s+%s" % (list(x), list(y)) for x, y in cases]


def _compare_cases(ctx, cases, dynamic=False, dtypes=None, runs=1):
    """Every dtype over ``cases`` on the NPU against the CPU; returns an Outcome."""
    dtypes = dtypes or op_def.ADD_CUSTOM.dtypes
    worst, evidence, adapter = {}, "", ""
    for i, dtype in enumerate(dtypes):
        pairs = [make_pair(dtype, xs, ys, 100 * i + j) for j, (xs, ys) in enumerate(cases)]
        run = ctx.device.run_add(pairs, dtype, dynamic=dynamic, runs=runs)
        evidence, adapter = run.evidence, run.adapter
        problem = _placement_problem(run)
        if problem:
            return failed("%s: %s" % (dtype, problem), adapter=adapter)
        problem, err = judge(run, cpu_reference(pairs, dtype), dtype, _shapes(cases))
        if problem:
            return failed(problem, adapter=adapter, max_error=err)
        worst[dtype] = err
    detail = "%d dtypes x %d shapes via %s%s: max error %s; %s" % (
        len(dtypes), len(cases), adapter, " (compile_dynamic_mode)" if dynamic else "",
        ", ".join("%s %g" % kv for kv in worst.items()), evidence)
    return passed(detail, adapter=adapter, max_error_ulp=worst, shapes=_shapes(cases), evidence=evidence)


def npu_ops_static(ctx):
    """Every op of the package beyond AddCustom on the NPU, every dtype, static shapes, each
    attribute case of CPU_OPS, against its TensorFlow equivalent on the CPU."""
    from .cpu_stages import OP_SHAPES, attr_cases, op_inputs

    shapes = list(OP_SHAPES) + [SAMPLE_SHAPE]
    worst, evidence, adapter, done = {}, "", "", []
    from .. import _op_meanings

    for op in op_def.OPS:
        if op is op_def.ADD_CUSTOM:
            continue
        if _op_meanings.meaning_of(op).equivalent is None:
            done.append("%s (no TensorFlow equivalent to compare with)" % op.type_name)
            continue
        for i, dtype in enumerate(op.dtypes):
            # every shape with every attribute case, in one graph (TF1) per dtype
            cases, labels = [], []
            for j, shape in enumerate(shapes):
                inputs = op_inputs(op, dtype, shape, 200 + 10 * i + j)
                for attrs in attr_cases(op):
                    cases.append((inputs, attrs))
                    labels.append("%s%s" % (list(shape), "".join(" %s=%r" % kv for kv in sorted(attrs.items()))))
            run = ctx.device.run_op(op.type_name, cases, dtype)
            evidence, adapter = run.evidence, run.adapter
            problem = _placement_problem(run, op.type_name)
            if problem:
                return failed("%s %s: %s" % (op.type_name, dtype, problem), adapter=adapter)
            problem, err = judge(run, op_reference(op, cases, dtype), dtype, labels,
                                 against="its TensorFlow equivalent")
            if problem:
                return failed("%s %s" % (op.type_name, problem), adapter=adapter, max_error=err)
            worst["%s %s" % (op.type_name, dtype)] = err
        done.append("%s (%d dtypes x %d shapes x %d attribute cases)" % (
            op.type_name, len(op.dtypes), len(shapes), len(attr_cases(op))))
    if not done:
        return passed("no op beyond AddCustom")
    return passed("%s via %s: max error %s; %s" % (", ".join(done), adapter, ", ".join(
        "%s %g" % kv for kv in worst.items()), evidence), adapter=adapter, max_error_ulp=worst,
        shapes=["%s" % list(s) for s in shapes], evidence=evidence)


def op_reference(op, cases, dtype):
    """The TensorFlow equivalent of ``op`` (``_op_meanings.py``) for each ``(inputs, attrs)``
    of ``cases``, in a plain graph session on the CPU."""
    import tensorflow as tf

    from .. import _op_meanings

    equivalent = _op_meanings.meaning_of(op).equivalent
    graph = tf.Graph()
    with graph.as_default(), tf.device("/cpu:0"):
        feeds, outputs = {}, []
        for inputs, attrs in cases:
            places = [tf.compat.v1.placeholder(dtype, a.shape) for a in inputs]
            feeds.update(zip(places, inputs))
            outputs.append(equivalent(*places, **attrs))
    with tf.compat.v1.Session(graph=graph) as session:
        return list(session.run(outputs, feeds))


def _sample_run(ctx, prefer):
    """The official sample's scenario: float32 [8, 2048] + [8, 2048] against numpy."""
    import numpy as np

    x, y = make_pair("float32", SAMPLE_SHAPE, SAMPLE_SHAPE, 7)
    run = ctx.device.run_add([(x, y)], "float32", prefer=prefer)
    problem = _placement_problem(run)
    if problem:
        return failed(problem, adapter=run.adapter)
    want = x + y
    err = float(np.max(np.abs(np.asarray(run.outputs[0], np.float64) - want.astype(np.float64))))
    if run.outputs[0].shape != want.shape or err != 0.0:
        return failed("float32 %s: max |z - (x + y)| = %g, shape %s (expected 0, %s)" % (
            list(SAMPLE_SHAPE), err, list(run.outputs[0].shape), list(want.shape)), adapter=run.adapter)
    return passed("float32 %s: max |z - (x + y)| = 0; %s" % (list(SAMPLE_SHAPE), run.evidence),
                  adapter=run.adapter, evidence=run.evidence)


def detect_soc(ctx):
    name = ctx.device.detect_soc()
    return passed(name, soc=name)


def tf1_session(ctx):
    return _sample_run(ctx, "npu_bridge")


def tf2_device(ctx):
    return _sample_run(ctx, "npu_device")


def npu_add_static(ctx):
    return _compare_cases(ctx, STATIC_CASES)


def npu_add_dynamic(ctx):
    return _compare_cases(ctx, DYNAMIC_CASES, dynamic=True, runs=2)


def npu_broadcast(ctx):
    return _compare_cases(ctx, BROADCAST_CASES)


def large_geometry(soc):
    """(elements, block size, program cap, where they came from) for NPU_LARGE: four times
    the elements one launch's full grid covers in one pass, plus 3, so that every program
    loops and the last block is partial. Equal shapes: the flat kernel variant's block."""
    block, programs, source = op_def.ADD_CUSTOM.kernel.variant("flat").block_elements, None, "op_def"
    if soc:
        from .. import kernel_manifest, opp

        path = kernel_manifest.find_manifests(opp.opp_root()).get(soc)
        if path:
            try:
                entry = kernel_manifest.load_manifest(path, check_files=False).kernel(
                    op_def.ADD_CUSTOM.type_name, "flat", "float32")
            except kernel_manifest.ManifestError:
                entry = None
            if entry is not None:
                block, programs, source = entry.block_elements, min(entry.max_programs, entry.max_grid), "manifest"
        if programs is None:
            from ..kernels import socs

            try:  # a board name (Ascend910B4-1) has its own count (kernels/socs.py)
                programs, source = socs.vector_cores_of(soc), "the SoC's vector cores"
            except KeyError:
                pass
    if programs is None:
        from ..kernels import socs

        programs, source = max(s.vector_cores for s in socs.SOCS.values()), "the most vector cores of any SoC"
    return block * programs * 4 + 3, block, programs, source


def npu_large(ctx):
    n, block, programs, source = large_geometry(ctx.soc)
    outcome = _compare_cases(ctx, (((n,), (n,)),), dtypes=("float32",))
    blocks = int(math.ceil(n / float(block)))
    figures = dict(outcome.figures, elements=n, block_size=block, programs=programs, blocks=blocks,
                   geometry_from=source)
    detail = "%d elements = %d blocks of %d on at most %d programs (%s): %s" % (
        n, blocks, block, programs, source, outcome.detail)
    return outcome._replace(detail=detail, figures=figures)


def count_mappings(maps_text, name=GE_LIBRARY):
    """The distinct files called ``name`` mapped in a ``/proc/<pid>/maps`` text: [(path, inode)].
    One dlopen of one file, however often repeated, is one entry; two copies are two."""
    found = {}
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if path.rsplit("/", 1)[-1] == name:
            found.setdefault((parts[3], parts[4]), path)
    return sorted((path, inode) for (_, inode), path in found.items())


def ge_load_once(ctx):
    """Two sessions (TF1) or functions (TF2) of three runs each; the GE library must be mapped
    exactly once afterwards, and the results right."""
    import numpy as np

    x, y = make_pair("float32", SAMPLE_SHAPE, SAMPLE_SHAPE, 11)
    seen = []
    for _ in range(SESSIONS):
        run = ctx.device.run_add([(x, y)], "float32", runs=RUNS)
        problem = _placement_problem(run)
        if problem:
            return failed(problem, adapter=run.adapter)
        if not np.array_equal(run.outputs[0], x + y):
            return failed("float32 %s: the result differs from x + y" % list(SAMPLE_SHAPE), adapter=run.adapter)
        seen.append(count_mappings(ctx.device.process_maps()))
    figures = {"mappings_after_each_session": [[p for p, _ in m] for m in seen], "sessions": SESSIONS, "runs": RUNS,
               "counted_in": "/proc/self/maps"}
    last = seen[-1]
    if not last:
        return failed("%s is not mapped in the process after %d sessions: GE did not load the package's library "
                      "(tf-ge-custom doctor: GE finds the library)" % (GE_LIBRARY, SESSIONS), **figures)
    if any(len(m) != 1 for m in seen) or seen[0] != last:
        return failed("%s mapped as %s after sessions %s: GE loaded more than one copy (one file per OPP root "
                      "entry?)" % (GE_LIBRARY, [len(m) for m in seen], ", ".join(p for p, _ in last)), **figures)
    return passed("one mapping of %s (inode %s) after %d sessions x %d runs, counted in /proc/self/maps" % (
        last[0][0], last[0][1], SESSIONS, RUNS), **figures)


# --- SINK: a static graph GE sinks, AddCustom declared (no host call, no copies) ---------------
SINK_CASES = (((8, 2048), (8, 2048)), ((8, 2048), (2048,)))
# The node types GE inserts to copy around an op whose addresses it cannot refresh.
COPY_OPS = ("Identity", "MemcpyAsync", "MemcpyAddrAsync")


def dumped_nodes(text):
    """The nodes of one GE graph dump (ONNX text format, ``node { ... }`` blocks): a list of
    ``(name, op_type, inputs)``, inputs as the node names they come from (``name:0`` -> ``name``)."""
    import re

    nodes = []
    for m in re.finditer(r"(?m)^\s*node\s*\{", text):
        depth, i = 0, m.end() - 1
        for i in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
        block = text[m.end():i]
        # the node's own fields: the block with its nested blocks removed
        own, depth = [], 0
        for ch in block:
            depth += {"{": 1}.get(ch, 0)
            if depth == 0:
                own.append(ch)
            depth -= {"}": 1}.get(ch, 0)
        own = "".join(own)
        name = re.search(r'\bname:\s*"([^"]*)"', own)
        op_type = re.search(r'\bop_type:\s*"([^"]*)"', own)
        inputs = [s.rsplit(":", 1)[0] for s in re.findall(r'\binput:\s*"([^"]*)"', own)]
        if name and op_type:
            nodes.append((name.group(1), op_type.group(1), inputs))
    return nodes


def build_graph_file(files):
    """The dump of the graph GE built last: the highest-numbered file whose stage name says
    Build, else the highest-numbered one (None for none)."""
    import os
    import re

    def index(path):
        m = re.match(r"ge_onnx_(\d+)_", os.path.basename(path))
        return int(m.group(1)) if m else -1

    ordered = sorted(files, key=index)
    built = [f for f in ordered if "build" in os.path.basename(f).lower()]
    return (built or ordered or [None])[-1]


def copies_around(nodes, op=op_def.ADD_CUSTOM.type_name):
    """The copy nodes (:data:`COPY_OPS`) that feed an ``op`` node or read one: [(copy, its type, op node)]."""
    kinds = {name: kind for name, kind, _ in nodes}
    found = []
    for name, kind, inputs in nodes:
        if kind == op:
            found += [(i, kinds[i], name) for i in inputs if kinds.get(i) in COPY_OPS]
        elif kind in COPY_OPS:
            found += [(name, kind, i) for i in inputs if kinds.get(i) == op]
    return found


def sink(ctx):
    """float32 [8, 2048] + [8, 2048] and + [2048] in one static graph GE sinks: the results
    against tf.math.add on the CPU, and GE's dumped built graph must hold both AddCustom
    nodes with no copy node next to either."""
    import os

    dump = os.path.join(ctx.workdir, "ge_graphs")
    os.makedirs(dump, exist_ok=True)
    pairs = [make_pair("float32", xs, ys, 300 + j) for j, (xs, ys) in enumerate(SINK_CASES)]
    sunk = ctx.device.run_sunk(pairs, "float32", dump)
    run = sunk.run
    problem = _placement_problem(run)
    if problem:
        return failed(problem, adapter=run.adapter)
    problem, err = judge(run, cpu_reference(pairs, "float32"), "float32", _shapes(SINK_CASES))
    if problem:
        return failed(problem, adapter=run.adapter, max_error=err)
    path = build_graph_file(sunk.graph_files)
    if path is None:
        return failed("GE dumped no graph into %s (DUMP_GE_GRAPH=2): cannot tell whether copies were inserted" % dump,
                      max_error_ulp=err)
    with open(path) as f:
        nodes = dumped_nodes(f.read())
    ours = [n for n, kind, _ in nodes if kind == op_def.ADD_CUSTOM.type_name]
    figures = dict(adapter=run.adapter, max_error_ulp=err, shapes=_shapes(SINK_CASES), graph=path,
                   graph_nodes=len(nodes), add_custom_nodes=len(ours), evidence=run.evidence)
    if len(ours) != len(SINK_CASES):
        return failed("%s holds %d AddCustom node(s), expected %d" % (path, len(ours), len(SINK_CASES)), **figures)
    copies = copies_around(nodes)
    if copies:
        return failed("GE inserted %s next to AddCustom (%s): it did not take the declared launch, so it copies "
                      "around a non-refreshable op" % (
                          ", ".join("%s %s" % (kind, name) for name, kind, _ in copies), os.path.basename(path)),
                      copies=[list(c) for c in copies], **figures)
    return passed("float32 %s in one static graph: max error %g ulp, %d AddCustom nodes and no copy node next to "
                  "them in %s; %s" % (", ".join(_shapes(SINK_CASES)), err, len(ours), os.path.basename(path),
                                      run.evidence), **figures)
