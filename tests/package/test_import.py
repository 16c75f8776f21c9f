"""What import tf_ge_custom does, and what it must not do."""
import json
import os
import subprocess
import sys

PROBE = r"""
import json, re, sys
import tensorflow
before = set(sys.modules)
import tf_ge_custom
from tensorflow.python.framework import op_def_registry
added = sorted(set(sys.modules) - before)
# tf.load_op_library registers its generated wrapper module under a hash name
foreign = [m for m in added if not m.startswith("tf_ge_custom")
           and not re.match(r"^[0-9a-f]{40}$", m) and m != "tensorflow.python.framework.op_def_registry"]
print(json.dumps({"registered": op_def_registry.get("AddCustom") is not None,
                  "foreign_modules": foreign}))
"""


def _run(code):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=os.path.expanduser("~"))


def test_import_registers_the_op_and_pulls_in_nothing_heavy():
    proc = _run(PROBE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"registered": True, "foreign_modules": []}


def test_reimport_and_reload_are_harmless():
    proc = _run("import importlib, tf_ge_custom, tf_ge_custom.ops as o\n"
                "importlib.reload(o); importlib.reload(tf_ge_custom)\n"
                "print(float(tf_ge_custom.add_custom(1.0, 2.0)))")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "3.0"


def test_the_installed_package_is_what_the_tests_import():
    import tf_ge_custom

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert not tf_ge_custom.__file__.startswith(os.path.join(here, "tf_ge_custom")), (
        "tests must run against the installed package, not the source tree")
