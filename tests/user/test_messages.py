"""Messages that name the real cause, and the friction a new user
met; each through the console script or a fresh ``python -c``."""
import json
import os
import shutil
import zipfile

import pytest


def test_an_unreadable_lib_folder_is_not_called_unbuilt(user, package_copy, open_tmp):
    site, package = package_copy
    os.chmod(str(package / "_lib"), 0o700)  # root's: another user cannot enter it
    argv = user.python(
        "import tf_ge_custom",
        "try:",
        "    tf_ge_custom.library_path()",
        "except tf_ge_custom.OpLibraryError as e:",
        "    print('REFUSED', e)")
    if os.geteuid() == 0:  # root reads every folder: the user who cannot is another one
        argv[0] = user.python_for_anyone()  # no TensorFlow needed: library_path() is pure Python
    ran = user.run(argv, open_tmp, env=user.env(PYTHONPATH=str(site), HOME=str(open_tmp)),
                   user=user.nobody if os.geteuid() == 0 else None)
    assert "REFUSED" in ran.out, ran
    assert "permission denied" in ran.out and "not built" not in ran.out, ran


def test_list_kernels_names_a_missing_wheel_as_missing(user, tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("list-kernels", "--wheel", str(tmp_path / "dist" / "nothing.whl"), cwd=tmp_path)
    assert ran.status == 2 and "does not exist" in ran.err, ran
    assert "not a tf-ge-custom wheel" not in ran.err


def test_list_kernels_names_the_wheel_member_not_a_temporary_folder(tf_ge_custom_cmd, tmp_path):
    wheel = tmp_path / "tf_ge_custom-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(str(wheel), "w") as zf:
        zf.writestr("tf_ge_custom-0.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
        zf.writestr("tf_ge_custom/opp/kernels/Ascend910B1/manifest.json", '{"version": 1')
    ran = tf_ge_custom_cmd("list-kernels", "--wheel", str(wheel), cwd=tmp_path)
    assert ran.status == 1 and "INVALID" in ran.out, ran
    assert "%s:tf_ge_custom/opp/kernels/Ascend910B1/manifest.json" % wheel in ran.out, ran
    assert "tf-ge-custom-wheel-" not in ran.out


def test_a_huge_option_value_is_not_echoed_whole(user, open_tmp):
    ran = user.run(user.python(
        "from tf_ge_custom import npu",
        "for name in ('precision_mode', 'dump_path', 'profiling_options'):",
        "    try:",
        "        npu.session_config(**{name: 'x' * 10000000})",
        "    except (TypeError, ValueError) as e:",
        "        print(name, len(str(e)), str(e)[:200].replace('\\n', ' '))"), open_tmp)
    lines = ran.out.splitlines()
    assert len(lines) == 3, ran
    for line in lines:
        assert int(line.split()[1]) < 2000, line


def test_a_keras_file_loads_after_import_tf_ge_custom(user, models, open_tmp):
    ran = user.run(user.python(
        "import sys, numpy as np, tensorflow as tf",
        "import tf_ge_custom",  # not tf_ge_custom.layers
        "model = tf.keras.models.load_model(sys.argv[1])",
        "x, y = np.load(sys.argv[2]), np.load(sys.argv[3])",
        "got = np.asarray(model([x, y]))",
        "assert (got == tf.math.add(x, y).numpy()).all()",
        "print('LOADED', type(model.layers[-1]).__module__)") + [models["keras"], models["x"], models["y"]],
        open_tmp)
    assert ran.status == 0 and "LOADED tf_ge_custom.layers" in ran.out, ran


def test_doctor_says_stray_ascend_variables_once(tf_ge_custom_cmd, user, tmp_path):
    env = user.env(ASCEND_HOME_PATH=str(tmp_path / "nowhere"), ASCEND_OPP_PATH="/nonexistent/opp",
                   ASCEND_AICPU_PATH=str(tmp_path))
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=tmp_path, env=env)
    checks = json.loads(ran.out)["checks"]
    warns = [c for c in checks if c["status"] == "WARN"]
    assert warns == [], warns  # before: a WARN per stack check
    stray = [c for c in checks if c["name"] == "Ascend stack"]
    assert len(stray) == 1 and stray[0]["status"] == "INFO", checks
    assert "ASCEND_HOME_PATH" in stray[0]["detail"] and "ASCEND_OPP_PATH" in stray[0]["detail"]
    text = tf_ge_custom_cmd("doctor", cwd=tmp_path, env=env)
    assert sum("ASCEND_OPP_PATH" in line for line in text.out.splitlines()) == 1, text


def test_doctor_with_a_real_toolkit_variable_still_checks_each_part(tf_ge_custom_cmd, user, fake_toolkit,
                                                                   tmp_path):
    env = user.env(ASCEND_HOME_PATH=fake_toolkit())
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=tmp_path, env=env)
    names = [c["name"] for c in json.loads(ran.out)["checks"]]
    assert "Ascend stack" not in names, names
