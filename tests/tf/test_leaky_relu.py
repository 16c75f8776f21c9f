"""LeakyReluCustom, the second op, as the installed package ships it: ``leaky_relu_custom``
(eager, ``tf.function``, XLA, a TF1 session, gradients, the CPU kernel's own functor) against
the oracle, ``tf.nn.leaky_relu`` and ``tf.raw_ops.LeakyReluGrad``, compared bit for bit (every
float16 and bfloat16 bit pattern, float32's special values and random bits; alpha 0, 1,
negative, above 1, -0.0, NaN, infinities, a denormal).

``test_every_shipped_op_beyond_add_custom_matches_its_oracle`` runs the comparisons over every
op the installed build ships beyond AddCustom (each needs its oracle in ``ORACLES``).
"""
import numpy as np
import pytest
import tensorflow as tf

from tf_ge_custom import op_def

pytestmark = pytest.mark.kind("oracle")

DTYPES = ("float32", "float16", "bfloat16")
ALPHAS = (0.2, 0.0, 1.0, -0.5, 3.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e-40, 0.1)
# the TensorFlow oracle of each op beyond AddCustom: f(x, **attrs) and its gradient
ORACLES = {"LeakyReluCustom": (
    lambda x, alpha: tf.nn.leaky_relu(x, alpha=alpha),
    lambda dy, x, alpha: tf.raw_ops.LeakyReluGrad(gradients=dy, features=x, alpha=alpha))}
_UINT = {"float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16}


def _inputs():
    """Every float16 and bfloat16 bit pattern; float32's special values and random bits."""
    every16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    special = np.array([0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 1e-39, -1e-39, 3.4e38, -3.4e38,
                        np.inf, -np.inf, np.nan, -np.nan], np.float32).view(np.uint32)
    payloads = np.array([0x7fc00001, 0xffc12345, 0x7f800001, 0xff800fff], np.uint32)  # NaNs
    rand = np.random.RandomState(35).randint(0, 1 << 32, size=50000, dtype=np.uint64)
    f32 = np.concatenate([special, payloads, rand.astype(np.uint32)])
    return {"float32": f32, "float16": every16, "bfloat16": every16}


def _as_tensor(bits, dtype):
    return tf.bitcast(tf.constant(bits), tf.as_dtype(dtype))


def _bits(t):
    t = tf.convert_to_tensor(t)
    return tf.bitcast(t, tf.uint32 if t.dtype == tf.float32 else tf.uint16).numpy()


@pytest.fixture(scope="module")
def computed():
    """What the installed package's leaky_relu_custom computes: (arrays as bits, report)."""
    from tf_ge_custom import _library, errors, ops

    f = ops.leaky_relu_custom
    inputs = _inputs()
    results, report = {}, {"functions": ops.FUNCTIONS,
                           "xla_ops": _library.build_info()["tensorflow"]["xla_ops"]}
    traced = tf.function(lambda x, alpha: f(x, alpha=alpha))
    jitted = tf.function(lambda x, alpha: f(x, alpha=alpha), jit_compile=True)
    for dtype in DTYPES:
        x = _as_tensor(inputs[dtype], dtype)
        for i, alpha in enumerate(ALPHAS):
            results["eager/%s/%d" % (dtype, i)] = f(x, alpha=alpha)
            results["function/%s/%d" % (dtype, i)] = traced(x, alpha)
            results["xla/%s/%d" % (dtype, i)] = jitted(x, alpha)
            dy = tf.cast(tf.range(tf.size(x)) % 7 - 3, x.dtype)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x, alpha=alpha)
            results["grad/%s/%d" % (dtype, i)] = tape.gradient(y, x, output_gradients=dy)
        results["default/%s" % dtype] = f(x)
        graph = tf.compat.v1.Graph()
        with graph.as_default():
            p = tf.compat.v1.placeholder(tf.as_dtype(dtype), [None])
            y = f(p, alpha=-0.5, name="lrelu")
            g = tf.compat.v1.gradients(y, p)[0]
            report["tf1_node/" + dtype] = [y.op.type, y.op.name, y.op.get_attr("alpha")]
            with tf.compat.v1.Session(graph=graph) as s:
                results["tf1/%s" % dtype], results["tf1_grad/%s" % dtype] = s.run(
                    [y, g], {p: x.numpy()})
    # what is refused, and how
    for label, call in [("int32", lambda: f(tf.constant([1, -2]))),
                        ("float64", lambda: f(np.array([1.0, -2.0]))),
                        ("string_alpha", lambda: f([1.0], alpha="0.1")),
                        ("tensor_alpha", lambda: f([1.0], alpha=tf.constant(0.1))),
                        ("none", lambda: f(None)),
                        ("sparse", lambda: f(tf.sparse.from_dense([1.0, 0.0])))]:
        try:
            call()
            report[label] = None
        except errors.TfGeCustomError as e:
            report[label] = [type(e).__name__, str(e)]
    report["numpy_alpha"] = f(np.float32([-2.0]), alpha=np.float64(0.25)).numpy().tolist()
    report["array_alpha"] = f([-2.0], alpha=np.array(0.5)).numpy().tolist()
    report["int_alpha"] = f([-2.0], alpha=2).numpy().tolist()
    report["ragged"] = f(tf.ragged.constant([[-1.0, 2.0], [-4.0]]), alpha=0.5).to_list()
    with tf.Graph().as_default():
        y = f([[1.0, -1.0]], alpha=0.5, name="named")
        report["graph_name"] = y.op.name
        report["shape"] = y.shape.as_list()
        report["grad_registered"] = tf.compat.v1.gradients(y, y.op.inputs[0])[0].op.type
    import inspect
    report["signature"] = str(inspect.signature(f))
    return {k: _bits(v) for k, v in results.items()}, report


