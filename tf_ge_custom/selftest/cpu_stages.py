"""The stages every host runs: doctor, and add_custom on the CPU kernel against tf.math.add.

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
