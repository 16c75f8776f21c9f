"""The compile the GE library runs on first graph build, on the Python TF Adapter users have.

``make test-compat`` runs this on Python 3.7 (TensorFlow 1.15 and 2.6.5); the main suite on the
current Python. The GE library starts the package's builder as ``<python> -c <bootstrap>
<site-packages> ...`` (ge_ops/core/src/kernel_compiler.cc); this runs that very bootstrap,
read from the source, with the kernel compiler double standing in for the build step only
(tests/ge/doubles/: the real entry point, cache lock and rename). Python 3.7 syntax.
"""
import json
import os
import re
import subprocess
import sys

import tf_ge_custom

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOUBLE = os.path.join(SOURCE_ROOT, "tests", "ge", "doubles", "kernel_compiler_double.py")
MARK = "TF_GE_CUSTOM_COMPILE "


def _bootstrap():
    with open(os.path.join(SOURCE_ROOT, "ge_ops", "core", "src", "kernel_compiler.cc")) as f:
        text = f.read()
    body = re.search(r"kBootstrap =\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+);", text).group(1)
    pieces = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", body)
    return "".join(pieces).replace("\\n", "\n").replace("\\'", "'")


def _run(argv, env):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=600)
    lines = [l for l in proc.stdout.splitlines() if l.startswith(MARK)]
    assert lines, proc.stdout + proc.stderr
    return proc.returncode, json.loads(lines[-1][len(MARK):])


def _toolchain_doubles(tmp_path, env):
    """Where triton-ascend or bishengir-compile is not installed (the adapters' Python 3.7 has
    no triton-ascend wheel), TEST DOUBLES of both (a distribution record, a script printing a
    version) so that the cache key and the manifest have a toolchain to record. They prove
    nothing about either tool; the build step is the compiler double's anyway."""
    from tf_ge_custom.kernels import toolchain

    if toolchain.distribution_version("triton-ascend") is None:
        dists = tmp_path / "double-dists"
        record = dists / "triton_ascend-3.2.0.dist-info"
        record.mkdir(parents=True)
        (record / "METADATA").write_text("Metadata-Version: 2.1\nName: triton-ascend\nVersion: 3.2.0\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(dists), env.get("PYTHONPATH")]))
    if toolchain.find_bishengir_compile(env) is None:
        bin_dir = tmp_path / "double-bin"
        bin_dir.mkdir()
        tool = bin_dir / "bishengir-compile"
        tool.write_text("#!/bin/sh\necho 'bishengir-compile 1.2.0 (test double)'\n")
        tool.chmod(0o755)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", os.defpath)])
    return env


def test_the_toolchain_versions_are_read_on_this_python(tmp_path):
    # Python 3.7 has no importlib.metadata: the version comes from pkg_resources there
    from tf_ge_custom.kernels import toolchain

    dists = tmp_path / "dists"
    record = dists / "some_tool-7.1.2.dist-info"
    record.mkdir(parents=True)
    (record / "METADATA").write_text("Metadata-Version: 2.1\nName: some-tool\nVersion: 7.1.2\n")
    code = ("import builtins, sys; builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True; sys.path.insert(0, %r); "
            "from tf_ge_custom.kernels import toolchain; "
            "print(toolchain.distribution_version('some-tool'), toolchain.distribution_version('no-such-dist'))"
            % str(dists))
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, cwd=str(tmp_path))
    assert proc.stdout.split()[-2:] == ["7.1.2", "None"], proc.stdout + proc.stderr
    assert toolchain.distribution_version("pytest") == __import__("pytest").__version__


def test_describe_and_compile_through_the_bootstrap(tmp_path):
    parent = os.path.dirname(os.path.dirname(os.path.abspath(tf_ge_custom.__file__)))
    env = _toolchain_doubles(tmp_path, dict(
        os.environ, TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache"),
        TF_GE_CUSTOM_DOUBLE_COUNT=str(tmp_path / "builds.txt"), PYTHONUNBUFFERED="1"))
    boot = _bootstrap()
    code, described = _run([sys.executable, "-c", boot, parent, "--describe"], env)
    assert code == 0 and described["ok"], described
    assert described["tensorflow_imported"] is False
    assert described["cache_dir"] == str(tmp_path / "cache")
    assert described["package"] == os.path.dirname(os.path.abspath(tf_ge_custom.__file__))
    key = described["key"]
    compile_args = ["--soc", "Ascend910B1", "--dtype", "float32", "--cache", str(tmp_path / "cache"),
                    "--key", key]
    code, first = _run([sys.executable, DOUBLE, "-c", boot, parent] + compile_args, env)
    assert code == 0 and first["ok"] and first["built"], first
    from tf_ge_custom import op_def

    op = op_def.ADD_CUSTOM  # an entry holds the npubin of every kernel variant of its op
    entry = str(tmp_path / "cache" / "Ascend910B1" / key / op.type_name / "float32")
    assert first["entry"] == entry
    assert os.path.isfile(os.path.join(entry, "manifest.json"))
    assert sorted(n for n in os.listdir(entry) if n.endswith(".npubin")) == \
        sorted(op.binary_name(v.name, "float32") for v in op.kernel.variants)
    code, second = _run([sys.executable, DOUBLE, "-c", boot, parent] + compile_args, env)
    assert code == 0 and second["ok"] and not second["built"]
    with open(str(tmp_path / "builds.txt")) as f:
        assert len(f.read().splitlines()) == 1
    code, other = _run([sys.executable, DOUBLE, "-c", boot, parent, "--soc", "Ascend910B1", "--dtype",
                        "float32", "--cache", str(tmp_path / "cache"), "--key", "0" * 16 + "-x"], env)
    assert code == 1 and not other["ok"] and "the environment changed" in other["error"]
