"""Verification in a fresh process: the written .pb, with only tf_ge_custom imported, must
give the source model's outputs; a difference, or a graph that cannot run there, fails."""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.errors import VerificationError
from tf_ge_custom.export import freeze
from tf_ge_custom.export.arrays import sample_inputs
from tf_ge_custom.export.checking.verify import verify


def _write(frozen, path):
    with open(str(path), "wb") as f:
        f.write(frozen.serialized())
    return str(path)


def test_a_model_with_its_own_python_layer_verifies_without_it(tmp_path):
    # The layer class exists only in this test process: the fresh process cannot import it,
    # so the frozen graph passes only if it needs nothing but TensorFlow and tf_ge_custom.
    @tf.keras.utils.register_keras_serializable(package="test_export_only")
    class TimesThree(tf.keras.layers.Layer):
        def call(self, x):
            return x * 3.0

    a, b = tf.keras.Input((3,), name="a"), tf.keras.Input((3,), name="b")
    model = tf.keras.Model([a, b], TimesThree()(tf_ge_custom.layers.AddCustom()([a, b])))
    path = str(tmp_path / "m.keras")
    model.save(path)
    with freeze(path) as frozen:
        result = verify(frozen, _write(frozen, tmp_path / "m.pb"))
    assert result.ok and [c.name for c in result.comparisons] == [model.output_names[0]]
    x, y = result.inputs["a"], result.inputs["b"]
    assert x.shape == (2, 3)  # the unknown batch dim got a size
    assert result.comparisons[0].max_error == 0.0
    np.testing.assert_allclose(model([x, y]).numpy(), (x + y) * 3.0, rtol=1e-6)


def _tampered(frozen, v2, tmp_path):
    """The frozen graph with its folded variable v = [1.5, -2, 3] made [1.5, -2, v2], written."""
    tampered = type(frozen.graph_def)()
    tampered.CopyFrom(frozen.graph_def)
    for node in tampered.node:
        if node.op == "Const" and tf.make_ndarray(node.attr["value"].tensor).tolist() == [1.5, -2.0, 3.0]:
            node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(np.array([1.5, -2.0, v2], np.float32)))
    path = str(tmp_path / "tampered.pb")
    with open(path, "wb") as f:
        f.write(tampered.SerializeToString())
    return path


def test_a_graph_that_differs_from_its_source_fails_with_the_max_error(models, tmp_path):
    with freeze(models.saved_model) as frozen:
        path = _tampered(frozen, 3.5, tmp_path)
        inputs = sample_inputs(frozen.record.inputs)  # what verify generates (seeded)
        with pytest.raises(VerificationError) as info:
            verify(frozen, path)
    lines = str(info.value).splitlines()
    out = [l for l in lines if l.strip().startswith("out ")][0]
    aux = [l for l in lines if l.strip().startswith("aux ")][0]
    expected = float(np.max(np.abs(inputs["a"][:, 2] + inputs["b"][2]) * 0.5))
    assert "DIFFERS" in out and "max |error| = %-12.6g" % expected in out
    assert aux.rstrip().endswith("OK")


def test_a_graph_that_cannot_run_in_the_fresh_process_fails(models, tmp_path):
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named tf_ge_custom' >&2\nexit 1\n")
    fake_python.chmod(0o755)
    with freeze(models.pb) as frozen:
        with pytest.raises(VerificationError, match="(?s)does not run in a fresh process.*exit 1.*No module named"):
            verify(frozen, models.pb, python=str(fake_python))


def test_a_relative_difference_of_1e_4_fails_a_float32_graph(models, tmp_path):
    # Far beyond any evaluation-order difference of float32 (64 eps is 7.6e-6), far within a
    # loosened 1e-2: the frozen graph's out differs from its source by 1e-4 of its value.
    eps = float(np.finfo(np.float32).eps)
    with freeze(models.saved_model) as frozen:
        path = _tampered(frozen, 3.0 * (1 + 1e-4), tmp_path)
        with pytest.raises(VerificationError) as info:
            verify(frozen, path)
        same = verify(frozen, _write(frozen, tmp_path / "same.pb"))
    out = [l for l in str(info.value).splitlines() if l.strip().startswith("out ")][0]
    assert "DIFFERS" in out and "(beyond rtol %g, atol %g)" % (64 * eps, 64 * eps) in out, out
    assert same.ok and all(c.max_error == 0.0 for c in same.comparisons)
