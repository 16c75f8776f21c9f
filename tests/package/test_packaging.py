"""The source distribution builds a working package: the sdist carries every source the
build needs and nothing a build makes; `pip wheel` of it, in an empty folder and under pip's
build isolation, compiles the op library against the running TensorFlow; the wheel installed
into a fresh environment computes what tf.math.add computes."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from tf_ge_custom._build import object_cache

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What the build reads: setup.py's steps and the packages it installs.
SOURCE_DIRS = ("tf_ge_custom/", "kernels/", "tf_ops/", "ge_ops/", "framework/")
SOURCE_FILES = ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in", "LICENSE", "CHANGELOG.md")
# What a build or an editable install leaves in a source tree: never in an sdist.
GENERATED = ("tf_ge_custom/_lib/libtf_ge_custom_ops.so", "tf_ge_custom/opp/kernels/README.txt",
             "tf_ge_custom/build_info.json", "tf_ge_custom/__pycache__/ops.cpython-311.pyc",
             "kernels/__pycache__/builder.cpython-311.pyc", "build/temp-tf-ge-custom/x.o",
             "ge_ops/core/src/json.o", "tf_ops/add_custom_ops.cc.o.tmp")


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


def _tracked_files():
    proc = subprocess.run(["git", "-C", REPO_ROOT, "ls-files", "-z"], stdout=subprocess.PIPE,
                          check=True)
    return sorted(p for p in proc.stdout.decode().split("\0") if p)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """The sdist of a checkout that also holds what earlier builds left in it."""
    base = tmp_path_factory.mktemp("sdist")
    src = base / "checkout"
    for relative in _tracked_files():
        if os.path.isfile(os.path.join(REPO_ROOT, relative)):
            (src / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.join(REPO_ROOT, relative), str(src / relative))
    for relative in GENERATED:
        (src / relative).parent.mkdir(parents=True, exist_ok=True)
        (src / relative).write_bytes(b"generated")
    out = base / "dist"
    out.mkdir()
    # the PEP 517 hook that `python -m build --sdist` calls
    code = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=str(src),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env())
    assert proc.returncode == 0, proc.stdout[-5000:]
    (archive,) = list(out.glob("tf_ge_custom-*.tar.gz"))
    return archive


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    out = tmp_path_factory.mktemp("wheelhouse")
    # The checkout's object cache (filled by the install this suite tests): a build from an
    # sdist in another folder takes its unchanged objects (tf_ge_custom/_build/object_cache.py)
    # instead of compiling the op library again.
    # (build/object-cache, or the folder $TF_GE_CUSTOM_BUILD_CACHE names)
    env = dict(_env(), TF_GE_CUSTOM_BUILD_CACHE=object_cache.cache_dir(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                           str(sdist)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env, cwd=str(empty))
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert os.listdir(str(empty)) == []  # nothing written beside the build
    (whl,) = list(out.glob("tf_ge_custom-*.whl"))
    return whl


def test_sdist_carries_every_source_and_nothing_generated(sdist):
    with tarfile.open(str(sdist)) as tf:
        members = [m.name.split("/", 1)[1] for m in tf.getmembers()
                   if m.isfile() and "/" in m.name]
    metadata = [m for m in members if m in ("PKG-INFO", "setup.cfg")
                or m.startswith("tf_ge_custom.egg-info/")]
    carried = sorted(set(members) - set(metadata))
    expected = sorted(p for p in _tracked_files()
                      if p.startswith(SOURCE_DIRS) or p in SOURCE_FILES)
    assert carried == expected, {"missing": sorted(set(expected) - set(carried)),
                                 "extra": sorted(set(carried) - set(expected))}
    assert not [m for m in members if m in GENERATED]
    # the suite, its native tests and harnesses, and the benchmarks stay in the checkout
    assert not [m for m in members if m.startswith(("tests/", "benchmarks/"))]


# The Python side of the GE step, in a fresh process whose every file open while it runs is
# recorded (an audit hook; importing the package is not the step): what it reads besides CMake.
_GE_STEP_READS = r"""
import builtins, json, sys
builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True  # the build step needs no TensorFlow
from tf_ge_custom._build import ge_step
opened, recording = set(), [True]
def hook(event, args):
    if recording and event == "open" and isinstance(args[0], str):
        opened.add(args[0])
