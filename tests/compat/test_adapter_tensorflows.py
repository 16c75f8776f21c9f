"""The package on the TensorFlows that TF Adapter ships for: 1.15 and 2.6.5 on Python 3.7.

``make test-compat`` runs this file in two extra virtual environments
(requirements/compat-*.lock), after building the package there against that TensorFlow; the
main suite runs it too, on the current TensorFlow. Python 3.7 syntax and APIs that exist in
TensorFlow 1.15 only (``tf.compat.v1`` for graphs). The oracle is ``tf.math.add``/``tf.add``
of the same TensorFlow.
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.op_def import ADD_CUSTOM

TF1 = tf.__version__.startswith("1.")
v1 = tf.compat.v1

SHAPE_PAIRS = [((), ()), ((5,), (5,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((0, 3), (1, 3)),
               ((3, 1, 2), (2, 1)), ((1,), (2, 2, 2, 2, 2))]
SPECIALS = {"float32": [np.nan, np.inf, -np.inf, -0.0, 3.4e38, 1e-45],
            "float16": [np.nan, np.inf, -0.0, 65504.0, 6e-8],
            "bfloat16": [np.nan, -np.inf, -0.0, 3.3e38],
            "int32": [2 ** 31 - 1, -2 ** 31, 0, -1]}


def _values(dtype, shape, seed):
    rng = np.random.RandomState(seed)
    if dtype == "int32":
        v = rng.randint(-2 ** 31, 2 ** 31 - 1, size=shape, dtype=np.int64).astype(np.int32)
    else:
        v = (rng.standard_normal(shape) * 100).astype(np.float32)
    flat = v.reshape(-1)
    for i, s in enumerate(SPECIALS[dtype][: flat.size]):
        flat[i] = s
    return v


def _equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "i":
        return np.array_equal(a, b)
    a, b = a.astype(np.float64), b.astype(np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    numbers = ~np.isnan(b)  # a NaN's sign is unspecified by IEEE 754; -0.0 vs 0.0 is not
    return bool(np.all(same) and np.array_equal(np.signbit(a)[numbers], np.signbit(b)[numbers]))


def _registered_op_def():
    from tensorflow.python.framework import op_def_registry

    if hasattr(op_def_registry, "get"):
        return op_def_registry.get(ADD_CUSTOM.type_name)
    return op_def_registry.get_registered_ops().get(ADD_CUSTOM.type_name)  # TF 1.15


def test_running_python_and_tensorflow_are_reported():
    sys.stdout.write("\nPython %s, TensorFlow %s\n" % (sys.version.split()[0], tf.__version__))
    assert tf_ge_custom._library.build_info()["tensorflow"]["version"] == tf.__version__


def test_op_registered_as_defined():
    op = _registered_op_def()
    assert op is not None
    assert [a.name for a in op.input_arg] == list(ADD_CUSTOM.inputs)
    assert [a.name for a in op.output_arg] == list(ADD_CUSTOM.outputs)
    allowed = sorted(tf.as_dtype(t).name for t in op.attr[0].allowed_values.list.type)
    assert allowed == sorted(ADD_CUSTOM.dtypes)


@pytest.mark.parametrize("dtype", ADD_CUSTOM.dtypes)
def test_graph_mode_matches_tf_add_with_broadcasting_and_specials(dtype):
    graph = tf.Graph()
    with graph.as_default():
        cases = []
        for i, (xs, ys) in enumerate(SHAPE_PAIRS):
            x = tf.cast(tf.constant(_values(dtype, xs, i)), dtype) if dtype == "bfloat16" else \
                tf.constant(_values(dtype, xs, i), dtype=dtype)
            y = tf.cast(tf.constant(_values(dtype, ys, 100 + i)), dtype) if dtype == "bfloat16" else \
                tf.constant(_values(dtype, ys, 100 + i), dtype=dtype)
            px = v1.placeholder(dtype, [None] * len(xs))  # dynamic shapes
            cases.append((tf_ge_custom.add_custom(x, y), tf.add(x, y),
                          tf_ge_custom.add_custom(px, y), tf.add(px, y), px, x))
        with v1.Session(graph=graph) as sess:
            for ours, ref, ours_dyn, ref_dyn, px, x in cases:
                xv = sess.run(x)
                got, want, got_dyn, want_dyn = sess.run([ours, ref, ours_dyn, ref_dyn], {px: xv})
                assert _equal(got, want) and _equal(got_dyn, want_dyn)
                assert ours.shape.as_list() == ref.shape.as_list()


def test_statically_equal_shapes_give_one_node():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [8, 2048])
        tf_ge_custom.add_custom(x, x)
    assert [n.op for n in graph.as_graph_def().node] == ["Placeholder", "AddCustom"]


@pytest.mark.parametrize("xs,ys", [([2, 1], [3]), ([None, 1], [1, None]), (None, [3])])
def test_broadcasting_shapes_give_one_node_too(xs, ys):
    graph = tf.Graph()
    with graph.as_default():
        z = tf_ge_custom.add_custom(v1.placeholder(tf.float32, xs), v1.placeholder(tf.float32, ys))
        ref = tf.add(v1.placeholder(tf.float32, xs), v1.placeholder(tf.float32, ys))
    assert [n.op for n in graph.as_graph_def().node].count("AddCustom") == 1
    assert [n.op for n in graph.as_graph_def().node].count("BroadcastTo") == 0
    assert z.shape.ndims == ref.shape.ndims
    if z.shape.ndims is not None:
        assert z.shape.as_list() == ref.shape.as_list()


def test_the_raw_op_broadcasts_and_refuses_as_tf_add():
    raw = tf.load_op_library(tf_ge_custom.library_path()).add_custom
    graph = tf.Graph()
    with graph.as_default():
        px = v1.placeholder(tf.float32, [None, None])
        py = v1.placeholder(tf.float32, [None])
        z = raw(px, py)
        with pytest.raises(ValueError, match=r"AddCustom: x \[2,5\] and y \[3\]"):
            raw(v1.placeholder(tf.float32, [2, 5]), v1.placeholder(tf.float32, [3]))
        with v1.Session(graph=graph) as sess:
            x, y = _values("float32", (4, 3), 7), _values("float32", (3,), 8)
            assert _equal(sess.run(z, {px: x, py: y}), sess.run(tf.add(x, y)))
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[4,3\] vs. \[2\]"):
                sess.run(z, {px: x, py: y[:2]})


def test_a_graph_def_of_the_old_broadcast_to_pattern_runs():
    # written by the package before AddCustom broadcast (tests/fixtures/legacy_graphs)
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "legacy_graphs", "graph_def.pb")
    graph_def = v1.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    assert "BroadcastTo" in {n.op for n in graph_def.node}
    graph = tf.Graph()
    with graph.as_default():
        v1.import_graph_def(graph_def, name="")
        x = np.array([[1.0], [2.0], [-4.0]], np.float32)
        y = np.array([10.0, 20.0, 30.0], np.float32)
        with v1.Session(graph=graph) as sess:
            got = sess.run("z_dynamic:0", {"x:0": x, "y:0": y})
            want = sess.run(tf.add(x, y))
    assert _equal(got, want)


def test_ragged_operands_through_their_flat_values():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
        ours = [tf_ge_custom.add_custom(x, x * 2.0), tf_ge_custom.add_custom(x, 0.5)]
        refs = [tf.add(x, x * 2.0), tf.add(x, 0.5)]
        with v1.Session(graph=graph) as sess:
            for got, want in zip(sess.run(ours), sess.run(refs)):
                assert _equal(got.flat_values, want.flat_values)
                assert _equal(got.row_splits, want.row_splits)


def test_composite_tensors_are_refused():
    with pytest.raises(tf_ge_custom.InputError, match="SparseTensor"):
        tf_ge_custom.add_custom(tf.SparseTensor([[0]], [1.0], [2]), 1.0)


def test_the_xla_kernel_library_is_built_where_the_wheel_allows_it():
    info = tf_ge_custom._library.build_info()["tensorflow"]
    if TF1:  # TensorFlow 1.15's wheel ships no tf2xla headers
        assert info["xla_library"] is None
        assert "ships no tf2xla headers" in info["xla_library_missing_because"]
    else:
        assert info["xla_library"] == "_lib/libtf_ge_custom_xla.so", info
        from tf_ge_custom import _xla

        assert _xla.lowering_reason() is None


_LATE_IMPORT = """
import json
import tensorflow as tf
tf.function(lambda a: a * 2.0, jit_compile=True)(tf.ones([2]))  # XLA kernels now registered
import tf_ge_custom
from tf_ge_custom import _xla
f = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True)
x, y = tf.constant([[1.5], [-2.0]]), tf.constant([0.25, 4.0, -8.0])
ops = sorted({n.op for n in f.get_concrete_function(x, y).graph.as_graph_def().node})
print(json.dumps({"reason": _xla.lowering_reason(), "ops": ops,
                  "equal": f(x, y).numpy().tolist() == tf.math.add(x, y).numpy().tolist()}))
