"""ATC's --input_shape derived from the recorded inputs, the checks ATC would make minutes
later, and the exact command lines of atc, the AIR tool and the OM runner."""
import pytest

from tf_ge_custom.errors import ExportError, ExternalToolError
from tf_ge_custom.export import om_runner
from tf_ge_custom.export.cann_tools import air_tool
from tf_ge_custom.export.cann_tools import atc
from tf_ge_custom.export.cann_tools import input_shapes as shapes
from tf_ge_custom.export.graph_record import TensorInfo

X = TensorInfo("x", "float32", (8, 2048))
Y = TensorInfo("y", "float32", (2048,))
BATCH = TensorInfo("b", "float16", (None, 16))
SCALAR = TensorInfo("s", "int32", ())
UNRANKED = TensorInfo("u", "float32", None)


def text(infos, user=None, options=None):
    return shapes.format_shapes(shapes.resolve_input_shapes(infos, user, options))


def test_shapes_come_from_the_record():
    assert text([X, Y, SCALAR]) == "x:8,2048;y:2048;s:"


@pytest.mark.parametrize("info, shown", [(BATCH, r"shape \[\?, 16\] has unknown dims"),
                                         (UNRANKED, "its rank is unknown")])
def test_unknown_dims_are_refused_naming_the_input_and_the_fixes(info, shown):
    with pytest.raises(ExportError) as e:
        text([X, info])
    message = str(e.value)
    assert message.startswith("input %s: " % info.name)
    assert shown.replace("\\", "") in message.replace("\\", "") or info.shape is None
    for option in ("--input-shape", "--dynamic-batch-size", "--dynamic-dims"):
        assert option in message


def test_user_shape_fixes_unknown_dims_and_is_checked_against_the_record():
    assert text([X, BATCH], "b:4,16") == "x:8,2048;b:4,16"
    assert text([BATCH], "b:1~8,16") == "b:1~8,16"
    with pytest.raises(ExportError, match="names z, which is not an input of the graph; its inputs are: x, b"):
        text([X, BATCH], "z:1")
    with pytest.raises(ExportError, match="gives b 1 dims, but the graph's b has rank 2"):
        text([BATCH], "b:4")
    with pytest.raises(ExportError, match="gives b dim 1 = 8, but the graph fixes it to 16"):
        text([BATCH], "b:4,8")
    with pytest.raises(ExportError, match="is not a size, -1 or a range"):
        text([BATCH], "b:4,x")
    with pytest.raises(ExportError, match="each input is NAME:DIMS"):
        text([BATCH], "4,16")


def test_dynamic_batch_keeps_minus_one_and_is_checked():
    options = {"dynamic_batch_size": "1,2,4"}
    assert text([BATCH, Y], None, options) == "b:-1,16;y:2048"
    with pytest.raises(ExportError, match="needs an input whose first dim is -1"):
        text([X], None, options)
    with pytest.raises(ExportError, match="needs an input whose first dim is -1"):
        text([TensorInfo("o", "float32", (4, None))], None, options)
    with pytest.raises(ExportError, match="makes only the first dim dynamic, but o dim 1 is unknown too"):
        text([TensorInfo("o", "float32", (None, None))], None, options)
    with pytest.raises(ExportError, match="expected batch sizes like 1,2,4,8"):
        text([BATCH], None, {"dynamic_batch_size": "1;2"})


def test_dynamic_dims_need_one_value_per_unknown_dim():
    two = TensorInfo("t", "float32", (None, None))
    assert text([two], None, {"dynamic_dims": "1,64;4,128"}) == "t:-1,-1"
    with pytest.raises(ExportError, match=r"each ;-separated set needs 2 sizes, one per -1 dim \(t dim 0, t dim 1\)"):
        text([two], None, {"dynamic_dims": "1,64;4"})


def test_dynamic_options_are_mutually_exclusive():
    with pytest.raises(ExportError, match="--dynamic-batch-size and --dynamic-dims are mutually exclusive"):
        shapes.dynamic_choice({"dynamic_batch_size": "1,2", "dynamic_dims": "1"})
    extra = atc.parse_extra_options(["--dynamic_dims=1"])
    with pytest.raises(ExportError, match="given both as --dynamic-dims and as an extra ATC option"):
        atc.dynamic_options(extra, dims="2")


