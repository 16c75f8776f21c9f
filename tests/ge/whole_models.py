"""Real networks with AddCustom nodes, exported to frozen graphs with the package's own export,
and the table of every AddCustom node read back from each graph by TensorFlow itself.

    python tests/ge/whole_models.py OUT_DIR [MODEL ...]

writes ``OUT_DIR/<model>.pb`` (and the export record ``<model>.json``, through
``tf_ge_custom.export.export(..., to="pb")``) and ``OUT_DIR/<model>.nodes.json``: the node
table tests/ge/test_ge_whole_models.py keeps in tests/ge/fixtures/ and drives through GE in
the loop. The models (random weights, ``weights=None``: nothing is downloaded):

* ``resnet50``: ``tf.keras.applications.ResNet50``, batch 8, 224x224x3, float32; its 16
  residual ``Add`` layers become ``tf_ge_custom.layers.AddCustom`` (``clone_model``);
* ``mobilenet_v2``: ``tf.keras.applications.MobileNetV2``, batch 8, 224x224x3, under Keras'
  ``mixed_float16`` policy (float16 compute); its 10 residual adds become ``AddCustom``;
* ``transformer_encoder``: one encoder block written with ``tf_ge_custom.add_custom`` in mixed
  precision: float16 activations and biases (``[B, T, D] + [D]``, the position table
  ``[B, T, D] + [T, D]``, residuals), float32 attention mask (``[B, H, T, T] + [B, 1, 1, T]``),
  layer norms (``+ eps`` scalars, ``+ beta``) and an NCHW patch grid bias
  (``[B, D, 8, 16] + [D, 1, 1]``), int32 positions (``[T] + []``).

A node table lists, sorted by node name, each AddCustom node's name, dtype and the static
shapes of its inputs and output as TensorFlow's shape inference gives them on the frozen
graph; it is checked against the export record's own list of AddCustom nodes.
"""
import io
import json
import os
import sys

BATCH = 8


def _custom_adds(layer):
    """clone_model's clone_function: each Keras Add of two inputs becomes AddCustom."""
    import tensorflow as tf
    import tf_ge_custom.layers

    if isinstance(layer, tf.keras.layers.Add):
        return tf_ge_custom.layers.AddCustom(name=layer.name, dtype=layer.dtype_policy)
    return layer.__class__.from_config(layer.get_config())


def _application(constructor):
    import tensorflow as tf

    base = constructor(weights=None, input_shape=(224, 224, 3))
    model = tf.keras.models.clone_model(base, clone_function=_custom_adds)

    @tf.function(input_signature=[tf.TensorSpec([BATCH, 224, 224, 3], tf.float32, name="image")])
    def serve(image):
        return model(image, training=False)

    return serve


def resnet50():
    import tensorflow as tf

    return _application(tf.keras.applications.ResNet50)


def mobilenet_v2():
    import tensorflow as tf

    policy = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        return _application(tf.keras.applications.MobileNetV2)
    finally:
        tf.keras.mixed_precision.set_global_policy(policy)


