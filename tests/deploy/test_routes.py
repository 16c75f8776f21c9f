"""Each deployment route of docs/deploy.md, run or refused as the page says, in fresh processes.

The oracle is TensorFlow itself: a process that did not import tf_ge_custom refuses a graph
holding AddCustom with TensorFlow's own "Op type not registered 'AddCustom'", and the same
process with the package imported (or the op linked in some other way) computes x + y, held
to numpy. TFLite's converter and interpreter refuse it in their own words.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

pytestmark = pytest.mark.kind("oracle")
SLOW = pytest.mark.slow  # each route runs TensorFlow in fresh processes

NOT_REGISTERED = "Op type not registered 'AddCustom' in binary running on "
X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
Y = [10.0, 20.0, 30.0]
EXPECTED = (np.array(X, np.float32) + np.array(Y, np.float32)).tolist()

SAVE = r"""
import sys
import tensorflow as tf
import tf_ge_custom

class Model(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                  tf.TensorSpec([3], tf.float32, name="y")])
    def serve(self, x, y):
        return {"z": tf_ge_custom.add_custom(x, y)}

model = Model()
tf.saved_model.save(model, sys.argv[1], signatures={"serving_default": model.serve})
"""

# What the page tells users to do in a process that reads the model: import the package first.
IMPORT_FIRST = "import tf_ge_custom  # registers AddCustom\n"

LOAD_SAVED_MODEL = r"""
import json, sys
import tensorflow as tf
%s
try:
    model = tf.saved_model.load(sys.argv[1])
    z = model.signatures["serving_default"](x=tf.constant(%r), y=tf.constant(%r))["z"]
    print(json.dumps({"z": z.numpy().tolist()}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""

RUN_FROZEN = r"""
import json, sys
import numpy as np
import tensorflow as tf
%s
graph_def = tf.compat.v1.GraphDef()
with open(sys.argv[1], "rb") as f:
    graph_def.ParseFromString(f.read())
record = json.load(open(sys.argv[2]))
try:
    with tf.Graph().as_default() as graph:
        tf.compat.v1.import_graph_def(graph_def, name="")
        feeds = {graph.get_tensor_by_name(i["name"] + ":0"): np.array(v, np.float32)
                 for i, v in zip(record["inputs"], (%r, %r))}
        with tf.compat.v1.Session(graph=graph) as s:
            z = s.run(graph.get_tensor_by_name(record["outputs"][0]["name"]), feeds)
    print(json.dumps({"z": z.tolist()}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.pop("PYTHONPATH", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _python(code, *args, cwd=None):
    proc = subprocess.run([sys.executable, "-c", code] + [str(a) for a in args], env=_env(),
                          cwd=str(cwd) if cwd else None, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _bash(line, cwd):
    return subprocess.run(["bash", "-c", line], env=_env(), cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """A user's folder with `saved_model_dir`, a SavedModel z = add_custom(x, y)."""
    where = tmp_path_factory.mktemp("deploy")
    proc = subprocess.run([sys.executable, "-c", SAVE, str(where / "saved_model_dir")], env=_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return where


def _refused_as_unregistered(found):
    assert "z" not in found, found
    assert NOT_REGISTERED in found["message"], found


# --- frozen .pb (the supported route; the OM is made from it: docs/export.md) ----------------

@SLOW
@pytest.mark.documents("tf-ge-custom export saved_model_dir --to pb --output frozen/model")
def test_the_frozen_graph_runs_where_the_package_is_imported_and_only_there(user):
    proc = _bash("tf-ge-custom export saved_model_dir --to pb --output frozen/model", user)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    pb, record = user / "frozen" / "model.pb", user / "frozen" / "model.json"
    assert _python(RUN_FROZEN % (IMPORT_FIRST, X, Y), pb, record)["z"] == EXPECTED
    _refused_as_unregistered(_python(RUN_FROZEN % ("", X, Y), pb, record))


# --- tf.saved_model.load ----------------------------------------------------------------------

@SLOW
def test_tf_saved_model_load_needs_the_import_first(user):
    model = user / "saved_model_dir"
    assert _python(LOAD_SAVED_MODEL % (IMPORT_FIRST, X, Y), model)["z"] == EXPECTED
    found = _python(LOAD_SAVED_MODEL % ("", X, Y), model)
    _refused_as_unregistered(found)
    assert found["error"] in ("RuntimeError", "NotFoundError"), found


# --- saved_model_cli ------------------------------------------------------------------------------

SMCLI_ARGS = ("run --dir saved_model_dir --tag_set serve --signature_def serving_default "
              "--input_exprs 'x=[[1.0,2.0,3.0],[4.0,5.0,6.0]];y=[10.0,20.0,30.0]'")


def _smcli_result(stdout):
    """The array saved_model_cli prints after "Result for output key z:" (numpy's repr)."""
    printed = stdout.split("Result for output key z:\n", 1)[1]
    rows = re.findall(r"\[([^\[\]]+)\]", printed.split("]]", 1)[0] + "]")
    return np.array([[float(v) for v in row.split()] for row in rows])


@SLOW
@pytest.mark.documents("python -m tf_ge_custom.saved_model_cli " + SMCLI_ARGS)
def test_the_saved_model_cli_wrapper_runs_the_model_tensorflows_own_refuses_it(user):
    wrapped = _bash("python -m tf_ge_custom.saved_model_cli " + SMCLI_ARGS, user)
    assert wrapped.returncode == 0, wrapped.stdout + wrapped.stderr[-3000:]
    assert _smcli_result(wrapped.stdout).tolist() == EXPECTED, wrapped.stdout
    plain = _bash("saved_model_cli " + SMCLI_ARGS, user)
    assert plain.returncode == 1, plain.stdout + plain.stderr[-3000:]
    assert NOT_REGISTERED in plain.stderr


@SLOW
def test_the_wrapper_passes_every_argument_on(user):
    shown = _bash("python -m tf_ge_custom.saved_model_cli show --dir saved_model_dir --all", user)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "signature_def['serving_default']:" in shown.stdout
    assert "inputs['x'] tensor_info:" in shown.stdout and "outputs['z'] tensor_info:" in shown.stdout
    # a refusal is saved_model_cli's own, with its exit status
    wrong = _bash("python -m tf_ge_custom.saved_model_cli show --dir no_such_dir --all", user)
    plain = _bash("saved_model_cli show --dir no_such_dir --all", user)
    assert wrong.returncode == plain.returncode != 0
    assert "no_such_dir" in wrong.stderr and "no_such_dir" in plain.stderr


# --- TF Serving: not supported (the ModelServer links its ops when it is built) ----------------

@SLOW
def test_a_tensorflow_runtime_without_the_op_linked_refuses_the_model_as_a_model_server_would(user):
    """What a stock ModelServer meets: a graph whose AddCustom no op registration in it knows.
    The route is a ModelServer built with the op's sources linked in, which this package does
    not make; the refusal is TensorFlow's own loader's, in a process without the op."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((user / "saved_model_dir" / "saved_model.pb").read_bytes())
    ops = {n.op for mg in saved.meta_graphs for f in mg.graph_def.library.function for n in f.node_def}
    assert "AddCustom" in ops
    found = _python(LOAD_SAVED_MODEL % ("", X, Y), user / "saved_model_dir")
    _refused_as_unregistered(found)


# --- TFLite: not supported ---------------------------------------------------------------------

TFLITE = r"""
import json, sys
import tensorflow as tf
import tf_ge_custom
out = {}
def convert(**settings):
    converter = tf.lite.TFLiteConverter.from_saved_model(sys.argv[1])
    for k, v in settings.items():
        if k == "supported_ops":
            converter.target_spec.supported_ops = v
        else:
            setattr(converter, k, v)
    return converter.convert()
try:
    convert(); out["builtins"] = "converted"
except Exception as e:
    out["builtins"] = type(e).__name__ + ": " + str(e)
try:
    convert(supported_ops=[tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS])
    out["flex"] = "converted"
except Exception as e:
    out["flex"] = type(e).__name__ + ": " + str(e)
model = convert(allow_custom_ops=True)
interpreter = tf.lite.Interpreter(model_content=model)
try:
    interpreter.allocate_tensors(); out["interpreter"] = "allocated"
except Exception as e:
    out["interpreter"] = type(e).__name__ + ": " + str(e)
print(json.dumps(out))
"""


@SLOW
def test_tflite_refuses_it_as_a_builtin_a_flex_op_and_an_unresolved_custom_op(user):
    found = _python(TFLITE, user / "saved_model_dir")
    assert found["builtins"].startswith("ConverterError: "), found
    assert "Some ops in the model are custom ops" in found["builtins"]
    assert "Custom ops: AddCustom" in found["builtins"]
    assert found["flex"].startswith("ConverterError: "), found
    assert "'tf.AddCustom' op is neither a custom op nor a flex op" in found["flex"]
    assert found["interpreter"].startswith(
        "RuntimeError: Encountered unresolved custom op: AddCustom."), found


# --- distributed server processes (ParameterServerStrategy, MultiWorker: tf.distribute.Server) -

SERVER = r"""
import sys
import tensorflow as tf
if sys.argv[2] == "import":
    import tf_ge_custom  # registers AddCustom in this server process
cluster = tf.train.ClusterSpec({"worker": ["localhost:%s" % sys.argv[1]]})
server = tf.distribute.Server(cluster, job_name="worker", task_index=0)
print("ready", flush=True)
server.join()
"""

CLIENT = r"""
import json, sys
import tensorflow as tf
import tf_ge_custom
tf.compat.v1.disable_eager_execution()
with tf.device("/job:worker/task:0"):
    z = tf_ge_custom.add_custom(tf.constant(%r), tf.constant(%r))
config = tf.compat.v1.ConfigProto(operation_timeout_in_ms=120000)
try:
    with tf.compat.v1.Session("grpc://localhost:%%s" %% sys.argv[1], config=config) as s:
        print(json.dumps({"z": s.run(z).tolist()}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
""" % (X, Y)


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _with_server(tmp_path, mode):
    port = _free_port()
    log = tmp_path / ("server-%s.log" % mode)
    with open(str(log), "w") as out:
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), mode], env=_env(),
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 300
        while "ready" not in log.read_text():
            assert server.poll() is None and time.time() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        return _python(CLIENT, port)
    finally:
        server.kill()
        server.wait()


@SLOW
def test_a_server_process_runs_add_custom_only_when_it_imported_the_package(tmp_path):
    assert _with_server(tmp_path, "import")["z"] == EXPECTED
    found = _with_server(tmp_path, "plain")
    _refused_as_unregistered(found)
    assert found["error"] == "NotFoundError", found


@SLOW
def test_the_wrapper_refuses_an_op_library_it_cannot_load_in_one_error_line(tmp_path):
    """A copy of the installed package whose build record is missing: the wrapper says so
    as the commands do, before saved_model_cli runs."""
    import shutil

    import tf_ge_custom

    site = tmp_path / "site"
    shutil.copytree(os.path.dirname(tf_ge_custom.__file__), str(site / "tf_ge_custom"))
    (site / "tf_ge_custom" / "build_info.json").unlink()
    env = _env()
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run([sys.executable, "-m", "tf_ge_custom.saved_model_cli", "show", "--dir", "x"],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = [l for l in proc.stderr.splitlines() if l.startswith("python -m tf_ge_custom.saved_model_cli")]
    assert len(lines) == 1 and lines[0].startswith(
        "python -m tf_ge_custom.saved_model_cli: error: the tf_ge_custom op library has no record"), proc.stderr
    assert "Traceback" not in proc.stderr


# --- the page itself ---------------------------------------------------------------------------

# docs/deploy.md's table, route by route: the tests above that run it or show its refusal
ROUTE_TESTS = {
    "frozen `.pb`, and an OM from it": ["test_the_frozen_graph_runs_where_the_package_is_imported_and_only_there"],
    "`tf.saved_model.load`": ["test_tf_saved_model_load_needs_the_import_first"],
    "`saved_model_cli run` / `show`": ["test_the_saved_model_cli_wrapper_runs_the_model_tensorflows_own_refuses_it",
                                       "test_the_wrapper_passes_every_argument_on",
                                       "test_the_wrapper_refuses_an_op_library_it_cannot_load_in_one_error_line"],
    "TF Serving": ["test_a_tensorflow_runtime_without_the_op_linked_refuses_the_model_as_a_model_server_would"],
    "TFLite": ["test_tflite_refuses_it_as_a_builtin_a_flex_op_and_an_unresolved_custom_op"],
    "distributed server processes": ["test_a_server_process_runs_add_custom_only_when_it_imported_the_package"],
}


def test_the_page_names_every_route_and_each_has_its_test():
    page = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "docs", "deploy.md")
    with open(page) as f:
        text = f.read()
    table = text.split("| route | works? | what it needs |", 1)[1].split("\n\n", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.strip().splitlines()[1:]]
    assert [r[0] for r in rows] == list(ROUTE_TESTS)
    verdicts = {r[0]: r[1].split(":")[0].split(",")[0] for r in rows}
    assert {r for r, v in verdicts.items() if v == "no"} == {"TF Serving", "TFLite"}, verdicts
    assert set(verdicts.values()) == {"yes", "no"}
    module = sys.modules[__name__]
    for route, tests in ROUTE_TESTS.items():
        for name in tests:
            assert callable(getattr(module, name, None)), (route, name)
