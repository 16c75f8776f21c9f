"""What a build shows through pip, and what it keeps between builds.

- pip (the one this suite runs under) hides a build backend's lines without ``-v``: the
  package's one-line reason for skipping the GE library would be invisible. ``make install``
  runs pip through ``tf_ge_custom/_build/make_report.py``, which shows the build's own lines
  as they come and, on a failure, the build's error. Both are asked of the real pip, with a
  tiny project whose setup.py writes such lines.
- ``make_report.py summary`` reads the installed package's build record and says, one line
  per part, what was built and why a part was skipped.
- The object cache (``_build/object_cache.py``): a second build of the op library compiles
  nothing unless a source, a header it includes, a flag or the compiler changed (a new header
  no unit includes, as a new op's, recompiles nothing); the compiler here is the real one, run
  through a shim that records each compile.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from tf_ge_custom import _build, op_def
from tf_ge_custom._build import object_cache, op_library, tensorflow_info

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "tf_ge_custom", "_build", "make_report.py")

SETUP = textwrap.dedent('''
    import sys
    from setuptools import setup
    from setuptools.command.build_py import build_py

    class Build(build_py):
        def run(self):
            super().run()
            sys.stderr.write("tf-ge-custom build: step one\\n")
            sys.stderr.write("tf-ge-custom build: GE library and TF parser plugin skipped: "
                             "ASCEND_HOME_PATH is not set\\n")
            if "{fail}" == "yes":
                sys.stderr.write("\\ntf-ge-custom build failed:\\nno compiler: install g++\\n")
                raise SystemExit(1)

    setup(name="progress-probe", version="1.0", py_modules=["probe"], cmdclass={{"build_py": Build}})
''')


def _env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PIP_NO_INPUT"] = "1"
    return env


@pytest.fixture
def project(tmp_path):
    def make(fail=False):
        where = tmp_path / ("failing" if fail else "probe")
        where.mkdir()
        (where / "setup.py").write_text(SETUP.format(fail="yes" if fail else "no"))
        (where / "probe.py").write_text("")
        return where
    return make


def _pip_install(args, cwd):
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "install"]
                          + args, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env(), timeout=600)


def _reported(args, cwd):
    return subprocess.run([sys.executable, REPORT, "pip", "install"] + args, cwd=str(cwd),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env(), timeout=600)


def test_pip_hides_the_build_lines_without_verbose(project, tmp_path):
    proc = _pip_install(["--no-deps", "--no-build-isolation", "--target", str(tmp_path / "t"),
                         str(project())], tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "tf-ge-custom build:" not in proc.stdout


def test_make_report_shows_the_build_lines_through_pip(project, tmp_path):
    proc = _reported(["--no-deps", "--no-build-isolation", "--target", str(tmp_path / "t"),
                      str(project())], tmp_path)
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    assert "    step one" in lines
    assert "    GE library and TF parser plugin skipped: ASCEND_HOME_PATH is not set" in lines
    assert lines[-1].startswith("    installed in ")
    assert "running build_py" not in proc.stdout  # setuptools' own lines stay hidden
    assert os.path.isfile(str(tmp_path / "t" / "probe.py"))


def test_make_report_shows_the_build_error_and_exits_with_pips_status(project, tmp_path):
    proc = _reported(["--no-deps", "--no-build-isolation", "--target", str(tmp_path / "t"),
                      str(project(fail=True))], tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "    no compiler: install g++" in proc.stdout.splitlines()
    assert "error: " in proc.stdout.splitlines()[-1]


def test_the_summary_reads_the_installed_build_record(tmp_path):
    import tf_ge_custom

    with open(os.path.join(os.path.dirname(tf_ge_custom.__file__), "build_info.json")) as f:
        info = json.load(f)
    proc = subprocess.run([sys.executable, REPORT, "summary"], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0] == "==> build: tf-ge-custom installed in %s" % os.path.dirname(tf_ge_custom.__file__)
    assert "    op library: built against TensorFlow %s (Python %s)" % (
        info["tensorflow"]["version"], info["tensorflow"]["python"]) in lines
    ge = info["ge"]
    if ge["built"]:
        assert any(l.startswith("    GE library: built against CANN ") for l in lines), lines
    else:
        assert "    GE library: skipped (%s)" % ge["reason"] in lines
        assert "\n" not in ge["reason"]  # one line


def test_the_summary_names_a_missing_install(tmp_path):
    env = _env()
    env["PYTHONNOUSERSITE"] = "1"
    proc = subprocess.run([sys.executable, "-S", REPORT, "summary"], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout.startswith("error: tf-ge-custom is not installed for ")


# --- the object cache -------------------------------------------------------------------------

SHIM = """#!/bin/sh
echo "$@" >> "{log}"
exec {cxx} "$@"
"""


@pytest.fixture
def small_op_tree(tmp_path, monkeypatch):
    """A source tree of two small translation units (no TensorFlow header), the compiler run
    through a shim that records each compile, and the TensorFlow query answered for it."""
    cxx = shutil.which("g++") or shutil.which("c++")
    assert cxx, "the op library build needs a C++ compiler"
    source = tmp_path / "src"
    (source / "tf_ops").mkdir(parents=True)
    (source / "tf_ops" / "one.cc").write_text('#include "shared.h"\nint one() { return SHARED; }\n')
    (source / "tf_ops" / "two.cc").write_text("int two() { return 2; }\n")
    (source / "tf_ops" / "shared.h").write_text("#define SHARED 1\n")
    log = tmp_path / "compiles.log"
    shim = tmp_path / "cxx"
    shim.write_text(SHIM.format(log=log, cxx=cxx))
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CXX", str(shim))
    monkeypatch.delenv("TF_GE_CUSTOM_XLA", raising=False)
    monkeypatch.setattr(op_def, "OPS", ())  # no op's sources here: only the two units
    info = {"version": "9.9.9", "compile_flags": ["-std=c++17"], "link_flags": [],
            "include": str(tmp_path), "lib": str(tmp_path), "cxx11_abi": 1, "python": "3"}
    monkeypatch.setattr(tensorflow_info, "query", lambda python=None, cache_dir=None: dict(info))
    return source, log, info


def _build_once(source, tmp_path, name, cache):
    ctx = _build.BuildContext(str(source), str(tmp_path / name / "pkg"), str(tmp_path / name / "tmp"),
                              jobs=2, cache_dir=str(cache))
    messages = []
    ctx.log = messages.append
    op_library.run(ctx)
    return ctx, messages


def _compiles(log):
    if not log.exists():
        return []
    return sorted(os.path.basename(l.split(" -c ")[1].split()[0])
                  for l in log.read_text().splitlines() if " -c " in l)


def test_a_second_build_compiles_nothing_and_links_the_same_library(small_op_tree, tmp_path):
    source, log, _ = small_op_tree
    cache = tmp_path / "cache"
    first, messages = _build_once(source, tmp_path, "first", cache)
    assert _compiles(log) == ["one.cc", "two.cc"]
    assert any("2 translation units, 0 from the object cache" in m for m in messages), messages
    log.unlink()
    second, messages = _build_once(source, tmp_path, "second", cache)
    assert _compiles(log) == []
    assert any("2 translation units, 2 from the object cache" in m for m in messages), messages
    assert (second.build_info["tensorflow"]["library_sha256"]
            == first.build_info["tensorflow"]["library_sha256"])


@pytest.mark.parametrize("change", ["source", "header", "nested header", "new header", "macro include",
                                    "tensorflow", "flags"])
def test_a_change_recompiles_what_it_touches(small_op_tree, tmp_path, monkeypatch, change):
    source, log, info = small_op_tree
    if change == "nested header":  # one.cc includes shared.h, which includes inner.h
        (source / "tf_ops" / "shared.h").write_text('#include "inner.h"\n#define SHARED INNER\n')
        (source / "tf_ops" / "inner.h").write_text("#define INNER 1\n")
    cache = tmp_path / "cache"
    _build_once(source, tmp_path, "first", cache)
    log.unlink()
    if change == "source":
        (source / "tf_ops" / "two.cc").write_text("int two() { return 22; }\n")
        expected = ["two.cc"]
    elif change == "header":  # only the units that include it (one.cc)
        (source / "tf_ops" / "shared.h").write_text("#define SHARED 11\n")
        expected = ["one.cc"]
    elif change == "nested header":  # included through another header
        (source / "tf_ops" / "inner.h").write_text("#define INNER 11\n")
        expected = ["one.cc"]
    elif change == "new header":  # a new op's header beside the sources: no unit includes it
        (source / "tf_ops" / "new_op_functor.h").write_text("#define NEW 1\n")
        expected = []
    elif change == "macro include":  # a name the text cannot tell: every header counts
        (source / "tf_ops" / "two.cc").write_text('#define WHICH "shared.h"\n#include WHICH\n'
                                                  "int two() { return SHARED; }\n")
        _build_once(source, tmp_path, "macro", cache)
        log.unlink()
        (source / "tf_ops" / "new_op_functor.h").write_text("#define NEW 1\n")
        expected = ["two.cc"]
    else:
        changed = dict(info, version="9.9.10") if change == "tensorflow" else \
            dict(info, compile_flags=["-std=c++17", "-DOTHER=1"])
        monkeypatch.setattr(tensorflow_info, "query", lambda python=None, cache_dir=None: dict(changed))
        expected = ["one.cc", "two.cc"]
    _build_once(source, tmp_path, "second", cache)
    assert _compiles(log) == expected


def _tensorflow_at(root, record):
    """A TensorFlow's install under ``root``: its header folder, and its distribution's RECORD
    (``record``: the text, or None for an install without one)."""
    include = root / "site" / "tensorflow" / "include"
    include.mkdir(parents=True)
    if record is not None:
        info = root / "site" / "tensorflow_cpu-9.9.9.dist-info"
        info.mkdir()
        (info / "RECORD").write_text(record)
    return include


RECORD = ("tensorflow/__init__.py,sha256=AAAA,100\ntensorflow/include/tensorflow/core/x.h,sha256=BBBB,20\n"
          "tensorflow/include/tensorflow/core/y.h,sha256=DDDD,30\n")
HEADERS = "\n".join(sorted(l for l in RECORD.splitlines() if l.startswith("tensorflow/include/")))


@pytest.mark.parametrize("other, compiled", [("the same record", []),
                                             # what differs between two installs of one wheel
                                             ("the same headers", []),
                                             ("another header", ["one.cc", "two.cc"]),
                                             ("no record", ["one.cc", "two.cc"])])
def test_the_same_tensorflow_in_another_environment_shares_the_objects(small_op_tree, tmp_path, monkeypatch,
                                                                        other, compiled):
    # another clone's venv holds the same TensorFlow at another path: its installation record
    # (every file with its digest) says it is the same, so the objects are taken; a TensorFlow
    # whose record differs, or one without a record at another path, compiles again
    source, log, info = small_op_tree
    cache = tmp_path / "cache"
    second = {"the same record": RECORD, "no record": None,
              "the same headers": RECORD.replace("AAAA,100", "EEEE,101") + "../../../bin/x,sha256=FFFF,9\n",
              "another header": RECORD.replace("BBBB", "CCCC")}[other]
    for name, record in (("first", RECORD), ("second", second)):
        include = _tensorflow_at(tmp_path / ("env-" + name), record)
        built = dict(info, include=str(include), lib=str(include.parent),
                     compile_flags=["-std=c++17", "-I" + str(include)])
        monkeypatch.setattr(tensorflow_info, "query", lambda python=None, cache_dir=None, built=built: dict(built))
        if log.exists():
            log.unlink()
        _build_once(source, tmp_path, name, cache)
        if name == "first":
            assert _compiles(log) == ["one.cc", "two.cc"]
    assert _compiles(log) == compiled
    headers = "\n".join(sorted(l for l in (second or "").splitlines() if l.startswith("tensorflow/include/")))
    assert op_library.tensorflow_record(str(include)) == (
        None if other == "no record" else hashlib.sha256(headers.encode("utf-8")).hexdigest())
    assert (headers == HEADERS) == (other in ("the same record", "the same headers"))


def test_the_cache_turned_off_compiles_every_time(small_op_tree, tmp_path, monkeypatch):
    source, log, _ = small_op_tree
    monkeypatch.setenv(object_cache.ENV, "0")
    assert object_cache.cache_dir(str(source)) is None
    for name in ("first", "second"):
        ctx = _build.BuildContext(str(source), str(tmp_path / name / "pkg"),
                                  str(tmp_path / name / "tmp"), jobs=2,
                                  cache_dir=object_cache.cache_dir(str(source)))
        ctx.log = lambda message: None
        op_library.run(ctx)
    assert _compiles(log) == ["one.cc", "one.cc", "two.cc", "two.cc"]


def test_the_cache_keeps_only_the_newest_entries(tmp_path):
    cache = object_cache.ObjectCache(str(tmp_path / "c"), keep=2)
    obj = tmp_path / "x.o"
    for i in range(4):
        obj.write_bytes(b"object %d" % i)
        cache.store("k%d" % i, str(obj))
        os.utime(str(tmp_path / "c" / ("k%d.o" % i)), (1000 + i, 1000 + i))
    assert cache.fetch("k0", str(tmp_path / "back.o"))  # a hit makes k0 the newest
    assert (tmp_path / "back.o").read_bytes() == b"object 0"
    cache.trim()
    assert sorted(os.listdir(str(tmp_path / "c"))) == ["k0.o", "k3.o"]


def test_jobs_follow_the_cores_or_the_variable():
    assert _build.default_jobs({}) == len(os.sched_getaffinity(0))
    assert _build.default_jobs({_build.JOBS_ENV: "3"}) == 3
    with pytest.raises(_build.BuildError, match="TF_GE_CUSTOM_BUILD_JOBS=zero: give a whole number"):
        _build.default_jobs({_build.JOBS_ENV: "zero"})


FAKE_TENSORFLOW = """
__version__ = "{version}"
class sysconfig:
    CXX11_ABI_FLAG = 1
    get_compile_flags = staticmethod(lambda: ["-DFAKE={version}"])
    get_link_flags = staticmethod(lambda: [])
    get_include = staticmethod(lambda: "/fake/include")
    get_lib = staticmethod(lambda: "/fake/lib")
