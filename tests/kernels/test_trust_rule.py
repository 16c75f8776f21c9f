"""The trust rule (tf_ge_custom/_trust.py; docs/kernels.md, "What the package trusts"): the
shared cases of tests/fixtures/trust/cases.json, which tests/native/core/test_trust.cc runs against
the GE library's side too, and the parameters and reason names both sides must spell alike.

The cases make folders, files, FIFOs and links owned by other users, which needs root (chown);
the suite runs as root, as CI does, and says so when it does not.
"""
import json
import os
import pathlib
import re
import stat

import pytest

from tf_ge_custom import _trust as trust

pytestmark = pytest.mark.kind("bytes")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = json.loads((ROOT / "tests" / "fixtures" / "trust" / "cases.json").read_text())["cases"]
HEADER = ROOT / "ge_ops" / "core" / "include" / "tf_ge_custom_core" / "trust.h"
SOURCE = ROOT / "ge_ops" / "core" / "src" / "trust.cc"
OWNERS = {"other": 12345, "nobody": 65534, "root": 0}
VIEWERS = {"user": 65534, "root": 0}


def make(base, steps, viewer):
    """Create the case's files under ``base`` as the table says (owners by chown)."""
    if os.geteuid() != 0:
        pytest.fail("the shared trust cases make files owned by other users (chown), which needs "
                    "root; run the suite as root, as CI does")
    for kind, relative, value, owner in steps:
        path = os.path.join(str(base), relative)
        uid = viewer if owner == "viewer" else OWNERS[owner]
        if kind == "link":
            os.symlink(value, path)
            os.lchown(path, uid, -1)
            continue
        if kind == "dir":
            os.mkdir(path)
        elif kind == "file":
            with open(path, "w") as f:
                f.write("x\n")
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            raise ValueError("unknown kind %r in the shared trust cases" % kind)
        os.chown(path, uid, -1)
        os.chmod(path, int(value, 8))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_shared_case_gets_its_verdict(case, tmp_path):
    base = tmp_path / "case"
    base.mkdir()
    os.chmod(str(base), 0o755)
    viewer = VIEWERS[case.get("viewer", "user")]
    make(base, case["make"], viewer)
    if case.get("relative") or case["check"].startswith("/"):
        path, at = case["check"], case.get("at")
    else:
        path, at = os.path.join(str(base), case["check"]), \
            os.path.join(str(base), case["at"]) if "at" in case else None
    refusal = trust.check(path, case["want"], uid=viewer)
    if "resolves_to" in case:
        # the hand-written answer, and os.path.realpath's (it walks the links alike)
        expected = case["resolves_to"] if case["resolves_to"].startswith("/") else \
            os.path.join(os.path.realpath(str(base)), case["resolves_to"])
        assert trust.resolve(path) == expected == os.path.realpath(path), case["name"]
    if case["verdict"] == "trusted":
        assert refusal is None, (case["name"], refusal)
        return
    assert refusal is not None, case["name"]
    assert (refusal.reason, refusal.at) == (case["verdict"], at), (case["name"], refusal)
    assert refusal.detail and "\n" not in str(refusal)


def test_every_reason_and_want_has_a_shared_case():
    assert set(trust.REASONS) - {trust.UNREADABLE} <= {c["verdict"] for c in CASES}
    assert set(trust.WANTS) <= {c["want"] for c in CASES}
    # root cannot be kept out of a folder, so "unreadable" is made by a user: see below
    assert {c.get("viewer", "user") for c in CASES} == {"user", "root"}


def test_a_folder_the_user_may_not_search_is_unreadable():
    """The one reason root cannot meet: checked as uid 65534 in a child process."""
    if os.geteuid() != 0:
        pytest.fail("this check switches to uid 65534 (nobody), which needs root")
    import shutil
    import tempfile

    base = pathlib.Path(tempfile.mkdtemp())  # in /tmp, searchable by all (pytest's folders are not)
    os.chmod(str(base), 0o755)
    try:
        _check_unreadable_as_nobody(base)
    finally:
        shutil.rmtree(str(base))


def _check_unreadable_as_nobody(base):
    locked = base / "locked"
    (locked / "inside").mkdir(parents=True)
    os.chmod(str(locked), 0o700)  # root's, not searchable by others
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become nobody, check, report
        try:
            os.close(read)
            os.setuid(65534)
            refusal = trust.check(str(locked / "inside"))
            os.write(write, ("%s %s" % (refusal.reason, refusal.at)).encode() if refusal else b"none")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        said = f.read()
    os.waitpid(pid, 0)
    assert said == "unreadable %s" % (locked / "inside")


def _header_constant(name):
    match = re.search(r"constexpr \w+ %s = (0[0-7]*|[0-9]+);" % name, HEADER.read_text())
    assert match, "%s is not in %s" % (name, HEADER)
    return int(match.group(1), 8 if match.group(1).startswith("0") and len(match.group(1)) > 1 else 10)


def test_the_native_side_has_the_same_parameters():
    assert _header_constant("kTrustRootUid") == trust.ROOT_UID
    assert _header_constant("kTrustGroupOtherWrite") == trust.GROUP_OTHER_WRITE
    assert _header_constant("kTrustMaxSymlinks") == trust.MAX_SYMLINKS
    assert _header_constant("kPrivateFolderMode") == trust.PRIVATE_FOLDER_MODE
    assert _header_constant("kPrivateFileMode") == trust.PRIVATE_FILE_MODE
    assert _header_constant("kPrivateRecordMode") == trust.PRIVATE_RECORD_MODE


def test_the_native_side_spells_every_reason_alike():
    names = re.findall(r'case TrustReason::k\w+: return "([a-z-]+)";', SOURCE.read_text())
    assert sorted(set(names) - {"trusted"}) == sorted(trust.REASONS)


def test_private_folders_are_0700_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        made = trust.make_private_folders(str(tmp_path / "a" / "b" / "c"))
    finally:
        os.umask(old)
    assert made == [str(tmp_path / "a"), str(tmp_path / "a" / "b"), str(tmp_path / "a" / "b" / "c")]
    assert {stat.S_IMODE(os.stat(p).st_mode) for p in made} == {0o700}
    assert trust.make_private_folders(str(tmp_path / "a" / "b")) == []  # existing ones are kept


def test_shown_escapes_control_characters_and_keeps_the_rest():
    from tf_ge_custom._files import shown

    assert shown("/opt/a\nb\tc\x1b[31m\x7f\x85é") == "/opt/a\\nb\\tc\\x1b[31m\\x7f\\x85é"
    assert shown("/plain path") == "/plain path"
