"""What a user's (or a damaged installation's) files do to the
commands, run from the console script or a fresh ``python -c``, never inside this process."""
import json
import os
import sys

import pytest


LONG_NUMBER = "1" * 5000  # Python 3.11 refuses ints of more than 4300 digits with ValueError


# --- finding 2: tf.load_op_library(library_path()) on a damaged library -----------------

def test_load_op_library_of_library_path_refuses_a_truncated_library(user, package_copy, open_tmp):
    site, package = package_copy
    library = package / "_lib" / "libtf_ge_custom_ops.so"
    with open(str(library), "r+b") as f:
        f.truncate(os.path.getsize(str(library)) // 2)
    ran = user.run(user.python(
        "import tensorflow as tf",
        "import tf_ge_custom, sys",
        "assert tf_ge_custom.__file__.startswith(sys.argv[1]), tf_ge_custom.__file__",
        "try:",
        "    tf.load_op_library(tf_ge_custom.library_path())",
        "except tf_ge_custom.OpLibraryError as e:",
        "    print('REFUSED', e)",
        "else:",
        "    print('LOADED')", ) + [str(site)], open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0, ran  # before: killed by SIGBUS (-7)
    assert "REFUSED" in ran.out and str(library) in ran.out, ran
    assert "pip install" in ran.out, ran  # the rebuild command


# --- finding 3: a FIFO as the model ---------------------------------------------------

@pytest.mark.parametrize("name", ["m.pb", "m.keras", "m.meta"])
def test_export_refuses_a_fifo_as_the_model_at_once(tf_ge_custom_cmd, tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(str(fifo))
    ran = tf_ge_custom_cmd("export", str(fifo), "--output", str(tmp_path / "out"), cwd=tmp_path,
                           timeout=120)  # before: waited for a writer for ever
    assert ran.status == 1, ran
    assert "FIFO" in ran.err and str(fifo) in ran.err, ran


def test_export_refuses_a_fifo_as_an_input_file(tf_ge_custom_cmd, models, tmp_path):
    fifo = tmp_path / "x.npy"
    os.mkfifo(str(fifo))
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "m"),
                           "--inputs", "%s,%s" % (fifo, models["y"]), cwd=tmp_path, timeout=300)
    assert ran.status == 1 and "FIFO" in ran.err, ran


# --- finding 4: JSON integers of more than 4300 digits ----------------------------------

def _damage_build_record(package):
    path = package / "build_info.json"
    record = json.loads(path.read_text())
    record["tensorflow"]["library_size"] = "@@"
    path.write_text(json.dumps(record).replace('"@@"', LONG_NUMBER))
    return path


@pytest.mark.parametrize("args", [["--version"], ["doctor"]])
def test_a_huge_integer_in_the_build_record_is_a_named_error(user, tf_ge_custom_cmd, package_copy, open_tmp, args):
    site, package = package_copy
    record = _damage_build_record(package)
    ran = tf_ge_custom_cmd(*args, cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert str(record) in "".join(ran.text.split()), ran  # names the file (argparse wraps
    # --version's text); before: a bare ValueError traceback
    assert LONG_NUMBER not in ran.text  # and does not echo the number


def test_doctor_json_always_prints_json(user, tf_ge_custom_cmd, package_copy, open_tmp):
    site, package = package_copy
    _damage_build_record(package)
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    document = json.loads(ran.out)  # before: no JSON at all
    assert document["status"] == "FAIL" and ran.status == 1, ran
    assert any("build record" in c["detail"] for c in document["checks"] if c["status"] == "FAIL")


def test_import_with_a_huge_integer_in_the_build_record(user, package_copy, open_tmp):
    site, package = package_copy
    _damage_build_record(package)
    ran = user.run(user.python("import warnings; warnings.simplefilter('always')",
                      "import tf_ge_custom",
                      "try:",
                      "    tf_ge_custom.add_custom(1.0, 2.0)",
                      "except tf_ge_custom.OpLibraryError as e:",
                      "    print('REFUSED', str(e)[:300])"), open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0 and "REFUSED" in ran.out and "build record" in ran.out, ran


def test_a_huge_integer_in_a_kernel_manifest(tf_ge_custom_cmd, tmp_path):
    soc = tmp_path / "kernels" / "Ascend910B1"
    soc.mkdir(parents=True)
    (soc / "manifest.json").write_text('{"version": %s}' % LONG_NUMBER)
    ran = tf_ge_custom_cmd("list-kernels", "--dir", str(tmp_path / "kernels"), cwd=tmp_path)
    assert ran.status != 0 and "manifest" in ran.text, ran
    assert LONG_NUMBER not in ran.text


def test_a_huge_integer_in_an_npu_option_value(user, open_tmp):
    ran = user.run(user.python("from tf_ge_custom import npu",
                      "try:",
                      "    npu.session_config(profiling_options='{\"x\": %s}')" % LONG_NUMBER,
                      "except ValueError as e:",
                      "    print(type(e).__name__, str(e)[:400])"), open_tmp)
    assert ran.status == 0 and "NpuOptionError" in ran.out and "profiling_options" in ran.out, ran


# --- finding 5: output paths ------------------------------------------------------------

def test_export_refuses_a_directory_where_the_pb_goes_before_freezing(tf_ge_custom_cmd, models, tmp_path):
    (tmp_path / "model.pb").mkdir()
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "model"), cwd=tmp_path)
    assert ran.status == 1 and "model.pb is in the way" in ran.err, ran
    assert "verification" not in ran.out  # refused before the work
    assert sorted(os.listdir(str(tmp_path))) == ["model.pb"]


def test_export_refuses_a_name_too_long_before_freezing(tf_ge_custom_cmd, models, tmp_path):
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / ("m" * 300)),
                           cwd=tmp_path)
    assert ran.status == 1 and "too long" in ran.err, ran
    assert "m" * 100 not in ran.err  # a short prefix of the name only
    assert os.listdir(str(tmp_path)) == []


