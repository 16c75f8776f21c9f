"""The whole export, pb -> (AIR ->) OM, with TEST DOUBLES standing in for atc and the AIR tool
(tests/export/doubles/): every test here is about our process handling, and asserts what our
code decided: the order of work, the command lines actually run, the environment the tools
see, the staging and atomic moves of their outputs, the exit status and the refusals; never
what the real tools do (what a double writes is its own text, used only to trace which
staged file became which output)."""
import glob
import io
import json
import os
import signal
import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.kind("doubles")

from tf_ge_custom.errors import ExportError, ExternalToolError, MissingToolchainError
from tf_ge_custom.export import export


def _export(models, tmp_path, tool_env, fake_opp_root, **kw):
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    kw.setdefault("verify", False)
    kw.setdefault("to", "om")
    kw.setdefault("soc", "Ascend910B1")
    report = io.StringIO()
    result = export(kw.pop("model", models.pb), output=str(out_dir / "m"), env=tool_env,
                    opp_root=fake_opp_root, out=report, **kw)
    return result, report.getvalue(), out_dir


def _leftovers(out_dir):
    return glob.glob(str(out_dir / ".tf-ge-custom-staging-*"))


def test_om_through_air_by_default_when_the_air_tool_is_there(models, tmp_path, tool_env, fake_opp_root,
                                                               read_record):
    result, report, out = _export(models, tmp_path, tool_env, fake_opp_root, verify=True)
    assert result.route == "air"
    assert sorted(os.listdir(str(out))) == ["m.air", "m.air.log", "m.atc.log", "m.json", "m.om", "m.pb"]
    air, atc = read_record(".air"), read_record()
    assert air["argv"] == ["--model", str(out / "m.pb"), "--output", air["argv"][3],
                           "--input-shape", "x:2,3;y:2,3", "--out-nodes", "z:0"]
    assert atc["argv"] == ["--mode=0", "--framework=1", "--model=%s" % (out / "m.air"),
                           atc["argv"][3], "--soc_version=Ascend910B1", "--input_shape=x:2,3;y:2,3"]
    assert atc["argv"][3].startswith("--output=%s" % (out / ".tf-ge-custom-staging-"))  # staged
    for record in (air, atc):  # both tools see our OPP root first
        assert record["ASCEND_CUSTOM_OPP_PATH"].split(":")[0] == fake_opp_root
    # m.om is the file atc wrote into our staging folder when given our m.air, moved into place
    # unchanged (the double writes which model it was given; its bytes are no OM)
    assert (out / "m.om").read_bytes() == ("om written by atc_double from %s\n" % (out / "m.air")).encode()
    assert "verification (fresh process" in report and "running: ASCEND_CUSTOM_OPP_PATH=" in report
    assert not _leftovers(out)
    written = json.loads((out / "m.json").read_text())
    assert [i["name"] for i in written["inputs"]] == ["x", "y"] and written["op_counts"]["AddCustom"] == 1


def test_via_pb_runs_atc_on_the_frozen_graph(models, tmp_path, tool_env, fake_opp_root, read_record):
    result, _, out = _export(models, tmp_path, tool_env, fake_opp_root, via="pb",
                             atc_options=["precision_mode_v2=origin", "--log=info"])
    assert result.route == "pb" and read_record(".air") is None
    argv = read_record()["argv"]
    assert argv[:3] == ["--mode=0", "--framework=3", "--model=%s" % (out / "m.pb")]
    assert argv[4:] == ["--soc_version=Ascend910B1", "--input_shape=x:2,3;y:2,3", "--out_nodes=z:0",
                        "--precision_mode_v2=origin", "--log=info"]
    assert sorted(os.listdir(str(out))) == ["m.atc.log", "m.json", "m.om", "m.pb"]


def test_without_the_air_tool_the_om_comes_from_the_pb(models, tmp_path, tool_env, fake_opp_root, read_record):
    del tool_env["TF_GE_CUSTOM_AIR_TOOL"]  # this package was built without CANN: no AIR tool
    result, _, _ = _export(models, tmp_path, tool_env, fake_opp_root)
    assert result.route == "pb" and "--framework=3" in read_record()["argv"]
    with pytest.raises(MissingToolchainError, match="AIR tool was not built.*reinstall"):
        _export(models, tmp_path, tool_env, fake_opp_root, via="air")


def test_atc_writing_an_os_cpu_suffixed_om(models, tmp_path, tool_env, fake_opp_root):
    tool_env["TF_GE_CUSTOM_TEST_MODE"] = "suffixed"
    result, _, out = _export(models, tmp_path, tool_env, fake_opp_root)
    assert result.files["om"] == str(out / "m.om") and (out / "m.om").is_file()


def test_atc_failure_leaves_no_om_and_says_why(models, tmp_path, tool_env, fake_opp_root):
    tool_env["TF_GE_CUSTOM_TEST_MODE"] = "fail"  # the double writes a partial .om, then fails
    with pytest.raises(ExternalToolError, match="(?s)atc failed.*E19999: the double failed on purpose"):
        _export(models, tmp_path, tool_env, fake_opp_root)
    out = tmp_path / "out"
    assert not (out / "m.om").exists() and not _leftovers(out)
    assert (out / "m.pb").is_file() and (out / "m.air").is_file()  # complete earlier products stay
    assert "E19999" in (out / "m.atc.log").read_text()


def test_air_tool_failure_stops_before_atc(models, tmp_path, tool_env, fake_opp_root, read_record):
    tool_env["TF_GE_CUSTOM_TEST_AIR_MODE"] = "fail"
    with pytest.raises(ExternalToolError, match="air-tool failed"):
        _export(models, tmp_path, tool_env, fake_opp_root)
    out = tmp_path / "out"
    assert not (out / "m.air").exists() and not (out / "m.om").exists() and not _leftovers(out)
    assert read_record() is None  # atc never ran


