"""The AIR tool's command line: a frozen ``.pb`` to an ``.air`` graph.

``tf_ge_custom_air_tool`` (``ge_ops/export/air_tool.cc``, built with the package when a CANN
toolkit is present) parses the GraphDef with ``ge::aclgrphParseTensorFlow``, passing the
input shapes (``input_shape``) and the output tensors (``out_nodes``) as parser options, and
writes the graph with ``ge::Graph::SaveToFile``; ``atc --framework=1`` then compiles it.

    tf_ge_custom_air_tool --model M.pb --output M.air [--input-shape "x:8,3;y:3"] [--out-nodes "z:0"]
"""
from tf_ge_custom.export.cann_tools.input_shapes import format_shapes


def air_tool_command(tool, pb, air, input_shapes=None, out_nodes=None):
    cmd = [tool, "--model", pb, "--output", air]
    if input_shapes:
        cmd += ["--input-shape", format_shapes(input_shapes)]
    if out_nodes:
        cmd += ["--out-nodes", ";".join(out_nodes)]
    return cmd