@pytest.mark.parametrize("dtype", DTYPES)
def test_eager_and_traced_results_are_tf_nn_leaky_relus_bit_for_bit(computed, dtype):
    arrays, _ = computed
    x = _as_tensor(_inputs()[dtype], dtype)
    traced = tf.function(lambda x, alpha: tf.nn.leaky_relu(x, alpha=alpha))
    for i, alpha in enumerate(ALPHAS):
        expected = _bits(tf.nn.leaky_relu(x, alpha=alpha))
        np.testing.assert_array_equal(arrays["eager/%s/%d" % (dtype, i)], expected,
                                      err_msg="eager, alpha %r" % alpha)
        np.testing.assert_array_equal(arrays["function/%s/%d" % (dtype, i)],
                                      _bits(traced(x, alpha)), err_msg="tf.function, alpha %r" % alpha)
    np.testing.assert_array_equal(arrays["default/" + dtype], _bits(tf.nn.leaky_relu(x)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_under_xla_the_results_are_xlas_leaky_relus(computed, dtype):
    arrays, report = computed
    assert "LeakyReluCustom" in report["xla_ops"]  # its own XLA kernel, not the lowering
    x = _as_tensor(_inputs()[dtype], dtype)
    jitted = tf.function(lambda x, alpha: tf.nn.leaky_relu(x, alpha=alpha), jit_compile=True)
    for i, alpha in enumerate(ALPHAS):
        np.testing.assert_array_equal(arrays["xla/%s/%d" % (dtype, i)], _bits(jitted(x, alpha)),
                                      err_msg="XLA, alpha %r" % alpha)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_are_leaky_relu_grads_bit_for_bit(computed, dtype):
    arrays, _ = computed
    x = _as_tensor(_inputs()[dtype], dtype)
    dy = tf.cast(tf.range(tf.size(x)) % 7 - 3, x.dtype)
    for i, alpha in enumerate(ALPHAS):
        expected = tf.raw_ops.LeakyReluGrad(gradients=dy, features=x, alpha=alpha)
        with tf.GradientTape() as tape:  # and TensorFlow's own gradient of tf.nn.leaky_relu
            tape.watch(x)
            y = tf.nn.leaky_relu(x, alpha=alpha)
        np.testing.assert_array_equal(_bits(tape.gradient(y, x, output_gradients=dy)),
                                      _bits(expected))
        np.testing.assert_array_equal(arrays["grad/%s/%d" % (dtype, i)], _bits(expected),
                                      err_msg="gradient, alpha %r" % alpha)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tf1_session_runs_the_node_and_its_gradient(computed, dtype):
    arrays, report = computed
    assert report["tf1_node/" + dtype] == ["LeakyReluCustom", "lrelu", -0.5]
    x = _as_tensor(_inputs()[dtype], dtype)
    np.testing.assert_array_equal(arrays["tf1/" + dtype], _bits(tf.nn.leaky_relu(x, alpha=-0.5)))
    dy = tf.ones_like(x)
    np.testing.assert_array_equal(arrays["tf1_grad/" + dtype], _bits(
        tf.raw_ops.LeakyReluGrad(gradients=dy, features=x, alpha=-0.5)))


def test_the_function_is_made_from_the_record(computed):
    _, report = computed
    # a function per op of the records, in their order (an op added to them included)
    assert report["functions"] == [op.python_name for op in op_def.OPS]
    assert report["functions"][:2] == ["add_custom", "leaky_relu_custom"]
    assert report["signature"] == "(x, alpha=0.2, name=None)"
    assert report["graph_name"] == "named"
    assert report["shape"] == [1, 2]
    assert report["grad_registered"] == "LeakyReluGrad"
    assert report["numpy_alpha"] == [-0.5] and report["array_alpha"] == [-1.0]
    assert report["int_alpha"] == [-4.0]
    assert report["ragged"] == [[-0.5, 2.0], [-2.0]]


@pytest.mark.parametrize("label,kind,text", [
    ("int32", "DTypeError", "leaky_relu_custom: dtype int32 is not supported; supported dtypes: "
                            "float32, float16, bfloat16 (cast with tf.cast)"),
    ("float64", "DTypeError", "leaky_relu_custom: dtype float64 is not supported; supported "
                              "dtypes: float32, float16, bfloat16 (cast with tf.cast)"),
    ("string_alpha", "InputError", "leaky_relu_custom: attribute alpha must be a Python or "
                                   "NumPy real scalar, got a str ('0.1')"),
    ("tensor_alpha", "InputError", "leaky_relu_custom: attribute alpha must be a Python or "
                                   "NumPy real scalar, got a tensor of shape () (an "
                                   "attribute is fixed when the graph is built; a tensor "
                                   "cannot be one)"),
    ("none", "InputError", "leaky_relu_custom: argument x (a NoneType) cannot be converted"),
    ("sparse", "InputError", "leaky_relu_custom: argument x is a SparseTensor;"),
])
def test_bad_arguments_are_refused_in_one_line_naming_what_is_accepted(computed, label, kind, text):
    _, report = computed
    assert report[label][0] == kind
    assert report[label][1].startswith(text) and "\n" not in report[label][1]


def test_the_own_functor_gives_tf_nn_leaky_relus_numbers(monkeypatch):
    """The CPU kernel's own functor (what a TensorFlow without a LeakyRelu kernel for the dtype
    runs; TF_GE_CUSTOM_OWN_CPU_FUNCTORS=1 makes it compute every node whose kernel is made
    while it is set: here, the nodes of a new TF1 session): every bit for float32; for
    float16 and bfloat16 every number and where the NaNs are, but not a NaN's payload and sign
    (Eigen's portable half and bfloat16 conversions make every NaN the one quiet NaN, where
    TensorFlow's vectorised kernel keeps the payload: docs/tensorflow-op.md)."""
    from tf_ge_custom import ops

    monkeypatch.setenv("TF_GE_CUSTOM_OWN_CPU_FUNCTORS", "1")
    inputs = _inputs()
    for dtype in DTYPES:
        x = _as_tensor(inputs[dtype], dtype)
        feed = x.numpy()
        graph = tf.compat.v1.Graph()
        with graph.as_default():
            p = tf.compat.v1.placeholder(tf.as_dtype(dtype), [None])
            ys = [tf.bitcast(ops.leaky_relu_custom(p, alpha=alpha),
                             tf.uint32 if dtype == "float32" else tf.uint16) for alpha in ALPHAS]
            with tf.compat.v1.Session(graph=graph) as s:
                ours_all = s.run(ys, {p: feed})
        for alpha, ours in zip(ALPHAS, ours_all):
            expected = tf.nn.leaky_relu(x, alpha=alpha)
            if dtype == "float32":
                np.testing.assert_array_equal(ours, _bits(expected), err_msg="alpha %r" % alpha)
                continue
            nan = np.isnan(tf.cast(expected, tf.float32).numpy())
            ours_nan = np.isnan(tf.cast(tf.bitcast(tf.constant(ours), tf.as_dtype(dtype)),
                                        tf.float32).numpy())
            np.testing.assert_array_equal(ours_nan, nan, err_msg="%s alpha %r" % (dtype, alpha))
            np.testing.assert_array_equal(ours[~nan], _bits(expected)[~nan],
                                          err_msg="%s alpha %r" % (dtype, alpha))
    # the switch did make the own functor run: its NaNs are the one quiet NaN, where
    # TensorFlow's kernel kept the input's payloads (float16 has NaNs of many payloads)
    nan_bits = set(ours_all[0][np.isnan(tf.cast(tf.bitcast(tf.constant(ours_all[0]), tf.bfloat16),
                                                tf.float32).numpy())].tolist())
    assert len(nan_bits) <= 2, sorted(nan_bits)[:5]


def test_every_shipped_op_beyond_add_custom_matches_its_oracle():
    """In this process, over the installed build's ops this module has an oracle for:
    LeakyReluCustom once it ships (an op added to the records brings its own tests)."""
    import tf_ge_custom

    checked = []
    for op in op_def.OPS:
        if op.type_name not in ORACLES:
            continue
        function, gradient = ORACLES[op.type_name]
        ours = getattr(tf_ge_custom, op.python_name)
        for dtype in op.dtypes:
            x = _as_tensor(_inputs()[dtype], dtype)
            dy = tf.cast(tf.range(tf.size(x)) % 7 - 3, x.dtype)
            for alpha in ALPHAS:
                np.testing.assert_array_equal(_bits(ours(x, alpha=alpha)),
                                              _bits(function(x, alpha)))
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = ours(x, alpha=alpha)
                np.testing.assert_array_equal(_bits(tape.gradient(y, x, output_gradients=dy)),
                                              _bits(gradient(dy, x, alpha)))
        checked.append(op.type_name)
    assert checked == [op.type_name for op in op_def.OPS if op.type_name in ORACLES] == ["LeakyReluCustom"]


def test_a_meaning_is_derived_from_the_records_equivalent():
    """An op without a hand-written meaning takes its record's equivalent: under XLA that
    function, and its gradient, through a GradientTape over the node's inputs and attributes
    (here on a LeakyRelu node, whose attribute has the record's name): TensorFlow's own."""
    from tf_ge_custom import _op_meanings
    from tf_ge_custom.errors import OpLibraryError

    derived = op_def.LEAKY_RELU_CUSTOM._replace(type_name="LeakyReluDerived")
    meaning = _op_meanings.meaning_of(derived)
    assert meaning is not _op_meanings.MEANINGS["LeakyReluCustom"]
    x = _as_tensor(_inputs()["float16"], "float16")
    np.testing.assert_array_equal(_bits(meaning.equivalent(x, alpha=-0.5)), _bits(tf.nn.leaky_relu(x, alpha=-0.5)))
    graph = tf.Graph()
    with graph.as_default():
        p = tf.compat.v1.placeholder(tf.float16, [None])
        y = tf.nn.leaky_relu(p, alpha=3.0)
        dy = tf.cast(tf.range(tf.size(p)) % 7 - 3, tf.float16)
        (ours,) = meaning.gradient(y.op, dy)
        (theirs,) = tf.compat.v1.gradients(y, p, grad_ys=dy)
        with tf.compat.v1.Session(graph=graph) as s:
            a, b = s.run([ours, theirs], {p: x.numpy()})
    np.testing.assert_array_equal(a.view(np.uint16), b.view(np.uint16))
    none = _op_meanings.meaning_of(derived._replace(equivalent=""))
    assert none.equivalent is None and none.gradient is None
    with pytest.raises(OpLibraryError, match=r"^the op record's equivalent tf\.math\.no_such_op is not in "
                                             r"TensorFlow .* \(no tf\.math\.no_such_op\)$"):
        _op_meanings.meaning_of(derived._replace(equivalent="tf.math.no_such_op"))
    with pytest.raises(OpLibraryError, match="is not a TensorFlow function's public name"):
        _op_meanings.meaning_of(derived._replace(equivalent="numpy.square"))
