"""Paths the user gives are the folders the system resolves them to (docs/kernels.md, "What the
package trusts"): ``..`` after a link goes up from the link's target, not from the text before
it. The layout of every test: ``W/a/link -> ../real/sub``, so ``W/a/link/../cache`` is
``W/real/cache`` for the kernel, while ``os.path.normpath`` says ``W/a/cache`` (a decoy that
exists too). Oracles: the kernel itself (``os.stat``, ``os.path.samefile``, what a process
opens) and the C library's resolution (``os.path.realpath``).

The cache folder from ``TF_GE_CUSTOM_CACHE_DIR``, ``XDG_CACHE_HOME`` and ``HOME``
(kernels/cache.py ``cache_dir``), the folders the cache's writer makes, the OPP root in
``ASCEND_CUSTOM_OPP_PATH`` (tf_ge_custom/_environment.py). The same layout through
``list-kernels`` and ``build-kernels`` with a cache and a bundle: tests/kernels/test_trust_commands.py;
the GE library's side: tests/ge/test_trust_native.py.
"""
import os

import pytest

from tf_ge_custom import _environment, _trust as trust
from tf_ge_custom.kernels import cache

pytestmark = pytest.mark.kind("oracle")

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
