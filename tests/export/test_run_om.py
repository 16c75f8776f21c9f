"""`tf-ge-custom run-om` with a TEST DOUBLE standing in for the OM runner
(tests/export/doubles/om_runner_double.py: it adds its float32 inputs, as the exported
AddCustom model would). These tests pin run-om's process handling: the runner's command line
and environment, the raw input bytes it stages from the .npy files, the .npy it makes of the
runner's output (dtype and dims as the runner reported them), the comparison with
TensorFlow on the CPU (the real oracle: run-om runs the recorded source model) and the
RUN_OM line. They prove nothing about ACL or the NPU; the double's own sum is no evidence."""
import os

import numpy as np
import pytest

pytestmark = pytest.mark.kind("doubles")


@pytest.fixture
def exported(models, tmp_path, cli):
    """models.pb exported to tmp/m.pb + m.json, a stand-in m.om beside them, and inputs."""
    status, _, err = cli(["export", models.pb, "--to", "pb", "--no-verify", "--output", str(tmp_path / "m")])
    assert status == 0, err
    (tmp_path / "m.om").write_bytes(b"stand-in om")
    rng = np.random.RandomState(3)
    x, y = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "y.npy"), y)
    return tmp_path, x, y


def _run(cli, tmp_path, tool_env, *extra):
    tool_env["ASCEND_CUSTOM_OPP_PATH"] = "/somewhere/opp"
    tool_env["TF_GE_CUSTOM_TEST_DIMS"] = "2,3"
    return cli(["run-om", str(tmp_path / "m.om"), "--input", str(tmp_path / "x.npy"),
                "--input", str(tmp_path / "y.npy")] + list(extra), tool_env)


def test_process_handling_run_om_stages_inputs_writes_npy_and_compares(cli, exported, tool_env, read_record):
    tmp_path, x, y = exported
    status, out, err = _run(cli, tmp_path, tool_env)
    assert status == 0, err
    assert out.splitlines()[-1] == "RUN_OM=PASS"
    assert "max |OM - TensorFlow on the CPU|" in out and "max |error| = 0" in out
    record = read_record()
    # staged: each .npy as the raw little-endian bytes the runner reads, in the model's order
    assert record["inputs"] == [x.astype("<f4").tobytes().hex(), y.astype("<f4").tobytes().hex()]
    # the .npy is the runner's output bytes with the dtype and dims the runner reported (2, 3)
    z = np.load(str(tmp_path / "m.outputs" / "z_0.npy"))
    assert (z.dtype, z.shape, z.tobytes().hex()) == (np.float32, (2, 3), record["output"])
    assert record["custom_opp_path_set"] is False  # the OM had to carry the kernel itself
    assert record["argv"][:6] == ["--model", str(tmp_path / "m.om"), "--output-dir", record["argv"][3],
                                  "--device", "0"]
    assert (tmp_path / "m.outputs" / "run-om.log").is_file()


def test_process_handling_a_runner_result_off_tensorflow_is_run_om_fail(cli, exported, tool_env):
    tmp_path, _, _ = exported
    tool_env["TF_GE_CUSTOM_TEST_MODE"] = "wrong"
    status, out, _ = _run(cli, tmp_path, tool_env, "--compare-with", str(tmp_path / "m.pb"))
    assert status == 1
    assert out.splitlines()[-1] == "RUN_OM=FAIL" and "max |error| = 1 " in out and "DIFFERS" in out


def test_process_handling_inputs_are_checked_against_the_record(cli, exported, tool_env, read_record):
    tmp_path, x, _ = exported
    np.save(str(tmp_path / "y.npy"), x.astype(np.int32))
    status, out, err = _run(cli, tmp_path, tool_env)
    assert status == 1 and "holds int32, but input y is float32" in err and "RUN_OM=FAIL" in out
    assert read_record() is None  # refused before the runner was started


def test_process_handling_without_anything_to_compare_with(cli, exported, tool_env, read_record):
    tmp_path, x, y = exported
    os.remove(str(tmp_path / "m.json"))
    status, out, _ = _run(cli, tmp_path, tool_env)
    assert status == 0 and out.splitlines()[-1].startswith("RUN_OM=UNCHECKED")
    z = np.load(str(tmp_path / "m.outputs" / "z.npy"))  # no record: named by the runner, not z_0
    assert (z.dtype, z.shape, z.tobytes().hex()) == (np.float32, (2, 3), read_record()["output"])
