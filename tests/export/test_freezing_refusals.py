"""What freezing refuses, and how it says so: each message names what was wrong and what is
accepted (the known signatures, tags, nodes, dtypes), before anything is written."""
import numpy as np
import pytest
import tensorflow as tf

import tf_ge_custom
from tf_ge_custom.errors import ExportError
from tf_ge_custom.export import freeze


def _write(graph_def, path):
    with open(str(path), "wb") as f:
        f.write(graph_def.SerializeToString())
    return str(path)


def _add_custom_node_def(graph_def, name, x, y, dtype):
    node = graph_def.node.add()
    node.name, node.op = name, "AddCustom"
    node.input.extend([x, y])
    node.attr["T"].type = tf.as_dtype(dtype).as_datatype_enum
    return node


def _placeholders(shapes, dtype="float32"):
    graph = tf.Graph()
    with graph.as_default():
        for name, shape in shapes.items():
            tf.compat.v1.placeholder(dtype, shape, name=name)
    return graph.as_graph_def()


def test_unknown_signature_lists_the_signatures(models):
    with pytest.raises(ExportError, match=r"no signature 'nope'; its signatures are: other, serving_default"):
        freeze(models.saved_model, signature="nope")


def test_unknown_tag_lists_the_tag_sets(models):
    with pytest.raises(ExportError, match=r"no meta graph tagged train; its tag sets are: serve"):
        freeze(models.saved_model, tags=["train"])


def test_chosen_signature_is_exported(models):
    with freeze(models.saved_model, signature="other") as frozen:
        assert [t.key for t in frozen.record.outputs] == ["aux", "out"]
        assert "signature other" in frozen.record.source


def test_checkpoint_needs_output_names(models):
    with pytest.raises(ExportError, match="needs the output node names: --outputs"):
        freeze(models.meta)


def test_unknown_output_node_is_named_with_similar_ones(models):
    with pytest.raises(ExportError, match=r"output zz is not in the meta graph; similar names: z"):
        freeze(models.meta, outputs=["zz"])


def test_missing_model_and_unknown_files(tmp_path):
    with pytest.raises(ExportError, match="model not found: .*nothing.*expected a SavedModel directory"):
        freeze(str(tmp_path / "nothing"))
    with pytest.raises(ExportError, match="directory without saved_model.pb"):
        freeze(str(tmp_path))
    (tmp_path / "m.onnx").write_bytes(b"x")
    with pytest.raises(ExportError, match="unknown model file type"):
        freeze(str(tmp_path / "m.onnx"))
    (tmp_path / "m.meta").write_bytes(b"x")
    with pytest.raises(ExportError, match=r"checkpoint .*m not found: expected .*m.index"):
        freeze(str(tmp_path / "m.meta"), outputs=["z"])


def test_options_of_another_kind_are_refused(models):
    with pytest.raises(ExportError, match="--signature applies to saved model, not to a keras model"):
        freeze(models.keras, signature="serving_default")
    with pytest.raises(ExportError, match="--outputs applies to checkpoint and frozen pb, not to a saved model"):
        freeze(models.saved_model, outputs=["z"])


def test_a_file_that_is_not_a_graph_def(tmp_path):
    (tmp_path / "bad.pb").write_bytes(b"\xff\xff\xff not a protobuf")
    with pytest.raises(ExportError, match="is not a binary GraphDef"):
        freeze(str(tmp_path / "bad.pb"))


def test_an_op_unknown_to_tensorflow_is_named(tmp_path):
    graph_def = _placeholders({"x": [2]})
    node = graph_def.node.add()
    node.name, node.op = "mystery", "NoSuchOpAnywhere"
    node.input.append("x")
    with pytest.raises(ExportError, match=r"op NoSuchOpAnywhere is not known to this TensorFlow \(node mystery\)"):
        freeze(_write(graph_def, tmp_path / "g.pb"), outputs=["mystery"])


def test_add_custom_dtype_outside_the_op_definition_is_refused(tmp_path):
    graph_def = _placeholders({"x": [2], "y": [2]}, "float64")
    _add_custom_node_def(graph_def, "add", "x", "y", "float64")
    with pytest.raises(ExportError, match=r"AddCustom node add has dtype float64; AddCustom supports "
                                          r"float32, float16, bfloat16, int32"):
        freeze(_write(graph_def, tmp_path / "g.pb"))


def test_add_custom_input_shapes_are_judged_by_tensorflows_shape_function(tmp_path):
    # [2, 3] + [4, 3]: neither equal nor broadcastable, so the registered shape function
    # refuses it whichever rule (equal shapes or broadcasting) the op has.
    graph_def = _placeholders({"x": [2, 3], "y": [4, 3]})
    _add_custom_node_def(graph_def, "add", "x", "y", "float32")
    with pytest.raises(ExportError, match="TensorFlow refuses the frozen graph"):
        freeze(_write(graph_def, tmp_path / "g.pb"))
    # the same node on shapes the op accepts passes
    good = _placeholders({"x": [2, 3], "y": [2, 3]})
    _add_custom_node_def(good, "add", "x", "y", "float32")
    with freeze(_write(good, tmp_path / "ok.pb")) as frozen:
        assert frozen.record.add_custom_nodes == (("add", "float32", ((2, 3), (2, 3))),)


def test_a_graph_with_variables_is_not_frozen(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.Variable([1.0, 2.0], name="v")
        tf.identity(tf_ge_custom.add_custom(v, v), name="z")
    with pytest.raises(ExportError, match=r"still holds variables \(v"):
        freeze(_write(graph.as_graph_def(), tmp_path / "g.pb"))


def test_unknown_output_of_a_frozen_pb(models):
    with pytest.raises(ExportError, match="output nope:0 is not a tensor of the graph"):
        freeze(models.pb, outputs=["nope"])


def test_function_without_signature_needs_one():
    @tf.function
    def f(x):
        return tf_ge_custom.add_custom(x, x)

    with pytest.raises(ExportError, match="give the tf.function an input_signature"):
        freeze(f)
    with freeze(f.get_concrete_function(tf.TensorSpec([3], tf.int32, name="n"))) as frozen:
        out = frozen.reference_outputs({"n": np.array([1, 2, 3], np.int32)})
    np.testing.assert_array_equal(out[0], [2, 4, 6])
