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


def test_describe_and_compile_through_the_bootstrap(tmp_path):
    parent = os.path.dirname(os.path.dirname(os.path.abspath(tf_ge_custom.__file__)))
    env = dict(os.environ, TF_GE_CUSTOM_CACHE_DIR=str(tmp_path / "cache"),
               TF_GE_CUSTOM_DOUBLE_COUNT=str(tmp_path / "builds.txt"), PYTHONUNBUFFERED="1")
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
    entry = str(tmp_path / "cache" / "Ascend910B1" / key / "float32")
    assert first["entry"] == entry
    assert os.path.isfile(os.path.join(entry, "manifest.json"))
    from tf_ge_custom import op_def

    op = op_def.ADD_CUSTOM  # an entry holds the npubin of every kernel variant
    assert sorted(n for n in os.listdir(entry) if n.endswith(".npubin")) == \
        sorted(op.binary_name(v.name, "float32") for v in op.kernel.variants)
    code, second = _run([sys.executable, DOUBLE, "-c", boot, parent] + compile_args, env)
    assert code == 0 and second["ok"] and not second["built"]
    with open(str(tmp_path / "builds.txt")) as f:
        assert len(f.read().splitlines()) == 1
    code, other = _run([sys.executable, DOUBLE, "-c", boot, parent, "--soc", "Ascend910B1", "--dtype",
                        "float32", "--cache", str(tmp_path / "cache"), "--key", "0" * 16 + "-x"], env)
    assert code == 1 and not other["ok"] and "the environment changed" in other["error"]