sys.addaudithook(hook)
ge_step.generate_sources(sys.argv[1], sys.argv[2])
recording.pop()
print(json.dumps(sorted(opened)))
"""


def _install_reads_of_ge_ops(build, toolkit_home):
    """Every file of ge_ops/ the install's GE step reads against a toolkit that can host the GE
    library: the Python step's opens; CMake's own account of the configuration the step makes
    (its file API: the CMake files it read, the sources of the targets the step builds and of
    every target they depend on); and each such source's includes as the compiler finds them
    (``-MM -MG``: a header it cannot find, CANN's stand-ins or a generated one, is named, not
    followed)."""
    import shlex

    from tf_ge_custom._build import cann_toolkit, ge_step

    ge_ops = os.path.join(REPO_ROOT, ge_step.GE_SOURCE_DIR)
    reads = set()
    proc = subprocess.run([sys.executable, "-c", _GE_STEP_READS, REPO_ROOT, str(build / "generated")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    reads.update(json.loads(proc.stdout.strip().splitlines()[-1]))

    query = build / "cmake" / ".cmake" / "api" / "v1" / "query"
    query.mkdir(parents=True)
    for kind in ("codemodel-v2", "cmakeFiles-v1"):
        (query / kind).write_text("")
    toolkit = cann_toolkit.from_environment({"ASCEND_HOME_PATH": toolkit_home})
    assert toolkit.build, toolkit.reason
    ge_step.configure(REPO_ROOT, str(build / "cmake"),
                      ge_step.cann_options(toolkit) + ["-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                      log=lambda message: None)
    reply = build / "cmake" / ".cmake" / "api" / "v1" / "reply"

    def load(name):
        with open(str(reply / name)) as f:
            return json.load(f)

    (index,) = list(reply.glob("index-*.json"))
    objects = {o["kind"]: o["jsonFile"] for o in load(index.name)["objects"]}
    cmake_files = load(objects["cmakeFiles"])
    reads.update(os.path.join(cmake_files["paths"]["source"], i["path"])
                 for i in cmake_files["inputs"] if not i.get("isCMake") and not i.get("isGenerated"))
    codemodel = load(objects["codemodel"])
    (configuration,) = codemodel["configurations"]
    targets = {t["name"]: load(t["jsonFile"]) for t in configuration["targets"]}
    todo, built = list(ge_step.install_targets(toolkit)), set()
    while todo:
        name = todo.pop()
        if name not in built:
            built.add(name)
            todo += [d["id"].split("::", 1)[0] for d in targets[name].get("dependencies", [])]
    sources = set()
    for name in built:
        for source in targets[name].get("sources", []):
            if not source.get("isGenerated"):
                sources.add(os.path.normpath(os.path.join(ge_ops, source["path"])))
    reads.update(sources)
    # the files the link lines name (the GE library's version script, -Wl,--version-script=...)
    for name in built:
        for fragment in targets[name].get("link", {}).get("commandFragments", []):
            for word in re.split(r"[=,\s]", fragment["fragment"]):
                if os.path.isabs(word):
                    reads.add(os.path.normpath(word))

    with open(str(build / "cmake" / "compile_commands.json")) as f:
        commands = [c for c in json.load(f) if os.path.normpath(c["file"]) in sources]
    assert commands
    for entry in commands:
        words = shlex.split(entry["command"])
        if os.path.basename(words[0]) == "ccache":
            words = words[1:]
        keep, skip = [], False
        for word in words:
            if skip:
                skip = False
            elif word == "-o":
                skip = True
            elif word != "-c":
                keep.append(word)
        proc = subprocess.run(keep + ["-MM", "-MG"], cwd=entry["directory"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
        assert proc.returncode == 0, (entry["file"], proc.stderr[-3000:])
        for word in proc.stdout.replace("\\\n", " ").split()[1:]:
            reads.add(os.path.normpath(os.path.join(entry["directory"], word)))
    return {os.path.relpath(os.path.realpath(p), REPO_ROOT) for p in reads
            if os.path.isabs(p) and os.path.realpath(p).startswith(os.path.realpath(ge_ops) + os.sep)}


def test_ge_ops_holds_only_what_an_install_builds(fake_toolkit, tmp_path):
    # ge_ops/ is grafted whole into the sdist: each file of it must be one the install's GE
    # step reads; the native tests, fuzz driver, GE in the loop and the benchmark live in
    # tests/native/ and benchmarks/ge_bench/ (docs/ge-library.md).
    reads = _install_reads_of_ge_ops(tmp_path / "build", fake_toolkit())
    tracked = {p for p in _tracked_files() if p.startswith("ge_ops/")}
    # the oracle saw each kind of file the install reads: a CMake file, a CANN-facing source,
    # a core header found through an include, the code generator, a file a link line names
    assert {"ge_ops/CMakeLists.txt", "ge_ops/cmake/ge_library_link.cmake", "ge_ops/cmake/ge_library.exports",
            "ge_ops/cann/kernel_op.cc",
            "ge_ops/core/include/tf_ge_custom_core/status.h",
            "ge_ops/codegen/generate_op_sources.py"} <= reads, sorted(reads)
    assert sorted(tracked - reads) == [], "ge_ops/ holds files no install reads (move them to " \
        "tests/native/ or benchmarks/)"


def test_wheel_is_platform_specific_and_carries_the_op_library(wheel):
    assert "linux" in wheel.name and "py3-none-any" not in wheel.name
    names = zipfile.ZipFile(str(wheel)).namelist()
    assert "tf_ge_custom/_lib/libtf_ge_custom_ops.so" in names
    assert "tf_ge_custom/build_info.json" in names
    # GE dlopens every .so under opp/framework/: the TensorFlow-side library must not be there
    assert not [n for n in names if "/opp/framework/" in n and "libtf_ge_custom_ops" in n]


def test_the_wheel_carries_the_licence_in_its_metadata_and_its_files(wheel):
    with open(os.path.join(REPO_ROOT, "LICENSE"), "rb") as f:
        licence = f.read()
    assert b"Apache License" in licence and b"Version 2.0, January 2004" in licence
    zf = zipfile.ZipFile(str(wheel))
    (metadata,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
    headers = zf.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()
    # PEP 639 (setuptools >= 77): the SPDX expression; older setuptools: the License field
    assert "License-Expression: Apache-2.0" in headers or "License: Apache-2.0" in headers, headers
    assert "License-File: LICENSE" in headers, headers
    carried = [n for n in zf.namelist() if ".dist-info/" in n and n.rsplit("/", 1)[-1] == "LICENSE"]
    assert len(carried) == 1 and zf.read(carried[0]) == licence, carried


def test_the_sdist_carries_the_licence_and_the_history(sdist):
    with tarfile.open(str(sdist)) as tf:
        names = {m.name.split("/", 1)[1]: m for m in tf.getmembers() if "/" in m.name}
        for name in ("LICENSE", "CHANGELOG.md"):
            with open(os.path.join(REPO_ROOT, name), "rb") as f:
                assert tf.extractfile(names[name]).read() == f.read(), name
        pkg_info = tf.extractfile(names["PKG-INFO"]).read().decode("utf-8")
    assert "License-Expression: Apache-2.0" in pkg_info or "License: Apache-2.0" in pkg_info


def test_wheel_records_the_tensorflow_it_was_built_against(wheel):
    import tensorflow as tf

    zf = zipfile.ZipFile(str(wheel))
    info = json.loads(zf.read("tf_ge_custom/build_info.json"))
    assert info["tensorflow"]["version"] == tf.__version__
    # ... and the library it carries, byte for byte: import checks it before loading
    library = zf.read("tf_ge_custom/" + info["tensorflow"]["library"])
    assert info["tensorflow"]["library_size"] == len(library)
    assert info["tensorflow"]["library_sha256"] == hashlib.sha256(library).hexdigest()


CHECK = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tf_ge_custom
cases = [
    (np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(0.5)),
    (np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[10], [20]], np.int32)),
    (np.linspace(-3, 3, 12).astype(np.float16), np.linspace(3, -3, 12).astype(np.float16)),
]
same = [bool(np.array_equal(tf_ge_custom.add_custom(x, y).numpy(), tf.math.add(x, y).numpy()))
        for x, y in cases]
print(json.dumps({"file": tf_ge_custom.__file__, "same": same}))
"""


def test_the_wheel_built_from_the_sdist_runs_add_custom_in_a_fresh_environment(wheel, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                           str(target), str(wheel)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:]
    env = _env()
    env["PYTHONPATH"] = str(target)  # the fresh install first; TensorFlow from the test venv
    proc = subprocess.run([sys.executable, "-c", CHECK], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(target)) and result["same"] == [True, True, True]
