"""``tf-ge-custom export`` from the console script, on every kind of model holding AddCustom
(README "Offline inference", docs/export.md). Each of these once failed
with ``Op type not registered 'AddCustom'`` (a frozen .pb: "op AddCustom is not known to this
TensorFlow"), because the command starts without the op and never loaded it."""
import json
import os

import pytest

KINDS = ("saved_model", "checkpoint", "frozen_pb", "keras", "h5")


def _export_args(models, kind, output):
    model = models[kind]
    args = ["export", model, "--to", "pb", "--output", output]
    if kind == "checkpoint":
        args += ["--outputs", "z"]
    return args


# The documented line runs fresh (the saved model); the other kinds run warm
# (tests/warm_process.py): the same console script, TensorFlow imported once.
@pytest.mark.slow
@pytest.mark.parametrize("kind", [
    pytest.param(k, marks=pytest.mark.documents("tf-ge-custom export saved_model_dir --to pb --output out/model"))
    if k == "saved_model" else k for k in KINDS])
def test_export_writes_a_verified_pb_from_the_console_script(tf_ge_custom_cmd, models, check_pb,
                                                             tmp_path, kind):
    if kind not in models:
        pytest.fail("make_models.py could not make a %s model on this TensorFlow" % kind)
    output = str(tmp_path / "out" / "model")  # out/ does not exist yet (finding 8)
    ran = tf_ge_custom_cmd(*_export_args(models, kind, output), cwd=tmp_path)
    assert ran.status == 0, ran
    assert "verified" in ran.out.lower() or "max |" in ran.out, ran
    record = check_pb(output + ".pb", kind, models["x"], models["y"])
    assert record["op_counts"].get("AddCustom") == 1
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["model.json", "model.pb"]  # nothing else


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["saved_model", "checkpoint"])
def test_python_dash_m_exports_too(tf_ge_custom_cmd, models, check_pb, tmp_path, kind):
    output = str(tmp_path / "model")
    ran = tf_ge_custom_cmd(*_export_args(models, kind, output), cwd=tmp_path, launcher="python -m")
    assert ran.status == 0, ran
    check_pb(output + ".pb", kind, models["x"], models["y"])


@pytest.mark.slow
def test_export_to_om_dry_run_prints_the_atc_command_and_writes_nothing(tf_ge_custom_cmd, models,
                                                                       tmp_path):
    output = str(tmp_path / "out" / "model")
    ran = tf_ge_custom_cmd("export", models["saved_model"], "--to", "om", "--soc", "Ascend910B1",
                           "--output", output, "--dry-run", cwd=tmp_path)
    assert ran.status == 0, ran
    atc = [line for line in ran.out.splitlines() if line.startswith("would run: ") and " atc " in " " + line]
    assert atc, ran
    assert "--soc_version=Ascend910B1" in atc[-1] and "--output=%s" % output in atc[-1], atc
    assert "AddCustom" in ran.out  # the report's op counts
    assert not os.path.exists(str(tmp_path / "out"))  # a dry run writes nothing, not even out/


@pytest.mark.slow
def test_export_with_given_inputs(tf_ge_custom_cmd, models, check_pb, tmp_path):
    output = str(tmp_path / "model")
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", output,
                           "--inputs", "%s,%s" % (models["x"], models["y"]), cwd=tmp_path)
    assert ran.status == 0, ran
    check_pb(output + ".pb", "frozen_pb", models["x"], models["y"])


@pytest.mark.slow
def test_export_replaces_its_own_output_and_refuses_a_users_file(tf_ge_custom_cmd, models, tmp_path):
    """Finding 7: an existing .pb the export did not write is refused unless --force (as
    build-kernels refuses a folder it did not make); its own earlier export is replaced."""
    output = str(tmp_path / "model")
    with open(output + ".pb", "wb") as f:
        f.write(b"the user's own graph")
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", output, "--no-verify", cwd=tmp_path)
    assert ran.status == 1, ran
    assert "not written by tf-ge-custom export" in ran.err and "--force" in ran.err, ran
    assert open(output + ".pb", "rb").read() == b"the user's own graph"
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", output, "--no-verify", "--force",
                           cwd=tmp_path)
    assert ran.status == 0, ran
    first = open(output + ".pb", "rb").read()
    assert first != b"the user's own graph"
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", output, "--no-verify", cwd=tmp_path)
    assert ran.status == 0, ran  # its own record beside it: replaced without --force
    assert json.load(open(output + ".json"))["format"] == "tf-ge-custom-export"