def test_export_refuses_an_unwritable_folder_before_freezing(user, tf_ge_custom_cmd, models, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with user.unwritable(folder):
        ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(folder / "model"), cwd=tmp_path)
    assert ran.status == 1 and "not writable" in ran.err, ran
    assert "verification" not in ran.out
    assert os.listdir(str(folder)) == []


def test_export_refuses_a_file_where_the_output_folder_goes(tf_ge_custom_cmd, models, tmp_path):
    (tmp_path / "out").write_text("a file")
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "out" / "model"),
                           cwd=tmp_path)
    assert ran.status == 1 and "is not a folder" in ran.err, ran


def test_selftest_json_naming_a_directory_is_refused_first_and_leaves_nothing(tf_ge_custom_cmd, tmp_path):
    (tmp_path / "report").mkdir()
    ran = tf_ge_custom_cmd("selftest", "--only", "DOCTOR", "--json", str(tmp_path / "report"), cwd=tmp_path)
    assert ran.status == 2 and "is a folder" in ran.err, ran
    assert "DOCTOR=" not in ran.out  # refused before any stage ran
    assert sorted(os.listdir(str(tmp_path))) == ["report"]  # no report.tmp


@pytest.mark.slow
def test_selftest_json_writes_the_report_whole(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("selftest", "--only", "DOCTOR", "--json", str(tmp_path / "new" / "r.json"),
                           cwd=tmp_path)
    assert "DOCTOR=PASS" in ran.out, ran
    document = json.load(open(str(tmp_path / "new" / "r.json")))
    assert document["format"] == "tf-ge-custom-selftest"
    assert os.listdir(str(tmp_path / "new")) == ["r.json"]


# --- finding 6: a damaged XLA kernel library -------------------------------------------

def _truncate_xla(package):
    record = json.loads((package / "build_info.json").read_text())
    relative = record["tensorflow"].get("xla_library")
    if not relative:
        pytest.fail("this build made no XLA kernel library (%s): the XLA tests need one"
                    % record["tensorflow"].get("xla_library_missing_because"))
    path = package / relative
    with open(str(path), "r+b") as f:
        f.truncate(os.path.getsize(str(path)) // 2)
    return path


def test_a_damaged_xla_library_is_reported_at_import(user, package_copy, open_tmp):
    site, package = package_copy
    library = _truncate_xla(package)
    ran = user.run(user.python("import tf_ge_custom", "tf_ge_custom.add_custom(1.0, 2.0)"), open_tmp,
              env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0, ran
    assert "XLA kernel library is not used" in ran.err and str(library) in ran.err, ran


def test_doctor_reports_a_damaged_xla_library(user, tf_ge_custom_cmd, package_copy, open_tmp):
    site, package = package_copy
    _truncate_xla(package)
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    checks = {c["name"]: c for c in json.loads(ran.out)["checks"]}
    assert checks["XLA kernels"]["status"] == "FAIL", checks["XLA kernels"]
    assert "has" in checks["XLA kernels"]["detail"] and "bytes" in checks["XLA kernels"]["detail"]


def test_doctor_says_the_xla_library_is_fine(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=tmp_path)
    checks = {c["name"]: c for c in json.loads(ran.out)["checks"]}
    assert checks["XLA kernels"]["status"] == "OK", checks["XLA kernels"]