"""


def test_without_an_xla_kernel_it_lowers_to_tf_add_under_xla(tmp_path):
    if TF1:  # no XLA library: tf.xla.experimental.compile traces in an XLA context
        graph = tf.Graph()
        with graph.as_default():
            x, y = v1.placeholder(tf.float32, [2, 1]), v1.placeholder(tf.float32, [3])
            (z,) = tf.xla.experimental.compile(lambda a, b: tf_ge_custom.add_custom(a, b), [x, y])
            ops = {n.op for n in graph.as_graph_def().node}
            with v1.Session(graph=graph) as sess:
                feed = {x: [[1.0], [2.0]], y: [1.0, 2.0, 3.0]}
                assert _equal(sess.run(z, feed), sess.run(tf.add(x, y), feed))
        assert "AddCustom" not in ops
    else:  # an XLA library, but imported after the first XLA compilation
        proc = _run(_LATE_IMPORT, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out["equal"] and "AddV2" in out["ops"] and "AddCustom" not in out["ops"]
    from tf_ge_custom import _xla

    assert TF1 == (_xla.lowering_reason() is not None)


@pytest.mark.skipif(TF1, reason="TensorFlow 1.15 has no tf.function(jit_compile=True)")
def test_jit_compile_matches_tf_add():
    ours = tf.function(lambda a, b: tf_ge_custom.add_custom(a, b), jit_compile=True)
    ref = tf.function(lambda a, b: tf.math.add(a, b), jit_compile=True)
    for xs, ys in SHAPE_PAIRS:
        x = tf.constant(_values("float32", xs, 1))
        y = tf.constant(_values("float32", ys, 2))
        assert _equal(ours(x, y).numpy(), ref(x, y).numpy())
    assert "AddCustom" in [n.op for n in ours.get_concrete_function(x, y).graph.as_graph_def().node]


def test_v1_gradients_match_tf_add():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 3])
        y = v1.placeholder(tf.float32, [3])
        ours = v1.gradients(tf.reduce_sum(tf.sin(tf_ge_custom.add_custom(x, y))), [x, y])
        ref = v1.gradients(tf.reduce_sum(tf.sin(tf.add(x, y))), [x, y])
        with v1.Session(graph=graph) as sess:
            feed = {x: _values("float32", (4, 3), 1), y: _values("float32", (3,), 2)}
            feed = {k: np.nan_to_num(v, posinf=1.0, neginf=-1.0) % 7 for k, v in feed.items()}
            got, want = sess.run([ours, ref], feed)
    for g, w in zip(got, want):
        assert _equal(g, w)


def test_configured_session_runs_add_custom_on_the_cpu():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "NPU placement needs npu_bridge", tested elsewhere
        config = tf_ge_custom.npu.session_config(precision_mode_v2="origin", graph_run_mode=0)
    names = [o.name for o in config.graph_options.rewrite_options.custom_optimizers]
    assert names == ["NpuOptimizer"]
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4])
        z = tf_ge_custom.add_custom(x, 1.5)
        with v1.Session(graph=graph, config=config) as sess:
            assert sess.run(z, {x: [0.0, 1.0, 2.0, 3.0]}).tolist() == [1.5, 2.5, 3.5, 4.5]


def test_bad_dtype_is_a_dtype_error_naming_the_set():
    with tf.Graph().as_default():
        with pytest.raises(tf_ge_custom.DTypeError, match="float32, float16, bfloat16, int32"):
            tf_ge_custom.add_custom(v1.placeholder(tf.float64, [2]), 1.0)


@pytest.mark.skipif(TF1, reason="TensorFlow 1.15 has no eager-by-default, tf.function or GradientTape use here")
def test_eager_function_and_tape_match_tf_add():
    x = tf.constant(_values("float32", (2, 3), 5))
    y = tf.constant(_values("float32", (3,), 6))
    assert _equal(tf_ge_custom.add_custom(x, y).numpy(), tf.math.add(x, y).numpy())
    f = tf.function(tf_ge_custom.add_custom,
                    input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
    assert _equal(f(x, y).numpy(), tf.math.add(x, y).numpy())
    v = tf.Variable([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf_ge_custom.add_custom(v, [[1.0], [2.0]]) ** 2)
    assert tape.gradient(loss, v).numpy().tolist() == [[10.0, 14.0, 18.0]]


def _run(code, tmpdir):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-W", "ignore", "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=str(tmpdir))


@pytest.mark.skipif(TF1, reason="TensorFlow 1.15 has no tf.saved_model.save (TF1 exports through freezing)")
def test_saved_model_reloads_in_a_fresh_process(tmp_path):
    class Adder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([None])])
        def add(self, x, y):
            return tf_ge_custom.add_custom(x, y)

    path = str(tmp_path / "sm")
    tf.saved_model.save(Adder(), path)
    proc = _run("import tensorflow as tf, tf_ge_custom\n"
                "m = tf.saved_model.load(%r)\n"
                "print(m.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])).numpy().tolist())\n" % path,
                tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[4.0, 6.0]"


@pytest.mark.skipif(TF1, reason="TensorFlow 1.15 has no Keras-3 style save/load here (TF1 exports through freezing)")
def test_keras_model_saves_and_reloads(tmp_path):
    from tf_ge_custom.layers import AddCustom

    a, b = tf.keras.Input((4,)), tf.keras.Input((4,))
    model = tf.keras.Model([a, b], tf.keras.layers.Dense(2)(AddCustom()([a, b])))
    data = [np.ones((3, 4), np.float32), np.full((3, 4), 2.0, np.float32)]
    suffix = ".keras" if not tf.__version__.startswith("2.6") else ".h5"
    path = str(tmp_path / ("m" + suffix))
    model.save(path)
    again = tf.keras.models.load_model(path)
    np.testing.assert_allclose(again.predict(data), model.predict(data), rtol=1e-6)


def test_every_module_of_the_package_imports_on_this_python():
    import pkgutil

    import importlib.util

    names = [m.name for m in pkgutil.walk_packages(tf_ge_custom.__path__, "tf_ge_custom.")]
    # The Triton kernel source itself needs triton, which has no Python 3.7 release; the
    # builder imports it only when it runs (in the toolchain environment, Python >= 3.9).
    # Every op record's kernel source, shipped or not yet (op_def.LEAKY_RELU_CUSTOM).
    from tf_ge_custom import op_def

    records = set(op_def.OPS) | {op_def.ADD_CUSTOM, op_def.LEAKY_RELU_CUSTOM}
    needs_triton = {"tf_ge_custom.kernels." + op.kernel.source[:-len(".py")] for op in records}
    assert "tf_ge_custom.kernels.add_kernel" in needs_triton
    assert needs_triton <= set(names)
    # opcheck's interpreter child is a program for the Triton interpreter's environment
    # (PyPI triton and torch), started by opcheck, never imported by the package.
    interpreter_child = "tf_ge_custom.testing._triton_child"
    assert interpreter_child in names
    has_interpreter = all(importlib.util.find_spec(m) is not None for m in ("triton", "torch"))
    failed = {}
    for name in names:
        if name.endswith("__main__") or (name in needs_triton and
                                         importlib.util.find_spec("triton") is None) or (
                name == interpreter_child and not has_interpreter):
            continue
        try:
            __import__(name)
        except Exception as e:  # report every failure, not just the first
            failed[name] = repr(e)
    assert not failed, failed


def test_doctor_runs_and_reports_json(tmp_path):
    proc = _run("import sys\nfrom tf_ge_custom.cli import main\nsys.exit(main(['doctor', '--json']))",
                tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["counts"]["FAIL"] == 0
    assert {c["name"]: c["status"] for c in report["checks"]}["op library"] == "OK"
