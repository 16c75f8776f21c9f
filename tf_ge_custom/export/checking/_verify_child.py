"""The fresh process of the verification: the frozen graph with nothing but ``tf_ge_custom``.

``python -m tf_ge_custom.export.checking._verify_child GRAPH.pb INPUTS_DIR OUTPUTS_DIR FETCH...``
imports TensorFlow and ``tf_ge_custom`` (which registers the package's ops) and nothing of the
source model, loads the GraphDef, feeds the arrays in ``INPUTS_DIR`` (written by
:func:`tf_ge_custom.export.arrays.save_arrays`, named by input node) and writes the fetched
tensors to ``OUTPUTS_DIR``. It prints nothing on success; on failure the traceback goes to
stderr and the exit status is 1.
"""
import sys


def main(argv):
    from tf_ge_custom import _lifecycle

    _lifecycle.die_with_parent()  # no verification runs on after the export was killed
    graph_path, inputs_dir, outputs_dir = argv[:3]
    fetch = argv[3:]
    import tensorflow as tf

    import tf_ge_custom  # noqa: F401  (registers the package's ops: the only thing the graph may need)
    from tf_ge_custom.export.arrays import load_arrays, save_arrays

    graph_def = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    feeds = {graph.get_tensor_by_name(name + ":0"): value for name, value in load_arrays(inputs_dir)}
    with tf.compat.v1.Session(graph=graph) as session:
        values = session.run([graph.get_tensor_by_name(n) for n in fetch], feeds)
    save_arrays(outputs_dir, list(zip(fetch, values)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
