"""The main job (make demo) runs and checks itself against tf.math.add."""
import os
import re
import subprocess
import sys

from tf_ge_custom.op_def import ADD_CUSTOM

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "examples", "demo.py")


def test_demo_reports_the_cpu_and_zero_error_for_every_dtype():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, DEMO], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=os.path.expanduser("~"))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    out = proc.stdout
    assert re.search(r"AddCustom ran on: .*device:CPU:0", out), out
    for dtype in ADD_CUSTOM.dtypes:
        assert re.search(r"%s\s+shape 8x2048\s+max .* = 0  OK" % dtype, out), out
    assert out.strip().endswith("result: PASS")
