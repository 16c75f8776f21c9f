"""The stages every host runs: doctor, add_custom on the CPU kernel against tf.math.add, and
every other op on its CPU kernel against its TensorFlow equivalent.

Also :func:`versions`, run before the stages: TensorFlow's and TF Adapter's versions for the
report (a child process, as it imports TensorFlow).
"""
import os
import sys

from .. import op_def
from .child import failed, passed

# (x shape, y shape): equal shapes, broadcasting, a scalar, zero elements, rank 5
CPU_CASES = (((8, 2048), (8, 2048)), ((3, 1, 5), (1, 4, 5)), ((4096,), ()), ((0, 3), (3,)),
             ((2, 3, 4, 5, 6), (4, 1, 6)))


def doctor(ctx):
    """``tf-ge-custom doctor``'s checks: PASS unless one FAILs (WARN and INFO are named)."""
    from .. import doctor as checks

    context = checks.Context()
    results = checks.run_checks(context)
    sys.stdout.write(checks.format_text(results, context.root))  # into the stage's log
    counts = dict((s, sum(r.status == s for r in results)) for s in checks.STATUSES)
    figures = {"counts": counts, "checks": [{"name": r.name, "status": r.status, "detail": r.detail, "fix": r.fix}
                                            for r in results]}
    failing = [r for r in results if r.status == checks.FAIL]
    if failing:
        return failed("%d check(s) FAIL: %s" % (len(failing), "; ".join(
            "%s: %s%s" % (r.name, r.detail, " (fix: %s)" % r.fix if r.fix else "") for r in failing)), **figures)
    warned = [r.name for r in results if r.status == checks.WARN]
    info = [r.name for r in results if r.status == checks.INFO]
    return passed("%d OK, %d INFO%s, %d WARN%s" % (
        counts[checks.OK], counts[checks.INFO], " (%s)" % ", ".join(info) if info else "",
        counts[checks.WARN], " (%s)" % ", ".join(warned) if warned else ""), **figures)


def _modes(tf):
    return ("graph", "eager", "tf.function") if tf.executing_eagerly() else ("graph",)


def cpu_add(ctx):
    """Every dtype and case, in a graph session pinned to the CPU, and on TensorFlow 2 also
    eagerly and in tf.function: add_custom must equal tf.math.add exactly."""
    import numpy as np
    import tensorflow as tf

    import tf_ge_custom
    from .npu_stages import make_pair

    modes = _modes(tf)
    checked = 0
    for i, dtype in enumerate(op_def.ADD_CUSTOM.dtypes):
        pairs = [make_pair(dtype, xs, ys, 10 * i + j) for j, (xs, ys) in enumerate(CPU_CASES)]
        results = {m: [] for m in modes}
        graph = tf.Graph()
        with graph.as_default(), tf.device("/cpu:0"):
            feeds, nodes = {}, []
            for x, y in pairs:
                px = tf.compat.v1.placeholder(dtype, x.shape)
                py = tf.compat.v1.placeholder(dtype, y.shape)
                feeds[px], feeds[py] = x, y
                nodes.append((tf_ge_custom.add_custom(px, py), tf.math.add(px, py)))
        with tf.compat.v1.Session(graph=graph) as session:
            results["graph"] = session.run(nodes, feeds)
        if "eager" in modes:
            ours = tf.function(tf_ge_custom.add_custom)
            with tf.device("/cpu:0"):
                for x, y in pairs:
                    results["eager"].append((tf_ge_custom.add_custom(x, y).numpy(), tf.math.add(x, y).numpy()))
                    results["tf.function"].append((ours(x, y).numpy(), tf.math.add(x, y).numpy()))
        for mode in modes:
            for (xs, ys), (got, want) in zip(CPU_CASES, results[mode]):
                checked += 1
                if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(
                        np.asarray(got, np.float64), np.asarray(want, np.float64)):
                    diff = float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64)))) \
                        if got.shape == want.shape and got.size else float("nan")
                    return failed("%s %s %s + %s: add_custom gives %s %s, tf.math.add %s %s (max |diff| %g)" % (
                        mode, dtype, list(xs), list(ys), got.dtype, list(got.shape), want.dtype, list(want.shape),
                        diff), mode=mode, dtype=dtype)
    return passed("%d dtypes x %d shapes (equal, broadcasting, scalar, 0 elements, rank 5) in %s: equal to "
                  "tf.math.add" % (len(op_def.ADD_CUSTOM.dtypes), len(CPU_CASES), ", ".join(modes)),
                  comparisons=checked, modes=list(modes), tensorflow=tf.__version__)