def transformer_encoder(seq=128, dim=512, heads=8, ffn=2048):
    import numpy as np
    import tensorflow as tf
    import tf_ge_custom

    add = tf_ge_custom.add_custom
    rng = np.random.RandomState(0)
    f16, f32 = np.float16, np.float32

    def weight(shape, dtype):
        return tf.Variable((rng.standard_normal(shape) * 0.02).astype(dtype))

    wq, wk, wv, wo = (weight((dim, dim), f16) for _ in range(4))
    bq, bk, bv, bo = (weight((dim,), f16) for _ in range(4))
    position_table = weight((seq, dim), f16)
    w1, b1, w2, b2 = weight((dim, ffn), f16), weight((ffn,), f16), weight((ffn, dim), f16), weight((dim,), f16)
    gamma1, beta1, gamma2, beta2 = (weight((dim,), f32) for _ in range(4))
    grid_bias = weight((dim, 1, 1), f32)
    head = dim // heads

    def split(t):  # [B, T, D] -> [B, H, T, D/H]
        return tf.transpose(tf.reshape(t, [BATCH, seq, heads, head]), [0, 2, 1, 3])

    def layer_norm(t, gamma, beta):  # float32
        mean, variance = tf.nn.moments(t, axes=[-1], keepdims=True)
        inverse = tf.math.rsqrt(add(variance, tf.constant(1e-5, tf.float32)))
        return add((t - mean) * inverse * gamma, beta)

    @tf.function(input_signature=[tf.TensorSpec([BATCH, seq, dim], tf.float16, name="tokens"),
                                  tf.TensorSpec([BATCH, seq], tf.float32, name="padding")])
    def block(tokens, padding):
        positions = add(tf.range(seq, dtype=tf.int32), tf.constant(1, tf.int32))
        h = add(tokens, position_table)
        q, k, v = (split(add(tf.matmul(h, w), b)) for w, b in ((wq, bq), (wk, bk), (wv, bv)))
        scores = tf.cast(tf.matmul(q, k, transpose_b=True), tf.float32) * (head ** -0.5)
        mask = tf.reshape(padding * -1e4, [BATCH, 1, 1, seq])
        attention = tf.cast(tf.nn.softmax(add(scores, mask)), tf.float16)
        context = tf.reshape(tf.transpose(tf.matmul(attention, v), [0, 2, 1, 3]), [BATCH, seq, dim])
        attended = add(h, add(tf.matmul(context, wo), bo))
        n1 = layer_norm(tf.cast(attended, tf.float32), gamma1, beta1)
        n1h = tf.cast(n1, tf.float16)
        hidden = tf.nn.gelu(add(tf.matmul(n1h, w1), b1))
        n2 = layer_norm(tf.cast(add(n1h, add(tf.matmul(hidden, w2), b2)), tf.float32), gamma2, beta2)
        # the sequence back on its 8 x 16 patch grid, channels first, with a per-channel bias
        grid = tf.reshape(tf.transpose(n2, [0, 2, 1]), [BATCH, dim, 8, 16])
        return add(grid, grid_bias), positions

    return block


MODELS = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2,
          "transformer_encoder": transformer_encoder}


def node_table(pb_path):
    """[{name, dtype, x, y, z}] of every AddCustom node, sorted by name, read with TensorFlow."""
    import tensorflow as tf
    import tf_ge_custom  # noqa: F401  (registers AddCustom with TensorFlow)

    graph_def = tf.compat.v1.GraphDef()
    with open(pb_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    nodes = []
    for op in graph.get_operations():
        if op.type != "AddCustom":
            continue
        shapes = [t.shape for t in list(op.inputs) + list(op.outputs)]
        if not all(s.is_fully_defined() for s in shapes):
            raise ValueError("%s has a shape TensorFlow cannot infer: %s" % (op.name, shapes))
        x, y, z = (s.as_list() for s in shapes)
        nodes.append({"name": op.name, "dtype": op.inputs[0].dtype.name, "x": x, "y": y, "z": z})
    return sorted(nodes, key=lambda n: n["name"])


def export_model(name, out_dir):
    """Exports MODELS[name] to out_dir/<name>.pb with the package's export; returns its node
    table, checked against the export record's AddCustom list."""
    from tf_ge_custom import export

    prefix = os.path.join(out_dir, name)
    export.export(MODELS[name](), to="pb", output=prefix, verify=False, out=io.StringIO())
    nodes = node_table(prefix + ".pb")
    with open(prefix + ".json") as f:
        recorded = json.load(f)["add_custom_nodes"]
    listed = sorted((n["name"], n["dtype"], [list(s) for s in n["input_shapes"]]) for n in recorded)
    read = [(n["name"], n["dtype"], [n["x"], n["y"]]) for n in nodes]
    if listed != read:
        raise ValueError("the export record of %s lists other AddCustom nodes than the graph holds:"
                         "\n%s\n%s" % (name, listed, read))
    return nodes


def main(argv):
    out_dir, names = argv[0], argv[1:] or sorted(MODELS)
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        table = {"model": name, "batch": BATCH, "nodes": export_model(name, out_dir)}
        with open(os.path.join(out_dir, name + ".nodes.json"), "w") as f:
            json.dump(table, f, indent=1, sort_keys=True)
            f.write("\n")
        print("%s: %d AddCustom nodes" % (name, len(table["nodes"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