"""


def test_the_tensorflow_answer_is_kept_until_tensorflow_changes(tmp_path, monkeypatch):
    site = tmp_path / "site" / "tensorflow"
    site.mkdir(parents=True)
    init = site / "__init__.py"
    init.write_text(FAKE_TENSORFLOW.format(version="1.0"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    cache = tmp_path / "cache"
    first = tensorflow_info.query(sys.executable, cache_dir=str(cache))
    assert first["version"] == "1.0" and first["compile_flags"] == ["-DFAKE=1.0"]
    (kept,) = list(cache.glob("tensorflow-*.json"))
    assert json.loads(kept.read_text()) == first
    # the same TensorFlow: the kept answer, not a new import (marked here to tell them apart)
    kept.write_text(json.dumps(dict(first, version="kept")))
    assert tensorflow_info.query(sys.executable, cache_dir=str(cache))["version"] == "kept"
    # a reinstalled TensorFlow rewrites its files: asked again
    init.write_text(FAKE_TENSORFLOW.format(version="2.0"))
    assert tensorflow_info.query(sys.executable, cache_dir=str(cache))["version"] == "2.0"
    # no cache folder: always asked
    kept.write_text(json.dumps(dict(first, version="kept")))
    assert tensorflow_info.query(sys.executable)["version"] == "2.0"


# --- what the compile step says, and when ------------------------------------------------------

SLOW_SHIM = """#!/bin/sh
sleep {seconds}
echo "$@" >> "{log}"
exec {cxx} "$@"
"""


def test_the_compile_line_is_worded_as_starting_and_a_heartbeat_fills_each_silence(
        small_op_tree, tmp_path, monkeypatch):
    """A slow compiler double (the real compiler behind a shim that first sleeps 0.6 s) and a
    heartbeat period of 0.1 s: the line announcing the compiles comes before any unit is
    compiled and says what will happen, not what happened; while both units compile, the
    heartbeat names them; each unit says when it is done; then the link."""
    from tf_ge_custom import _heartbeat

    source, log, _ = small_op_tree
    cxx = shutil.which("g++") or shutil.which("c++")
    shim = tmp_path / "slow-cxx"
    shim.write_text(SLOW_SHIM.format(seconds=0.6, log=log, cxx=cxx))
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CXX", str(shim))
    monkeypatch.setattr(_heartbeat, "PERIOD", 0.1)
    _, messages = _build_once(source, tmp_path, "slow", tmp_path / "cache")
    start = [i for i, m in enumerate(messages) if m.startswith("op library: 2 translation units")]
    assert len(start) == 1, messages
    assert messages[start[0]] == ("op library: 2 translation units, 0 from the object cache (%s); "
                                  "compiling 2 with 2 jobs..." % (tmp_path / "cache"))
    compiled = [i for i, m in enumerate(messages) if m.startswith("compiled ")]
    assert sorted(messages[i].split()[1] for i in compiled) == ["one.cc", "two.cc"]
    assert start[0] < min(compiled), messages
    beats = [m for m in messages[start[0]:min(compiled)] if m.startswith("still compiling ")]
    assert beats and all(m.endswith(" s)") for m in beats), messages
    assert any("one.cc" in m and "two.cc" in m for m in beats), beats
    linked = [i for i, m in enumerate(messages) if m.startswith("op library: ") and m.endswith("(linked)")]
    assert linked and linked[0] > max(compiled)
    # the silence after the last line is not filled: the heartbeat ended with the step
    assert not messages[-1].startswith("still ")


def test_everything_from_the_object_cache_says_there_is_nothing_to_compile(small_op_tree, tmp_path):
    source, _, _ = small_op_tree
    _build_once(source, tmp_path, "first", tmp_path / "cache")
    _, messages = _build_once(source, tmp_path, "second", tmp_path / "cache")
    assert ("op library: 2 translation units, 2 from the object cache (%s); nothing to compile"
            % (tmp_path / "cache")) in messages