# CPU_OPS: one shape of random values with every special value in it, zero elements, rank 5
OP_SHAPES = ((4099,), (0, 3), (2, 3, 4, 5, 6))
# the attribute values each op is run with, one attribute at a time (the others at their
# defaults), kept to those its record's range allows: the edges tf.nn's ops are tested at
_ATTR_VALUES = {"float": (0.0, 1.0, -0.5, 2.5, -0.0, float("nan"), float("inf")),
                "int": (0, 1, 3)}


def attr_cases(op):
    """[{attr: value}] for ``op``: its defaults, then each attribute at each of its type's
    edge values that the record's range allows (the others at their defaults)."""
    defaults = dict((a.name, a.default) for a in op.attrs)
    cases = [defaults]
    for a in op.attrs:
        for value in _ATTR_VALUES[a.type]:
            inside = (value == value and (a.minimum is None or value >= a.minimum)
                      and (a.maximum is None or value <= a.maximum)) or (
                value != value and a.minimum is None and a.maximum is None)
            if inside:
                cases.append(dict(defaults, **{a.name: value}))
    return cases


def op_inputs(op, dtype, shape, seed):
    """One array per input of ``op``: normal values (scaled), the first elements 0, -0, 1, -1,
    the largest finite, infinities and NaN for floats; [-1000, 1000) for int32."""
    import numpy as np

    from .npu_stages import numpy_dtype

    rng = np.random.RandomState(seed)
    arrays = []
    for _ in op.inputs:
        if dtype == "int32":
            arrays.append(rng.randint(-1000, 1000, shape).astype(np.int32))
            continue
        t = numpy_dtype(dtype)
        a = np.asarray(rng.standard_normal(shape) * 8, np.float32).astype(t)
        flat = a.reshape(-1)
        special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], np.float32).astype(t)
        special = np.append(special, [np.finfo(t).max, -np.finfo(t).max]).astype(t) \
            if dtype != "bfloat16" else special
        n = min(flat.size, special.size)
        flat[:n] = special[:n]
        arrays.append(a)
    return arrays


