"""`tf-ge-custom export` / `run-om` on the command line: one-line errors, exit status 2 for
a missing toolchain (saying what to install or source), --to pb with nothing but TensorFlow."""
import os
import subprocess
import sys

import pytest


def _one_line(err):
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("tf-ge-custom ")
    return lines[0]


@pytest.fixture
def bare_env(tmp_path):
    """No CANN, no doubles: only TensorFlow."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"
    return env


def test_to_pb_needs_only_tensorflow(cli, models, tmp_path, bare_env):
    status, out, err = cli(["export", models.keras, "--to", "pb", "--output", str(tmp_path / "k")], bare_env)
    assert status == 0, err
    assert (tmp_path / "k.pb").is_file() and (tmp_path / "k.json").is_file()
    assert "inputs (2):" in out and "verification (fresh process" in out


@pytest.mark.parametrize("args, expected", [
    (["export", "/no/such/model", "--output", "{tmp}/m"], "error: model not found: /no/such/model"),
    (["export", "{saved_model}", "--signature", "nope", "--output", "{tmp}/m"],
     "no signature 'nope'; its signatures are: other, serving_default"),
    (["export", "{meta}", "--outputs", "zz", "--output", "{tmp}/m"], "output zz is not in the meta graph"),
    (["export", "{pb}", "--to", "om", "--soc", "Ascend310", "--output", "{tmp}/m"],
     "unsupported SoC 'Ascend310'; supported: Ascend910B1, Ascend910B2"),
    (["export", "{pb}", "--to", "om", "--output", "{tmp}/m"], "--to om needs the target SoC: --soc"),
    (["export", "{pb}", "--output", "{pb}/folder/m"], "output folder {pb}/folder cannot be made: {pb} is not a folder"),
    (["export", "{pb}", "--output", "{tmp}"], "is a folder; give a path prefix"),
    (["export", "{pb}", "--to", "om", "--soc", "Ascend910B1", "--output", "{tmp}/m", "--atc-option",
      "output=x"], "ATC option --output is set by the export; use --output"),
])
def test_refusals_are_one_line_with_status_1(cli, models, tmp_path, bare_env, args, expected):
    fill = {"tmp": str(tmp_path), "saved_model": models.saved_model, "meta": models.meta, "pb": models.pb}
    bare_env["TF_GE_CUSTOM_ATC"] = "/bin/true"  # let the option checks, not the toolchain, decide
    status, _, err = cli([a.format(**fill) for a in args], bare_env)
    assert status == 1
    assert expected.format(**fill) in _one_line(err)


def test_missing_atc_is_status_2_saying_what_to_source(cli, models, tmp_path, bare_env):
    status, _, err = cli(["export", models.pb, "--to", "om", "--soc", "Ascend910B1",
                          "--output", str(tmp_path / "m")], bare_env)
    line = _one_line(err)
    assert status == 2
    assert "atc (CANN's model converter) was not found" in line and "source /usr/local/Ascend/ascend-toolkit/set_env.sh" in line
    assert not list(tmp_path.iterdir())


def test_missing_air_tool_is_status_2_saying_how_to_build_it(cli, models, tmp_path, bare_env):
    status, _, err = cli(["export", models.pb, "--to", "air", "--output", str(tmp_path / "m")], bare_env)
    assert status == 2
    assert "the AIR tool was not built" in _one_line(err) and "pip install --no-deps --force-reinstall ." in err


def test_dry_run_on_a_bare_machine_prints_the_commands(cli, models, tmp_path, bare_env):
    status, out, err = cli(["export", models.pb, "--to", "om", "--soc", "Ascend910B1", "--dry-run",
                            "--output", str(tmp_path / "m")], bare_env)
    assert status == 0, err
    assert "note: atc (CANN's model converter) was not found" in out
    assert [l for l in out.splitlines() if l.startswith("would run: ")][-1].split(" atc ", 1)[1].startswith(
        "--mode=0 --framework=3 --model=%s" % (tmp_path / "m.pb"))
    assert not list(tmp_path.iterdir())


def test_argument_errors_come_from_argparse(cli, models, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli(["export", models.pb, "--to", "onnx", "--output", str(tmp_path / "m")])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        cli(["export", models.pb])  # --output is required


def test_run_om_without_the_runner_is_status_2(cli, tmp_path, bare_env):
    (tmp_path / "m.om").write_bytes(b"om")
    status, _, err = cli(["run-om", str(tmp_path / "m.om"), "--input", "x.npy"], bare_env)
    assert status == 2 and "the OM runner was not built" in _one_line(err)


def test_command_modules_import_without_tensorflow():
    # `tf-ge-custom export --help` must stay fast: the command modules import nothing heavy
    # until they run (here TensorFlow is made unimportable; tf_ge_custom copes without it).
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "import argparse\n"
            "from tf_ge_custom.export import pipeline, om_runner\n"
            "from tf_ge_custom.export.cann_tools import toolchain\n"
            "from tf_ge_custom._commands import export, run_om\n"
            "for m in (export, run_om):\n"
            "    p = argparse.ArgumentParser(); m.add_arguments(p); p.format_help()\n"
            "print('numpy' in sys.modules, 'keras' in sys.modules)\n")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=os.path.expanduser("~"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "False"


@pytest.mark.parametrize("given", [None, "x:8x3;y:8,3", "x:[8, 3], y:8*3"])
def test_the_input_shape_offered_in_a_refusal_is_whole_and_works_verbatim(cli, models, tmp_path, bare_env, given):
    """Inputs x and y of shape [?, 3]: with no --input-shape, or a misspelt one, the refusal
    offers one string naming both inputs; run again with exactly that string, the export passes
    (a dry run: it prints the atc command with that --input_shape)."""
    import re

    args = ["export", models.pb_dynamic, "--to", "om", "--soc", "Ascend910B1", "--dry-run",
            "--output", str(tmp_path / "m")]
    status, _, err = cli(args + (["--input-shape", given] if given else []), bare_env)
    assert status == 1
    offered = re.search(r'--input-shape "([^"]+)"', _one_line(err)).group(1)
    assert offered == "x:8,3;y:8,3"
    status, out, err = cli(args + ["--input-shape", offered], bare_env)
    assert status == 0, err
    assert "--input_shape=x:8,3;y:8,3" in [l for l in out.splitlines() if l.startswith("would run: ")][-1]
