"""``tf-ge-custom export --import MODULE`` from a folder that also holds modules named like
installed ones: the user's module is found in the working folder, after the standard library
and the installed packages, so a ``json.py`` or ``numpy.py`` (or a ``colorsys.py`` beside a
module that imports colorsys) never replaces them. Run as users run it: the installed console
script and ``python -m tf_ge_custom``, each in a fresh process; the .pb it writes is run here by
TensorFlow (the conftest's check_pb: tf.math.add of the inputs)."""
import sys

import pytest

pytestmark = [pytest.mark.kind("oracle"), pytest.mark.slow,
              pytest.mark.fresh_process]  # what a fresh interpreter puts first on sys.path

USERS_MODULE = """\
import colorsys  # standard library modules the export has not imported before this module
import wave

REGISTERED = colorsys.rgb_to_hsv(1, 0, 0) == (0.0, 1.0, 1.0) and hasattr(wave, "open")
"""
SHADOW = 'raise ImportError("the working folder\'s %s.py was imported instead of the installed %s")\n'


def _shadow(folder, names):
    for name in names:
        (folder / (name + ".py")).write_text(SHADOW % (name, name))


def _export_from(folder, shadows, tf_ge_custom_cmd, models, check_pb, launcher):
    """``export <SavedModel> --import users_module`` run in ``folder`` beside the look-alikes
    ``shadows``; the .pb must hold AddCustom and compute tf.math.add."""
    (folder / "users_module.py").write_text(USERS_MODULE)
    _shadow(folder, shadows)
    ran = tf_ge_custom_cmd("export", models["saved_model"], "--import", "users_module",
                           "--output", str(folder / "out" / "m"), cwd=folder, launcher=launcher)
    assert ran.status == 0, ran
    assert "was imported instead of" not in ran.err
    check_pb(str(folder / "out" / "m.pb"), "saved_model", models["x"], models["y"])


def test_the_console_script_exports_beside_json_numpy_and_colorsys_look_alikes(tf_ge_custom_cmd, models, check_pb, tmp_path):
    _export_from(tmp_path, ["json", "numpy", "colorsys", "wave"], tf_ge_custom_cmd, models, check_pb, "script")


def test_python_m_puts_the_working_folder_first_and_the_export_moves_it_last(tf_ge_custom_cmd, models, check_pb, tmp_path):
    """``python -m`` starts with the working folder first on sys.path (Python's own rule, so
    a json.py there breaks Python's start already); what the user's module imports after
    ``--import`` put it last is the installed module."""
    _export_from(tmp_path, ["colorsys", "wave"], tf_ge_custom_cmd, models, check_pb, "python -m")


@pytest.mark.kind("plumbing")
def test_import_modules_takes_the_users_module_after_the_installed_ones(tmp_path, monkeypatch):
    """In this process (where a mutated package copy on PYTHONPATH reaches it too): the working
    folder, first on sys.path as python -m puts it, ends up last, once; its colorsys.py look-alike
    is not what the user's module gets."""
    import colorsys as installed

    from tf_ge_custom.export import pipeline

    (tmp_path / "users_module_here.py").write_text("import colorsys\nFOUND = colorsys.__file__\n")
    _shadow(tmp_path, ["colorsys"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path)] + [p for p in sys.path if p])
    monkeypatch.delitem(sys.modules, "colorsys")
    monkeypatch.delitem(sys.modules, "users_module_here", raising=False)
    pipeline.import_modules(["users_module_here"])
    assert sys.path[-1] == str(tmp_path) and sys.path.count(str(tmp_path)) == 1 and "" not in sys.path
    assert sys.modules["users_module_here"].FOUND == installed.__file__
