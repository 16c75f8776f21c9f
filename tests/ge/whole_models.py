"""Real networks with the package's ops, exported to frozen graphs with the package's own
export, and the table of every node of those ops read back from each graph by TensorFlow itself.

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
  (``[B, D, 8, 16] + [D, 1, 1]``), int32 positions (``[T] + []``);
* ``darknet_stage``: both ops, ``AddCustom`` and ``LeakyReluCustom``: a residual stage of
  Darknet-53 (:func:`darknet_stage`), written as TensorFlow 2's SavedModel writes a graph.

A node table lists, sorted by node name, each node's name, dtype and the static shapes of its
inputs and output (``x``, ``y``, ``z``; one-input ops ``x`` and ``z``) as TensorFlow's shape
inference gives them on the frozen graph; in a table of several ops each node also names its
``op`` and carries each attribute its NodeDef holds (a node without one gets its default in
GE). It is checked against the export record's own list of the package's nodes. A model of an
op the package does not ship yet (``op_def.OPS``) cannot be exported: it is named and left
out, and its table in tests/ge/fixtures/ is the one worked out by hand
(tests/ge/test_ge_whole_models.py).
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


def darknet_stage(size=52, channels=128, blocks=2):
    """A residual stage of Darknet-53 (YOLOv3's backbone: the 52 x 52 stage of a 416 x 416
    image), batch 8, float16 (mixed precision), with both ops: each block a 1x1 convolution to
    half the channels and a 3x3 one back, each followed by its bias (``AddCustom`` of
    ``[B, H, W, C] + [C]``) and ``LeakyReluCustom`` at Darknet's alpha 0.1, then the residual
    ``AddCustom``. Two heads: float32 at the default alpha, bfloat16 at alpha -0.5 (the slope of
    an odd activation). Every node is named (``block<i>_conv<k>_bias``, ``..._leaky``,
    ``block<i>_residual``, ``head_float32``, ``head_bfloat16``). Exported, the graph is written
    as TensorFlow 2's SavedModel writes every graph (``tf.saved_model.save`` always strips
    default-valued attributes): the default-alpha node carries no alpha."""
    import numpy as np
    import tensorflow as tf
    import tf_ge_custom

    add, leaky = tf_ge_custom.add_custom, tf_ge_custom.leaky_relu_custom
    rng = np.random.RandomState(0)

    def weight(shape):
        return tf.Variable((rng.standard_normal(shape) * 0.02).astype(np.float16))

    convs = [(weight((1, 1, channels, channels // 2)), weight((channels // 2,)),
              weight((3, 3, channels // 2, channels)), weight((channels,))) for _ in range(blocks)]

    def conv(t, kernel, bias, name):
        z = add(tf.nn.conv2d(t, kernel, strides=1, padding="SAME"), bias, name=name + "_bias")
        return leaky(z, alpha=0.1, name=name + "_leaky")

    @tf.function(input_signature=[tf.TensorSpec([BATCH, size, size, channels], tf.float16, name="features")])
    def stage(features):
        x = features
        for i, (k1, b1, k3, b3) in enumerate(convs):
            h = conv(conv(x, k1, b1, "block%d_conv1" % i), k3, b3, "block%d_conv3" % i)
            x = add(x, h, name="block%d_residual" % i)
        return (leaky(tf.cast(x, tf.float32), name="head_float32"),
                leaky(tf.cast(x, tf.bfloat16), alpha=-0.5, name="head_bfloat16"))

    return stage


MODELS = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2,
          "transformer_encoder": transformer_encoder, "darknet_stage": darknet_stage}
# The op types of each model's table (AddCustom's alone unless named here).
MODEL_OPS = {"darknet_stage": ("AddCustom", "LeakyReluCustom")}
# The models whose frozen graph is written as a TF2 SavedModel writes it (default-valued
# attributes stripped).
STRIPPED = ("darknet_stage",)


def model_ops(name):
    return MODEL_OPS.get(name, ("AddCustom",))


def unshipped_ops(name):
    """The op types of the model that op_def.OPS does not hold (the package cannot export it)."""
    from tf_ge_custom import op_def

    shipped = set(op.type_name for op in op_def.OPS)
    return [t for t in model_ops(name) if t not in shipped]


def node_table(pb_path, op_types=("AddCustom",)):
    """[{name, dtype, x, y, z}] of every node of op_types, sorted by name, read with
    TensorFlow: shapes from its shape inference, attributes from the NodeDefs as written
    (several op types: each node also names its ``op``; one-input ops have no ``y``)."""
    import tensorflow as tf
    import tf_ge_custom  # noqa: F401  (registers the ops with TensorFlow)
    from tf_ge_custom import op_def

    graph_def = tf.compat.v1.GraphDef()
    with open(pb_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    node_defs = dict((n.name, n) for n in graph_def.node)
    graph = tf.Graph()
    with graph.as_default():
        # a copy: the importer adds the default-valued attributes to the NodeDefs it is given
        imported = tf.compat.v1.GraphDef()
        imported.CopyFrom(graph_def)
        tf.import_graph_def(imported, name="")
    nodes = []
    for op in graph.get_operations():
        if op.type not in op_types:
            continue
        shapes = [t.shape for t in list(op.inputs) + list(op.outputs)]
        if not all(s.is_fully_defined() for s in shapes):
            raise ValueError("%s has a shape TensorFlow cannot infer: %s" % (op.name, shapes))
        node = {"name": op.name, "dtype": op.inputs[0].dtype.name}
        if len(op_types) > 1:
            node["op"] = op.type
        node.update(zip(("x", "y"), [s.as_list() for s in shapes[:len(op.inputs)]]))
        node["z"] = shapes[-1].as_list()
        written = node_defs[op.name].attr
        for attr in op_def.get(op.type).attrs:
            if attr.name in written:
                node[attr.name] = written[attr.name].f if attr.type == "float" else written[attr.name].i
        nodes.append(node)
    return sorted(nodes, key=lambda n: n["name"])


def _strip_default_attrs(pb_path):
    """Rewrites the frozen graph without its default-valued attributes, as tf.saved_model.save
    writes every graph (meta_graph.strip_graph_default_valued_attrs)."""
    import tensorflow as tf

    graph_def = tf.compat.v1.GraphDef()
    with open(pb_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    with tf.Graph().as_default():
        stripped = tf.compat.v1.train.export_meta_graph(graph_def=graph_def, strip_default_attrs=True)
    with open(pb_path, "wb") as f:
        f.write(stripped.graph_def.SerializeToString())


def export_model(name, out_dir):
    """Exports MODELS[name] to out_dir/<name>.pb with the package's export; returns its node
    table, checked against the export record's list of the package's nodes."""
    from tf_ge_custom import export

    prefix = os.path.join(out_dir, name)
    export.export(MODELS[name](), to="pb", output=prefix, verify=False, out=io.StringIO())
    if name in STRIPPED:
        _strip_default_attrs(prefix + ".pb")
    nodes = node_table(prefix + ".pb", model_ops(name))
    with open(prefix + ".json") as f:
        recorded = json.load(f)["add_custom_nodes"]
    listed = sorted((n["name"], n["dtype"], [list(s) for s in n["input_shapes"]]) for n in recorded)
    read = dict((n["name"], (n["name"], n["dtype"], [n[k] for k in ("x", "y") if k in n])) for n in nodes)
    # every node the record lists is in the table as listed, and every AddCustom node is listed
    wrong = [r for r in listed if read.get(r[0]) != r]
    unlisted = [n["name"] for n in nodes if n.get("op", "AddCustom") == "AddCustom"
                and n["name"] not in set(r[0] for r in listed)]
    if wrong or unlisted:
        raise ValueError("the export record of %s lists other nodes than the graph holds: %s; "
                         "not listed: %s" % (name, wrong, unlisted))
    return nodes


def main(argv):
    out_dir, names = argv[0], argv[1:]
    if not names:
        for name in sorted(MODELS):
            missing = unshipped_ops(name)
            if missing:
                print("%s: left out: this package does not ship %s (op_def.OPS)" % (name, ", ".join(missing)))
            else:
                names.append(name)
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        table = {"model": name, "batch": BATCH, "nodes": export_model(name, out_dir)}
        with open(os.path.join(out_dir, name + ".nodes.json"), "w") as f:
            json.dump(table, f, indent=1, sort_keys=True)
            f.write("\n")
        print("%s: %d nodes of %s" % (name, len(table["nodes"]), ", ".join(model_ops(name))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
