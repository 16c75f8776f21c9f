"""`tf-ge-custom run-om --compare-with` from the console script in a fresh process, with a TEST
DOUBLE for the OM runner (tests/export/doubles/om_runner_double.py, which adds its inputs):
it pins that the comparison with TensorFlow loads AddCustom before it reads the model. Issue
18, finding 1: the console script printed RUN_OM=FAIL ("Op type not registered 'AddCustom'")
where cli.main() inside a test process, which had imported the package, printed PASS. It
proves nothing about ACL or the NPU."""
import os
import subprocess
import sys

import numpy as np

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


def _run(argv, env, cwd):
    env = dict(env, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([SCRIPT] + argv, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-4000:]
    return proc


def test_run_om_compare_with_from_the_console_script(models, tool_env, tmp_path):
    proc = _run(["export", models.pb, "--no-verify", "--output", str(tmp_path / "m")], tool_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    (tmp_path / "m.om").write_bytes(b"stand-in om")
    rng = np.random.RandomState(5)
    x, y = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "y.npy"), y)
    env = dict(tool_env, ASCEND_CUSTOM_OPP_PATH="/somewhere/opp", TF_GE_CUSTOM_TEST_DIMS="2,3")
    proc = _run(["run-om", str(tmp_path / "m.om"), "--input", str(tmp_path / "x.npy"), "--input",
                 str(tmp_path / "y.npy"), "--compare-with", models.pb], env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert proc.stdout.splitlines()[-1] == "RUN_OM=PASS", proc.stdout
    np.testing.assert_array_equal(np.load(str(tmp_path / "m.outputs" / "z_0.npy")), x + y)