def _same(got, want):
    """Whether ``got`` is ``want`` bit for bit where ``want`` is a number, NaN where it is NaN
    (a NaN's payload and sign are not compared), with the same shape and dtype."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind != "f" and want.dtype.name != "bfloat16":
        return bool(np.array_equal(got, want))
    wide_got, wide_want = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(wide_want)
    if not np.array_equal(np.isnan(wide_got), nan):
        return False
    bits = "u%d" % want.dtype.itemsize
    return bool(np.array_equal(got.view(bits)[~nan], want.view(bits)[~nan]))


def cpu_ops(ctx):
    """Every op of the package beyond AddCustom (CPU_ADD checks that one), every dtype, on
    the CPU kernel against its TensorFlow equivalent (``_op_meanings.py``) bit for bit: a few
    shapes, each attribute at its default and its type's edge values, in a graph session
    pinned to the CPU, and on TensorFlow 2 also eagerly and in tf.function."""
    import tensorflow as tf

    import tf_ge_custom
    from .. import _op_meanings

    modes = _modes(tf)
    checked, done = 0, []
    for op in op_def.OPS:
        if op is op_def.ADD_CUSTOM:
            continue
        ours, theirs = getattr(tf_ge_custom, op.python_name), _op_meanings.meaning_of(op).equivalent
        if theirs is None:
            done.append("%s: no TensorFlow equivalent to compare with (op_def.py)" % op.type_name)
            continue
        cases = attr_cases(op)
        for i, dtype in enumerate(op.dtypes):
            inputs = [op_inputs(op, dtype, shape, 10 * i + j) for j, shape in enumerate(OP_SHAPES)]
            results = {m: [] for m in modes}
            graph = tf.Graph()
            with graph.as_default(), tf.device("/cpu:0"):
                feeds, nodes = {}, []
                for arrays in inputs:
                    places = [tf.compat.v1.placeholder(dtype, a.shape) for a in arrays]
                    feeds.update(zip(places, arrays))
                    nodes += [(ours(*places, **attrs), theirs(*places, **attrs)) for attrs in cases]
            with tf.compat.v1.Session(graph=graph) as session:
                results["graph"] = session.run(nodes, feeds)
            if "eager" in modes:
                # one tf.function per attribute case: a function traced for alpha=0.0 is reused
                # for alpha=-0.0 (its cache compares Python values, and 0.0 == -0.0)
                traced = [tf.function(lambda *a, attrs=attrs: ours(*a, **attrs)) for attrs in cases]
                with tf.device("/cpu:0"):
                    for arrays in inputs:
                        for attrs, function in zip(cases, traced):
                            want = theirs(*arrays, **attrs).numpy()
                            results["eager"].append((ours(*arrays, **attrs).numpy(), want))
                            results["tf.function"].append((function(*arrays).numpy(), want))
            labels = [(shape, attrs) for shape in OP_SHAPES for attrs in cases]
            for mode in modes:
                for (shape, attrs), (got, want) in zip(labels, results[mode]):
                    checked += 1
                    if not _same(got, want):
                        return failed("%s %s %s %s%s: %s gives %s %s, its TensorFlow equivalent %s %s" % (
                            mode, op.type_name, dtype, list(shape),
                            "".join(" %s=%r" % kv for kv in sorted(attrs.items())), op.python_name,
                            got.dtype, list(got.shape), want.dtype, list(want.shape)),
                            mode=mode, op=op.type_name, dtype=dtype)
        done.append("%s: %d dtypes x %d shapes x %d attribute cases" % (
            op.type_name, len(op.dtypes), len(OP_SHAPES), len(cases)))
    return passed("%s in %s: equal to their TensorFlow equivalents bit for bit" % (
        "; ".join(done) or "no op beyond AddCustom", ", ".join(modes)),
        comparisons=checked, modes=list(modes), tensorflow=tf.__version__)


def _distribution_version(names, path=None):
    """The version in the name of an installed ``<name>-<version>.dist-info`` (or ``.egg-info``)
    folder on ``sys.path``: what importlib.metadata reads, which Python 3.7 lacks."""
    wanted = set(n.lower().replace("-", "_") for n in names)
    for folder in sys.path if path is None else path:
        try:
            entries = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for entry in entries:
            for suffix in (".dist-info", ".egg-info"):
                if entry.endswith(suffix):
                    name, _, rest = entry[: -len(suffix)].partition("-")
                    if name.lower().replace("-", "_") in wanted and rest:
                        return rest.split("-")[0]
    return None


def versions(ctx):
    """TensorFlow's version (imported here) and TF Adapter's (its distribution's metadata)."""
    found = {"tf_adapter": {}}
    try:
        import tensorflow as tf

        found["tensorflow"] = tf.__version__
    except Exception as e:  # the report says why, the stages will FAIL on it
        found["tensorflow"] = "not importable (%s: %s)" % (type(e).__name__, e)
    for module in ("npu_bridge", "npu_device"):
        if ctx.host.has(module):
            found["tf_adapter"][module] = _distribution_version(
                (module, module.replace("_", "-"))) or "installed (version unknown)"
    return passed("", **found)
