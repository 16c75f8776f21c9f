"""The suite's native builds compile through ccache (tests/compiler_cache.py): a copy of a CMake
project in another folder is served from the cache, a changed source is compiled, and a
launcher the user set is left alone. ccache's own statistics are the oracle."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("oracle")

TESTS = pathlib.Path(__file__).resolve().parents[1]
VENV_BIN = os.path.dirname(sys.executable)


def _module():
    spec = importlib.util.spec_from_file_location("compiler_cache_under_test", str(TESTS / "compiler_cache.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _project(root, body):
    (root / "src").mkdir(parents=True)
    (root / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(p LANGUAGES CXX)\n"
        "add_library(p STATIC p.cc)\ntarget_include_directories(p PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/inc)\n")
    (root / "src" / "inc").mkdir()
    (root / "src" / "inc" / "p.h").write_text("int twice(int);\n")
    (root / "src" / "p.cc").write_text('#include "p.h"\nint twice(int x) { return %s; }\n' % body)
    return root


def _build(root, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCACHE_", "CMAKE_"))}
    env.update(_module().variables(dict(env, CCACHE_DIR=str(cache)), VENV_BIN, root))
    cmake, ccache = shutil.which("cmake"), os.path.join(VENV_BIN, "ccache")
    # the counts are the build's (configuring compiles CMake's own probes through it too)
    for cmd in ([cmake, "-S", str(root / "src"), "-B", str(root / "build")], [ccache, "--zero-stats"],
                [cmake, "--build", str(root / "build")]):
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        assert proc.returncode == 0, proc.stdout
    stats = subprocess.run([ccache, "--print-stats"], env=env,
                           stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    counts = dict(line.split("\t", 1) for line in stats.splitlines() if "\t" in line)
    return {k: int(counts.get(k, 0)) for k in ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")}


def test_a_copy_in_another_folder_is_served_from_the_cache_and_a_change_is_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = _build(_project(tmp_path / "one", "2 * x"), cache)
    assert first == {"direct_cache_hit": 0, "preprocessed_cache_hit": 0, "cache_miss": 1}
    # the same sources two folders deeper: the same object
    again = _build(_project(tmp_path / "deeper" / "two", "2 * x"), cache)
    assert again == {"direct_cache_hit": 1, "preprocessed_cache_hit": 0, "cache_miss": 0}
    changed = _build(_project(tmp_path / "three", "x + x"), cache)
    assert changed == {"direct_cache_hit": 0, "preprocessed_cache_hit": 0, "cache_miss": 1}


def test_a_launcher_of_the_users_and_a_venv_without_ccache_change_nothing(tmp_path):
    module = _module()
    assert module.variables({"CMAKE_CXX_COMPILER_LAUNCHER": "sccache"}, VENV_BIN, tmp_path) == {}
    assert module.variables({}, str(tmp_path), tmp_path) == {}
    found = module.variables({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, VENV_BIN, tmp_path)
    assert found["CMAKE_CXX_COMPILER_LAUNCHER"] == os.path.join(VENV_BIN, "ccache")
    assert found["CCACHE_DIR"] == str(tmp_path / "xdg" / "tf-ge-custom" / "ccache")
    assert found["CCACHE_BASEDIR"] == str(tmp_path)
    assert module.variables({"CCACHE_DIR": "/elsewhere"}, VENV_BIN, tmp_path)["CCACHE_DIR"] == "/elsewhere"


def test_this_run_compiles_through_the_cache():
    # what the suite's conftest set for every build this run starts (unless a launcher was set)
    if os.environ.get("CCACHE_BASEDIR"):
        assert os.environ["CMAKE_CXX_COMPILER_LAUNCHER"] == os.path.join(VENV_BIN, "ccache")
        assert not os.path.relpath(os.environ["CCACHE_DIR"], str(TESTS.parent)).startswith(
            "tests"), "the cache lives outside the checkout"
    else:
        assert os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER"), "no compiler cache for this run's builds"
