"""Paths the user gives are the folders the system resolves them to (docs/kernels.md, "What the
package trusts"): ``..`` after a link goes up from the link's target, not from the text before
it. The layout of every test: ``W/a/link -> ../real/sub``, so ``W/a/link/../cache`` is
``W/real/cache`` for the kernel, while ``os.path.normpath`` says ``W/a/cache`` (a decoy that
exists too). Oracles: the kernel itself (``os.stat``, ``os.path.samefile``, what a process
opens) and the C library's resolution (``os.path.realpath``).

The cache: ``TF_GE_CUSTOM_CACHE_DIR``, ``XDG_CACHE_HOME`` and ``HOME`` (kernels/cache.py
``cache_dir``), through ``list-kernels --cache`` and ``build-kernels --cache`` as real processes
(entries by the cache's real writer, its build step the kernel compiler double's: a double,
it proves nothing about the builder); the folders the writer makes; the bundles of
``TF_GE_CUSTOM_KERNELS`` (kernels/kernel_sources.py); the OPP root in
``ASCEND_CUSTOM_OPP_PATH`` (tf_ge_custom/_environment.py). The GE library's side is
tests/ge/test_trust_native.py.
"""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from tf_ge_custom import _environment, _trust as trust
from tf_ge_custom.kernels import cache, kernel_sources

pytestmark = pytest.mark.kind("oracle")

DOUBLES = pathlib.Path(__file__).resolve().parents[1] / "ge" / "doubles"
_spec = importlib.util.spec_from_file_location("kernel_compiler_double", str(DOUBLES / "kernel_compiler_double.py"))
double = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(double)
SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
SOC, DTYPE = "Ascend910B1", "float32"
NOBODY = 65534


@pytest.fixture
def w(tmp_path):
    """W/a/link -> ../real/sub; W/real/{sub,cache}; the decoy W/a/cache. Returns W."""
    top = tmp_path / "W"
    for folder in ("a", "a/cache", "real", "real/sub", "real/cache"):
        (top / folder).mkdir(parents=True)
    os.chmod(str(tmp_path), 0o755)
    (top / "a" / "link").symlink_to("../real/sub")
    assert os.path.normpath(str(top / "a/link/../cache")) == str(top / "a" / "cache")
    assert os.path.samefile(str(top / "a/link/../cache"), str(top / "real" / "cache"))
    return top


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG", "PYTEST_", "ASCEND_")) and k != "PYTHONPATH"}
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep)
            if p and not os.path.isfile(os.path.join(p, "hivmc"))]
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable)] + path)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _run(args, env, cwd):
    proc = subprocess.run([SCRIPT] + list(args), env=env, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, universal_newlines=True,
                          timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize("variable, tail", [
    ("TF_GE_CUSTOM_CACHE_DIR", ""),
    ("XDG_CACHE_HOME", "tf-ge-custom/kernels"),
    ("HOME", ".cache/tf-ge-custom/kernels"),
])
def test_the_cache_folder_is_where_the_kernel_resolves_the_variable(w, variable, tail):
    given = str(w / "a" / "link" / ".." / "cache")
    location = cache.cache_dir({variable: given})
    expected = os.path.join(str(w / "real" / "cache"), tail) if tail else str(w / "real" / "cache")
    assert location == (expected, variable)
    assert location.path == os.path.realpath(os.path.join(given, tail))


def test_a_spelling_the_rule_refuses_is_kept_so_the_refusal_names_its_link(w):
    if os.geteuid() != 0:
        pytest.fail("another user's link is made with lchown, which needs root; run as root, as CI does")
    os.lchown(str(w / "a" / "link"), NOBODY, -1)
    given = str(w / "a" / "link" / ".." / "cache")
    location = cache.cache_dir({"TF_GE_CUSTOM_CACHE_DIR": given})
    assert location.path == given
    refusal = cache.cache_refusal(location.path)
    assert (refusal.reason, refusal.at) == (trust.LINK_OWNER, str(w / "a" / "link"))
    # resolving alone would hide it: the resolved folder itself passes
    assert cache.cache_refusal(trust.resolve(given)) is None


def test_the_writer_makes_the_folders_where_the_kernel_puts_them(w):
    made = trust.make_private_folders(str(w / "a" / "link" / ".." / "new" / "x"))
    assert made == [str(w / "real" / "new"), str(w / "real" / "new" / "x")]
    assert os.path.isdir(str(w / "real" / "new" / "x")) and not os.path.exists(str(w / "a" / "new"))


def test_list_and_build_kernels_use_the_entry_in_the_folder_the_system_means(w, tmp_path):
    env = _env(tmp_path, TF_GE_CUSTOM_CACHE_DIR=w / "a" / "link" / ".." / "cache")
    entry = cache.ensure(SOC, DTYPE, cache=str(w / "real" / "cache"), env=env, build=double.fake_build).path
    decoy = sorted(os.listdir(str(w / "a" / "cache")))
    listed = _run(["list-kernels", "--cache", "--soc", SOC, "--dtype", DTYPE], env, tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert str(w / "real" / "cache") in listed.stdout
    built = _run(["build-kernels", "--soc", SOC, "--dtype", DTYPE, "--cache"], env, tmp_path)
    assert built.returncode == 0 and "already in the cache" in built.stdout, built.stdout + built.stderr
    assert os.path.isfile(os.path.join(entry, "manifest.json"))
    assert sorted(os.listdir(str(w / "a" / "cache"))) == decoy == []  # normpath's folder untouched


def test_a_bundle_through_dotdot_after_a_link_is_read_where_the_kernel_resolves_it(w, tmp_path):
    entry = cache.ensure(SOC, DTYPE, cache=str(tmp_path / "made"), env=_env(tmp_path),
                         build=double.fake_build).path
    (w / "real" / "bundle").mkdir()
    os.rename(entry, str(w / "real" / "bundle" / SOC))
    given = str(w / "a" / "link" / ".." / "bundle")
    (w / "a" / "bundle").mkdir()  # normpath's reading: an empty folder
    environ = {kernel_sources.ENV: given + "::"}
    assert kernel_sources.refused_bundles(environ) == []
    empty_package = tmp_path / "package-kernels"
    empty_package.mkdir()
    (found,) = kernel_sources.kernel_sets(str(empty_package), environ)
    assert (found.soc, found.source) == (SOC, "bundle")
    assert found.folder == str(w / "real" / "bundle") == os.path.realpath(given)
    assert kernel_sources.load_set(found).soc == SOC  # read, checksums and trust included


def test_an_opp_path_entry_is_compared_as_the_kernel_resolves_it(w):
    root = str(w / "a" / "cache")  # stands for the package's OPP root: normpath's reading
    other = str(w / "a" / "link" / ".." / "cache")  # the user's entry: W/real/cache
    assert _environment.with_opp_root(other, root) == root + ":" + other  # kept: another folder
    same = str(w / "real" / "sub" / ".." / ".." / "a" / "cache")
    assert os.path.samefile(same, root)
    assert _environment.with_opp_root(same + ":" + other, root) == root + ":" + other
    assert _environment.contains_root(same, root) and not _environment.contains_root(other, root)


def test_resolve_takes_a_relative_path_from_the_working_folder(w, monkeypatch):
    monkeypatch.chdir(str(w / "a"))
    assert trust.resolve("link/../cache") == str(w / "real" / "cache") == os.path.realpath("link/../cache")
    with pytest.raises(ValueError, match="NUL"):
        trust.resolve("/a\0b")
