"""`tf-ge-custom clean` removes what it lists and nothing else (tf_ge_custom/_commands/clean.py).

Each case lays out a home folder as the package leaves it (kernel cache entries, the builder
venv with the package's builder copy, written by the package's own code) beside what it must
keep (another program's cache, a stray file, a folder a variable points at by mistake), runs
the installed console script with --dry-run and then without, and compares the whole tree
before and after with the lines printed.
"""
import os
import subprocess
import sys

import pytest

from tf_ge_custom import _builder_venv as builder_venv

pytestmark = pytest.mark.kind("oracle")

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
KEY = "0123456789abcdef-triton_ascend_3.2.0-bishengir_1.2.0-cann_none"


def _tree(root):
    """Every path under ``root`` (folders and files), relative."""
    found = set()
    for folder, dirs, names in os.walk(str(root)):
        for name in dirs + names:
            found.add(os.path.relpath(os.path.join(folder, name), str(root)))
    return found


def _write(path, text="x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _entry(cache, soc="Ascend910B1", key=KEY, dtype="float32"):
    _write(cache / soc / key / dtype / "manifest.json", "{}")
    _write(cache / soc / key / dtype / ("add_custom_flat_%s.npubin" % dtype), "\0" * 4096)
    _write(cache / soc / key / (dtype + ".lock"), "")


def _builder(venv):
    _write(venv / "pyvenv.cfg", "home = /usr/bin\n")
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    builder_venv.copy_builder(str(site))  # what setup-builder copies, with its marker
    _write(venv / "bin" / "python", "#!/bin/sh\n")


def _clean(home, *args, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "TF_GE_CUSTOM_CACHE", "TF_GE_CUSTOM_BUILDER"))}
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(home), **extra)
    proc = subprocess.run([SCRIPT, "clean"] + list(args), cwd=str(home), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("not covered here: the package itself (pip uninstall tf-ge-custom)")
    return lines


def _listed(lines, verb):
    return sorted(l[len(verb) + 2:].rsplit(" (", 1)[0] for l in lines if l.startswith(verb + ": "))


def _check_removes_what_it_lists_and_nothing_else(home, **extra):
    before = _tree(home)
    planned = _listed(_clean(home, "--dry-run", **extra), "would remove")
    assert _tree(home) == before  # a dry run changes nothing
    lines = _clean(home, **extra)
    removed = _listed(lines, "removed")
    assert removed == planned
    gone = {os.path.relpath(p, str(home)) for p in removed}
    expected = {p for p in before if not any(p == g or p.startswith(g + os.sep) for g in gone)}
    assert _tree(home) == expected
    return gone, lines


@pytest.mark.documents("tf-ge-custom clean --dry-run")
@pytest.mark.documents("tf-ge-custom clean")
def test_the_default_places_are_emptied_and_their_neighbours_kept(tmp_path):
    home = tmp_path / "home"
    cache = home / ".cache" / "tf-ge-custom" / "kernels"
    _entry(cache, "Ascend910B1", dtype="float32")
    _entry(cache, "Ascend910B1", dtype="int32")
    _entry(cache, "Ascend910_9392", key=KEY.replace("cann_none", "cann_8.5.0"))
    _builder(home / ".local" / "share" / "tf-ge-custom" / "builder")
    _write(home / ".cache" / "pip" / "wheel.whl")  # another program's cache
    _write(home / ".local" / "share" / "other" / "data")
    gone, lines = _check_removes_what_it_lists_and_nothing_else(home)
    assert gone == {".cache/tf-ge-custom/kernels/Ascend910B1/" + KEY,
                    ".cache/tf-ge-custom/kernels/Ascend910_9392/" + KEY.replace("cann_none", "cann_8.5.0"),
                    ".cache/tf-ge-custom/kernels/Ascend910B1", ".cache/tf-ge-custom/kernels/Ascend910_9392",
                    ".cache/tf-ge-custom/kernels", ".cache/tf-ge-custom",
                    ".local/share/tf-ge-custom/builder", ".local/share/tf-ge-custom"}
    assert any(l.startswith("removed: %s (builder venv, " % (home / ".local/share/tf-ge-custom/builder"))
               for l in lines), lines
    assert (home / ".cache" / "pip" / "wheel.whl").is_file()
    assert _clean(home)[0] == "nothing to remove: no kernel cache entry, no builder venv"


def test_a_cache_variable_naming_a_busy_folder_loses_only_the_cache_entries(tmp_path):
    home = tmp_path / "home"
    shared = home / "work"  # TF_GE_CUSTOM_CACHE_DIR set to a folder that holds other things
    _entry(shared, "Ascend910B1")
    _write(shared / "Ascend910B1" / "notes.txt")  # not an entry: kept, so its folder stays
    _write(shared / "report.pdf")
    _write(shared / "project" / "Ascend910B1" / "src.py")
    gone, lines = _check_removes_what_it_lists_and_nothing_else(
        home, TF_GE_CUSTOM_CACHE_DIR=str(shared))
    assert gone == {"work/Ascend910B1/" + KEY}
    assert "kept: %s: not a cache entry (its name is no cache key)" % (
        shared / "Ascend910B1" / "notes.txt") in lines
    assert (shared / "report.pdf").is_file() and (shared / "project" / "Ascend910B1" / "src.py").is_file()


def test_a_builder_variable_naming_something_else_or_a_link_keeps_it(tmp_path):
    home = tmp_path / "home"
    not_ours = home / "env"  # a venv, but not one setup-builder made
    _write(not_ours / "pyvenv.cfg")
    _write(not_ours / "lib" / "python3.11" / "site-packages" / "numpy" / "__init__.py")
    gone, lines = _check_removes_what_it_lists_and_nothing_else(home, TF_GE_CUSTOM_BUILDER=str(not_ours))
    assert gone == set()
    assert "kept: %s: not a venv holding the package's builder (no builder_copy.json)" % not_ours in lines
    real = home / "real-builder"
    _builder(real)
    link = home / "builder-link"
    link.symlink_to(real)
    gone, lines = _check_removes_what_it_lists_and_nothing_else(home, TF_GE_CUSTOM_BUILDER=str(link))
    assert gone == set() and (real / "pyvenv.cfg").is_file()
    assert "kept: %s: not a folder (or a link, not followed)" % link in lines
    gone, _ = _check_removes_what_it_lists_and_nothing_else(home, TF_GE_CUSTOM_BUILDER=str(real))
    assert gone == {"real-builder"}