def test_atc_command_from_a_frozen_pb():
    cmd = atc.atc_command("/cann/bin/atc", "/o/m.pb", atc.FRAMEWORK_TENSORFLOW, "/o/m", "Ascend910B1",
                          shapes.resolve_input_shapes([X, Y]), ["Identity:0", "Identity_1:0"],
                          None, ["--precision_mode_v2=origin"])
    assert cmd == ["/cann/bin/atc", "--mode=0", "--framework=3", "--model=/o/m.pb", "--output=/o/m",
                   "--soc_version=Ascend910B1", "--input_shape=x:8,2048;y:2048",
                   "--out_nodes=Identity:0;Identity_1:0", "--precision_mode_v2=origin"]


def test_atc_command_from_air_with_dynamic_dims():
    two = TensorInfo("t", "float32", (None, 3))
    dynamic = {"dynamic_dims": "1;4"}
    cmd = atc.atc_command("atc", "/o/m.air", atc.FRAMEWORK_AIR, "/o/m", "Ascend910_9392",
                          shapes.resolve_input_shapes([two], None, dynamic), None, dynamic)
    assert cmd == ["atc", "--mode=0", "--framework=1", "--model=/o/m.air", "--output=/o/m",
                   "--soc_version=Ascend910_9392", "--input_shape=t:-1,3", "--dynamic_dims=1;4"]
    with pytest.raises(ValueError):
        atc.atc_command("atc", "m", 5, "o", "Ascend910B1")


def test_extra_atc_options_pass_through_except_the_ones_the_export_sets():
    assert atc.parse_extra_options(["--log=info", "--precision_mode_v2=origin", "--flag"]) == {
        "log": "info", "precision_mode_v2": "origin", "flag": None}
    for option, ours in (("--output=x", "--output"), ("--soc_version=A", "--soc"), ("--framework=1", "--via"),
                         ("--input_shape=x:1", "--input-shape"), ("--out_nodes=z:0", "--outputs")):
        with pytest.raises(ExportError, match="set by the export; use %s" % ours):
            atc.parse_extra_options([option])
    with pytest.raises(ExportError, match="expected --name=value"):
        atc.parse_extra_options(["precision_mode_v2 origin"])
    with pytest.raises(ExportError, match="given twice"):
        atc.parse_extra_options(["--log=info", "--log=debug"])


def test_written_om_accepts_atc_os_cpu_suffix(tmp_path):
    prefix = str(tmp_path / "m")
    with pytest.raises(ExternalToolError, match="wrote no .*m.om"):
        atc.written_om(prefix)
    (tmp_path / "m_linux_x86_64.om").write_bytes(b"om")
    assert atc.written_om(prefix) == prefix + "_linux_x86_64.om"
    (tmp_path / "m.om").write_bytes(b"om")
    assert atc.written_om(prefix) == prefix + ".om"


def test_air_tool_command():
    cmd = air_tool.air_tool_command("/pkg/_lib/tf_ge_custom_air_tool", "/o/m.pb", "/o/m.air",
                                    shapes.resolve_input_shapes([X, Y]), ["z:0", "w:1"])
    assert cmd == ["/pkg/_lib/tf_ge_custom_air_tool", "--model", "/o/m.pb", "--output", "/o/m.air",
                   "--input-shape", "x:8,2048;y:2048", "--out-nodes", "z:0;w:1"]


def test_om_runner_command_and_its_output():
    cmd = om_runner.om_runner_command("runner", "/o/m.om", ["/t/0.bin", "/t/1.bin"], "/t/raw", 1, 4)
    assert cmd == ["runner", "--model", "/o/m.om", "--output-dir", "/t/raw", "--device", "1",
                   "--dynamic-batch", "4", "--input", "/t/0.bin", "--input", "/t/1.bin"]
    lines = ['{"event":"model","inputs":1,"outputs":1,"dynamic_batch":false}',
             "some ACL log line",
             '{"event":"input","index":0,"name":"x","dtype":"float32","dims":[2,3],"size":24}',
             '{"event":"output","index":0,"name":"z","dtype":"int32","dims":[2],"size":8,"file":"/t/o.bin"}',
             '{"event":"done"}']
    inputs, outputs = om_runner.parse_runner_output(lines)
    assert inputs == [om_runner.RunnerTensor(0, "x", "float32", (2, 3), 24, "")]
    assert outputs == [om_runner.RunnerTensor(0, "z", "int32", (2,), 8, "/t/o.bin")]
    with pytest.raises(ExternalToolError, match="without reporting its outputs"):
        om_runner.parse_runner_output(lines[:-1])