def test_unknown_dims_are_refused_before_anything_runs_or_is_written(models, tmp_path, tool_env,
                                                                    fake_opp_root, read_record):
    with pytest.raises(ExportError, match=r"input x: shape \[\?, 3\] has unknown dims.*--input-shape"):
        _export(models, tmp_path, tool_env, fake_opp_root, model=models.pb_dynamic)
    assert os.listdir(str(tmp_path / "out")) == [] and read_record() is None and read_record(".air") is None
    result, _, _ = _export(models, tmp_path, tool_env, fake_opp_root, model=models.pb_dynamic,
                           dynamic_batch_size="1,4")
    assert read_record()["argv"][-2:] == ["--input_shape=x:-1,3;y:-1,3", "--dynamic_batch_size=1,4"]


def test_missing_deliverables_are_a_missing_toolchain(models, tmp_path, tool_env, fake_opp_root, read_record):
    os.remove(glob.glob(os.path.join(fake_opp_root, "op_graph", "lib", "linux", "*", "*.so"))[0])
    with pytest.raises(MissingToolchainError, match="lacks the GE library libtf_ge_custom_ge.so.*reinstall"):
        _export(models, tmp_path, tool_env, fake_opp_root)
    with pytest.raises(MissingToolchainError, match="no npubins for Ascend910B2.*build-kernels --soc Ascend910B2"):
        _export(models, tmp_path, tool_env, fake_opp_root, soc="Ascend910B2")
    assert read_record() is None and not os.listdir(str(tmp_path / "out"))


def test_missing_atc_is_reported_before_freezing(models, tmp_path, tool_env, fake_opp_root):
    del tool_env["TF_GE_CUSTOM_ATC"]
    tool_env["PATH"] = "/nonexistent"
    tool_env.pop("ASCEND_HOME_PATH")
    garbage = tmp_path / "not-even-a-model.pb"  # a .pb by its name: freezing would refuse it
    garbage.write_bytes(b"\x00not a GraphDef")
    with pytest.raises(MissingToolchainError, match="atc .* was not found.*source .*set_env.sh"):
        _export(models, tmp_path, tool_env, fake_opp_root, model=str(garbage))


def test_dry_run_prints_every_command_and_writes_nothing(models, tmp_path, tool_env, fake_opp_root, read_record):
    result, report, out = _export(models, tmp_path, tool_env, fake_opp_root, dry_run=True,
                                  atc_options=["log=error"])
    run = [line for line in report.splitlines() if line.startswith("would run: ")]
    assert len(run) == 2 and run == ["would run: " + c for c in result.commands]
    assert run[0].startswith("would run: ASCEND_CUSTOM_OPP_PATH=%s" % fake_opp_root)
    assert "%s --model %s" % (tool_env["TF_GE_CUSTOM_AIR_TOOL"], out / "m.pb") in run[0]
    assert "--framework=1 --model=%s --output=%s --soc_version=Ascend910B1" % (out / "m.air", out / "m") in run[1]
    assert run[1].endswith("--log=error")
    assert os.listdir(str(out)) == [] and read_record() is None


def test_ctrl_c_during_atc_leaves_no_partial_output(models, tmp_path, tool_env, fake_opp_root, read_record,
                                                    alive):
    tool_env["TF_GE_CUSTOM_TEST_MODE"] = "hang"

    def interrupt_when_atc_runs():
        # Freezing and the fresh-process verification run first: on a loaded 2-core machine
        # they take minutes, so wait for the double's record as long as it may hang.
        deadline = time.monotonic() + 540
        while time.monotonic() < deadline:
            if read_record() is not None:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, delivered to the main thread
                return
            time.sleep(0.1)

    # Python's own Ctrl-C handler, also where the suite was started with SIGINT ignored (a
    # shell's background job, nohup): there Python installs none, and the signal would be lost
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_when_atc_runs, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            _export(models, tmp_path, tool_env, fake_opp_root, via="pb")
    finally:
        signal.signal(signal.SIGINT, previous)
    out = tmp_path / "out"
    assert sorted(os.listdir(str(out))) == ["m.atc.log", "m.json", "m.pb"]  # no m.om, no staging
    assert not alive(read_record()["pid"]) and not alive(read_record()["grandchild"])


def test_verification_inputs_from_files(models, tmp_path, tool_env, fake_opp_root):
    x = np.full((2, 3), 2.5, np.float32)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "y.npy"), x)
    result, report, _ = _export(models, tmp_path, tool_env, fake_opp_root, to="pb", soc=None, verify=True,
                                inputs=[str(tmp_path / "x.npy"), "y=%s" % (tmp_path / "y.npy")])
    np.testing.assert_array_equal(result.verification.inputs["y"], x)
    assert result.verification.ok and "z:0" in report
    np.save(str(tmp_path / "bad.npy"), x.astype(np.float64))
    with pytest.raises(ExportError, match="holds float64, but input x is float32"):
        _export(models, tmp_path, tool_env, fake_opp_root, to="pb", soc=None, verify=True,
                inputs=[str(tmp_path / "bad.npy"), str(tmp_path / "y.npy")])


def test_options_for_air_om_are_refused_with_to_pb(models, tmp_path, tool_env, fake_opp_root):
    with pytest.raises(ExportError, match="--input-shape, --soc apply to --to air/om, not to --to pb"):
        _export(models, tmp_path, tool_env, fake_opp_root, to="pb", input_shape="x:2,3")
